"""The classifier's view of a die (``vision.dice.reader.face_crop``): where it looks,
and that a large die is shrunk by pixel area, not sampled (which aliases fine pips)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.dice import reader as reader_module
from vision.dice.reader import CLS_SIZE, face_crop


def _blob_centre(crop: np.ndarray) -> tuple[float, float]:
    ys, xs = np.nonzero(crop[..., 2] > 128)
    return float(xs.mean()), float(ys.mean())


@pytest.mark.parametrize("size", [30.0, 60.0, 160.0, 400.0])
@pytest.mark.parametrize(("angle", "flip"), [(0.0, False), (90.0, False), (37.0, True)])
def test_crop_geometry_is_the_same_at_every_size(size: float, angle: float, flip: bool) -> None:
    """A red spot a quarter die right of and above the centre lands where it should in
    the crop whatever the die's size (area-shrunk or not), rotation and mirror."""
    img = np.zeros((1200, 1200, 3), np.uint8)
    cx, cy = 600.3, 599.6
    sx, sy = round(cx + size / 4), round(cy - size / 4)
    cv2.circle(img, (sx, sy), max(2, round(size / 8)), (0, 0, 255), -1, cv2.LINE_AA)
    got = _blob_centre(face_crop(img, cx, cy, size, angle, flip))
    # expected: the spot's offset scaled to the crop, rotated and mirrored; the die's
    # centre lands on pixel CLS_SIZE / 2 (the convention the classifier was trained with)
    a, k = np.radians(angle), CLS_SIZE / (1.25 * size)
    dx, dy = (sx - cx) * k, (sy - cy) * k
    rx, ry = dx * np.cos(a) + dy * np.sin(a), -dx * np.sin(a) + dy * np.cos(a)
    if flip:
        rx = -rx
    want = (CLS_SIZE / 2 + rx, CLS_SIZE / 2 + ry)
    assert abs(got[0] - want[0]) < 0.3 and abs(got[1] - want[1]) < 0.3, (got, want)


def test_large_die_is_shrunk_by_area(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pips finer than the crop's pixels average out to their mean; sampled straight
    from the frame (the area step turned off) they alias into a false pattern."""
    img = np.zeros((800, 800, 3), np.uint8)
    img[::2, ::2] = 255  # a quarter of the pixels lit: mean 64
    crop = face_crop(img, 400, 400, 300.0).astype(float)
    assert abs(crop.mean() - 64) < 3 and crop.std() < 6
    monkeypatch.setattr(reader_module, "_AREA_BELOW", 0.0)
    aliased = face_crop(img, 400, 400, 300.0).astype(float)
    assert aliased.std() > 30


def test_crop_partly_or_wholly_off_the_frame_replicates_the_border() -> None:
    img = np.zeros((300, 400, 3), np.uint8)
    img[:, :200] = (10, 20, 30)
    img[:, 200:] = (200, 210, 220)
    for cx, cy in ((5.0, 5.0), (395.0, 295.0), (-500.0, -500.0), (900.0, 150.0)):
        crop = face_crop(img, cx, cy, 200.0, 30.0, True)
        assert crop.shape == (CLS_SIZE, CLS_SIZE, 3) and crop.dtype == np.uint8
    assert (face_crop(img, -500.0, 150.0, 200.0) == (10, 20, 30)).all()
    assert (face_crop(img, 900.0, 150.0, 200.0) == (200, 210, 220)).all()
