"""The board builder: a compact board description in, a full board file out.

A description (JSON, see ``docs/board-builder.md``) lays a road out like a
turtle: it starts at a point with a heading and a set of lanes, and a list of
*segments* moves it on: straights of N rows, curves (left or right, an angle
and the inner radius; the outer lane gets more spaces than the inner one),
lane changes (a road that narrows or widens), and forks into branches that
meet again further on. Segments carry the paint: surfaces and numbers over
rows and lanes, start dots, a finish line after their last row, thick lines
(no diagonal step between two lanes over some rows).

:func:`build_board` turns a description into a :class:`~companion.boards.model.Board`
that has every space with its id, lane, order, centre and outline in
millimetres, surface, number, forward links, side-by-side neighbours, start
dots and finish lines, validated by the board loader.

Coordinates are millimetres from the board's top-left corner, x to the right,
y down. A heading of 0 degrees points right (east), 90 down (south): a right
turn adds to the heading. The turtle's point lies on the *left edge of lane 0*
(the riders' left); lane ``i`` is ``i`` lane widths to its right, so a road
whose lanes are 2-3 occupies the right half of a four-lane road.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from companion.boards.loader import BoardError, board_from_dict, board_to_dict, dice_area_from
from companion.boards.model import Board, Surface

LANE_WIDTH_MM = 27.0
ROW_LENGTH_MM = 36.0
EPS = 1e-6
LETTERS = "abcdefghijklmnopqrstuvwxyz"
MAX_ROWS = 1000  # in one segment: more is a mistake in the description
MAX_MM = 100_000.0

_SEGMENT_KINDS = ("straight", "curve", "lanes", "fork")
_COMMON_KEYS = {"surface", "number", "numbers", "paint", "start", "line_after", "thick", "label"}
_KEYS = {
    "straight": {"straight", "length_mm"} | _COMMON_KEYS,
    "curve": {"curve", "angle_deg", "inner_radius_mm", "spaces"} | _COMMON_KEYS,
    "lanes": {"lanes", "label"},
    "fork": {"fork", "label"},
}


@dataclass
class _Pose:
    x: float
    y: float
    heading: float  # radians; 0 = east, pi/2 = south (y grows downwards)

    @property
    def forward(self) -> tuple[float, float]:
        return math.cos(self.heading), math.sin(self.heading)

    @property
    def right(self) -> tuple[float, float]:
        return -math.sin(self.heading), math.cos(self.heading)

    def at(self, along: float, offset: float) -> tuple[float, float]:
        """The point ``along`` mm ahead and ``offset`` mm to the right of the turtle."""
        (fx, fy), (rx, ry) = self.forward, self.right
        return self.x + fx * along + rx * offset, self.y + fy * along + ry * offset


@dataclass
class _Cell:
    """A space under construction."""

    piece: int
    lane: int
    u: float  # position along the piece in rows (row j of the inner lane at u = j)
    row: int  # the row of its segment it is painted with
    center: tuple[float, float]
    polygon: list[tuple[float, float]]
    segment: str
    surface: Surface = Surface.ASPHALT
    number: int = 0
    start: str | None = None
    line_after: str | None = None
    no_left: bool = False  # a thick line on the left: no left diagonal
    no_right: bool = False
    id: str = ""


@dataclass
class _Piece:
    """A stretch of road without forks: the trunk before a fork, a branch, the trunk after."""

    prefix: str
    rows: int = 0
    cells: dict[int, list[_Cell]] = field(default_factory=dict)
    successors: list[int] = field(default_factory=list)
    predecessors: list[int] = field(default_factory=list)
    order0: float = 0.0
    scale: float = 1.0


class _Builder:
    def __init__(self, desc: dict[str, Any], source: str) -> None:
        self.desc = desc
        self.source = source
        self.lane_w = self._positive(desc.get("lane_width_mm", LANE_WIDTH_MM), "lane_width_mm")
        self.row_len = self._positive(desc.get("row_length_mm", ROW_LENGTH_MM), "row_length_mm")
        self.pieces: list[_Piece] = []
        self.forks = 0

    # --- errors and small readers ------------------------------------------------

    def error(self, message: str, where: str = "") -> BoardError:
        return BoardError(f"{where}: {message}" if where else message, self.source)

    def _positive(self, value: Any, what: str, where: str = "") -> float:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 < value <= MAX_MM
        ):
            raise self.error(f"'{what}' must be a number > 0 (mm or degrees), not {value!r}",
                             where)
        return float(value)

    def _count(self, value: Any, what: str, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ROWS:
            raise self.error(
                f"'{what}' must be a whole number 1-{MAX_ROWS}, not {value!r}", where
            )
        return value

    def _lanes(self, value: Any, where: str, what: str = "lanes") -> tuple[int, int]:
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            or not 0 <= value[0] <= value[1] < len(LETTERS)
        ):
            raise self.error(
                f"'{what}' must be [first, last] lane numbers (0-25, first <= last), "
                f"not {value!r}",
                where,
            )
        return value[0], value[1]

    def _range(self, value: Any, what: str, where: str, limit: int) -> tuple[int, int]:
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
            or not 0 <= value[0] <= value[1] < limit
        ):
            raise self.error(
                f"'{what}' must be [first, last] with 0 <= first <= last < {limit}, "
                f"not {value!r}",
                where,
            )
        return value[0], value[1]

    def _surface(self, value: Any, where: str) -> Surface:
        try:
            return Surface(value)
        except ValueError:
            names = ", ".join(s.value for s in Surface)
            raise self.error(f"unknown surface {value!r} (one of {names})", where) from None

    def _number(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 9:
            raise self.error(f"a space number must be a whole number 0-9, not {value!r}", where)
        return value

    def _name(self, value: Any, what: str, where: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise self.error(f"'{what}' must be a name like \"1\" or \"A\", not {value!r}", where)
        return value

    # --- the road ------------------------------------------------------------------

    def new_piece(self, prefix: str) -> int:
        self.pieces.append(_Piece(prefix))
        return len(self.pieces) - 1

    def road(
        self, segments: Any, where: str, piece: int, pose: _Pose, lanes: tuple[int, int],
        in_branch: bool,
    ) -> tuple[int, _Pose, tuple[int, int]]:
        """Lay out a list of segments; returns the piece, pose and lanes at its end."""
        if not isinstance(segments, list) or not segments:
            raise self.error("'road' must be a non-empty list of segments", where)
        for i, seg in enumerate(segments):
            label = f"{where}[{i}]"
            if not isinstance(seg, dict):
                raise self.error("a segment must be an object", label)
            kinds = [k for k in _SEGMENT_KINDS if k in seg]
            if len(kinds) != 1:
                raise self.error(
                    "a segment needs exactly one of 'straight', 'curve', 'lanes', 'fork'", label
                )
            kind = kinds[0]
            if isinstance(seg.get("label"), str):
                label = f"{label} ({seg['label']})"
            unknown = set(seg) - _KEYS[kind]
            if unknown:
                raise self.error(f"unknown keys {sorted(unknown)} in a {kind} segment", label)
            if kind == "lanes":
                lanes = self._lanes(seg["lanes"], label)
            elif kind == "fork":
                if in_branch:
                    raise self.error("a fork inside a branch is not supported", label)
                piece, pose, lanes = self.fork(seg["fork"], label, piece, pose, lanes)
            elif kind == "straight":
                pose = self.straight(seg, label, piece, pose, lanes)
            else:
                pose = self.curve(seg, label, piece, pose, lanes)
        return piece, pose, lanes

    def straight(
        self, seg: dict[str, Any], where: str, piece: int, pose: _Pose, lanes: tuple[int, int]
    ) -> _Pose:
        rows = self._count(seg["straight"], "straight", where)
        length = self.row_len * rows
        if "length_mm" in seg:
            length = self._positive(seg["length_mm"], "length_mm", where)
        step = length / rows
        w = self.lane_w
        p = self.pieces[piece]
        cells: list[_Cell] = []
        for lane in range(lanes[0], lanes[1] + 1):
            for j in range(rows):
                a0, a1 = j * step, (j + 1) * step
                o0, o1 = lane * w, (lane + 1) * w
                poly = [pose.at(a0, o0), pose.at(a1, o0), pose.at(a1, o1), pose.at(a0, o1)]
                cells.append(
                    _Cell(piece, lane, p.rows + j, j, pose.at((a0 + a1) / 2, (o0 + o1) / 2),
                          poly, where)
                )
        self.paint(seg, where, cells, rows, lanes)
        self.add(piece, cells, rows)
        x, y = pose.at(length, 0.0)
        return _Pose(x, y, pose.heading)

    def curve(
        self, seg: dict[str, Any], where: str, piece: int, pose: _Pose, lanes: tuple[int, int]
    ) -> _Pose:
        side = seg["curve"]
        if side not in ("left", "right"):
            raise self.error(f"'curve' must be \"left\" or \"right\", not {side!r}", where)
        angle_deg = self._positive(seg.get("angle_deg"), "angle_deg", where)
        if angle_deg > 360:
            raise self.error("'angle_deg' must be at most 360", where)
        radius = seg.get("inner_radius_mm")
        if (
            isinstance(radius, bool)
            or not isinstance(radius, int | float)
            or not 0 <= radius <= MAX_MM
        ):
            raise self.error(f"'inner_radius_mm' must be a number >= 0, not {radius!r}", where)
        theta = math.radians(angle_deg)
        w = self.lane_w
        sign = 1.0 if side == "right" else -1.0
        # The centre of the turn lies ``radius`` beyond the inner edge of the road.
        inner_edge = (lanes[1] + 1) * w if side == "right" else lanes[0] * w
        cx, cy = pose.at(0.0, inner_edge + sign * radius)

        def radius_at(offset: float) -> float:
            return float(radius) + sign * (inner_edge - offset)

        def point(offset: float, fraction: float) -> tuple[float, float]:
            px, py = pose.at(0.0, offset)
            phi = sign * theta * fraction
            c, s = math.cos(phi), math.sin(phi)
            dx, dy = px - cx, py - cy
            return cx + c * dx - s * dy, cy + s * dx + c * dy

        n_lanes = lanes[1] - lanes[0] + 1
        counts: list[int] = []
        given = seg.get("spaces")
        if given is not None:
            if not isinstance(given, list) or len(given) != n_lanes:
                raise self.error(
                    f"'spaces' must list the number of spaces of each of the {n_lanes} lanes, "
                    "leftmost lane first",
                    where,
                )
            counts = [self._count(n, "spaces", where) for n in given]
        else:
            for lane in range(lanes[0], lanes[1] + 1):
                arc = radius_at((lane + 0.5) * w) * theta
                counts.append(max(1, math.floor(arc / self.row_len + 0.5)))
            if max(counts) > MAX_ROWS:
                raise self.error(f"the curve is too long ({max(counts)} spaces in a lane)", where)
        rows = min(counts)
        p = self.pieces[piece]
        cells: list[_Cell] = []
        for lane, n in zip(range(lanes[0], lanes[1] + 1), counts, strict=True):
            o0, o1 = lane * w, (lane + 1) * w
            steps = max(2, math.ceil(angle_deg / n / 6))
            for k in range(n):
                f0, f1 = k / n, (k + 1) / n
                fs = [f0 + (f1 - f0) * t / steps for t in range(steps + 1)]
                poly = [point(o0, f) for f in fs] + [point(o1, f) for f in reversed(fs)]
                u = -0.5 + (k + 0.5) * rows / n
                row = min(rows - 1, max(0, math.floor(u + 0.5)))
                cells.append(
                    _Cell(piece, lane, p.rows + u, row, point((o0 + o1) / 2, (f0 + f1) / 2),
                          poly, where)
                )
        self.paint(seg, where, cells, rows, lanes)
        self.add(piece, cells, rows)
        x, y = point(0.0, 1.0)
        return _Pose(x, y, pose.heading + sign * theta)

    def add(self, piece: int, cells: list[_Cell], rows: int) -> None:
        p = self.pieces[piece]
        for c in sorted(cells, key=lambda c: (c.lane, c.u)):
            p.cells.setdefault(c.lane, []).append(c)
        p.rows += rows

    def paint(
        self, seg: dict[str, Any], where: str, cells: list[_Cell], rows: int,
        lanes: tuple[int, int],
    ) -> None:
        surface = self._surface(seg.get("surface", "asphalt"), where)
        numbers: list[int] = []
        if "numbers" in seg:
            raw = seg["numbers"]
            if not isinstance(raw, list) or len(raw) != rows:
                raise self.error(f"'numbers' must list one number for each of the {rows} rows",
                                 where)
            numbers = [self._number(n, where) for n in raw]
        else:
            numbers = [self._number(seg.get("number", 0), where)] * rows
        start = self._name(seg.get("start"), "start", where)
        line = self._name(seg.get("line_after"), "line_after", where)
        for c in cells:
            c.surface = surface
            c.number = numbers[c.row]
            c.start = start
        paints = seg.get("paint", [])
        if not isinstance(paints, list):
            raise self.error("'paint' must be a list of {rows, lanes, surface, number}", where)
        for i, raw in enumerate(paints):
            pw = f"{where} paint[{i}]"
            if not isinstance(raw, dict) or set(raw) - {"rows", "lanes", "surface", "number"}:
                raise self.error("a paint entry is {rows, lanes, surface, number}", pw)
            r0, r1 = self._range(raw.get("rows", [0, rows - 1]), "rows", pw, rows)
            l0, l1 = self._lanes(raw.get("lanes", list(lanes)), pw)
            psurf = self._surface(raw.get("surface", surface.value), pw)
            pnum = self._number(raw.get("number", 0), pw)
            for c in cells:
                if r0 <= c.row <= r1 and l0 <= c.lane <= l1:
                    c.surface, c.number = psurf, pnum
        for c in cells:
            if c.surface is Surface.ASPHALT:
                c.number = 0
            elif c.number == 0:
                raise self.error(
                    f"a {c.surface.value} space needs a number 1-9 (lane {c.lane}, row {c.row})",
                    where,
                )
        if line is not None:
            for lane in range(lanes[0], lanes[1] + 1):
                last = max((c for c in cells if c.lane == lane), key=lambda c: c.u)
                last.line_after = line
        thick = seg.get("thick", [])
        if not isinstance(thick, list):
            raise self.error("'thick' must be a list of {between: [lane, lane+1], rows}", where)
        for i, raw in enumerate(thick):
            tw = f"{where} thick[{i}]"
            if isinstance(raw, list):
                raw = {"between": raw}
            if not isinstance(raw, dict) or set(raw) - {"between", "rows"}:
                raise self.error("a thick line is {between: [lane, lane+1], rows: [a, b]}", tw)
            a, b = self._lanes(raw.get("between"), tw, "between")
            if b != a + 1 or a < lanes[0] or b > lanes[1]:
                raise self.error(
                    f"a thick line lies between two neighbouring lanes of the road "
                    f"(lanes {lanes[0]}-{lanes[1]} here), not {[a, b]}",
                    tw,
                )
            r0, r1 = self._range(raw.get("rows", [0, rows - 1]), "rows", tw, rows)
            for c in cells:
                if r0 <= c.row <= r1:
                    if c.lane == a:
                        c.no_right = True
                    elif c.lane == b:
                        c.no_left = True

    def fork(
        self, raw: Any, where: str, piece: int, pose: _Pose, lanes: tuple[int, int]
    ) -> tuple[int, _Pose, tuple[int, int]]:
        if not isinstance(raw, list) or len(raw) < 2:
            raise self.error("'fork' must list at least two branches", where)
        self.forks += 1
        ends: list[tuple[int, _Pose, tuple[int, int], str]] = []
        taken: set[int] = set()
        names = {p.prefix for p in self.pieces}
        for i, branch in enumerate(raw):
            bw = f"{where} branch {i}"
            if not isinstance(branch, dict) or set(branch) - {"name", "lanes", "road"}:
                raise self.error("a branch is {name, lanes, road}", bw)
            name = branch.get("name", f"f{self.forks}{LETTERS[i]}")
            if not isinstance(name, str) or not name.isidentifier():
                raise self.error(f"a branch 'name' must be a short word, not {name!r}", bw)
            bw = f"{where} branch {name!r}"
            prefix = f"{name}-"
            if prefix in names:
                raise self.error("two branches have this name", bw)
            names.add(prefix)
            blanes = self._lanes(branch.get("lanes"), bw)
            if blanes[0] < lanes[0] or blanes[1] > lanes[1]:
                raise self.error(
                    f"the branch's lanes {list(blanes)} are not lanes of the road "
                    f"({lanes[0]}-{lanes[1]}) at the fork",
                    bw,
                )
            mine = set(range(blanes[0], blanes[1] + 1))
            if mine & taken:
                raise self.error("two branches start in the same lane", bw)
            taken |= mine
            b = self.new_piece(prefix)
            self.link(piece, b)
            end_piece, end_pose, end_lanes = self.road(
                branch.get("road"), f"{bw} road", b, _Pose(pose.x, pose.y, pose.heading),
                blanes, True,
            )
            ends.append((end_piece, end_pose, end_lanes, bw))
        if taken != set(range(lanes[0], lanes[1] + 1)):
            raise self.error("the branches must share out all lanes of the road", where)
        # The branches meet again: same place and heading, lanes side by side.
        first = ends[0][1]
        for _, end, _, bw in ends[1:]:
            turn = (end.heading - first.heading + math.pi) % (2 * math.pi) - math.pi
            if math.dist((end.x, end.y), (first.x, first.y)) > 2.0 or abs(turn) > math.radians(1):
                raise self.error(
                    f"the branches do not meet: {ends[0][3]} ends at "
                    f"({first.x:.1f}, {first.y:.1f}) heading {math.degrees(first.heading):.1f} "
                    f"deg, {bw} at ({end.x:.1f}, {end.y:.1f}) heading "
                    f"{math.degrees(end.heading):.1f} deg",
                    where,
                )
        merged: set[int] = set()
        for _, _, (l0, l1), bw in ends:
            mine = set(range(l0, l1 + 1))
            if mine & merged:
                raise self.error(f"the branches end in the same lanes ({sorted(mine & merged)})",
                                 bw)
            merged |= mine
        lo, hi = min(merged), max(merged)
        if merged != set(range(lo, hi + 1)):
            raise self.error(f"the branches end in lanes {sorted(merged)}, which leave a gap",
                             where)
        trunk = self.new_piece(self.pieces[piece].prefix)
        for end_piece, _, _, _ in ends:
            self.link(end_piece, trunk)
        return trunk, first, (lo, hi)

    def link(self, a: int, b: int) -> None:
        self.pieces[a].successors.append(b)
        self.pieces[b].predecessors.append(a)

    # --- joining the spaces --------------------------------------------------------

    def assign_orders_and_ids(self, main_pieces: list[int]) -> float:
        """Give every piece its place along the road; returns the order after the last."""
        order = 0.0
        done: set[int] = set()
        counters: dict[tuple[str, int], int] = {}
        for pid in main_pieces:
            if pid in done:
                continue
            p = self.pieces[pid]
            p.order0, p.scale = order, 1.0
            done.add(pid)
            order += p.rows
            branches = [b for b in p.successors if b not in main_pieces]
            if branches:
                span = max(self.pieces[b].rows for b in branches)
                for b in branches:
                    bp = self.pieces[b]
                    bp.order0, bp.scale = order, span / bp.rows
                    done.add(b)
                order += span
        for pid, p in enumerate(self.pieces):
            if pid not in done:  # pragma: no cover - every piece is on the main road or a branch
                raise self.error("internal: a piece of road was left out")
            for lane, cells in sorted(p.cells.items()):
                for c in cells:
                    key = (p.prefix, lane)
                    k = counters.get(key, 0)
                    counters[key] = k + 1
                    c.id = f"{p.prefix}{LETTERS[lane]}{k}"
        return order

    def order_of(self, c: _Cell) -> float:
        p = self.pieces[c.piece]
        return round(p.order0 + c.u * p.scale, 4)

    def first_row(self, pid: int, lane: int) -> _Cell | None:
        cells = self.pieces[pid].cells.get(lane)
        return cells[0] if cells and cells[0].u < 0.5 - EPS else None

    def last_row(self, pid: int, lane: int) -> _Cell | None:
        cells = self.pieces[pid].cells.get(lane)
        return cells[-1] if cells and self.at_end(cells[-1]) else None

    def at_end(self, c: _Cell) -> bool:
        return c.u + 1 > self.pieces[c.piece].rows - 1 + EPS

    def ahead_in(self, c: _Cell, lane: int) -> _Cell | None:
        """The next space in a neighbouring lane: in the piece, else past the piece's end."""
        for other in self.pieces[c.piece].cells.get(lane, []):
            if c.u + EPS < other.u <= c.u + 1 + EPS:
                return other
        if self.at_end(c):
            for nxt in self.pieces[c.piece].successors:
                found = self.first_row(nxt, lane)
                if found is not None:
                    return found
        return None

    def beside_in(self, c: _Cell, lane: int) -> _Cell | None:
        """The space side by side in a neighbouring lane, if there is one."""
        best: _Cell | None = None
        for other in self.pieces[c.piece].cells.get(lane, []):
            d = abs(other.u - c.u)
            if d <= 0.5 + EPS and (best is None or d < abs(best.u - c.u)):
                best = other
        if best is not None:
            return best
        p = self.pieces[c.piece]
        if c.u < 0.5 - EPS:  # first row of a branch: the sibling branch's first row
            for pred in p.predecessors:
                for sib in self.pieces[pred].successors:
                    if sib != c.piece and (found := self.first_row(sib, lane)) is not None:
                        return found
        if self.at_end(c):  # last row of a branch: the sibling branch's last row
            for succ in p.successors:
                for sib in self.pieces[succ].predecessors:
                    if sib != c.piece and (found := self.last_row(sib, lane)) is not None:
                        return found
        return None

    def spaces(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for p in self.pieces:
            for lane, cells in sorted(p.cells.items()):
                for i, c in enumerate(cells):
                    straight: _Cell | None = None
                    if i + 1 < len(cells) and cells[i + 1].u <= c.u + 1 + EPS:
                        straight = cells[i + 1]  # not across a stretch where the lane is missing
                    if straight is None and self.at_end(c):
                        for nxt in p.successors:
                            straight = straight or self.first_row(nxt, lane)
                    left = None if c.no_left or lane == 0 else self.ahead_in(c, lane - 1)
                    right = None if c.no_right else self.ahead_in(c, lane + 1)
                    bl = self.beside_in(c, lane - 1) if lane > 0 else None
                    br = self.beside_in(c, lane + 1)

                    def sid(x: _Cell | None) -> str | None:
                        return x.id if x is not None else None

                    raw: dict[str, Any] = {
                        "id": c.id,
                        "lane": lane,
                        "order": self.order_of(c),
                        "center_mm": [round(c.center[0], 2), round(c.center[1], 2)],
                        "surface": c.surface.value,
                        "number": c.number,
                        "next": {"straight": sid(straight), "left": sid(left),
                                 "right": sid(right)},
                        "beside": {"left": sid(bl), "right": sid(br)},
                        "polygon_mm": [[round(x, 2), round(y, 2)] for x, y in c.polygon],
                    }
                    if c.start is not None:
                        raw["start"] = c.start
                    if c.line_after is not None:
                        raw["line_after"] = c.line_after
                    out.append(raw)
        return out

    # --- the whole board -----------------------------------------------------------

    def build(self) -> dict[str, Any]:
        d = self.desc
        name = d.get("name")
        if not isinstance(name, str) or not name:
            raise self.error("missing 'name'")
        start = d.get("start")
        if not isinstance(start, dict) or set(start) - {"at_mm", "heading_deg", "lanes"}:
            raise self.error("'start' must be {at_mm: [x, y], heading_deg, lanes: [first, last]}")
        at = start.get("at_mm")
        if not isinstance(at, list) or len(at) != 2 or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and abs(v) <= MAX_MM
            for v in at
        ):
            raise self.error("'start.at_mm' must be [x, y] in mm")
        heading = start.get("heading_deg", 0)
        if (
            isinstance(heading, bool)
            or not isinstance(heading, int | float)
            or not math.isfinite(heading)
        ):
            raise self.error("'start.heading_deg' must be a number")
        lanes = self._lanes(start.get("lanes"), "start")
        pose0 = _Pose(float(at[0]), float(at[1]), math.radians(heading))
        circuit = d.get("circuit", False)
        if not isinstance(circuit, bool):
            raise self.error("'circuit' must be true or false")
        first = self.new_piece("")
        last, end, end_lanes = self.road(d.get("road"), "road", first, pose0, lanes, False)
        main = [i for i, p in enumerate(self.pieces) if p.prefix == ""]
        if circuit:
            gap = math.dist((end.x, end.y), (pose0.x, pose0.y))
            turn = (end.heading - pose0.heading + math.pi) % (2 * math.pi) - math.pi
            if gap > 2.0 or abs(turn) > math.radians(1) or end_lanes != lanes:
                raise self.error(
                    f"the circuit does not close: the road ends at ({end.x:.1f}, {end.y:.1f}) "
                    f"heading {math.degrees(end.heading):.1f} deg with lanes "
                    f"{list(end_lanes)}, it started at ({pose0.x:.1f}, {pose0.y:.1f}) heading "
                    f"{math.degrees(pose0.heading):.1f} deg with lanes {list(lanes)}"
                )
            self.link(last, first)
        period = self.assign_orders_and_ids(main)
        spaces = self.spaces()
        xs = [x for s in spaces for x, _ in s["polygon_mm"]]
        ys = [y for s in spaces for _, y in s["polygon_mm"]]
        margin = 5.0 + self.marker_room()
        size = d.get("size_mm", [math.ceil(max(xs) + margin), math.ceil(max(ys) + margin)])
        if (
            not isinstance(size, list) or len(size) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool)
                       and 0 < v <= MAX_MM for v in size)
        ):
            raise self.error("'size_mm' must be [width, height] in mm")
        if min(xs) < 0 or min(ys) < 0 or max(xs) > size[0] or max(ys) > size[1]:
            raise self.error(
                f"the road runs off the board: it spans x {min(xs):.0f}..{max(xs):.0f}, "
                f"y {min(ys):.0f}..{max(ys):.0f} mm, the board is {size[0]} x {size[1]} mm"
            )
        markers = self.markers(size)
        out: dict[str, Any] = {
            "name": name,
            "game": d.get("game", "um-reifenbreite"),
            "size_mm": list(size),
            "markers": markers,
        }
        if circuit:
            out["order_period"] = period
        area = dice_area_from(d.get("dice_area_mm"), self.source)
        if area is not None:
            out["dice_area_mm"] = list(area)
        out["spaces"] = spaces
        return out

    def marker_room(self) -> float:
        """How far from the board's edge the automatic corner markers reach."""
        if "markers" in self.desc:
            return 15.0
        side = self._positive(self.desc.get("marker_side_mm", 50), "marker_side_mm")
        inset = self.desc.get("marker_inset_mm", 10)
        return side + (inset if isinstance(inset, int | float) else 0.0)

    def markers(self, size: list[float]) -> dict[str, list[float]]:
        d = self.desc
        if "markers" in d:
            raw = d["markers"]
            if not isinstance(raw, dict):
                raise self.error("'markers' must map ids 0-3 to [x_mm, y_mm, side_mm]")
            return {str(k): v for k, v in raw.items()}
        side = self._positive(d.get("marker_side_mm", 50), "marker_side_mm")
        inset = d.get("marker_inset_mm", 10)
        if isinstance(inset, bool) or not isinstance(inset, int | float) or inset < 0:
            raise self.error("'marker_inset_mm' must be a number >= 0")
        w, h = size
        far_x, far_y = w - inset - side, h - inset - side
        return {
            "0": [inset, inset, side],
            "1": [far_x, inset, side],
            "2": [far_x, far_y, side],
            "3": [inset, far_y, side],
        }


def build_board_dict(description: Any, source: str = "<description>") -> dict[str, Any]:
    """The board file (as a JSON-ready dict) a description describes."""
    if not isinstance(description, dict):
        raise BoardError("a board description must hold a JSON object", source)
    unknown = set(description) - {
        "name", "game", "size_mm", "lane_width_mm", "row_length_mm", "start", "circuit",
        "road", "markers", "marker_side_mm", "marker_inset_mm", "description", "comment",
        "dice_area_mm",
    }
    if unknown:
        raise BoardError(f"unknown keys {sorted(unknown)}", source)
    return _Builder(description, source).build()


def build_board(description: Any, source: str = "<description>") -> Board:
    """Build and validate the board a description describes (see docs/board-builder.md)."""
    board = board_from_dict(build_board_dict(description, source), source)
    _check_markers(board, source)
    return board


def load_description(path: str | Path) -> Any:
    """Read a description file (JSON); a :class:`BoardError` if it cannot be read."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BoardError("no such board description", source) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BoardError(f"cannot read the file ({exc})", source) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise BoardError(
            f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})", source
        ) from None


def build_board_file(path: str | Path) -> Board:
    """Build the board a description file describes."""
    return build_board(load_description(path), str(path))


def board_json(board: Board) -> str:
    """A board file's text: the header readable, one space a line."""
    data = board_to_dict(board)
    spaces = data.pop("spaces")
    head = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in data.items()]
    lines = ",\n".join("    " + json.dumps(s) for s in spaces)
    return "{\n" + ",\n".join(head) + ',\n  "spaces": [\n' + lines + "\n  ]\n}\n"


def write_board(board: Board, path: str | Path) -> None:
    """Write a board file that :func:`companion.boards.load_board` reads back."""
    Path(path).write_text(board_json(board), encoding="utf-8")


def _check_markers(board: Board, source: str) -> None:
    """Corner markers must lie on the board and clear of every space; so must the dice area
    (which may reach past the board's edges)."""
    w, h = board.size_mm
    for m in board.markers.values():
        x0, y0, x1, y1 = m.x_mm, m.y_mm, m.x_mm + m.side_mm, m.y_mm + m.side_mm
        if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
            raise BoardError(f"corner marker {m.id} lies off the board", source)
        for s in board.spaces.values():
            poly = s.polygon_mm or ()
            if _square_meets_polygon(x0, y0, x1, y1, poly):
                raise BoardError(f"corner marker {m.id} covers part of the space", source, s.id)
    if board.dice_area_mm is not None:
        x, y, dw, dh = board.dice_area_mm
        for s in board.spaces.values():
            if _square_meets_polygon(x, y, x + dw, y + dh, s.polygon_mm or ()):
                raise BoardError("the dice area covers part of the space: dice would land "
                                 "among the riders", source, s.id)


def _square_meets_polygon(
    x0: float, y0: float, x1: float, y1: float, poly: tuple[tuple[float, float], ...]
) -> bool:
    if not poly:
        return False
    xs = [p[0] for p in poly]
    ys = [p[1] for p in poly]
    if max(xs) <= x0 or min(xs) >= x1 or max(ys) <= y0 or min(ys) >= y1:
        return False
    if any(x0 < x < x1 and y0 < y < y1 for x, y in poly):
        return True
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), ((x0 + x1) / 2, (y0 + y1) / 2)]
    if any(_inside(pt, poly) for pt in corners):
        return True
    square = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    return any(_cross(a, b, c, d) for a, b in _edges(square) for c, d in _edges(poly))


def _edges(
    pts: tuple[tuple[float, float], ...],
) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    return list(zip(pts, pts[1:] + pts[:1], strict=True))


def _inside(pt: tuple[float, float], poly: tuple[tuple[float, float], ...]) -> bool:
    x, y = pt
    inside = False
    n = len(poly)
    for i in range(n):
        (xa, ya), (xb, yb) = poly[i], poly[(i + 1) % n]
        if (ya > y) != (yb > y) and x < xa + (y - ya) * (xb - xa) / (yb - ya):
            inside = not inside
    return inside


def _cross(
    a: tuple[float, float], b: tuple[float, float], c: tuple[float, float],
    d: tuple[float, float],
) -> bool:
    def orient(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> float:
        return (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0])

    return (orient(a, b, c) * orient(a, b, d) < 0) and (orient(c, d, a) * orient(c, d, b) < 0)
