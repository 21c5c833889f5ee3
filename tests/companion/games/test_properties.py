"""Property tests over random legal play: the engine's invariants hold in every simulated race.

Races are played by random (and some bot) managers on the generated demo
board; the record is then replayed event by event on a fresh race, checking
after every event that no two riders share a space, that nobody rides
backwards (but a dismounted rider put back behind his space, and the two
riders who switch the lead under the professional rules), that a draft
ends directly behind its leader, that every verdict is ok, and that a second
replay ends in the very same state.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.boards import Course, Sprint, parse_board
from companion.games.reifenbreite import (
    Decline,
    Draft,
    Level,
    Move,
    Race,
    Roll,
    Settings,
    SwitchLead,
    event_to_dict,
)
from companion.games.reifenbreite.bench import demo_board
from companion.games.reifenbreite.bots import BotManager, Geometry, Manager, RandomManager
from companion.games.reifenbreite.simulate import simulate_race
from companion.record import Entry, parse_lines, replay, start_race


@lru_cache(maxsize=1)
def _board() -> Any:
    return demo_board()


def _record(seed: int, level: Level, bots: frozenset[int]) -> list[Entry]:
    board, course, text = _board()
    managers: dict[int, Manager] = {
        t: BotManager() if t in bots else RandomManager(seed=seed * 10 + t) for t in (2, 3, 4, 5)
    }
    _, events = simulate_race(board, course, seed, managers, Settings(level=level), board_text=text)
    lines = [json.dumps({"seq": i, **event_to_dict(e)}) for i, e in enumerate(events, 1)]
    return parse_lines(lines)


def _snapshot(race: Race) -> dict[str, Any]:
    return {
        "phase": race.phase.value,
        "round": race.round,
        "positions": {n: (r.pos, r.finished, r.removed, r.dismounted) for n, r in race.riders.items()},
        "at": dict(race.at),
        "finish": list(race.finish_order),
        "crossings": {k: list(v) for k, v in race.crossings.items()},
        "hands": {t: sorted(map(str, team.hand)) for t, team in race.teams.items()},
        "yellow": race.yellow,
        "photos": race.final_photos,
        "chase": {n: list(r.chase_photos) for n, r in race.riders.items()},
    }


def _check_occupancy(race: Race) -> None:
    on_road = [r for r in race.riders.values() if r.on_road]
    spaces = [r.pos.space for r in on_road if r.pos is not None]
    assert len(spaces) == len(set(spaces)), "two riders on one space"
    assert {s: race.at[s] for s in spaces} == race.at, "the occupancy map disagrees with the riders"
    for r in on_road:
        assert r.pos is not None and race.at[r.pos.space] == r.number


def _check_crossings(race: Race, dismounted: set[int]) -> None:
    """Every rider is recorded once at each line of the route he crossed.

    (A dismounted rider put back behind a line rides over it again, but only
    his first crossing counts.)
    """
    for line, riders in race.crossings.items():
        twice = {n for n in riders if riders.count(n) > 1}
        assert not twice, f"{sorted(twice)} cross route line {line} twice: {riders}"


def _replay_checked(entries: list[Entry]) -> Race:
    race = start_race(entries)
    geo = Geometry(race.cm)
    last: dict[int, float] = {}
    was_dismounted: set[int] = set()
    ever_dismounted: set[int] = set()
    verdicts = replay(entries, race)
    assert next(verdicts)["ok"]
    for entry in entries[1:]:
        ev = entry.event
        leader_no = race.offer.leader if isinstance(ev, Draft) and race.offer is not None else None
        verdict = next(verdicts)  # the replay applies this entry now
        assert verdict["ok"], (entry, verdict)
        _check_occupancy(race)
        _check_crossings(race, ever_dismounted)
        if isinstance(ev, Draft):
            assert leader_no is not None
            leader = race.riders[leader_no]
            me = race.riders[ev.rider]
            assert leader.pos is not None and me.pos is not None
            assert me.pos.space == race.board.behind(leader.pos.space), "a draft ends directly behind"
        if isinstance(ev, SwitchLead):  # professional: two riders of a line change places
            last.pop(ev.rider, None)
            last.pop(ev.with_rider, None)
        for n, r in race.riders.items():
            if r.dismounted:
                was_dismounted.add(n)
                ever_dismounted.add(n)
            if not r.on_road or r.pos is None:
                continue
            x = geo.x(r.pos)
            if n in last and x < last[n]:
                assert n in was_dismounted, f"{n} moved back from {last[n]} to {x}"
            if n in was_dismounted and not r.dismounted:
                was_dismounted.discard(n)
            last[n] = x
    assert next(verdicts, None) is None
    return race


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    level=st.sampled_from([Level.BASIC, Level.ADVANCED, Level.PROFESSIONAL]),
    bots=st.frozensets(st.sampled_from([2, 3, 4, 5]), max_size=2),
)
def test_random_play_keeps_the_invariants_and_replays_identically(
    seed: int, level: Level, bots: frozenset[int]
) -> None:
    entries = _record(seed, level, bots)
    first = _replay_checked(entries)
    assert first.phase.value == "over"
    again = start_race(entries)
    assert all(v["ok"] for v in replay(entries, again))
    assert _snapshot(again) == _snapshot(first)


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_simulation_is_deterministic_for_a_seed(seed: int) -> None:
    a = _record(seed, Level.PROFESSIONAL, frozenset({2}))
    b = _record(seed, Level.PROFESSIONAL, frozenset({2}))
    assert [e.event for e in a] == [e.event for e in b]


def test_switching_the_lead_across_a_line_is_refused() -> None:
    board, riders = parse_board(
        ".  .  .  |A .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  |B .  .\n"
        ".  44 54 |A .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  |B .  .\n"
    )
    course = Course("test", "1", ("A", "B"), sprints=(Sprint("A", (3, 2, 1), 0),))
    race = Race(board, course, Settings(level=Level.PROFESSIONAL), seed=1, teams=(4, 5))
    race.start_from_positions(riders, 2)
    assert race.apply(Roll(54, (1, 1))).ok
    assert race.apply(Move(54, "b3")).ok  # crosses line A: first at the sprint
    assert race.apply(Draft(44)).ok  # 44 follows to b2, still before the line
    assert race.crossings[0] == [54]
    verdict = race.apply(SwitchLead(54, 44))  # round 3: 54 (past A) and 44 (before A)
    assert not verdict.ok and verdict.rule == "switch.across-line"
    assert race.riders[54].pos.space == "b3" and race.crossings[0] == [54]


def test_a_dismounted_rider_put_back_behind_a_line_is_not_recorded_twice() -> None:
    board, riders = parse_board(". 31 . |A u3 . . . . . . . . |B . .\n")
    riders[21] = "a0"
    course = Course("test", "1", ("A", "B"), sprints=(Sprint("A", (3, 2, 1), 0),))
    race = Race(board, course, Settings(level=Level.PROFESSIONAL), seed=1, teams=(2, 3))
    race.start_from_positions(riders, 2)
    for event in (Roll(31, (1, 1)), Move(31, "a3"), Decline(21), Roll(21, (1, 1)), Move(21, "a2"),
                  Roll(31, (1, 1)),  # 31 dismounts on uphill 3 just past line A
                  Roll(21, (2, 2)), Move(21, "a3"),  # 21 takes his space: 31 comes back on a2, behind A
                  Roll(21, (3, 3)), Move(21, "a6"), Roll(31, (2, 2)), Move(31, "a4")):
        assert race.apply(event).ok, event
    assert race.crossings[0] == [31, 21]
