"""Choose the classifier's decision thresholds on out-of-fold predictions.

``tools/train_dice_cls.py --fold K/N --oof FILE`` trains without fold K of the
dev photos and saves, for every labelled die of fold K, the classifier's
probabilities in the reader's 8 views. With all N folds saved, every dev die
has a prediction from a model that never saw it: this script reads them and
prints, per set, how many dice would be read right and wrong for each view
policy (first views, the "sure" level below which more views are taken, all
views) and value threshold::

    .venv/bin/python tools/eval_dice_oof.py /tmp/oof0.npz /tmp/oof1.npz /tmp/oof2.npz

Only dice the detector proposed are counted (the others are the detector's
misses, the same for every policy).
"""

from __future__ import annotations

import argparse

import numpy as np

NOT_DIE = 7
UNREADABLE = 6


def load(paths: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Probabilities (n x 8 views x 8), labels and set names of the dice the detector found."""
    probs, labels, sets = [], [], []
    for path in paths:
        z = np.load(path)
        keep = z["found"] if "found" in z else z["det"]
        probs.append(z["probs"][keep])
        labels.append(z["labels"][keep])
        sets.append(z["sets"][keep])
    return np.concatenate(probs), np.concatenate(labels), np.concatenate(sets)


def policy(probs: np.ndarray, first: int, sure: float, views: int) -> tuple[np.ndarray, np.ndarray]:
    """The reader's view policy: the mean of the ``first`` views, or of ``views`` views
    where that mean's top outcome is below ``sure``. Returns (probabilities, views used)."""
    out = probs[:, :first].mean(1)
    unsure = out.max(1) < sure
    out[unsure] = probs[unsure, :views].mean(1)
    return out, np.where(unsure, views, first)


def value_probs(p: np.ndarray) -> np.ndarray:
    """The outcome probabilities ("1".."6", "unreadable") given that it is a die, from
    the classifier's 8 (as ``DiceReader.candidates`` does)."""
    return p[:, :NOT_DIE] / np.maximum(1e-9, 1 - p[:, NOT_DIE:])


def read_counts(pv: np.ndarray, labels: np.ndarray, threshold: float) -> tuple[int, int]:
    """Dice read right and wrong when a value needs ``threshold`` (``DiceReader.decide``)."""
    best, conf = pv.argmax(1), pv.max(1)
    valued = (conf >= threshold) & (best != UNREADABLE)
    return int((valued & (best == labels)).sum()), int((valued & (best != labels)).sum())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("oof", nargs="+", help=".npz files from train_dice_cls.py --oof")
    ap.add_argument("--thresholds", type=float, nargs="*", default=[0.5, 0.6, 0.7, 0.8, 0.9])
    ap.add_argument("--policies", nargs="*", default=["1/1/1", "2/1/2", "4/1/4", "8/1/8", "2/0.97/4",
                                                      "2/0.97/8", "2/0.95/8", "1/0.95/8"],
                    help="FIRST/SURE/VIEWS (SURE 1 = always FIRST views)")
    args = ap.parse_args()
    probs, labels, sets = load(args.oof)
    for set_name in sorted(set(sets.tolist())):
        m = sets == set_name
        print(f"{set_name}: {int(m.sum())} dice")
        for pol in args.policies:
            first, sure, views = pol.split("/")
            p, used = policy(probs[m], int(first), float(sure) if float(sure) < 1 else 2.0, int(views))
            pv = value_probs(p)
            y = labels[m]
            cells = []
            for t in args.thresholds:
                right, wrong = read_counts(pv, y, t)
                cells.append(f"{t:.2f}: {right} right {wrong} wrong")
            print(f"  views {pol:9s} (mean {used.mean():.2f}) top {int((pv.argmax(1) == y).sum())} | "
                  + " | ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
