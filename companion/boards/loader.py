"""Board files (JSON): load with full validation, and write back.

The schema is documented in ``docs/boards.md``. Every problem is reported as
a :class:`BoardError` naming the file, the space and what is wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from companion.boards.model import Board, Marker, Space, Surface

BOARD_DIR = Path(__file__).parent / "data"


class BoardError(ValueError):
    """A board file or board description that cannot be used."""

    def __init__(self, message: str, source: str = "", space: str | None = None) -> None:
        self.source = source
        self.space = space
        where = source
        if space is not None:
            where = f"{where}: space {space!r}" if where else f"space {space!r}"
        super().__init__(f"{where}: {message}" if where else message)


def _number(value: Any, what: str, source: str, space: str | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise BoardError(f"{what} must be a number, not {value!r}", source, space)
    return float(value)


def _point(value: Any, what: str, source: str, space: str | None = None) -> tuple[float, float]:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise BoardError(f"{what} must be [x, y], not {value!r}", source, space)
    return (_number(value[0], what, source, space), _number(value[1], what, source, space))


def _optional_id(value: Any, what: str, source: str, space: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise BoardError(f"{what} must be a space id or null, not {value!r}", source, space)
    return value


def _space(raw: Any, index: int, source: str) -> Space:
    if not isinstance(raw, dict):
        raise BoardError(f"spaces[{index}] must be an object", source)
    sid = raw.get("id")
    if not isinstance(sid, str) or not sid:
        raise BoardError(f"spaces[{index}] has no string 'id'", source)
    lane = raw.get("lane")
    if isinstance(lane, bool) or not isinstance(lane, int) or lane < 0:
        raise BoardError(f"'lane' must be a whole number >= 0, not {lane!r}", source, sid)
    order = _number(raw.get("order"), "'order'", source, sid)
    center = _point(raw.get("center_mm"), "'center_mm'", source, sid)
    surface_name = raw.get("surface", "asphalt")
    try:
        surface = Surface(surface_name)
    except ValueError:
        names = ", ".join(s.value for s in Surface)
        raise BoardError(f"unknown surface {surface_name!r} (one of {names})", source, sid) from None
    number = raw.get("number", 0)
    if isinstance(number, bool) or not isinstance(number, int) or not 0 <= number <= 9:
        raise BoardError(f"'number' must be a whole number 0-9, not {number!r}", source, sid)
    nxt = raw.get("next", {})
    if not isinstance(nxt, dict):
        raise BoardError("'next' must be an object {straight, left, right}", source, sid)
    unknown = set(nxt) - {"straight", "left", "right"}
    if unknown:
        raise BoardError(f"'next' has unknown keys {sorted(unknown)}", source, sid)
    beside = raw.get("beside", {})
    if not isinstance(beside, dict) or set(beside) - {"left", "right"}:
        raise BoardError("'beside' must be an object {left, right}", source, sid)
    start = raw.get("start")
    if start is not None and (not isinstance(start, str) or not start):
        raise BoardError(f"'start' must be a start name or null, not {start!r}", source, sid)
    line = raw.get("line_after")
    if line is not None and (not isinstance(line, str) or not line):
        raise BoardError(f"'line_after' must be a line name or null, not {line!r}", source, sid)
    polygon = raw.get("polygon_mm")
    poly: tuple[tuple[float, float], ...] | None = None
    if polygon is not None:
        if not isinstance(polygon, list) or len(polygon) < 3:
            raise BoardError("'polygon_mm' must list at least 3 points", source, sid)
        poly = tuple(_point(p, "'polygon_mm' point", source, sid) for p in polygon)
    known = {
        "id", "lane", "order", "center_mm", "surface", "number", "next", "beside",
        "start", "line_after", "polygon_mm", "label",
    }
    extra = set(raw) - known
    if extra:
        raise BoardError(f"unknown fields {sorted(extra)}", source, sid)
    return Space(
        id=sid,
        lane=lane,
        order=order,
        center_mm=center,
        surface=surface,
        number=number,
        straight=_optional_id(nxt.get("straight"), "'next.straight'", source, sid),
        left=_optional_id(nxt.get("left"), "'next.left'", source, sid),
        right=_optional_id(nxt.get("right"), "'next.right'", source, sid),
        beside_left=_optional_id(beside.get("left"), "'beside.left'", source, sid),
        beside_right=_optional_id(beside.get("right"), "'beside.right'", source, sid),
        start=start,
        line_after=line,
        polygon_mm=poly,
    )


def board_from_dict(data: Any, source: str = "<board>") -> Board:
    """Build and validate a board from the parsed JSON of a board file."""
    if not isinstance(data, dict):
        raise BoardError("a board file must hold a JSON object", source)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise BoardError("missing 'name'", source)
    size = _point(data.get("size_mm"), "'size_mm'", source)
    if size[0] <= 0 or size[1] <= 0:
        raise BoardError("'size_mm' must be positive", source)
    raw_markers = data.get("markers")
    if not isinstance(raw_markers, dict):
        raise BoardError("missing 'markers' (id -> [x_mm, y_mm, side_mm])", source)
    markers: dict[int, Marker] = {}
    for key, value in raw_markers.items():
        try:
            mid = int(key)
        except ValueError:
            raise BoardError(f"marker id {key!r} is not a number", source) from None
        if not 0 <= mid <= 3:
            raise BoardError(f"corner marker id {mid} must be 0-3", source)
        if not isinstance(value, list) or len(value) != 3:
            raise BoardError(f"marker {mid} must be [x_mm, y_mm, side_mm]", source)
        x, y, s = (_number(v, f"marker {mid}", source) for v in value)
        if s <= 0:
            raise BoardError(f"marker {mid} has side {s}, must be > 0", source)
        markers[mid] = Marker(mid, x, y, s)
    raw_spaces = data.get("spaces")
    if not isinstance(raw_spaces, list) or not raw_spaces:
        raise BoardError("missing 'spaces' (a non-empty list)", source)
    spaces: dict[str, Space] = {}
    for i, raw in enumerate(raw_spaces):
        space = _space(raw, i, source)
        if space.id in spaces:
            raise BoardError("the id is used twice", source, space.id)
        spaces[space.id] = space
    period = data.get("order_period")
    if period is not None:
        period = _number(period, "'order_period'", source)
        if period <= 0:
            raise BoardError("'order_period' must be > 0", source)
    pieces_raw = data.get("pieces", {})
    if not isinstance(pieces_raw, dict):
        raise BoardError("'pieces' must be an object (marker id -> piece name)", source)
    pieces: dict[int, str] = {}
    for key, value in pieces_raw.items():
        try:
            pid = int(key)
        except ValueError:
            raise BoardError(f"piece marker id {key!r} is not a number", source) from None
        if not 60 <= pid <= 99:
            raise BoardError(f"piece marker id {pid} must be 60-99", source)
        pieces[pid] = str(value)
    game = data.get("game", "um-reifenbreite")
    if not isinstance(game, str):
        raise BoardError("'game' must be a string", source)
    dice_area = dice_area_from(data.get("dice_area_mm"), source)
    # ``beside`` is derived where the file leaves it out; an explicit null means "nobody".
    explicit_none = {
        (raw["id"], side)
        for raw in raw_spaces
        if isinstance(raw.get("beside"), dict)
        for side in ("left", "right")
        if side in raw["beside"] and raw["beside"][side] is None
    }
    spaces = _with_derived_neighbours(spaces)
    for sid, side in explicit_none:
        spaces[sid] = replace(spaces[sid], **{f"beside_{side}": None})  # type: ignore[arg-type]
    validate_spaces(spaces, source)
    return Board(
        name=name,
        size_mm=size,
        spaces=spaces,
        markers=markers,
        order_period=period,
        game=game,
        pieces=pieces,
        dice_area_mm=dice_area,
    )


def dice_area_from(raw: Any, source: str) -> tuple[float, float, float, float] | None:
    """A board file's ``dice_area_mm``: ``[x, y, w, h]`` (mm, w and h > 0), or None if absent."""
    if raw is None:
        return None
    if not isinstance(raw, list) or len(raw) != 4:
        raise BoardError("'dice_area_mm' must be [x_mm, y_mm, width_mm, height_mm]", source)
    x, y, w, h = (_number(v, "'dice_area_mm'", source) for v in raw)
    if w <= 0 or h <= 0:
        raise BoardError(f"'dice_area_mm' has size {w:g} x {h:g} mm, both must be > 0", source)
    return x, y, w, h


def _with_derived_neighbours(spaces: dict[str, Space]) -> dict[str, Space]:
    """Fill in ``beside`` where the file leaves it out.

    The space beside ``s`` on the right is the one whose straight successor is
    ``s``'s right diagonal (and likewise on the left); where a thick line hides
    the diagonal, the space in the neighbouring lane with the same order.
    """
    behind = {s.straight: s.id for s in spaces.values() if s.straight is not None}
    by_lane_order = {(s.lane, s.order): s.id for s in spaces.values()}
    out: dict[str, Space] = {}
    for s in spaces.values():
        left, right = s.beside_left, s.beside_right
        if left is None and s.lane > 0:
            left = behind.get(s.left) if s.left else None
            left = left or by_lane_order.get((s.lane - 1, s.order))
        if right is None:
            right = behind.get(s.right) if s.right else None
            right = right or by_lane_order.get((s.lane + 1, s.order))
        if (left, right) != (s.beside_left, s.beside_right):
            s = replace(s, beside_left=left, beside_right=right)
        out[s.id] = s
    return out


def validate_spaces(spaces: Mapping[str, Space], source: str = "") -> None:
    """Check the links of a space graph; raise :class:`BoardError` on the first problem."""
    seen_straight: dict[str, str] = {}
    for s in spaces.values():
        for what, target in (
            ("next.straight", s.straight),
            ("next.left", s.left),
            ("next.right", s.right),
            ("beside.left", s.beside_left),
            ("beside.right", s.beside_right),
        ):
            if target is None:
                continue
            if target not in spaces:
                raise BoardError(f"'{what}' names {target!r}, which is not a space", source, s.id)
            if target == s.id:
                raise BoardError(f"'{what}' points to the space itself", source, s.id)
        if s.straight is not None:
            if s.straight in seen_straight:
                raise BoardError(
                    f"{s.straight!r} is the straight successor of both "
                    f"{seen_straight[s.straight]!r} and {s.id!r}",
                    source,
                    s.id,
                )
            seen_straight[s.straight] = s.id
            if spaces[s.straight].lane != s.lane:
                raise BoardError(
                    f"straight successor {s.straight!r} is in lane {spaces[s.straight].lane}, "
                    f"not lane {s.lane}",
                    source,
                    s.id,
                )
        if s.left is not None and spaces[s.left].lane != s.lane - 1:
            raise BoardError(f"left diagonal {s.left!r} is not in lane {s.lane - 1}", source, s.id)
        if s.right is not None and spaces[s.right].lane != s.lane + 1:
            raise BoardError(
                f"right diagonal {s.right!r} is not in lane {s.lane + 1}", source, s.id
            )
        if s.surface.value == "asphalt" and s.number != 0:
            raise BoardError("an asphalt space carries no number", source, s.id)


def load_board(path: str | Path) -> Board:
    """Load a board file. ``path`` may also name a shipped board ("standard")."""
    p = Path(path)
    if not p.exists() and not p.suffix and (BOARD_DIR / f"{p.name}.json").exists():
        p = BOARD_DIR / f"{p.name}.json"
    source = str(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BoardError("no such board file", source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BoardError(f"cannot read the file ({exc})", source) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BoardError(f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})", source) from None
    return board_from_dict(data, source)


def board_to_dict(board: Board) -> dict[str, Any]:
    """The JSON form of a board, as :func:`load_board` reads it."""
    spaces = []
    for s in board.spaces.values():
        raw: dict[str, Any] = {
            "id": s.id,
            "lane": s.lane,
            "order": s.order,
            "center_mm": [round(s.center_mm[0], 2), round(s.center_mm[1], 2)],
            "surface": s.surface.value,
            "number": s.number,
            "next": {"straight": s.straight, "left": s.left, "right": s.right},
            "beside": {"left": s.beside_left, "right": s.beside_right},
        }
        if s.start is not None:
            raw["start"] = s.start
        if s.line_after is not None:
            raw["line_after"] = s.line_after
        if s.polygon_mm is not None:
            raw["polygon_mm"] = [[round(x, 2), round(y, 2)] for x, y in s.polygon_mm]
        spaces.append(raw)
    out: dict[str, Any] = {
        "name": board.name,
        "game": board.game,
        "size_mm": list(board.size_mm),
        "markers": {str(m.id): [m.x_mm, m.y_mm, m.side_mm] for m in board.markers.values()},
    }
    if board.order_period is not None:
        out["order_period"] = board.order_period
    if board.pieces:
        out["pieces"] = {str(k): v for k, v in board.pieces.items()}
    if board.dice_area_mm is not None:
        out["dice_area_mm"] = list(board.dice_area_mm)
    out["spaces"] = spaces
    return out
