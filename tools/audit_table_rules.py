"""What each rule of the table's dice reading decides on the table as drawn now.

The reader's rules were each found and judged on the synthetic table of their
day; the table has changed since (side faces with pips, cocked dice). This
turns each rule off in turn, one at a time, on the same scenes of `companion
bench vision` (the reader told how many dice were rolled, as the table is),
and counts what changes against all rules on: dice right / wrong / null /
missed, false dice, cocked dice numbered, and rolls taken right / asked again
/ taken wrong. A rule that changes nothing on thousands of scenes guards a
case the table no longer draws; one that trades flat dice found for cocked
dice numbered shows it here. Every scene's verdicts go to ``--out`` (JSON
lines) for looking up the scenes a rule decides::

    .venv/bin/python tools/audit_table_rules.py --seed 900 --scenes 400 --kind touching
    .venv/bin/python tools/audit_table_rules.py --summary runs/*.jsonl   # several runs

Twenty-two readings per scene (~1 s a scene on one core here).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import vision.bench as bench  # noqa: E402
import vision.table_dice as table_dice  # noqa: E402
from companion.boards import load_board  # noqa: E402
from vision.board import locate_board  # noqa: E402
from vision.dice.reader import DiceReader, DieReading  # noqa: E402
from vision.synth import Scene  # noqa: E402

# The reader's rules: name -> the settings that turn it off (docs/dice-history.md).
READER_RULES: dict[str, dict[str, Any]] = {
    "neighbour_probe": {"neighbour_probe": False},
    "split_pairs": {"split_oversize": 3.0},
    "split_twos": {"split_twos": False},
    "split_twos_whole": {"split_twos_whole": False},
    "withhold_unsplit_twos": {"withhold_unsplit_twos": False},
    "reread_dominoes": {"reread_oversize": 3.0},
    "domino_weak": {"domino_weak": False},
    "domino_search": {"domino_search": 0.0},
    "found_readable_floor": {"found_readable_floor": 1.0},
    "off_size_check": {"off_size_range": (0.0, math.inf)},
    "off_size_nulls": {"read_off_size_nulls": False},
    "grid_search": {"grid_search": False},
    "short_search": {"short_search": False},
    "one_check": {"one_check_reach": 0.0},
    "one_rivals": {"one_rival_reaches": ()},
    "second_look": {"confirm_threshold": 2.0},
}
# The table's own rules (vision.table_dice), turned off by patching the module.
TABLE_RULES = ["rule57b", "rule58", "rule57b+58", "rule60b", "tilt_check"]
KEYS = ["right", "wrong", "null", "missed", "false", "cocked_numbered", "cocked_null",
        "cocked_missed", "roll_right", "roll_again", "roll_wrong"]


@contextlib.contextmanager
def table_rule_off(name: str) -> Iterator[None]:
    """Turn one of :data:`TABLE_RULES` off while inside (the tilt check is an argument)."""
    by_rule: dict[str, dict[str, Any]] = {
        "rule57b": {"TOP_REREAD_STEPS": (0.3,)},  # one point never agrees
        "rule58": {"_read_in_top_view": lambda *a, **k: None},
        "rule57b+58": {"TOP_REREAD_MIN_VIEW_DEG": 90.0},
        "rule60b": {"find_beside_in_top_view": lambda frame, pose, found, *a, **k: found},
    }
    patches = by_rule.get(name, {})
    saved = {attr: getattr(table_dice, attr) for attr in patches}
    try:
        for attr, value in patches.items():
            setattr(table_dice, attr, value)
        yield
    finally:
        for attr, value in saved.items():
            setattr(table_dice, attr, value)


def verdicts(sc: Scene, found: list[DieReading]) -> dict[str, Any]:
    """Each die's verdict as `companion bench vision` counts it, false dice, the roll."""
    truth = [(d.value, d.center) for d in sc.dice]
    dice, false = bench.die_verdicts(truth, found)
    return {"dice": dice, "false": false,
            "roll": bench.roll_verdict(truth, found, len(sc.dice)),
            "read": [[r.value, round(r.center[0], 1), round(r.center[1], 1)] for r in found]}


def audit(seed: int, scenes: int, kind: str, out: Path | None) -> list[dict[str, Any]]:
    """The verdicts of every scene with all rules on ("all") and each rule off."""
    board = load_board("standard")
    board_image = bench.bench_board_image(board)
    readers = {"all": DiceReader()}
    for name, settings in READER_RULES.items():
        readers[name] = DiceReader()
        for attr, value in settings.items():
            assert hasattr(readers[name], attr), attr
            setattr(readers[name], attr, value)
    records = []
    with open(out, "w") if out else contextlib.nullcontext() as f:
        for i in range(scenes):
            sc = bench.bench_scene(board, board_image, seed, i, dice_touching=kind == "touching",
                                   dice_cocked=(1,) if kind == "cocked" else ())
            pose = locate_board(sc.image, board)
            rec: dict[str, Any] = {"seed": seed, "kind": kind, "scene": i,
                                   "truth": [d.value for d in sc.dice]}
            for name, reader in readers.items():
                rec[name] = verdicts(sc, table_dice.read_table_dice(
                    sc.image, board, pose, reader=reader, expected=len(sc.dice)))
            for name in TABLE_RULES:
                with table_rule_off(name):
                    rec[name] = verdicts(sc, table_dice.read_table_dice(
                        sc.image, board, pose, reader=readers["all"], expected=len(sc.dice),
                        tilt_check=name != "tilt_check"))
            records.append(rec)
            if f is not None:
                f.write(json.dumps(rec) + "\n")
                f.flush()
    return records


def summary(records: list[dict[str, Any]]) -> str:
    """A table: the counts with all rules on, then each rule off as differences."""
    def totals(name: str) -> Counter[str]:
        c: Counter[str] = Counter()
        for r in records:
            c.update(r[name]["dice"])
            c["false"] += r[name]["false"]
            c["roll_" + r[name]["roll"]] += 1
        return c

    base = totals("all")
    heads = ["right", "wrong", "null", "missed", "false", "c.num", "c.null", "c.miss",
             "roll ok", "again", "roll wrong"]
    lines = [f"{len(records)} scenes; rule off: counts against all rules on; 'scenes': "
             "scenes with any die or false die changed",
             f"{'':22}" + "".join(f"{h:>11}" for h in heads) + f"{'scenes':>8}",
             f"{'all rules on':22}" + "".join(f"{base[k]:>11}" for k in KEYS)]
    for name in list(READER_RULES) + TABLE_RULES:
        c = totals(name)
        changed = sum(r[name]["dice"] != r["all"]["dice"] or r[name]["false"] != r["all"]["false"]
                      for r in records)
        lines.append(f"{name:22}" + "".join(
            f"{c[k] - base[k]:>+11}" if c[k] != base[k] else f"{'.':>11}" for k in KEYS)
            + f"{changed:>8}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=900)
    ap.add_argument("--scenes", type=int, default=200)
    ap.add_argument("--kind", choices=["apart", "touching", "cocked"], default="apart",
                    help="the dice apart, face to face, or the second die cocked")
    ap.add_argument("--out", type=Path, help="every scene's verdicts (JSON lines)")
    ap.add_argument("--summary", type=Path, nargs="+", metavar="JSONL",
                    help="no reading: the table of earlier --out files together")
    ap.add_argument("--threads", type=int, default=1, help="OpenCV threads (default 1)")
    args = ap.parse_args(argv)
    if args.summary:
        records = [json.loads(line) for p in args.summary for line in p.read_text().splitlines()]
    else:
        cv2.setNumThreads(args.threads)
        records = audit(args.seed, args.scenes, args.kind, args.out)
    print(summary(records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
