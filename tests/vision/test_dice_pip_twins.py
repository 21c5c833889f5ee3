"""Twins of dice with the centre pip changed (training data for the face classifier)."""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from vision.dice import pip_twins, read_dice
from vision.dice.pip_twins import find_pips, in_pattern, pip_twin
from vision.dice.synth import draw_die

COLOURS = [  # body, pips (BGR)
    ((235, 240, 240), (20, 20, 20)),  # white, black pips
    ((25, 25, 25), (40, 40, 200)),  # black, red pips
    ((40, 210, 230), (20, 20, 20)),  # yellow, black pips
    ((60, 150, 40), (240, 240, 240)),  # green, white pips
]


def _die(value: int, colour: int, seed: int, size: float = 44.0,
         table: tuple[int, int, int] = (170, 175, 180), **kw: object) -> np.ndarray:
    img = np.full((200, 240, 3), table, np.uint8)
    rng = np.random.default_rng(seed)
    img = np.clip(img + rng.normal(0, 2, img.shape), 0, 255).astype(np.uint8)
    body, pip = COLOURS[colour]
    draw_die(img, rng, 120, 100, size, value, body=body, pip=pip, shadow=False, **kw)  # type: ignore[arg-type]
    return img


@pytest.mark.parametrize("colour", range(len(COLOURS)))
def test_the_pips_of_every_value_are_found(colour: int) -> None:
    """On a plain table the face's pips are found, as many as the value, in its pattern."""
    for value in range(1, 7):
        for seed in range(3):
            face = find_pips(_die(value, colour, seed), 120, 100, 52)
            assert face is not None
            assert len(face.pips) == value, (value, seed)
            assert math.dist(face.center, (120, 100)) < 4
            assert in_pattern(face, value), (value, seed)
            assert not in_pattern(face, 7 - value) or value == 7 - value


@pytest.mark.parametrize("colour", range(len(COLOURS)))
def test_a_twin_differs_by_the_centre_pip(colour: int) -> None:
    """3 -> 2 and 5 -> 4 lose the centre pip, 2 -> 3 and 4 -> 5 gain one; the reader
    reads the twin's value, and the photo round the die is left as it was."""
    expected = {2: 3, 3: 2, 4: 5, 5: 4}
    for value, new in expected.items():
        img = _die(value, colour, seed=10 + value)
        twin = pip_twin(img, 120, 100, 52, value, random.Random(value))
        assert twin is not None and twin.value == new
        face = find_pips(twin.image, twin.cx, twin.cy, 52)
        assert face is not None and in_pattern(face, new)
        read = read_dice(twin.image)
        assert [d.value for d in read] == [new]
        ox, oy = twin.origin
        h, w = twin.image.shape[:2]
        yy, xx = np.mgrid[0:h, 0:w]
        away = np.hypot(xx - twin.cx, yy - twin.cy) > 0.5 * 52
        assert np.array_equal(twin.image[away], img[oy:oy + h, ox:ox + w][away])


def test_a_white_die_on_a_white_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the face cannot be told from the table by its colour, the disk round the
    die's centre is taken as the face: the pips and the twin are still found."""
    outlines: list[bool] = []
    by_outline = pip_twins._face_by_outline

    def spy(*args: Any) -> Any:
        found = by_outline(*args)
        outlines.append(found is not None)
        return found

    monkeypatch.setattr(pip_twins, "_face_by_outline", spy)
    for value in (2, 3, 4, 5):
        img = _die(value, 0, seed=value, table=(225, 230, 230))
        twin = pip_twin(img, 120, 100, 52, value, random.Random(0))
        assert twin is not None and twin.value == (3, 2, 5, 4)[value - 2]
    assert outlines == [False] * 4


def test_no_twin_where_the_pips_are_not_clean() -> None:
    """Ones and sixes have no twin; nor has a logo face, a die cut by the image's edge,
    a blank frame, or a die too small to find its pips."""
    rng = random.Random(0)
    assert pip_twin(_die(1, 0, 1), 120, 100, 52, 1, rng) is None
    assert pip_twin(_die(6, 0, 1), 120, 100, 52, 6, rng) is None
    assert pip_twin(_die(3, 0, 1, logo=True), 120, 100, 52, 3, rng) is None
    assert pip_twin(_die(3, 0, 1), 12, 100, 52, 3, rng) is None
    blank = np.full((200, 240, 3), 128, np.uint8)
    assert find_pips(blank, 120, 100, 52) is None
    assert pip_twin(_die(5, 0, 1, size=10), 120, 100, 12, 5, rng) is None
    # the label must match the pips: a "4" said to be a "5" has no twin
    assert pip_twin(_die(4, 0, 1), 120, 100, 52, 5, rng) is None
