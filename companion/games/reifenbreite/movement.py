"""Where riders can go: moves by the roll, drafting paths, falls and returns to the road.

Pure functions over a :class:`~companion.boards.CourseMap` and the set of
occupied spaces. A step goes straight ahead or diagonally forward, never into
an occupied space (so never through one), never over a thick line (a missing
diagonal), never off the course. Moving diagonally between two riders is
allowed: only the target space matters.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from companion.boards import Board, CourseMap, Position


def frontiers(cm: CourseMap, start: Position, steps: int, occupied: Collection[str]) -> list[set[Position]]:
    """``result[k]`` is the set of positions reachable in exactly ``k`` steps (``k <= steps``)."""
    layers: list[set[Position]] = [{start}]
    steps_from = cm.steps_from
    for _ in range(steps):
        nxt: set[Position] = set()
        for pos in layers[-1]:
            for target, p in steps_from(pos):
                if target not in occupied:
                    nxt.add(p)
        if not nxt:
            break
        layers.append(nxt)
    return layers


def can_step(cm: CourseMap, pos: Position, occupied: Collection[str]) -> bool:
    """Whether any forward step is free from ``pos``."""
    for target, _ in cm.steps_from(pos):
        if target not in occupied:
            return True
    return False


def destinations(
    cm: CourseMap, start: Position, steps: int, occupied: Collection[str]
) -> dict[Position, int]:
    """Every position a rider may end on with a move of ``steps``, with the spaces it takes.

    A rider may move fewer spaces than his move (the value is the most spaces
    with which he reaches the position), except that a rider who crosses the
    finish line must use his whole move, unless he is blocked and must stop.
    Staying put (0 spaces) is included.
    """
    occ = set(occupied) - {start.space}
    layers = frontiers(cm, start, steps, occ)
    out: dict[Position, int] = {}
    for k, layer in enumerate(layers):
        for pos in layer:
            if cm.finished(pos) and not cm.finished(start) and k < steps and can_step(cm, pos, occ):
                continue  # crossed the finish: the whole move must be used
            out[pos] = k
    return out


def shortest_path_length(
    cm: CourseMap, start: Position, target: str, limit: int, occupied: Collection[str]
) -> tuple[int, Position] | None:
    """The fewest steps (at most ``limit``) from ``start`` to space ``target``, or None."""
    occ = set(occupied) - {start.space}
    layers = frontiers(cm, start, limit, occ)
    for k, layer in enumerate(layers):
        for pos in layer:
            if pos.space == target:
                return k, pos
    return None


def fall_chain(cm: CourseMap, riders_at: Mapping[str, int], causer_space: str) -> list[int]:
    """The riders who fall when the rider on ``causer_space`` falls, the causer first.

    The rider directly behind a falling rider falls; a rider beside a falling
    rider falls, except the one to the right of the rider who caused the fall
    (he is ahead of him); the chain goes on from every rider who falls.
    """
    board = cm.board
    fallen_spaces = [causer_space]
    seen = {causer_space}
    i = 0
    while i < len(fallen_spaces):
        space = fallen_spaces[i]
        left, right = board.beside(space)
        around = [board.behind(space), left]
        if space != causer_space:
            around.append(right)
        for s in around:
            if s is not None and s in riders_at and s not in seen:
                seen.add(s)
                fallen_spaces.append(s)
        i += 1
    return [riders_at[s] for s in fallen_spaces]


def return_space(cm: CourseMap, home: Position, occupied: Collection[str]) -> Position | None:
    """Where a dismounted rider comes back: his own space, or the nearest free one beside or behind.

    Candidates are searched outward from his space, side by side first and then
    backwards along the road (never ahead), nearest first; a space on the same
    leg of the course comes before one behind a line he had already crossed.
    """
    for legs in ((home.leg,), (home.leg - 1, home.leg + 1)):
        found = _nearest_free(cm, home, occupied, legs)
        if found is not None:
            return found
    return None


def _nearest_free(
    cm: CourseMap, home: Position, occupied: Collection[str], legs: tuple[int, ...]
) -> Position | None:
    board = cm.board
    seen = {home.space}
    queue = [home.space]
    while queue:
        queue.sort(key=lambda s: (board.order_delta(s, home.space), abs(board[s].lane - board[home.space].lane)))
        space = queue.pop(0)
        if space not in occupied:
            for leg in legs:
                pos = Position(space, leg)
                if cm.on_course(pos):
                    return pos
        left, right = board.beside(space)
        for s in (left, right, board.behind(space)):
            if s is not None and s not in seen and (
                board.order_delta(s, home.space) < (board.order_period or float("inf")) / 2
            ):
                seen.add(s)
                queue.append(s)
    return None


def line_behind(board: Board, riders_at: Mapping[str, int], space: str) -> list[int]:
    """The riders in an unbroken line directly behind ``space``, nearest first."""
    out: list[int] = []
    s = board.behind(space)
    while s is not None and s in riders_at:
        out.append(riders_at[s])
        s = board.behind(s)
    return out
