"""Sweep the dice reader's thresholds on a split of the labelled photos (for tuning).

Tune only on ``--split val`` (the part of dev kept out of training with
``train_dice.py --val``); the held-out split is for the final report only.
Scored against the labels as the project's fix file corrects them
(``vision/dice/label_fixes.json``, as ``bench dice --label-fixes``;
``--raw-labels``: as they are)::

    .venv/bin/python tools/eval_dice.py --model /tmp/run/dice.onnx --split val
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vision.dice.data import (  # noqa: E402
    LabelledDie,  # noqa: E402
    default_data_dir,
    list_sets,
)
from vision.dice.label_fixes import add_label_fix_args, fixes_from_args, inside, labelled_photos  # noqa: E402
from vision.dice.reader import Candidate, DiceReader  # noqa: E402
from vision.dice.run import match  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--data", type=Path, default=default_data_dir())
    ap.add_argument("--split", choices=["val", "dev", "heldout", "all"], default="val")
    ap.add_argument("--det", type=float, nargs="*", default=[0.25, 0.3, 0.35, 0.4, 0.5])
    ap.add_argument("--val-thr", type=float, nargs="*", default=[0.5, 0.7, 0.8, 0.85, 0.9, 0.95])
    ap.add_argument("--combine", nargs="*", default=["geo", "cls", "det"])
    ap.add_argument("--not-die", type=float, default=0.7)
    ap.add_argument("--views", type=int, default=2)
    ap.add_argument("--cls-size", type=int, default=48)
    ap.add_argument("--cls-model", type=Path, default=None)
    ap.add_argument("--show-errors", action="store_true")
    ap.add_argument("--confirm", type=float, default=None,
                    help="DiceReader.confirm_threshold, the second look's (above 1: off)")
    ap.add_argument("--crop-factor", type=float, default=None,
                    help="the classifier's crop side in die sizes (as it was trained)")
    add_label_fix_args(ap, learn=False)
    args = ap.parse_args()
    fixes = fixes_from_args(args)
    cv2.setNumThreads(1)
    reader = DiceReader(args.model, args.cls_model, cls_size=args.cls_size)
    if args.crop_factor is not None:
        reader.crop_factor = args.crop_factor
    reader.det_threshold = min(args.det)
    reader.views = args.views
    if args.confirm is not None:
        reader.confirm_threshold = args.confirm
    # The second look is taken for dice below value_threshold when the candidates
    # are made: at the highest threshold swept, every lower one finds it done.
    reader.value_threshold = max(args.val_thr)
    cache: list[tuple[str, str, dict[str, list[Candidate]], list[LabelledDie]]] = []
    for set_dir in list_sets(args.data):
        for p, img, labels in labelled_photos(set_dir, args.split, fixes):
            cands = {}
            for mode in args.combine:
                reader.combine = mode
                cands[mode] = [c for c in reader.candidates(img)
                               if not any(inside(b, c.cx, c.cy) for b in labels.ignore)]
            cache.append((set_dir.name, p.name, cands, labels.dice))
    print(f"{len(cache)} images")
    for mode in args.combine:
        for det in args.det:
            for vt in args.val_thr:
                reader.value_threshold = vt
                tot: dict[str, list[int]] = {}
                for set_name, name, cands, truth in cache:
                    seen = [reader.decide(c) for c in cands[mode]
                            if c.score >= det and c.not_die < args.not_die]
                    r, wr, un, mi, fa = match(truth, seen)
                    exact = int(r == len(truth) and fa == 0 and len(seen) == len(truth))
                    t = tot.setdefault(set_name, [0] * 8)
                    for i, v in enumerate((len(truth), r, wr, un, mi, fa, exact, 1)):
                        t[i] += v
                    if args.show_errors and (wr or mi or fa) and det == args.det[0] and \
                            vt == args.val_thr[0]:
                        print("  err", set_name, name, "right", r, "wrong", wr, "unread", un,
                              "missed", mi, "false", fa)
                for set_name, t in sorted(tot.items()):
                    n, r, wr, un, mi, fa, ex, imgs = t
                    print(f"{mode} det {det:.2f} val {vt:.2f} {set_name:11s} dice {n} right "
                          f"{100 * r / n:5.1f}% wrong {100 * wr / n:4.1f}% unread {un} "
                          f"missed {mi} false {fa} exact {100 * ex / imgs:5.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
