"""From a race to its score sheet: the engine's side of ``companion.scoring``."""

from __future__ import annotations

from dataclasses import replace

from companion.games.reifenbreite.race import TEAM_NAMES, Level, Race
from companion.scoring import (
    ChaseUse,
    RaceResult,
    ScoreSheet,
    SprintResult,
    load_score_table,
    score_race,
)


def race_result(race: Race) -> RaceResult:
    """What the race has decided so far: finish order, sprints, jersey rounds, chase car."""
    sprints: list[SprintResult] = []
    chase: list[ChaseUse] = []
    if race.level is Level.PROFESSIONAL:
        for s in race.course.sprints:
            riders = tuple(race.crossings.get(s.leg, [])[: len(s.points)])
            sprints.append(SprintResult(s.line, s.leg, riders, s.points))
        for r in race.riders.values():
            chase.extend(ChaseUse(r.number, photos) for photos in r.chase_photos)
    final = race.final_photos
    return RaceResult(
        teams={t: team.riders for t, team in race.teams.items()},
        finish_order=tuple(race.finish_order),
        sprints=tuple(sprints),
        jersey_rounds=dict(race.jersey_rounds),
        chase_uses=tuple(chase),
        final_photos=(final[0], final[1]) if final is not None and len(final) == 2 else None,
        team_names={t: TEAM_NAMES[t] for t in race.teams},
    )


def race_sheet(race: Race) -> ScoreSheet:
    """The score sheet of a race, with the table's settings (score table, jersey variant)."""
    table = load_score_table(race.settings.score_table)
    table = replace(table, jersey_variant=race.settings.yellow_jersey)  # type: ignore[arg-type]
    return score_race(race_result(race), table)
