"""Colours of dice beyond the usual pairs: any body with any pip colour that stands out.

``vision.dice.synth`` draws dice in the pairs that are common (white with black
pips, red with white, ...). Real dice come in more: teal with yellow pips, black
with gold, purple with green. ``tests/vision/test_dice_synth.py`` reads dice of
every such pair; ``tools/train_dice.py --wide-colours`` and
``vision.dice.restyle`` train on them (tried, not adopted: docs/dice-history.md).
"""

from __future__ import annotations

import cv2
import numpy as np

BGR = tuple[int, int, int]

#: Body colours (BGR): the drawn dice's, and teal, dull teal, purple, dark red, near
#: black, olive (kinds of the dice the reader doubts on, docs/dice-history.md).
BODIES: list[BGR] = [
    (235, 240, 240), (200, 225, 235), (25, 25, 25), (40, 40, 190), (40, 210, 230),
    (60, 150, 40), (150, 70, 30), (110, 40, 90), (30, 120, 235),
    (140, 130, 20), (120, 110, 40), (130, 50, 120), (30, 30, 120), (45, 35, 35), (70, 90, 40),
]
#: Pip colours (BGR): white, black, yellow, red, gold, blue, green, pink.
PIPS: list[BGR] = [
    (240, 240, 240), (20, 20, 20), (40, 210, 230), (40, 40, 200), (50, 170, 210),
    (170, 80, 30), (60, 160, 50), (160, 120, 240),
]
#: Pips at least this far from the body in Lab (CIE76 on OpenCV's 8-bit Lab):
#: low-contrast pairs are wanted, invisible ones are not.
MIN_CONTRAST = 40.0


def lab(c: BGR) -> np.ndarray:
    """A BGR colour in OpenCV's 8-bit Lab, as floats."""
    return cv2.cvtColor(np.array([[c]], np.uint8), cv2.COLOR_BGR2LAB)[0, 0].astype(np.float32)


def contrast(a: BGR, b: BGR) -> float:
    """How far apart two colours are (Lab distance)."""
    return float(np.linalg.norm(lab(a) - lab(b)))


def pick_colours(gen: np.random.Generator) -> tuple[BGR, BGR]:
    """A body colour and a pip colour at least :data:`MIN_CONTRAST` from it."""
    body = BODIES[int(gen.integers(0, len(BODIES)))]
    far = [p for p in PIPS if contrast(p, body) >= MIN_CONTRAST]
    return body, far[int(gen.integers(0, len(far)))]
