"""Photographed dice restyled in other colours (training data for the face classifier)."""

from __future__ import annotations

import random

import cv2
import numpy as np
import pytest

from vision.dice import palette, read_dice, restyle
from vision.dice.palette import MIN_CONTRAST, contrast
from vision.dice.pip_twins import find_pips, in_pattern
from vision.dice.restyle import pick_style, restyled_twin
from vision.dice.synth import draw_die

TABLE = (170, 175, 180)
TEAL, YELLOW = (140, 130, 20), (40, 210, 230)


def _die(value: int, seed: int, body: tuple[int, int, int] = (235, 240, 240),
         pip: tuple[int, int, int] = (20, 20, 20), size: float = 44.0,
         table: tuple[int, int, int] = TABLE, **kw: object) -> np.ndarray:
    img = np.full((200, 240, 3), table, np.uint8)
    rng = np.random.default_rng(seed)
    img = np.clip(img + rng.normal(0, 2, img.shape), 0, 255).astype(np.uint8)
    draw_die(img, rng, 120, 100, size, value, body=body, pip=pip, shadow=False, **kw)  # type: ignore[arg-type]
    return img


def test_styles_keep_the_pips_visible() -> None:
    """Every style's pips differ from its body by at least MIN_CONTRAST; some are marbled."""
    gen = np.random.default_rng(0)
    styles = [pick_style(gen) for _ in range(300)]
    assert all(contrast(p, b) >= MIN_CONTRAST for b, p, _ in styles)
    marbled = sum(v is not None for _, _, v in styles)
    assert 120 < marbled < 240
    assert len({b for b, _, _ in styles}) == len(palette.BODIES)


def test_the_face_takes_the_new_colours(monkeypatch: pytest.MonkeyPatch) -> None:
    """A white die with black pips restyled teal with yellow pips: the face is teal, the
    pips yellow, as many as before and in their pattern; the table is left as it was."""
    monkeypatch.setattr(restyle, "pick_style", lambda gen, rate: (TEAL, YELLOW, None))
    for value in range(1, 7):
        img = _die(value, seed=value)
        twin = restyled_twin(img, 120, 100, 52, value, random.Random(value))
        assert twin is not None and twin.value == value
        face = find_pips(twin.image, twin.cx, twin.cy, 52)
        assert face is not None and face.outline is not None and in_pattern(face, value)
        pips = face.pips_mask() > 0
        x0, y0 = face.origin
        region = twin.image[y0:y0 + pips.shape[0], x0:x0 + pips.shape[1]]
        body = np.median(region[face.outline & ~pips], axis=0)
        pip = np.median(region[pips], axis=0)
        assert np.abs(body - TEAL).max() < 20, body
        assert np.abs(pip - YELLOW).max() < 45, pip
        h, w = twin.image.shape[:2]
        yy, xx = np.mgrid[0:h, 0:w]
        away = np.hypot(xx - twin.cx, yy - twin.cy) > 0.75 * 52
        ox, oy = twin.origin
        assert np.array_equal(twin.image[away], img[oy:oy + h, ox:ox + w][away])


def test_the_reader_reads_restyled_dice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Drawn dice restyled in plain colours read as their value. (Of 18 drawn dice one
    six has pips drawn so close that they merge into two blobs: not restyled.)"""
    styles = [((40, 40, 190), (240, 240, 240)), ((110, 40, 90), (240, 240, 240)),
              ((25, 25, 25), (240, 240, 240)), ((60, 150, 40), (240, 240, 240)),
              ((235, 240, 240), (40, 40, 200))]
    wrong, made = [], 0
    for value in range(1, 7):
        for seed in range(3):
            body, pip = styles[(value + seed) % len(styles)]
            monkeypatch.setattr(restyle, "pick_style", lambda gen, rate, b=body, p=pip: (b, p, None))
            img = _die(value, seed=10 * value + seed)
            twin = restyled_twin(img, 120, 100, 52, value, random.Random(seed))
            if twin is None:
                continue
            made += 1
            read = [d.value for d in read_dice(twin.image)]
            if read != [value]:
                wrong.append((value, seed, read))
    assert made >= 17
    assert not wrong


def _face_light(img: np.ndarray, twin: restyle.Twin) -> tuple[np.ndarray, np.ndarray]:
    """The twin's lightness over the original die's face, and a mask of that face's body
    away from the pips."""
    face = find_pips(img, 120, 100, 52)
    assert face is not None and face.outline is not None
    x0, y0 = face.origin[0] - twin.origin[0], face.origin[1] - twin.origin[1]
    rh, rw = face.outline.shape
    light = cv2.cvtColor(twin.image[y0:y0 + rh, x0:x0 + rw], cv2.COLOR_BGR2LAB)[..., 0]
    return light, face.outline & (cv2.dilate(face.pips_mask(), np.ones((5, 5), np.uint8)) == 0)


def test_marbled_faces_are_veined(monkeypatch: pytest.MonkeyPatch) -> None:
    """A marbled style swirls the face with its vein colour; a plain one is even."""
    img = _die(5, seed=2)
    spread = {}
    for vein in (None, (230, 230, 200)):
        monkeypatch.setattr(restyle, "pick_style", lambda gen, rate, v=vein: (TEAL, YELLOW, v))
        twin = restyled_twin(img, 120, 100, 52, 5, random.Random(0))
        assert twin is not None
        light, body = _face_light(img, twin)
        spread[vein is None] = float(np.std(light[body]))
    assert spread[True] < 4 and spread[False] > 15, spread


def test_the_shading_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """A face lit from one side keeps that fall-off in its new colour."""
    monkeypatch.setattr(restyle, "pick_style", lambda gen, rate: (TEAL, YELLOW, None))
    img = _die(4, seed=3)
    ramp = np.interp(np.arange(img.shape[1]), [95, 145], [0.88, 1.0])[None, :, None]
    lit = np.clip(img * ramp, 0, 255).astype(np.uint8)
    twin = restyled_twin(lit, 120, 100, 52, 4, random.Random(1))
    assert twin is not None
    light, body = _face_light(lit, twin)
    cols = np.nonzero(body.any(0))[0]
    third = len(cols) // 3
    left = light[:, cols[:third]][body[:, cols[:third]]].mean()
    right = light[:, cols[-third:]][body[:, cols[-third:]]].mean()
    assert right > left + 5, (left, right)


def test_no_restyle_where_the_face_or_pips_are_not_clean() -> None:
    """No twin for a white die on a white table (the face is not told from it), a logo
    face, a label that does not match the pips, a die cut by the edge, or a tiny die."""
    rng = random.Random(0)
    assert restyled_twin(_die(3, 1, table=(225, 230, 230)), 120, 100, 52, 3, rng) is None
    assert restyled_twin(_die(3, 1, logo=True), 120, 100, 52, 3, rng) is None
    assert restyled_twin(_die(4, 1), 120, 100, 52, 5, rng) is None
    assert restyled_twin(_die(3, 1), 12, 100, 52, 3, rng) is None
    assert restyled_twin(_die(5, 1, size=10), 120, 100, 12, 5, rng) is None
