"""Whole simulated Um Reifenbreite races: managers decide, seeded dice roll.

:func:`simulate_race` drives a :class:`~companion.games.reifenbreite.race.Race`
from the placement rolls to the end, asking each team's
:class:`~companion.games.reifenbreite.bots.Manager` what to do, and returns
the finished race with the list of events (a setup event first), ready for
:func:`companion.record.write_record`. The dice come from
``random.Random(seed)``; the engine draws the chance and photo-cards from its
own seeded decks, so a seed and the managers fix the whole race.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from companion.boards import Board, Course
from companion.games.reifenbreite.bots import Manager
from companion.games.reifenbreite.events import (
    Chance,
    Decline,
    Draft,
    Event,
    Move,
    Photos,
    Place,
    PlacementRoll,
    Roll,
    Setup,
    SwitchLead,
)
from companion.games.reifenbreite.race import Level, Phase, Race, Settings

#: A race that has not ended after this many rounds is stuck (a manager that never moves on).
MAX_ROUNDS = 400


class SimulationError(RuntimeError):
    """A simulation that cannot go on: an illegal decision by a manager, or a stuck race."""


def course_to_dict(course: Course) -> dict[str, Any]:
    """A course as the JSON object a setup event can carry."""
    sprints = []
    for s in course.sprints:
        passes = [k for k, line in enumerate(course.route) if line == s.line]
        sprints.append({"line": s.line, "points": list(s.points), "pass": passes.index(s.leg) + 1})
    return {"name": course.name, "start": course.start, "route": list(course.route),
            "sprints": sprints, "short": course.short}


def settings_to_dict(settings: Settings) -> dict[str, Any]:
    """The settings that differ from the defaults (for a setup event)."""
    default = Settings()
    return {f.name: getattr(settings, f.name) for f in fields(Settings)
            if f.name != "level" and getattr(settings, f.name) != getattr(default, f.name)}


def make_setup(board: Board, course: Course, seed: int, settings: Settings,
               teams: tuple[int, ...], board_text: str | None = None,
               course_name: str | None = None, board_name: str | None = None) -> Setup:
    """The setup event of a simulated race (board by name or file, or its notation text)."""
    return Setup(
        seed=seed,
        board=board_name or board.name,
        course=course_name if course_name is not None else course_to_dict(course),
        board_text=board_text,
        level=settings.level.value,
        teams=teams,
        settings=settings_to_dict(settings),
    )


def simulate_race(
    board: Board,
    course: Course,
    seed: int,
    managers: Mapping[int, Manager],
    settings: Settings | None = None,
    *,
    board_text: str | None = None,
    course_name: str | None = None,
    board_name: str | None = None,
    max_rounds: int = MAX_ROUNDS,
    stop_round: int | None = None,
) -> tuple[Race, list[Event]]:
    """Play a whole race; returns the race and its events (setup first).

    ``managers`` maps each team (2-5) to its manager. ``board_name`` (the
    name or file ``load_board`` takes, default the board's name),
    ``board_text`` (the notation of a generated board) and ``course_name`` (a
    shipped course's name or a course file, instead of the course object)
    only shape the setup event of the record. ``stop_round`` stops early when that round begins (for
    benchmarks). Raises :class:`SimulationError` when a manager makes an
    illegal decision or the race has not ended after ``max_rounds`` rounds.
    """
    settings = settings or Settings()
    teams = tuple(sorted(managers))
    race = Race(board, course, settings, seed=seed, teams=teams)
    dice = random.Random(seed)
    events: list[Event] = [make_setup(board, course, seed, settings, teams, board_text, course_name,
                                        board_name)]

    def apply(event: Event) -> dict[str, Any]:
        verdict = race.apply(event)
        if not verdict.ok:
            raise SimulationError(f"seed {seed}, round {race.round}: {event} refused: "
                                  f"{verdict.rule}: {verdict.reason}")
        events.append(event)
        return verdict.details

    def die() -> int:
        return dice.randint(1, 6)

    asked_switch: set[tuple[int, int]] = set()
    while True:
        if race.round > max_rounds:
            raise SimulationError(
                f"seed {seed}: the race has not ended after {max_rounds} rounds "
                f"({len(race.finish_order)} of {len(race.riders)} riders finished)")
        if stop_round is not None and race.phase is Phase.RACE and race.round >= stop_round:
            break
        p = race.prompt()
        if p.kind == "over":
            break
        if p.kind == "placement_roll":
            assert p.team is not None
            apply(PlacementRoll(p.team, (die(), die())))
        elif p.kind == "place":
            assert p.team is not None
            rider, space = managers[p.team].place(race, p.team)
            apply(Place(rider, space))
        elif p.kind == "draft_or_roll":
            assert p.rider is not None and p.leader is not None
            mgr = managers[race.riders[p.rider].team]
            if mgr.draft(race, p.rider, p.leader):
                apply(Draft(p.rider))
            else:
                apply(Decline(p.rider))
        elif p.kind == "move":
            assert p.rider is not None and p.steps is not None
            mgr = managers[race.riders[p.rider].team]
            dests = race.destinations(p.rider, p.steps)
            apply(Move(p.rider, mgr.move(race, p.rider, p.steps, dests)))
        elif p.kind == "roll":
            assert p.rider is not None
            rider = p.rider
            mgr = managers[race.riders[rider].team]
            key = (race.round, rider)
            if (race.level is Level.PROFESSIONAL and key not in asked_switch
                    and rider not in race.switched_lines):
                asked_switch.add(key)
                other = mgr.switch_lead(race, rider)
                if other is not None:
                    apply(SwitchLead(rider, other))
                    continue
            choice = mgr.roll(race, rider)
            if choice.chase_car:
                n = 1 if choice.chase_die else 0
            else:
                n = 2 - len(choice.cards)
            details = apply(Roll(rider, tuple(die() for _ in range(n)), choice.cards,
                                 choice.breakaway, choice.chase_car))
            if "chance" in details:
                apply(Chance(rider, str(details["chance"])))
        else:  # pragma: no cover - the engine has no other prompts
            raise SimulationError(f"unknown prompt {p.kind!r}")
    if race.phase is Phase.OVER and race.final_photos is not None:
        apply(Photos(race.final_photos))
    return race, events


def score_sheet_json(race: Race) -> dict[str, Any]:
    """The race's score sheet as JSON (``companion.sheet``)."""
    from companion.games.reifenbreite.result import race_sheet
    from companion.sheet import sheet_to_json

    return sheet_to_json(race_sheet(race))


def team_totals(race: Race) -> dict[int, int]:
    """Team totals of a finished race from its score sheet."""
    sheet = score_sheet_json(race)
    teams = sheet["teams"]
    if isinstance(teams, dict):
        return {int(t): int(v) for t, v in teams.items()}
    return {int(t["team"]): int(t["total"]) for t in teams}


