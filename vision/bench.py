"""`companion bench vision`: board and token localisation on seeded synthetic frames.

Every scene is a 2028x1520 frame of the synthetic table (``vision.synth``) with
16 riders on random spaces and 2 dice, under a random pose (tilt up to 35
degrees), uneven light, shadows, blur (sigma 0.3-1.5 px) and noise. Reported:
the share of riders read on the right space, on a wrong space, unclear and
missing, board found, and the median time per frame on one core
(``cv2.setNumThreads(1)``; wall clock, and the thread's CPU time, which other
jobs on a busy machine do not inflate) for board + tokens, and board + tokens + dice when
the dice reader (``vision.dice``) is there. The dice are read as the table does it
(``vision.table_dice``): in the board's dice area through the board pose, where the
board has one and the synthetic dice lie in it. Each scene's dice are also judged
as one roll, as the table takes it (:func:`roll_verdict`): taken right, "roll
again", or taken with a wrong value.
"""

from __future__ import annotations

import json
import time
from typing import IO, Any, Literal

import cv2
import numpy as np

from companion.boards import Board
from vision.board import locate_board
from vision.dice.data import closest_pairs
from vision.dice.reading import DieReading
from vision.dice.settle import Roll
from vision.markers import to_gray
from vision.render import render_board
from vision.synth import Scene, demo_board, random_riders, table_scene
from vision.tokens import read_tokens

PI4_FACTOR = (3.0, 4.0)  # a Raspberry Pi 4 core is 3-4x slower than this machine's
DICE_MATCH_PX = 25.0  # a reading this close to a true die's centre is its reading
BOARD_PX_PER_MM = 2.5  # the board texture is rendered once at this scale for a whole run


def bench_board_image(board: Board) -> np.ndarray:
    """The board texture every scene of a run is drawn from (render it once)."""
    return render_board(board, BOARD_PX_PER_MM)


def bench_scene(board: Board, board_image: np.ndarray, seed: int, i: int, *,
                side_mm: float = 10.0, **scene_kw: Any) -> Scene:
    """Scene ``i`` of a run with ``seed``: 16 riders on random spaces of ``board``
    (``board_image`` from :func:`bench_board_image`), markers ``side_mm`` wide;
    ``scene_kw`` go to ``table_scene`` (``hide_corners``, ``dice_touching``...). Tests
    call it to look again at a scene of the benchmark."""
    rng = np.random.default_rng([seed, i])
    riders = random_riders(board, rng, 16)
    return table_scene(board, riders, rng=rng, token_side_mm=side_mm, board_image=board_image,
                       board_px_per_mm=BOARD_PX_PER_MM, **scene_kw)


RollVerdict = Literal["right", "again", "wrong"]
DieVerdict = Literal["right", "wrong", "null", "missed", "cocked_numbered", "cocked_null",
                     "cocked_missed"]


def die_verdicts(truth: list[tuple[int, tuple[float, float]]], found: list[DieReading]
                 ) -> tuple[list[DieVerdict], int]:
    """Each true die's verdict among the readings ``found`` (paired closest first within
    :data:`DICE_MATCH_PX`): "right", "wrong", "null" or "missed", and for a cocked die
    (value 0 in ``truth``) "cocked_numbered", "cocked_null" or "cocked_missed"; and how
    many readings are no die. ``truth`` is (value, centre px) per die."""
    pairs = dict(closest_pairs([c for _, c in truth], [r.center for r in found], DICE_MATCH_PX))
    verdicts: list[DieVerdict] = []
    for i, (value, _) in enumerate(truth):
        got = found[pairs[i]].value if i in pairs else None
        if value == 0:  # the truth says cocked: unreadable
            verdicts.append("cocked_missed" if i not in pairs else
                            "cocked_null" if got is None else "cocked_numbered")
        else:
            verdicts.append("missed" if i not in pairs else "right" if got == value else
                            "null" if got is None else "wrong")
    return verdicts, len(found) - len(pairs)


def roll_verdict(truth: list[tuple[int, tuple[float, float]]], found: list[DieReading],
                 expected: int | None) -> RollVerdict:
    """How the table takes one frame's dice as a roll: "right" (every die read with its
    value and nothing else seen), "again" (:attr:`vision.dice.settle.Roll.problem` asks
    for the roll again: a die unclear, or not as many dice as ``expected``) or "wrong"
    (taken, with a wrong value, a false die, a die missed, or a cocked die, value 0
    in ``truth``, given a number). ``truth`` is (value, centre px) per die."""
    if not Roll(tuple(found), 1, expected).ok:
        return "again"
    pairs = closest_pairs([c for _, c in truth], [r.center for r in found], DICE_MATCH_PX)
    right = len(pairs) == len(truth) == len(found) and all(
        found[k].value == truth[i][0] for i, k in pairs)
    return "right" if right else "wrong"


def _dice_reader() -> Any:
    try:
        from vision.table_dice import read_table_dice
    except Exception:  # noqa: BLE001 - the dice reader is optional here
        return None
    return read_table_dice


def bench_vision(out: IO[str], *, scenes: int = 200, seed: int = 0, board: Board | None = None,
                 side_mm: float = 10.0, height_mm: float = 0.0,
                 as_json: bool = False, hide_corner: bool = False,
                 dice_touching: bool = False, dice_told: bool = True,
                 dice_cocked: bool = False, plain_sides: bool = False,
                 tilt_check: bool = True) -> dict[str, Any]:
    """Run the benchmark; print and return the figures.

    ``hide_corner`` puts a hand over one corner marker in every scene (scene i:
    marker i % 4), so the board is fitted on the three others. ``dice_touching``
    lays the two dice face to face in every scene (the dice reader's hard case).
    ``dice_told``: the reader is told how many dice were rolled, as the table is
    (it then searches harder when it sees fewer: rule 52 of docs/dice-history.md).
    ``dice_cocked`` rests the second die of every scene on an edge, tipped 20-70
    degrees (``table_scene(dice_cocked=...)``): it must be reported unreadable or not
    at all, and is counted apart (given a number, unreadable, not seen).
    ``plain_sides`` draws the flat dice's side faces without pips, as the scenes were
    drawn before 2026-11-29 (``table_scene(side_pips=False)``; figures comparable with
    the older entries of docs/dice-history.md). ``tilt_check=False`` reads the dice
    without the table's check for cocked dice (``vision.dice.tilt_check``, rules 61b, 61c and 62b).
    """
    cv2.setNumThreads(1)
    board = board or demo_board()
    board_img = bench_board_image(board)
    read_dice = _dice_reader()
    right = wrong = unclear = missing = total = found = 0
    dice_right = dice_wrong = dice_null = dice_false = dice_total = dice_in_area = 0
    cocked_numbered = cocked_null = cocked_total = 0
    rolls: dict[RollVerdict, int] = {"right": 0, "again": 0, "wrong": 0}
    ms_tokens: list[float] = []
    ms_all: list[float] = []
    cpu_tokens: list[float] = []  # CPU time of this thread: what the frame costs one core
    by_tilt = [[0, 0], [0, 0], [0, 0]]  # right, riders for tilts 0-12, 12-24, 24-35 degrees
    worst: list[str] = []
    dice_error = ""
    for i in range(scenes):
        sc = bench_scene(board, board_img, seed, i, side_mm=side_mm, token_height_mm=height_mm,
                         hide_corners=(i % 4,) if hide_corner else (),
                         dice_touching=dice_touching, dice_cocked=(1,) if dice_cocked else (),
                         side_pips=not plain_sides)
        riders = sc.riders
        t0, c0 = time.perf_counter(), time.thread_time()
        gray = to_gray(sc.image)
        pose = locate_board(sc.image, board, gray=gray)
        reading = read_tokens(sc.image, board, pose, expected=list(riders), side_mm=side_mm,
                              gray=gray, height_mm=height_mm)
        t1, c1 = time.perf_counter(), time.thread_time()
        ms_tokens.append(1000 * (t1 - t0))
        cpu_tokens.append(1000 * (c1 - c0))
        found += pose.found
        total += len(riders)
        band = by_tilt[min(2, int(sc.params["tilt_deg"] // 12))]
        for rider, space in riders.items():
            got = reading.tokens.get(rider)
            band[1] += 1
            band[0] += got == space
            if got == space:
                right += 1
            elif got is not None:
                wrong += 1
                worst.append(f"scene {i}: rider {rider} on {space} read on {got}")
            elif rider in reading.unclear:
                unclear += 1
            else:
                missing += 1
        if read_dice is not None:
            try:
                t2 = time.perf_counter()
                dice = read_dice(sc.image, board, pose,
                                 expected=len(sc.dice) if dice_told else None,
                                 tilt_check=tilt_check)
                ms_all.append(ms_tokens[-1] + 1000 * (time.perf_counter() - t2))
            except Exception as exc:  # noqa: BLE001 - report, go on without dice
                dice_error = f"{type(exc).__name__}: {exc}"
                read_dice = None
                continue
            dice_in_area += bool(sc.params.get("dice_in_area"))
            verdicts, false = die_verdicts([(d.value, d.center) for d in sc.dice], dice)
            cocked_total += sum(v.startswith("cocked") for v in verdicts)
            dice_total += len(verdicts) - sum(v.startswith("cocked") for v in verdicts)
            cocked_numbered += verdicts.count("cocked_numbered")
            cocked_null += verdicts.count("cocked_null")
            dice_right += verdicts.count("right")
            dice_null += verdicts.count("null")
            dice_wrong += verdicts.count("wrong")
            dice_false += false
            rolls[roll_verdict([(d.value, d.center) for d in sc.dice], dice,
                               len(sc.dice) if dice_told else None)] += 1

    def pct(n: int, d: int) -> float:
        return round(100.0 * n / d, 2) if d else 0.0

    res: dict[str, Any] = {
        "board": board.name, "scenes": scenes, "seed": seed, "riders": total,
        "token_side_mm": side_mm, "token_height_mm": height_mm, "hide_corner": hide_corner,
        "dice_touching": dice_touching, "dice_told": dice_told, "dice_cocked": dice_cocked,
        "plain_sides": plain_sides, "tilt_check": tilt_check,
        "board_found_pct": pct(found, scenes),
        "right_pct": pct(right, total), "wrong_pct": pct(wrong, total),
        "unclear_pct": pct(unclear, total), "missing_pct": pct(missing, total),
        "ms_board_tokens_median": round(float(np.median(ms_tokens)), 1),
        "ms_board_tokens_p90": round(float(np.percentile(ms_tokens, 90)), 1),
        "cpu_ms_board_tokens_median": round(float(np.median(cpu_tokens)), 1),
        "right_pct_by_tilt": {band: pct(r, n) for band, (r, n) in
                              zip(("0-12", "12-24", "24-35"), by_tilt, strict=True) if n},
    }
    if ms_all:
        res["ms_with_dice_median"] = round(float(np.median(ms_all)), 1)
        res["dice_right_pct"] = pct(dice_right, dice_total)
        res["dice_wrong_pct"] = pct(dice_wrong, dice_total)
        res["dice_null_pct"] = pct(dice_null, dice_total)
        res["dice_missed_pct"] = pct(dice_total - dice_right - dice_wrong - dice_null, dice_total)
        res["dice_false"] = dice_false
        res["dice_in_area_pct"] = pct(dice_in_area, scenes)
        n_rolls = sum(rolls.values())
        res["rolls_right_pct"] = pct(rolls["right"], n_rolls)
        res["rolls_again_pct"] = pct(rolls["again"], n_rolls)
        res["rolls_wrong_pct"] = pct(rolls["wrong"], n_rolls)
        if cocked_total:
            res["cocked_numbered_pct"] = pct(cocked_numbered, cocked_total)
            res["cocked_null_pct"] = pct(cocked_null, cocked_total)
            res["cocked_unseen_pct"] = pct(cocked_total - cocked_numbered - cocked_null,
                                           cocked_total)
    elif dice_error:
        res["dice_error"] = dice_error
    else:
        res["dice"] = "vision.dice reader not available"
    if worst:
        res["wrong_examples"] = worst[:10]
    if as_json:
        out.write(json.dumps(res) + "\n")
        return res
    lo, hi = PI4_FACTOR
    m = res["ms_board_tokens_median"]
    cpu = res["cpu_ms_board_tokens_median"]
    out.write(
        f"vision bench: {scenes} synthetic 2028x1520 frames of {board.name!r}, 16 riders each, "
        f"token markers {side_mm:g} mm at {height_mm:g} mm above the board, seed {seed}"
        + (", a hand over one corner marker in every scene" if hide_corner else "")
        + (", the dice touching" if dice_touching else "")
        + (", the second die cocked" if dice_cocked else "")
        + (", the dice's side faces plain" if plain_sides else "")
        + (", no tilt check" if not tilt_check else "") + "\n"
        f"  board found {res['board_found_pct']}%\n"
        f"  riders: right {res['right_pct']}%, wrong {res['wrong_pct']}%, "
        f"unclear {res['unclear_pct']}%, missing {res['missing_pct']}%\n"
        f"  right by camera tilt: " + ", ".join(
            f"{k} degrees {v}%" for k, v in res["right_pct_by_tilt"].items()) + "\n"
        f"  board+tokens: median {m} ms/frame (p90 {res['ms_board_tokens_p90']}) wall clock, "
        f"{cpu} ms CPU, one core; Pi 4 estimate {cpu * lo:.0f}-{cpu * hi:.0f} ms\n")
    if "ms_with_dice_median" in res:
        md = res["ms_with_dice_median"]
        area = ("in the board's dice area" if board.dice_area_mm is not None
                else "anywhere (the board has no dice area)")
        out.write(f"  board+tokens+dice: median {md} ms/frame; Pi 4 estimate "
                  f"{md * lo:.0f}-{md * hi:.0f} ms\n"
                  f"  dice ({area}; there in {res['dice_in_area_pct']}% of the scenes; "
                  f"{'told' if dice_told else 'not told'} how many were rolled): "
                  f"right {res['dice_right_pct']}%, wrong {res['dice_wrong_pct']}%, "
                  f"unreadable {res['dice_null_pct']}%, missed {res['dice_missed_pct']}%, "
                  f"{dice_false} false dice\n"
                  f"  rolls, as the table takes them: right {res['rolls_right_pct']}%, "
                  f"roll again {res['rolls_again_pct']}%, wrong {res['rolls_wrong_pct']}%\n")
        if "cocked_numbered_pct" in res:
            out.write(f"  cocked dice (must be unreadable or unseen): given a number "
                      f"{res['cocked_numbered_pct']}%, unreadable {res['cocked_null_pct']}%, "
                      f"not seen {res['cocked_unseen_pct']}%\n")
    else:
        out.write(f"  dice: {res.get('dice_error') or res.get('dice')}\n")
    for w in res.get("wrong_examples", []):
        out.write(f"  WRONG {w}\n")
    return res
