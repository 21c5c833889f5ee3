"""Measure what waiting for the dice to settle (vision.dice.settle) buys on smeared frames.

Each val photo (the tuning part of dev; ``--split`` to change) becomes a run
of frames of its dice sliding to rest in one direction, as a camera exposing
for the whole frame interval sees them: frame k smears the picture over the
way the dice went in that frame (``--smears`` px, then still frames) and is
centred halfway. Six directions per photo. Printed: the single-frame reads
(right / wrong / null dice over all moving frames) and the settled rolls
(``RollSettler``, ``--frames`` alike): dice right / wrong / null / missed,
and at which frame they settled, against the labels as the project's fix file
corrects them (``--raw-labels``: as they are)::

    .venv/bin/python tools/eval_settle.py --smears 15 11 7 3
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vision.dice.data import (  # noqa: E402
    default_data_dir,
    list_sets,
)
from vision.dice.label_fixes import Box, add_label_fix_args, fixes_from_args, inside, labelled_photos  # noqa: E402
from vision.dice.reader import DiceReader, DieReading  # noqa: E402
from vision.dice.run import match  # noqa: E402
from vision.dice.settle import RollSettler  # noqa: E402
from vision.dice.synth import motion_kernel  # noqa: E402


def sliding_frames(img: np.ndarray, smears: list[float], still: int, angle: float,
                   rng: np.random.Generator, noise: float) -> list[tuple[np.ndarray, float, float]]:
    """The frames of the picture's dice sliding to rest at their place in ``img``:
    (frame, dx, dy) where (dx, dy) is how far the frame's picture is shifted."""
    ux, uy = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    lengths = [*smears, *([0.0] * still)]
    left = sum(smears)                       # how far from rest the first frame starts
    h, w = img.shape[:2]
    out = []
    for length in lengths:
        mid = -(left - length / 2)
        dx, dy = mid * ux, mid * uy
        shift = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
        frame = cv2.warpAffine(img, shift, (w, h), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)
        if length > 0:
            frame = cv2.filter2D(frame, -1, motion_kernel(length, angle),
                                 borderType=cv2.BORDER_REPLICATE)
        if noise > 0:
            frame = np.clip(frame + rng.normal(0, noise, frame.shape), 0, 255).astype(np.uint8)
        out.append((frame, dx, dy))
        left -= length
    return out


def _unshift(dice: list[DieReading], dx: float, dy: float, ignore: list[Box]) -> list[DieReading]:
    """The readings where the photo has them, but those in an ignored die's box."""
    moved = [DieReading(d.value, (d.center[0] - dx, d.center[1] - dy), d.confidence, d.size)
             for d in dice]
    return [d for d in moved if not any(inside(b, *d.center) for b in ignore)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=default_data_dir())
    ap.add_argument("--split", choices=["val", "dev", "heldout"], default="val")
    ap.add_argument("--smears", type=float, nargs="*", default=[15, 11, 7, 3],
                    help="smear of each moving frame in px (then --still frames at rest)")
    ap.add_argument("--still", type=int, default=6,
                    help="frames at rest after the smears (enough for the patience)")
    ap.add_argument("--frames", type=int, default=2, help="frames alike to settle")
    ap.add_argument("--angles", type=float, nargs="+", default=[0, 22.5, 45, 67.5, 90, 120])
    ap.add_argument("--noise", type=float, default=2.0, help="sensor noise sigma per frame")
    ap.add_argument("--model", type=Path, default=None, help="classifier ONNX to use")
    add_label_fix_args(ap, learn=False)
    args = ap.parse_args()
    fixes = fixes_from_args(args)
    cv2.setNumThreads(1)
    reader = DiceReader(cls_model_path=args.model) if args.model else DiceReader()
    rng = np.random.default_rng(0)
    moving = np.zeros(3, int)                  # right, wrong, null over the moving frames
    settled = np.zeros(5, int)                 # right, wrong, null, missed, false
    still = np.zeros(5, int)                   # the same for the first still frame alone
    exact = rolls = unsettled = 0
    at: list[int] = []
    for set_dir in list_sets(args.data):
        for path, img, labels in labelled_photos(set_dir, args.split, fixes):
            truth = labels.dice
            for angle in args.angles:
                settler = RollSettler(args.frames)
                frames = sliding_frames(img, args.smears, args.still, angle, rng, args.noise)
                done = False
                for k, (frame, dx, dy) in enumerate(frames):
                    dice = reader.read(frame)       # where the frame shows them
                    m = match(truth, _unshift(dice, dx, dy, labels.ignore))
                    if k < len(args.smears):
                        moving += m[:3]
                    elif k == len(args.smears):
                        still += m
                    roll = settler.feed(dice)
                    if roll is not None and not done:
                        done = True
                        rolls += 1
                        s = np.array(match(truth, _unshift(list(roll.dice), dx, dy, labels.ignore)))
                        if s[1]:
                            print(f"settled with {s[1]} wrong: {set_dir.name}/{path.name} "
                                  f"at {angle} degrees", file=sys.stderr)
                        settled += s
                        exact += int(s[0] == len(truth) and s[4] == 0)
                        at.append(k + 1)
                unsettled += int(not done)
    print(f"moving frames (smears {args.smears} px): right {moving[0]} wrong {moving[1]} "
          f"null {moving[2]}")
    print(f"first still frame alone: right {still[0]} wrong {still[1]} null {still[2]} "
          f"missed {still[3]} false {still[4]}")
    print(f"settled rolls {rolls} (not settled {unsettled}): right {settled[0]} wrong "
          f"{settled[1]} null {settled[2]} missed {settled[3]} false {settled[4]}; "
          f"exact {exact}; settled at frame median {statistics.median(at) if at else '-'} "
          f"(first still frame {len(args.smears) + 1}, "
          f"earlier {sum(1 for a in at if a <= len(args.smears))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
