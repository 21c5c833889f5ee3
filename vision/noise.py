"""How noisy an image is: the standard deviation of its sensor noise, in grey levels.

A camera in dim light turns its gain up and the frame fills with noise; past a
point the dice reader sees pips in it (or loses real ones) and would give wrong
values, so it withholds them (``DiceReader.noise_threshold``). The estimate is
Immerkær's ("Fast noise variance estimation", CVIU 1996): a 3x3 kernel that
cancels flat and linear image content leaves mostly noise, whose mean absolute
response gives sigma. Printed boards and wood grain add little: synthetic table
frames with sensor noise of 1-6 levels per channel measure 1.3-4.2; the dice
photographs 0.1-1.1.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

_KERNEL = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], np.float32)
#: Larger images are estimated on bands of full-resolution rows (noise does not
#: survive downscaling, so rows are sampled instead) covering about this many pixels.
_MAX_PIXELS = 400_000
_BAND = 16


def noise_sigma(img: np.ndarray) -> float:
    """The noise's standard deviation in ``img`` (BGR or grey ``uint8``), in grey levels;
    0.0 for an image smaller than 3x3."""
    h, w = img.shape[:2]
    if h < 3 or w < 3:
        return 0.0
    rows = 0
    if h * w > _MAX_PIXELS and h > 4 * _BAND:
        every = max(1, math.ceil(h * w / _MAX_PIXELS))
        bands = [img[y:y + _BAND] for y in range(0, h - _BAND + 1, _BAND * every)]
        img, rows = np.concatenate(bands), len(bands)
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) if img.ndim == 3 else img
    resp = cv2.filter2D(grey, cv2.CV_16S, _KERNEL)
    # drop the border rows and columns of each band (their kernel saw the next band)
    # (back to 2-D: OpenCV 5.1's norm takes a 3-D array's last axis for its channels)
    resp = resp.reshape(rows, _BAND, w)[:, 1:-1, 1:-1].reshape(-1, w - 2) if rows else resp[1:-1, 1:-1]
    return float(math.sqrt(math.pi / 2) * cv2.norm(resp, cv2.NORM_L1) / (6 * resp.size))
