"""Read the scenes drawn by ``tools/render_dice_pbr.py`` with the dice reader, per body kind.

How well a reader reads rendered dice tells whether a render style is learnt at
all, next to the real photos' figures that judge it (rule 71, dice-history.md)::

    .venv/bin/python tools/eval_dice_renders.py /tmp/pbr/batch1
    .venv/bin/python tools/eval_dice_renders.py /tmp/pbr/batch1 --cls /tmp/ft/cand.onnx --json

A die counts as found when a reported centre lies inside its projected box, as
``companion bench dice`` counts a photographed die (``vision.dice.run.die_outcomes``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import cv2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from vision.dice.data import LabelledDie  # noqa: E402
from vision.dice.reader import DiceReader  # noqa: E402
from vision.dice.run import die_outcomes  # noqa: E402

FIELDS = ("right", "wrong", "unread", "missed", "false")


def scene_dice(path: Path) -> dict[str, list[LabelledDie]]:
    """A scene's labelled dice grouped by body kind ("opaque", "marbled", ...).

    Raises ``ValueError`` when the file is not a scene list of the renderer."""
    try:
        raw = json.loads(path.read_text())
        out: dict[str, list[LabelledDie]] = {}
        for die in raw:
            x0, y0, x1, y1 = (float(v) for v in die["box"])
            out.setdefault(str(die.get("kind", "?")), []).append(
                LabelledDie(int(die["value"]), (x0, y0, x1, y1)))
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"{path}: not a scene of render_dice_pbr.py ({exc})") from exc
    return out


def tally_scene(reader: DiceReader, image_path: Path, dice: dict[str, list[LabelledDie]]
                ) -> dict[str, Counter[str]]:
    """Right, wrong, unread and missed dice of one scene per body kind, and the false
    dice (readings matching no die) under the kind ``"(none)"``."""
    img = cv2.imread(str(image_path))
    if img is None:
        raise ValueError(f"{image_path}: not a readable image")
    kinds = [k for k, ds in dice.items() for _ in ds]
    outcomes, false = die_outcomes([d for ds in dice.values() for d in ds], reader.read(img))
    out: dict[str, Counter[str]] = {k: Counter() for k in dice}
    for kind, outcome in zip(kinds, outcomes, strict=True):
        out[kind][outcome] += 1
    out["(none)"] = Counter(false=false)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenes", type=Path, nargs="+", help="dirs of scene_N.png + scene_N.json")
    ap.add_argument("--det", type=Path, default=None, help="detector .onnx (default: committed)")
    ap.add_argument("--cls", type=Path, default=None, help="classifier .onnx (default: committed)")
    ap.add_argument("--json", action="store_true", help="one JSON object per kind")
    args = ap.parse_args(argv)

    reader = DiceReader(args.det, args.cls)
    totals: dict[str, Counter[str]] = {}
    scenes = 0
    for d in args.scenes:
        for js in sorted(d.glob("scene_*.json")):
            try:
                counts = tally_scene(reader, js.with_suffix(".png"), scene_dice(js))
            except ValueError as exc:
                print(f"eval_dice_renders: {exc}", file=sys.stderr)
                return 2
            for kind, c in counts.items():
                totals.setdefault(kind, Counter()).update(c)
            scenes += 1
    if scenes == 0:
        print(f"eval_dice_renders: no scene_*.json under {', '.join(map(str, args.scenes))}",
              file=sys.stderr)
        return 2
    every: Counter[str] = Counter()
    for c in totals.values():
        every.update(c)
    totals["all"] = every
    for kind in sorted(totals, key=lambda k: (k in ("all", "(none)"), k)):
        c = totals[kind]
        row = {"kind": kind, "dice": sum(c[f] for f in FIELDS[:4]), **{f: c[f] for f in FIELDS}}
        if args.json:
            print(json.dumps(row))
        else:
            print(f"{kind}: " + ", ".join(f"{k} {v}" for k, v in row.items() if k != "kind"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
