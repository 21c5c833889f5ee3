"""Courses: a route through the board from a start over finish lines.

A course names a start, the finish lines it passes in order (``route``; the
last one is the finish, and a line may come twice) and the sprints with their
points. :class:`CourseMap` lays a course over a board: it splits the route
into *legs* (leg ``k`` lies after ``k`` lines of the route have been
crossed), finds the spaces of each leg, and gives every rider position a
distance along the course, which decides who is farthest ahead.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from companion.boards.loader import BOARD_DIR
from companion.boards.model import Board


class CourseError(ValueError):
    """A course file that cannot be used, or a route that does not exist on the board."""


@dataclass(frozen=True)
class Sprint:
    """A sprint: the ``pass``-th crossing of ``line`` on the route, and its points."""

    line: str
    points: tuple[int, ...]
    leg: int  # index into the route of the crossing


@dataclass(frozen=True)
class Course:
    """A race course: start, the lines passed in order (last is the finish), sprints."""

    name: str
    start: str
    route: tuple[str, ...]
    sprints: tuple[Sprint, ...] = ()
    short: bool = False
    description: str = ""

    @property
    def finish(self) -> str | None:
        """The finish line, or None on a course that never ends (a test board)."""
        return self.route[-1] if self.route else None

    def sprint_at(self, leg: int) -> Sprint | None:
        """The sprint decided by crossing the route's line number ``leg``, if any."""
        for s in self.sprints:
            if s.leg == leg:
                return s
        return None


def course_from_dict(data: Any, source: str = "<course>") -> Course:
    """Build a course from its JSON form (see docs/boards.md)."""
    if not isinstance(data, dict):
        raise CourseError(f"{source}: a course file must hold a JSON object")
    name = data.get("name")
    start = data.get("start")
    route = data.get("route")
    if not isinstance(name, str) or not name:
        raise CourseError(f"{source}: missing 'name'")
    if not isinstance(start, str) or not start:
        raise CourseError(f"{source}: missing 'start' (the start's name, e.g. \"1\")")
    if not isinstance(route, list) or not all(isinstance(x, str) and x for x in route):
        raise CourseError(f"{source}: 'route' must list the finish lines passed, in order")
    sprints: list[Sprint] = []
    for i, raw in enumerate(data.get("sprints", [])):
        if not isinstance(raw, dict) or not isinstance(raw.get("line"), str):
            raise CourseError(f"{source}: sprints[{i}] needs a 'line'")
        line = raw["line"]
        nth = raw.get("pass", 1)
        points = raw.get("points")
        if not isinstance(points, list) or not points or not all(
            isinstance(p, int) and not isinstance(p, bool) and p >= 0 for p in points
        ):
            raise CourseError(f"{source}: sprints[{i}] needs 'points', a list of whole numbers")
        passes = [k for k, x in enumerate(route) if x == line]
        if not isinstance(nth, int) or not 1 <= nth <= len(passes):
            raise CourseError(f"{source}: sprint at line {line!r} (pass {nth}) is not on the route")
        leg = passes[nth - 1]
        if leg == len(route) - 1:
            raise CourseError(f"{source}: the finish line {line!r} cannot also be a sprint")
        sprints.append(Sprint(line, tuple(points), leg))
    return Course(
        name=name,
        start=start,
        route=tuple(route),
        sprints=tuple(sorted(sprints, key=lambda s: s.leg)),
        short=bool(data.get("short", False)),
        description=str(data.get("description", "")),
    )


def load_course(path: str | Path) -> Course:
    """Load a course file; a bare name (``A``..``D``) names a shipped course."""
    p = Path(path)
    shipped = BOARD_DIR / "courses" / f"{p.name}.json"
    if not p.exists() and not p.suffix and shipped.exists():
        p = shipped
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CourseError(f"{path}: no such course file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CourseError(f"{path}: cannot read the course ({exc})") from None
    return course_from_dict(data, str(path))


class Position(NamedTuple):
    """Where a rider is on a course: a space and the leg (lines of the route crossed)."""

    space: str
    leg: int


@dataclass
class CourseMap:
    """A course laid over a board: the spaces of every leg and distances along the route."""

    board: Board
    course: Course
    leg_spaces: list[frozenset[str]] = field(init=False)
    _dist: list[dict[str, float]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        board, course = self.board, self.course
        entries = [s.id for s in board.start_spaces(course.start)]
        if not entries and board.starts():
            raise CourseError(
                f"course {course.name!r}: board {board.name!r} has no start {course.start!r}"
            )
        if not entries:
            # A board without start dots (a test position): the road begins where nothing leads in.
            targets = {t for s in board.spaces.values() for _, t in s.successors()}
            entries = sorted(s for s in board.spaces if s not in targets)
        known = set(board.lines())
        for line in course.route:
            if line not in known:
                raise CourseError(
                    f"course {course.name!r}: board {board.name!r} has no finish line {line!r}"
                )
        self.leg_spaces = []
        self._dist = []
        for k in range(len(course.route) + 1):
            target = course.route[k] if k < len(course.route) else None
            spaces = self._leg(entries, target)
            if target is not None and not any(
                board[s].line_after == target for s in spaces
            ):
                where = "the start" if k == 0 else f"line {course.route[k - 1]}"
                raise CourseError(
                    f"course {course.name!r}: no road on board {board.name!r} leads from "
                    f"{where} to line {target} without crossing another line"
                )
            self.leg_spaces.append(frozenset(spaces))
            self._dist.append(self._distances(spaces))
            if target is not None:
                entries = sorted(
                    {t for s in spaces if board[s].line_after == target
                     for _, t in board[s].successors()}
                )
                if not entries and k + 1 < len(course.route):
                    raise CourseError(f"course {course.name!r}: the road ends at line {target}")

    def _leg(self, entries: list[str], target: str | None) -> set[str]:
        board = self.board
        seen: set[str] = set(entries)
        queue = deque(entries)
        while queue:
            sid = queue.popleft()
            if board[sid].line_after is not None:
                continue  # the next space lies past a line: another leg
            for _, t in board[sid].successors():
                if t not in seen:
                    seen.add(t)
                    queue.append(t)
        if target is None:
            return seen
        # Keep only the spaces from which the target line can still be reached.
        good = {s for s in seen if board[s].line_after == target}
        changed = True
        while changed:
            changed = False
            for s in seen - good:
                if board[s].line_after is None and any(t in good for _, t in board[s].successors()):
                    good.add(s)
                    changed = True
        return good

    def _distances(self, spaces: set[str]) -> dict[str, float]:
        board = self.board
        preds: dict[str, list[str]] = {s: [] for s in spaces}
        for s in spaces:
            if board[s].line_after is not None:
                continue
            for _, t in board[s].successors():
                if t in spaces:
                    preds[t].append(s)
        dist: dict[str, float] = {}
        indegree = {s: len(p) for s, p in preds.items()}
        succs: dict[str, list[str]] = {s: [] for s in spaces}
        for t, ps in preds.items():
            for p in ps:
                succs[p].append(t)
        queue = deque(sorted(s for s, d in indegree.items() if d == 0))
        for s in queue:
            dist[s] = 0.0
        while queue:
            s = queue.popleft()
            for t in succs[s]:
                dist[t] = max(dist.get(t, 0.0), dist[s] + board.order_delta(s, t))
                indegree[t] -= 1
                if indegree[t] == 0:
                    queue.append(t)
        if len(dist) != len(spaces):
            raise CourseError(f"course {self.course.name!r}: the road loops back on itself")
        return dist

    # --- queries -------------------------------------------------------------

    @property
    def legs(self) -> int:
        """The number of legs: lines on the route plus one (past the finish)."""
        return len(self.leg_spaces)

    def on_course(self, pos: Position) -> bool:
        """Whether a position lies on the course."""
        return 0 <= pos.leg < len(self.leg_spaces) and pos.space in self.leg_spaces[pos.leg]

    def distance(self, pos: Position) -> tuple[int, float]:
        """How far along the course a position is (compare to find who leads)."""
        return (pos.leg, round(self._dist[pos.leg][pos.space], 6))

    def position_of(self, space: str) -> Position:
        """The position of a space that is not yet known to be on a later leg (the first leg)."""
        for leg, spaces in enumerate(self.leg_spaces):
            if space in spaces:
                return Position(space, leg)
        raise CourseError(f"space {space!r} is not on course {self.course.name!r}")

    def steps_from(self, pos: Position) -> tuple[tuple[str, Position], ...]:
        """Every step the course allows from ``pos``: (target space, new position); cached."""
        cache: dict[Position, tuple[tuple[str, Position], ...]] = self.__dict__.setdefault("_steps", {})
        found = cache.get(pos)
        if found is None:
            out = []
            for _, target in self.board[pos.space].successors():
                p = self.step(pos, target)
                if p is not None:
                    out.append((target, p))
            found = cache[pos] = tuple(out)
        return found

    def step(self, pos: Position, target: str) -> Position | None:
        """The position after one step to ``target``, or None if that leaves the course."""
        here = self.board[pos.space]
        leg = pos.leg
        if here.line_after is not None:
            if leg < len(self.course.route) and here.line_after == self.course.route[leg]:
                leg += 1
            else:
                return None
        nxt = Position(target, leg)
        return nxt if self.on_course(nxt) else None

    def crossed(self, pos: Position) -> str | None:
        """The route line a step out of ``pos`` crosses, if it crosses one."""
        line = self.board[pos.space].line_after
        if line is not None and pos.leg < len(self.course.route) and line == self.course.route[pos.leg]:
            return line
        return None

    def finished(self, pos: Position) -> bool:
        """Whether a position lies past the finish."""
        return bool(self.course.route) and pos.leg >= len(self.course.route)


def load_board_and_course(board: str | Path, course: str | Path) -> CourseMap:
    """Load a board file and a course file and lay the course over the board."""
    from companion.boards.loader import load_board

    return CourseMap(load_board(board), load_course(course))
