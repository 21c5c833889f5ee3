"""Helpers for rules tests: races on small notation boards."""

from __future__ import annotations

import pytest

from companion.boards import Course, parse_board
from companion.games.reifenbreite import Level, Race, Settings, Verdict


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


def ok(race: Race, event: object) -> Verdict:
    """Apply an event that must be legal."""
    v = race.apply(event)  # type: ignore[arg-type]
    assert v.ok, v
    return v


def refused(race: Race, event: object, rule: str) -> Verdict:
    """Apply an event that must be refused with ``rule``, and check it changed nothing."""
    before = (dict(race.at), race.pending, race.offer, race.round)
    v = race.apply(event)  # type: ignore[arg-type]
    assert not v.ok, v
    assert v.rule == rule, v
    assert (dict(race.at), race.pending, race.offer, race.round) == before, "an illegal event changed the race"
    return v


@pytest.fixture
def race_on():
    return make_race
