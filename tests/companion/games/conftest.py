"""Helpers for rules tests: races on small notation boards."""

from __future__ import annotations

import pytest

from companion.boards import Course, parse_board
from companion.games.reifenbreite import Level, Race, Settings


def make_race(
    text: str,
    round_: int = 2,
    level: Level = Level.ADVANCED,
    route: tuple[str, ...] | None = None,
    seed: int = 1,
    **settings: object,
) -> Race:
    """A race on a notation board, starting from the riders the board shows."""
    board, riders = parse_board(text)
    if route is None:
        route = tuple(board.lines()[:1])  # finish at line A where the board has one
    race = Race(board, Course("test", "1", route), Settings(level=level, **settings), seed=seed)  # type: ignore[arg-type]
    race.start_from_positions(riders, round_)
    return race


@pytest.fixture
def race_on():
    return make_race
