"""`companion locate`: board and tokens of image files, one JSON line per image.

``{"image": "path", "board_found": true, "tokens": {"21": "space-id", ...},
"unplaced": [33], "ms": 40.1}`` plus ``jerseys`` (jersey id -> space),
``unclear`` (token -> the spaces in doubt), ``missing`` (expected tokens not
seen) and ``unexpected`` (seen but not expected; both only with
``expected``), ``error_mm`` (the board fit), ``dice`` (with ``dice=True``:
as `companion dice` reports them, read by :func:`vision.table_dice.read_table_dice`;
``dice_rolled``, the number of dice the game rolls, lets it search harder when
it sees fewer)
and, when the board is not found or the image cannot be read, ``reason`` / ``error``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import IO, Any

import numpy as np

from companion.boards import Board
from vision.board import locate_board
from vision.image_file import read_image
from vision.markers import to_gray
from vision.tokens import read_tokens


def locate_frame(image: np.ndarray, board: Board, *, expected: list[int] | None = None,
                 side_mm: float = 10.0, height_mm: float = 0.0,
                 dice: bool = False, dice_rolled: int | None = None) -> dict[str, Any]:
    """Board and tokens (and with ``dice`` the dice) of one frame as the JSON object of
    `companion locate` (without ``image`` and ``ms``)."""
    try:
        gray = to_gray(image)
    except ValueError as exc:
        rec: dict[str, Any] = {"board_found": False, "tokens": {}, "unplaced": [],
                               "error": f"bad frame: {exc}"}
        if dice:
            rec["dice"] = []
        return rec
    pose = locate_board(image, board, gray=gray)
    out: dict[str, Any] = {"board_found": pose.found}
    if dice:
        from vision.dice.run import reading_dict
        from vision.table_dice import read_table_dice

        out["dice"] = [reading_dict(d) for d in read_table_dice(image, board, pose,
                                                                expected=dice_rolled)]
    if not pose.found:
        out.update(tokens={}, unplaced=[], reason=pose.reason)
        if expected is not None:
            out["missing"] = sorted(expected)
        return out
    reading = read_tokens(image, board, pose, expected=expected, side_mm=side_mm, gray=gray,
                          height_mm=height_mm)
    out["tokens"] = {str(k): v for k, v in sorted(reading.tokens.items())}
    out["unplaced"] = sorted(reading.unplaced)
    if reading.jerseys:
        out["jerseys"] = {str(k): v for k, v in sorted(reading.jerseys.items())}
    if reading.unclear:
        out["unclear"] = {str(k): v for k, v in sorted(reading.unclear.items())}
    if expected is not None:
        out["missing"] = reading.missing
        if reading.unexpected:
            out["unexpected"] = reading.unexpected
    out["error_mm"] = round(pose.error_mm, 2)
    return out


def locate_files(paths: Iterable[str], board: Board, out: IO[str], *,
                 expected: list[int] | None = None, side_mm: float = 10.0,
                 height_mm: float = 0.0, err: IO[str] | None = None,
                 as_json: bool = True, dice: bool = False,
                 dice_rolled: int | None = None) -> int:
    """Write one JSON line per image; 0 when every image could be read, else 1."""
    status = 0
    for path in paths:
        try:
            img = read_image(path)
            t0 = time.perf_counter()
        except ValueError as exc:
            status = 1
            t0 = time.perf_counter()
            rec: dict[str, Any] = {"image": path, "board_found": False, "tokens": {},
                                   "unplaced": [], "error": str(exc)}
            if dice:
                rec["dice"] = []
            if err is not None:
                print(f"companion locate: {path}: {exc}", file=err)
        else:
            rec = {"image": path, **locate_frame(img, board, expected=expected,
                                                 side_mm=side_mm, height_mm=height_mm,
                                                 dice=dice, dice_rolled=dice_rolled)}
        rec["ms"] = round(1000 * (time.perf_counter() - t0), 1)  # decoding the file excluded
        out.write((json.dumps(rec) if as_json else _text(rec)) + "\n")
        out.flush()
    return status


def _text(rec: dict[str, Any]) -> str:
    """A line for people: where each token is."""
    head = f"{rec['image']}: "
    if "error" in rec:
        return head + "error: " + str(rec["error"])
    if not rec["board_found"]:
        return head + "board not found: " + str(rec.get("reason", ""))
    parts = [f"{k} {v}" for k, v in rec["tokens"].items()]
    parts += [f"jersey {k} {v}" for k, v in rec.get("jerseys", {}).items()]
    parts += [f"{k} unclear ({'/'.join(v) or 'seen twice'})" for k, v in
              rec.get("unclear", {}).items()]
    if rec["unplaced"]:
        parts.append("off the track: " + " ".join(map(str, rec["unplaced"])))
    if rec.get("missing"):
        parts.append("not seen: " + " ".join(map(str, rec["missing"])))
    if "dice" in rec:
        parts.append("dice: " + (" ".join("?" if d["value"] is None else str(d["value"])
                                          for d in rec["dice"]) or "none"))
    return head + (", ".join(parts) or "no tokens") + f" ({rec['ms']} ms)"
