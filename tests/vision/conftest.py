"""Helpers shared by the vision tests."""

from __future__ import annotations

import cv2
import numpy as np

from vision.dice.synth import draw_die


def six_dice_frame(h: int = 480, w: int = 640, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    """A noisy green table with one die of each value in a row, white with black
    pips and red with white pips in turn, turned 15 degrees more each; ``scale``
    multiplies their places and sizes (1: dice of 36-46 px in a 640x480 frame)."""
    rng = np.random.default_rng(seed)
    img = np.full((h, w, 3), (120, 150, 110), np.uint8)
    img = cv2.add(img, rng.integers(0, 25, img.shape, dtype=np.uint8))
    for k, value in enumerate(range(1, 7)):
        draw_die(img, rng, scale * (70 + 100 * k), scale * (150 + 60 * (k % 3)),
                 scale * (36 + 2 * k), value, angle=15.0 * k,
                 body=(235, 240, 240) if k % 2 else (40, 40, 170),
                 pip=(20, 20, 20) if k % 2 else (240, 240, 240))
    return img
