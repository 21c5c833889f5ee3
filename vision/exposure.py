"""How dim a frame is, and the gain that brings it back to a normal exposure.

A camera in a dim room with a fixed exposure (or photos taken so) gives dark,
flat frames: the dice's pips lose contrast and the classifier reads some of
them wrong (dev photos scaled to 0.4 of their brightness: 4 wrong values of
1054 small-pip dice against 1). The dice reader brightens such a frame by one
gain for all channels before reading it (``DiceReader.dim_below``): what the
camera's exposure would have done. Its sensor noise grows by the same gain,
so the noise check still withholds values where the frame is too noisy.
"""

from __future__ import annotations

import cv2
import numpy as np

#: The percentile of grey whose level says how bright a frame is: the bright
#: end, not the median (a dark table with light dice is not a dim frame).
BRIGHT_PERCENTILE = 99.5
#: The level that percentile is brought to.
TARGET_LEVEL = 230.0


def bright_level(img: np.ndarray, step: int = 8) -> float:
    """The ``BRIGHT_PERCENTILE`` of a BGR (or grey) ``uint8`` image's grey level, the
    mean of its channels, on every ``step``-th pixel each way (~0.5 ms on a
    2028x1520 frame)."""
    sample = img[::step, ::step]
    if sample.size == 0:
        return 0.0
    if sample.ndim == 2:
        return float(np.percentile(sample, BRIGHT_PERCENTILE))
    total: np.ndarray = sample[..., 0].astype(np.uint16)
    for ch in range(1, sample.shape[2]):
        total = cv2.add(total, sample[..., ch], dtype=cv2.CV_16U)
    return float(np.percentile(total, BRIGHT_PERCENTILE)) / sample.shape[2]


def dim_gain(img: np.ndarray, below: float, max_gain: float = 4.0) -> float:
    """The gain that brings a frame whose bright level is under ``below`` up to
    ``TARGET_LEVEL`` (at most ``max_gain``); 1.0 for a frame bright enough or black."""
    level = bright_level(img)
    if level >= below or level <= 0.0:
        return 1.0
    return min(max_gain, TARGET_LEVEL / level)
