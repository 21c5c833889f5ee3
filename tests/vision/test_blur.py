"""How blurred an image is (``vision.blur``): the edge width the dice reader
withholds values by."""

from __future__ import annotations

import cv2
import numpy as np

from vision.blur import _percentiles, edge_width
from vision.dice.reader import face_crop
from vision.dice.synth import draw_die


def test_edge_width_grows_with_blur() -> None:
    """About 2 px for a die in focus, wider with every pixel of blur, 0 for a flat crop."""
    img = np.full((200, 200, 3), (170, 200, 225), np.uint8)
    draw_die(img, np.random.default_rng(0), 100, 100, 38, 5, angle=0,
             body=(235, 240, 240), pip=(20, 20, 20), shadow=False)
    crop = face_crop(img, 100, 100, 38.4)
    sharp = edge_width(crop)
    assert 1.0 < sharp < 3.0
    widths = [edge_width(cv2.GaussianBlur(crop, (0, 0), s)) for s in (1.0, 2.0, 3.0)]
    assert sharp < widths[0] < widths[1] < widths[2]
    assert 1.5 * 3.0 < widths[2] < 2.5 * 3.0
    assert edge_width(np.full((48, 48, 3), 90, np.uint8)) == 0.0


def test_fast_percentiles_are_numpys() -> None:
    rng = np.random.default_rng(0)
    for n in (1, 2, 7, 1444):
        a = rng.random(n).astype(np.float32)
        assert np.allclose(_percentiles(a, (2.0, 98.0, 99.0)), np.percentile(a, [2, 98, 99]),
                           atol=1e-6)
