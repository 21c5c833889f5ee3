"""The fast pixel-area shrink (``vision.area_shrink``): the same pixels as OpenCV's
``INTER_AREA`` within its stated bound, taken only where that bound holds, and
the reader reading alike with it and without."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests.vision.conftest import six_dice_frame
from vision.area_shrink import MAX_ERROR, fast_area_applies, shrink_by_area
from vision.dice.reader import DiceReader


def _area(img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    return cv2.resize(img, size, interpolation=cv2.INTER_AREA)


def _largest_difference(a: np.ndarray, b: np.ndarray) -> int:
    assert a.shape == b.shape and a.dtype == b.dtype
    return int(np.abs(a.astype(int) - b.astype(int)).max())


@pytest.mark.parametrize(("in_size", "out_size"), [
    ((2028, 1520), (1024, 768)),   # the camera frame to the working size
    ((1500, 1000), (1024, 683)),   # a factor under 2 (1.46): not near whole -> INTER_AREA
    ((700, 500), (350, 250)),      # whole: INTER_AREA's own fast path
    ((1030, 770), (1024, 766)),    # barely shrunk
])
def test_matches_inter_area_within_its_bound(in_size: tuple[int, int],
                                              out_size: tuple[int, int]) -> None:
    w, h = in_size
    # Noise is the hardest case for the interpolation (every pixel a corner).
    noise = np.random.default_rng(3).integers(0, 256, (h, w, 3), dtype=np.uint8)
    got = shrink_by_area(noise, out_size)
    assert got.shape == (out_size[1], out_size[0], 3)
    # Two axes' bounds and two roundings.
    assert _largest_difference(got, _area(noise, out_size)) <= 2 * MAX_ERROR + 2
    if not fast_area_applies(in_size, out_size):
        assert _largest_difference(got, _area(noise, out_size)) == 0


def test_sharp_edges_and_flat_areas_are_kept() -> None:
    img = np.full((1520, 2028), 40, np.uint8)
    img[:, 1000:] = 220          # a vertical edge
    img[700:710, 300:1800] = 0   # a thin dark line
    got = shrink_by_area(img, (1024, 768))
    assert got.shape == (768, 1024)
    # One axis's bound and the roundings (OpenCV 4.10 rounds one level more than 5)
    assert _largest_difference(got, _area(img, (1024, 768))) <= MAX_ERROR + 2
    assert (got[:300, :490] == 40).all() and (got[:300, 520:] == 220).all()
    assert got[350:357, 200:400].min() == 0  # the line, 5 px wide at half size


def test_where_the_fast_way_applies() -> None:
    assert fast_area_applies((2028, 1520), (1024, 768))
    assert not fast_area_applies((1920, 1080), (1024, 576))   # 1.875: error bound ~15
    assert not fast_area_applies((2048, 1536), (1024, 768))   # whole: INTER_AREA is fast
    assert not fast_area_applies((4056, 3040), (1024, 768))   # 3.96: the filter no faster
    assert not fast_area_applies((800, 600), (1024, 768))     # an enlargement


def test_the_reader_reads_alike_with_either_shrink() -> None:
    fast, area = DiceReader(), DiceReader()
    area.fast_area_shrink = False
    assert fast.fast_area_shrink
    for seed in range(2):
        img = six_dice_frame(1520, 2028, seed, scale=3.0)  # a camera frame
        a, b = area.read(img), fast.read(img)
        assert [d.value for d in a] == [d.value for d in b]
        assert len([d for d in b if d.value is not None]) >= 5
        for da, db in zip(a, b, strict=True):
            assert np.allclose(da.center, db.center, atol=1.0)
