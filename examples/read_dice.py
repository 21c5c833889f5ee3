"""Read the dice in a photograph: the values, and where the reader is unsure.

    .venv/bin/python examples/read_dice.py PHOTO.jpg [PHOTO.jpg ...]
    .venv/bin/python examples/read_dice.py          # a synthetic photo, drawn in code

Each die is printed with its value, or "unclear" where the reader would rather
have the player roll again than guess (docs/dice.md). ``companion dice --json``
does the same for the command line; this is the library call behind it.
"""

from __future__ import annotations

import sys

import numpy as np

from vision.dice import read_dice
from vision.dice.synth import draw_die
from vision.image_file import read_image


def synthetic_photo(seed: int = 4) -> tuple[np.ndarray, list[int]]:
    """A 640x480 photo of three dice on a grey cloth, and their values left to right."""
    rng = np.random.default_rng(seed)
    img = np.full((480, 640, 3), (150, 140, 130), np.uint8)
    values = [int(v) for v in rng.integers(1, 7, 3)]
    for x, value in zip((170, 320, 470), values, strict=True):
        draw_die(img, rng, x, 240, 60, value, body=(240, 240, 240), pip=(20, 20, 20))
    return img, values


def describe(frame: np.ndarray) -> list[str]:
    """One line per die seen, left to right."""
    dice = sorted(read_dice(frame), key=lambda d: d.center[0])
    lines = []
    for die in dice:
        x, y = die.center
        said = str(die.value) if die.value is not None else "unclear: roll again"
        lines.append(f"  die at ({x:.0f}, {y:.0f}): {said}  (confidence {die.confidence:.2f})")
    return lines or ["  no dice seen"]


def main(argv: list[str]) -> int:
    if not argv:
        frame, values = synthetic_photo()
        print(f"synthetic photo, dice drawn: {values}")
        print("\n".join(describe(frame)))
        return 0
    status = 0
    for path in argv:
        try:
            frame = read_image(path)      # EXIF orientation applied, clear errors
        except ValueError as exc:
            print(f"{path}: {exc}")
            status = 1
            continue
        print(f"{path}:")
        print("\n".join(describe(frame)))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
