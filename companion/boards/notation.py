"""A compact text notation for small boards, used by tests and records.

Riders go from left to right across the page; each text row is a lane, the
top row the leftmost lane as the riders see it (so "the rider on the right"
is lower on the page). Tokens are separated by spaces; each column is one
step along the road::

    # three lanes, a start, cobbles with 3, a thick line, finish line A
    .o  .o  .   c3  c3 |A .  .
    .o  .o  41  c3  .  |A .  .
    =   =   _   _   _     _  _
    .o  .o  .   c3  c3 |A d2 d2

Space tokens: a surface letter (``.`` asphalt, ``c`` cobblestone, ``u``
uphill, ``d`` downhill), then the space's number (not on asphalt), then
``o`` for a start dot (``o2`` for a dot of Start 2; plain ``o`` is Start 1),
then ``:NN`` for a rider standing there. A bare rider number (``41``) is an
asphalt space with that rider. ``-`` is a hole: no space in this lane at that
column (a curve's inner lane has fewer spaces). ``|A`` after a space puts
finish line A right after it.

A row made only of ``=`` and ``_`` is a barrier row between the lanes above
and below it: ``=`` under a column is a thick line, so no diagonal step
crosses between those two lanes from that column.

Space ids are the lane letter and the column: ``a0`` is the first space of the
leftmost lane, ``b3`` the fourth of the second lane.
"""

from __future__ import annotations

import re
import string

from companion.boards.loader import BoardError, _with_derived_neighbours, validate_spaces
from companion.boards.model import Board, Marker, Space, Surface

SPACE_MM = (36.0, 28.0)  # length along the road, lane width
MARGIN_MM = 50.0
MARKER_MM = 30.0

_SURFACES = {".": Surface.ASPHALT, "c": Surface.COBBLESTONE, "u": Surface.UPHILL,
             "d": Surface.DOWNHILL}
_LETTERS = {v: k for k, v in _SURFACES.items()}
_TOKEN = re.compile(r"^(?P<surface>[.cud])(?P<number>\d?)(?:o(?P<start>\w*))?(?::(?P<rider>\d+))?$")
_RIDER = re.compile(r"^\d{2}$")


def space_id(lane: int, column: int) -> str:
    """The id the notation gives the space of a lane and column."""
    return f"{string.ascii_lowercase[lane]}{column}"


def parse_board(text: str, name: str = "notation") -> tuple[Board, dict[int, str]]:
    """Parse the notation into a board and the riders it shows (rider -> space id)."""
    lanes: list[list[str]] = []
    barriers: dict[int, set[int]] = {}  # lane above -> columns with a thick line
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        tokens = line.split()
        if all(t in ("=", "_") for t in tokens):
            if not lanes:
                raise BoardError(f"line {lineno}: a barrier row needs a lane above it", name)
            barriers[len(lanes) - 1] = {i for i, t in enumerate(tokens) if t == "="}
            continue
        lanes.append(tokens)
        if len(lanes) > 26:
            raise BoardError("at most 26 lanes", name)
    if not lanes:
        raise BoardError("no lanes in the board text", name)

    cells: dict[tuple[int, int], Space] = {}
    riders: dict[int, str] = {}
    width = 0
    for lane, tokens in enumerate(lanes):
        column = -1
        for tok in tokens:
            if tok.startswith("|"):
                label = tok[1:]
                if column < 0 or (lane, column) not in cells or not label:
                    raise BoardError(f"lane {lane + 1}: {tok!r} must follow a space", name)
                cells[(lane, column)] = _with(cells[(lane, column)], line_after=label)
                continue
            column += 1
            if tok == "-":
                continue
            surface, number, start, rider = _parse_token(tok, name, lane, column)
            sid = space_id(lane, column)
            x = MARGIN_MM + (column + 0.5) * SPACE_MM[0]
            y = MARGIN_MM + (lane + 0.5) * SPACE_MM[1]
            hx, hy = SPACE_MM[0] / 2, SPACE_MM[1] / 2
            cells[(lane, column)] = Space(
                id=sid, lane=lane, order=float(column), center_mm=(x, y), surface=surface,
                number=number, start=start,
                polygon_mm=((x - hx, y - hy), (x + hx, y - hy), (x + hx, y + hy), (x - hx, y + hy)),
            )
            if rider is not None:
                if rider in riders:
                    raise BoardError(f"rider {rider} stands on two spaces", name, sid)
                riders[rider] = sid
        width = max(width, column + 1)

    def first_after(lane: int, column: int) -> str | None:
        for c in range(column + 1, width):
            if (lane, c) in cells:
                return cells[(lane, c)].id
        return None

    spaces: dict[str, Space] = {}
    for (lane, column), s in sorted(cells.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        left = right = None
        if lane > 0 and column not in barriers.get(lane - 1, set()):
            left = first_after(lane - 1, column)
        if lane + 1 < len(lanes) and column not in barriers.get(lane, set()):
            right = first_after(lane + 1, column)
        spaces[s.id] = _with(s, straight=first_after(lane, column), left=left, right=right)
    spaces = _with_derived_neighbours(spaces)
    validate_spaces(spaces, name)
    w = 2 * MARGIN_MM + width * SPACE_MM[0]
    h = 2 * MARGIN_MM + len(lanes) * SPACE_MM[1]
    m = (MARGIN_MM - MARKER_MM) / 2
    markers = {
        0: Marker(0, m, m, MARKER_MM),
        1: Marker(1, w - m - MARKER_MM, m, MARKER_MM),
        2: Marker(2, w - m - MARKER_MM, h - m - MARKER_MM, MARKER_MM),
        3: Marker(3, m, h - m - MARKER_MM, MARKER_MM),
    }
    return Board(name=name, size_mm=(w, h), spaces=spaces, markers=markers), riders


def _with(space: Space, **changes: object) -> Space:
    from dataclasses import replace

    return replace(space, **changes)  # type: ignore[arg-type]


def _parse_token(
    tok: str, name: str, lane: int, column: int
) -> tuple[Surface, int, str | None, int | None]:
    if _RIDER.match(tok):
        return Surface.ASPHALT, 0, None, int(tok)
    m = _TOKEN.match(tok)
    if not m:
        raise BoardError(f"cannot read token {tok!r}", name, space_id(lane, column))
    surface = _SURFACES[m["surface"]]
    number = int(m["number"] or 0)
    if surface is Surface.ASPHALT and number:
        raise BoardError(f"asphalt carries no number in {tok!r}", name, space_id(lane, column))
    start = None
    if m["start"] is not None:
        start = m["start"] or "1"
    rider = int(m["rider"]) if m["rider"] else None
    return surface, number, start, rider


def board_text(board: Board, riders: dict[int, str] | None = None) -> str:
    """Write a notation board (one whose orders are whole columns) back as text."""
    riders_at = {space: rider for rider, space in (riders or {}).items()}
    n_lanes = 1 + max(s.lane for s in board.spaces.values())
    width = 1 + int(max(s.order for s in board.spaces.values()))
    grid: dict[tuple[int, int], Space] = {}
    for s in board.spaces.values():
        if s.order != int(s.order):
            raise BoardError("only boards with whole-column orders can be written as text",
                             board.name, s.id)
        grid[(s.lane, int(s.order))] = s
    rows: list[str] = []
    for lane in range(n_lanes):
        toks: list[str] = []
        for col in range(width):
            cell = grid.get((lane, col))
            if cell is None:
                toks.append("-")
                continue
            s = cell
            tok = _LETTERS[s.surface] + (str(s.number) if s.number else "")
            if s.start is not None:
                tok += "o" + ("" if s.start == "1" else s.start)
            if s.id in riders_at:
                tok = (f"{riders_at[s.id]}" if tok == "." else f"{tok}:{riders_at[s.id]}")
            toks.append(tok)
            if s.line_after:
                toks.append("|" + s.line_after)
        rows.append(" ".join(toks))
        if lane + 1 < n_lanes:
            marks = []
            any_bar = False
            for col in range(width):
                above = grid.get((lane, col))
                below = grid.get((lane + 1, col))
                barred = (above is not None and above.right is None and _has_next(grid, lane + 1, col, width)) or (
                    below is not None and below.left is None and _has_next(grid, lane, col, width))
                marks.append("=" if barred else "_")
                any_bar = any_bar or barred
            if any_bar:
                rows.append(" ".join(marks))
    return "\n".join(rows) + "\n"


def _has_next(grid: dict[tuple[int, int], Space], lane: int, col: int, width: int) -> bool:
    return any((lane, c) in grid for c in range(col + 1, width))
