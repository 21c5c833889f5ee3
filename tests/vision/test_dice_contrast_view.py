"""The contrast view: a die's crop redrawn as a light face with dark pips."""

from __future__ import annotations

import numpy as np
import pytest

from vision.dice.contrast_view import contrast_view
from vision.dice.reader import face_crop
from vision.dice.synth import draw_die

DARK_RED_PIPS = ((40, 35, 45), (30, 30, 150))  # near-black body, dark red pips (BGR)


def _die_crop(body: tuple[int, int, int], pip: tuple[int, int, int], value: int) -> np.ndarray:
    img = np.full((160, 160, 3), (170, 175, 180), np.uint8)
    draw_die(img, np.random.default_rng(value), 80, 80, 60, value, angle=0.0, body=body, pip=pip,
             shadow=False)
    return face_crop(img, 80, 80, 60)


def test_coloured_pips_come_out_dark_on_a_light_face() -> None:
    """A dark die with red pips (lightness close, hue far): face light, pip dark."""
    crop = _die_crop(*DARK_RED_PIPS, value=1)
    grey = contrast_view(crop)
    assert grey.shape == crop.shape and grey.dtype == np.uint8
    assert np.array_equal(grey[..., 0], grey[..., 1])
    c = crop.shape[0] // 2
    assert grey[c, c, 0] < 60  # the one pip, at the centre
    assert grey[c - 10, c + 10, 0] > 200  # the face beside it
    # in the plain crop the pip hardly differs in grey level from the face
    lum = crop.astype(float) @ [0.114, 0.587, 0.299]
    assert abs(lum[c, c] - lum[c - 10, c + 10]) < 40


def test_a_plain_face_stays_mostly_light() -> None:
    """Camera noise on a face without pips is not stretched to full contrast
    (``MIN_REF``): the view stays light but for a speckle of its tails."""
    rng = np.random.default_rng(0)
    crop = np.clip(rng.normal((90, 140, 60), 2, (48, 48, 3)), 0, 255).astype(np.uint8)
    grey = contrast_view(crop)[..., 0]
    assert np.median(grey) > 150
    assert (grey < 100).mean() < 0.05  # a pip's centre is below 60


def test_it_wants_a_bgr_crop() -> None:
    with pytest.raises(ValueError, match="BGR uint8"):
        contrast_view(np.zeros((48, 48), np.uint8))
    with pytest.raises(ValueError, match="BGR uint8"):
        contrast_view(np.zeros((48, 48, 3), np.float32))
