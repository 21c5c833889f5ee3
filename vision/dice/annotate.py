"""Draw the dice reader's readings on a frame: the picture that settles "what did it see?".

Each die gets a circle round its top face: green with its value, amber
with "?" where it could not be read (roll again). A line at the top says what
was read. With ``truth`` (labelled boxes, for the benchmark's error pictures)
the labels are drawn as thin blue boxes with their value.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from vision.dice.data import LabelledDie
from vision.dice.reader import DieReading, as_bgr

READ_BGR = (60, 200, 60)
UNCLEAR_BGR = (0, 170, 255)
TRUTH_BGR = (230, 120, 20)
_FONT = cv2.FONT_HERSHEY_SIMPLEX


def summary(readings: Sequence[DieReading]) -> str:
    """One line for people: "3 dice: 2, 5, ? (1 unclear: roll again)" or "no dice"."""
    if not readings:
        return "no dice"
    values = ", ".join("?" if d.value is None else str(d.value) for d in readings)
    unclear = sum(1 for d in readings if d.value is None)
    word = "die" if len(readings) == 1 else "dice"
    note = f" ({unclear} unclear: roll again)" if unclear else ""
    return f"{len(readings)} {word}: {values}{note}"


def annotate(frame: np.ndarray, readings: Sequence[DieReading], *,
             roi: tuple[int, int, int, int] | None = None,
             truth: Sequence[LabelledDie] = ()) -> np.ndarray:
    """A BGR copy of ``frame`` with ``readings`` drawn (and ``roi``, ``truth`` if given).

    ``frame`` is what :meth:`DiceReader.read` accepts (BGR, grey or BGRA);
    the input is never changed.
    """
    img = as_bgr(frame).copy()
    h, w = img.shape[:2]
    if h == 0 or w == 0:
        raise ValueError("cannot annotate an empty frame")
    line = max(1, round(max(h, w) / 400))
    text_scale = max(0.4, max(h, w) / 1200)
    if roi is not None:
        x, y, rw, rh = roi
        cv2.rectangle(img, (x, y), (x + rw - 1, y + rh - 1), (255, 255, 255), line)
    for t in truth:
        x0, y0, x1, y1 = (round(v) for v in t.box)
        cv2.rectangle(img, (x0, y0), (x1, y1), TRUTH_BGR, line)
        _label(img, str(t.value), (x0, y1 + round(14 * text_scale)), TRUTH_BGR, text_scale * 0.8)
    for d in readings:
        colour = UNCLEAR_BGR if d.value is None else READ_BGR
        # a circle round the face: dice lie at any angle, the size is the face's side
        radius = max(6, round(0.62 * (d.size if d.size > 0 else 24.0)))
        cx, cy = round(d.center[0]), round(d.center[1])
        cv2.circle(img, (cx, cy), radius, colour, line + 1, cv2.LINE_AA)
        cv2.drawMarker(img, (cx, cy), colour, cv2.MARKER_CROSS, max(4, radius // 4), line)
        text = "?" if d.value is None else str(d.value)
        _label(img, text, (cx + round(0.7 * radius), cy - round(0.7 * radius)), colour,
               text_scale * 1.4)
    banner = round(34 * text_scale) + 6
    img[:banner] = (img[:banner] * 0.35).astype(np.uint8)
    _label(img, summary(readings), (8, banner - round(10 * text_scale) - 3), (255, 255, 255),
           text_scale)
    return img


def _label(img: np.ndarray, text: str, org: tuple[int, int], colour: tuple[int, int, int],
           scale: float) -> None:
    """Text with a dark outline, legible on any background (the outline is the same text
    shifted, not thicker: a thicker Hershey stroke also advances further)."""
    thick = max(1, round(scale * 2))
    x, y = org
    for dx, dy in ((-1, -1), (1, -1), (-1, 1), (1, 1), (0, 2), (2, 0), (0, -2), (-2, 0)):
        cv2.putText(img, text, (x + dx, y + dy), _FONT, scale, (20, 20, 20), thick, cv2.LINE_AA)
    cv2.putText(img, text, org, _FONT, scale, colour, thick, cv2.LINE_AA)
