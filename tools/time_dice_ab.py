"""Time two dice readers on the same photos, each image read by A and B in turn.

On a shared host whose speed drifts by 20-40 % within minutes, two whole
``bench dice`` runs cannot tell a 7 % gain from noise; reading every image
with both readers one after the other (best of ``--repeats`` each) can. Prints
per set the median milliseconds per image of A and B and the median of the
per-image ratios B / A (below 1: B is faster)::

    .venv/bin/python tools/time_dice_ab.py --b-det /tmp/run/dice.onnx
    .venv/bin/python tools/time_dice_ab.py --b-cls /tmp/c.onnx --resize 2028x1520
    .venv/bin/python tools/time_dice_ab.py --a-set confirm_threshold=2   # a setting off in A
    .venv/bin/python tools/time_dice_ab.py --known-size --a-set domino_weak=0
    .venv/bin/python tools/time_dice_ab.py --a-plain   # the space-to-depth twin's gain
    .venv/bin/python tools/time_dice_ab.py --a-set fast_area_shrink=0 --resize 2028x1520

A and B default to the committed models; give the other files with
``--a-det/--a-cls/--b-det/--b-cls`` and numeric (or true/false as 1/0)
``DiceReader`` settings with ``--a-set/--b-set NAME=VALUE``; ``--known-size``
tells both readers each photo's die size, as ``bench dice --known-size``
does; ``--a-plain/--b-plain`` make a reader read the plain detector file, not
its space-to-depth twin (``DiceReader(space_to_depth=False)``). One core
(``cv2.setNumThreads(1)``), as the targets are stated.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vision.dice.data import (  # noqa: E402
    default_data_dir,
    label_path_for,
    labelled_die_px,
    list_images,
    list_sets,
    read_labels,
)
from vision.dice.reader import DiceReader  # noqa: E402
from vision.dice.run import fit_frame  # noqa: E402
from vision.image_file import read_image  # noqa: E402


def read_ms(reader: DiceReader, img: np.ndarray, die_px: float | None = None) -> float:
    """One read of ``img`` (at a known die size ``die_px`` if given), in milliseconds."""
    t0 = time.perf_counter()
    reader.read(img, die_px=die_px)
    return 1000.0 * (time.perf_counter() - t0)


def apply_settings(reader: DiceReader, settings: list[str]) -> None:
    """Set ``NAME=VALUE`` numeric attributes of ``reader``; ``ValueError`` for unknown ones."""
    for item in settings:
        name, sep, value = item.partition("=")
        if not sep or not isinstance(getattr(reader, name, None), (int, float)):
            raise ValueError(f"not a numeric DiceReader setting: {item!r}")
        setattr(reader, name, type(getattr(reader, name))(float(value)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a-det", type=Path, default=None, help="reader A's detector (committed)")
    ap.add_argument("--a-cls", type=Path, default=None, help="reader A's classifier (committed)")
    ap.add_argument("--b-det", type=Path, default=None, help="reader B's detector (committed)")
    ap.add_argument("--b-cls", type=Path, default=None, help="reader B's classifier (committed)")
    ap.add_argument("--a-set", action="append", default=[], metavar="NAME=VALUE",
                    help="a numeric DiceReader setting of A (repeatable)")
    ap.add_argument("--b-set", action="append", default=[], metavar="NAME=VALUE",
                    help="a numeric DiceReader setting of B (repeatable)")
    for r in ("a", "b"):
        ap.add_argument(f"--{r}-plain", action="store_true",
                        help=f"reader {r.upper()} reads the plain detector file, not its space-to-depth twin")
    ap.add_argument("--data", type=Path, default=default_data_dir())
    ap.add_argument("--split", choices=["heldout", "dev", "val", "all"], default="heldout")
    ap.add_argument("--repeats", type=int, default=3, help="reads per image and reader; the best counts")
    ap.add_argument("--resize", default=None, metavar="WxH",
                    help="fit each photo into a camera-size frame first (as bench dice --resize)")
    ap.add_argument("--known-size", action="store_true",
                    help="tell the readers each photo's die size (as bench dice --known-size)")
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    size = None
    if args.resize:
        try:
            w, h = (int(v) for v in args.resize.lower().split("x"))
        except ValueError:
            ap.error(f"--resize wants WxH, e.g. 2028x1520, not {args.resize!r}")
        if min(w, h) < 32:
            ap.error("--resize wants a frame of at least 32x32 pixels")
        size = (w, h)
    sets = list_sets(args.data)
    if not sets:
        print(f"no dice sets under {args.data}", file=sys.stderr)
        return 1
    cv2.setNumThreads(1)
    a = DiceReader(args.a_det, args.a_cls, space_to_depth=False if args.a_plain else None)
    b = DiceReader(args.b_det, args.b_cls, space_to_depth=False if args.b_plain else None)
    try:
        apply_settings(a, args.a_set)
        apply_settings(b, args.b_set)
    except ValueError as err:
        ap.error(str(err))
    for set_dir in sets:
        imgs: list[tuple[np.ndarray, float | None]] = []
        for path in list_images(set_dir, args.split):
            try:
                img = read_image(path)
                h, w = img.shape[:2]
                k = 1.0
                if size is not None:
                    img, k, _, _ = fit_frame(img, size)
                die_px = None
                if args.known_size:  # the labelled boxes, scaled as the photo was
                    die_px = labelled_die_px(read_labels(label_path_for(path),
                                                         round(w * k), round(h * k)))
            except ValueError as err:
                print(f"skipped {path}: {err}", file=sys.stderr)
                continue
            imgs.append((img, die_px))
        if not imgs:
            continue
        a.read(imgs[0][0], die_px=imgs[0][1])  # plan the networks before timing
        b.read(imgs[0][0], die_px=imgs[0][1])
        ta, tb, ratios = [], [], []
        for img, die_px in imgs:
            ra, rb = [], []
            for _ in range(args.repeats):
                ra.append(read_ms(a, img, die_px))
                rb.append(read_ms(b, img, die_px))
            ta.append(min(ra))
            tb.append(min(rb))
            ratios.append(min(rb) / min(ra))
        print(f"{set_dir.name}: {len(imgs)} images, median ms A {statistics.median(ta):.1f} "
              f"B {statistics.median(tb):.1f}, median per-image ratio B/A "
              f"{statistics.median(ratios):.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
