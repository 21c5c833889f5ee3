"""Um Reifenbreite scoring: place points, sprints, the yellow jersey, the chase car.

This module is pure: the rules engine hands over a :class:`RaceResult` (what
happened in the race) and :func:`score_race` turns it, with a
:class:`ScoreTable`, into the :class:`ScoreSheet` the race organiser would fill
in on the paper pad. :func:`stage_race` adds up the sheets of a stage race.

What comes from the rule texts (``um-reifenbreite.txt``, professional rules,
and ``um-reifenbreite-short.txt``):

- the first 3 riders across each sprint line score the course's sprint points;
- the first sprint's winner takes the yellow jersey; if the wearer wins the
  next sprint he keeps it; if another rider wins, the actual sprint points
  (never jersey points) are compared and a rider with more gets it
  (:func:`yellow_jersey_after_sprint`);
- a rider who hung onto the chase car and drew a number that is among the two
  photo-cards drawn at the end is disqualified: his points are forfeit, no
  other rider's points change (:func:`disqualified`);
- the short rules' jersey: 2 points for every round it is kept;
- a stage race: sum of team totals + number of stages x the team's best
  rider's overall total (:func:`stage_race`).

What the texts leave open is a setting of the score table file
``companion/data/score_table.json`` (see ``docs/scoring.md``): the place
points (only 5th = 30 is known) and the full rules' jersey bonus per sprint.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

DATA_DIR = Path(__file__).parent / "data"
DEFAULT_SCORE_TABLE = DATA_DIR / "score_table.json"

#: The photo-card deck: six cards numbered 1 to 6.
PHOTO_NUMBERS = frozenset(range(1, 7))
#: "A rider may only cheat 4 times in a race."
MAX_CHASE_USES = 4

JerseyVariant = Literal["full", "short"]
JerseyBonusTo = Literal["holder_after", "holder_before"]
JERSEY_VARIANTS: tuple[str, ...] = ("full", "short")
JERSEY_BONUS_TO: tuple[str, ...] = ("holder_after", "holder_before")


class ScoreTableError(ValueError):
    """A score table file that cannot be used; the message names the file and the field."""


class RaceResultError(ValueError):
    """A race result that does not add up (unknown rider, bad photo-card number, ...)."""


def standard_teams() -> dict[int, tuple[int, ...]]:
    """The four teams of the box: 2 -> (21, 22, 23, 24), ..., 5 -> (51, ..., 54)."""
    return {t: tuple(10 * t + k for k in range(1, 5)) for t in range(2, 6)}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- the score table -----------------------------------------------------------


@dataclass(frozen=True)
class ScoreTable:
    """Finishing points by place and the yellow-jersey settings.

    ``place_points[0]`` is worth 1st place; a place beyond the list, or a rider
    who did not finish, scores 0. ``jersey_variant`` is ``"full"`` (the
    professional rules: the wearer scores ``jersey_points_per_sprint`` at each
    sprint) or ``"short"`` (the short rules: ``jersey_points_per_round`` for
    every round he keeps it). ``jersey_bonus_to`` says which wearer scores the
    sprint bonus: ``"holder_after"`` the rider who holds the jersey once the
    sprint is decided (so from the first sprint on), ``"holder_before"`` the
    rider who wore it riding into the sprint (so from the second sprint on).
    """

    place_points: tuple[int, ...]
    jersey_variant: JerseyVariant = "full"
    jersey_points_per_sprint: int = 5
    jersey_bonus_to: JerseyBonusTo = "holder_after"
    jersey_points_per_round: int = 2
    source: str = "<score table>"

    def __post_init__(self) -> None:
        src = self.source
        if not self.place_points:
            raise ScoreTableError(f"{src}: place_points: needs at least one place")
        for i, p in enumerate(self.place_points):
            if not _is_int(p) or p < 0:
                raise ScoreTableError(f"{src}: place_points[{i}]: must be a whole number >= 0, got {p!r}")
            if i and p > self.place_points[i - 1]:
                raise ScoreTableError(
                    f"{src}: place_points[{i}]: {p} is more than place {i}'s "
                    f"{self.place_points[i - 1]} (points may not rise with the place)"
                )
        if self.jersey_variant not in JERSEY_VARIANTS:
            raise ScoreTableError(
                f"{src}: yellow_jersey.variant: must be one of {', '.join(JERSEY_VARIANTS)}, "
                f"got {self.jersey_variant!r}"
            )
        if self.jersey_bonus_to not in JERSEY_BONUS_TO:
            raise ScoreTableError(
                f"{src}: yellow_jersey.bonus_to: must be one of {', '.join(JERSEY_BONUS_TO)}, "
                f"got {self.jersey_bonus_to!r}"
            )
        for name, value in (
            ("points_per_sprint", self.jersey_points_per_sprint),
            ("points_per_round", self.jersey_points_per_round),
        ):
            if not _is_int(value) or value < 0:
                raise ScoreTableError(f"{src}: yellow_jersey.{name}: must be a whole number >= 0, got {value!r}")

    def points_for_place(self, place: int | None) -> int:
        """Finishing points of ``place`` (1-based); 0 for None or a place off the table."""
        if place is None or place < 1 or place > len(self.place_points):
            return 0
        return self.place_points[place - 1]


_TABLE_KEYS = {"place_points", "yellow_jersey"}
_JERSEY_KEYS = {"variant", "points_per_sprint", "bonus_to", "points_per_round"}


def score_table_from_dict(data: Any, source: str = "<score table>") -> ScoreTable:
    """Build a :class:`ScoreTable` from the JSON form of ``score_table.json``.

    Keys starting with ``_`` are comments; any other unknown key is an error
    (a misspelt setting should not silently fall back to the default).
    """
    if not isinstance(data, dict):
        raise ScoreTableError(f"{source}: a score table must be a JSON object")
    unknown = sorted(k for k in data if k not in _TABLE_KEYS and not str(k).startswith("_"))
    if unknown:
        raise ScoreTableError(f"{source}: {unknown[0]}: unknown field")
    if "place_points" not in data:
        raise ScoreTableError(f"{source}: place_points: missing")
    places = data["place_points"]
    if not isinstance(places, list):
        raise ScoreTableError(f"{source}: place_points: must be a list of points by place")
    jersey = data.get("yellow_jersey", {})
    if not isinstance(jersey, dict):
        raise ScoreTableError(f"{source}: yellow_jersey: must be a JSON object")
    unknown = sorted(k for k in jersey if k not in _JERSEY_KEYS and not str(k).startswith("_"))
    if unknown:
        raise ScoreTableError(f"{source}: yellow_jersey.{unknown[0]}: unknown field")
    defaults = ScoreTable(place_points=(0,))
    return ScoreTable(
        place_points=tuple(places),
        jersey_variant=jersey.get("variant", defaults.jersey_variant),
        jersey_points_per_sprint=jersey.get("points_per_sprint", defaults.jersey_points_per_sprint),
        jersey_bonus_to=jersey.get("bonus_to", defaults.jersey_bonus_to),
        jersey_points_per_round=jersey.get("points_per_round", defaults.jersey_points_per_round),
        source=source,
    )


def load_score_table(path: str | Path | None = None) -> ScoreTable:
    """Load a score table file; ``None`` loads the shipped ``companion/data/score_table.json``."""
    p = Path(path) if path is not None else DEFAULT_SCORE_TABLE
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ScoreTableError(f"{p}: no such score table file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScoreTableError(f"{p}: cannot read the score table ({exc})") from None
    return score_table_from_dict(data, str(p))


# --- what the engine hands over ------------------------------------------------


@dataclass(frozen=True)
class SprintResult:
    """One sprint: the line, its index in the course route, the first riders across it.

    ``riders`` are the first (up to) 3 riders in crossing order; ``points`` the
    course's points for 1st, 2nd, 3rd (Tour de France sprint B: ``(11, 8, 5)``).
    A sprint nobody has crossed yet has ``riders == ()`` and changes nothing.
    """

    line: str
    route_index: int
    riders: tuple[int, ...]
    points: tuple[int, ...]

    @property
    def awarded(self) -> tuple[tuple[int, int], ...]:
        """``(rider, sprint points)`` for each rider placed at this sprint."""
        return tuple(zip(self.riders, self.points, strict=False))

    @property
    def winner(self) -> int | None:
        return self.riders[0] if self.riders else None


@dataclass(frozen=True)
class ChaseUse:
    """One hang onto the chase car: the rider and the photo-card numbers he drew.

    One card when he rolled one die and added 6, two when he moved 12 without
    rolling.
    """

    rider: int
    photos: tuple[int, ...]


@dataclass(frozen=True)
class RaceResult:
    """What the rules engine hands to :func:`score_race` at the end of a race.

    - ``teams``: team number -> its riders, e.g. ``{2: (21, 22, 23, 24), ...}``
      (:func:`standard_teams` gives the four of the box);
    - ``finish_order``: riders in the order they crossed the finish; riders
      who did not finish are absent;
    - ``sprints``: the sprints in route order (:class:`SprintResult`);
    - ``jersey_rounds``: rider -> rounds he kept the yellow jersey (short
      variant only; the engine counts them);
    - ``chase_uses``: every hang onto the chase car, in order;
    - ``final_photos``: the two photo-cards drawn after the race, or None if
      not drawn yet or the table plays without the chase car;
    - ``team_names`` / ``rider_names``: optional names for the sheet.

    The yellow-jersey holder at each sprint is not passed in: it follows from
    the sprints (:func:`jersey_holders`), the same way the engine learns it
    from :func:`yellow_jersey_after_sprint` after each sprint.
    """

    teams: Mapping[int, tuple[int, ...]]
    finish_order: tuple[int, ...]
    sprints: tuple[SprintResult, ...] = ()
    jersey_rounds: Mapping[int, int] = field(default_factory=dict)
    chase_uses: tuple[ChaseUse, ...] = ()
    final_photos: tuple[int, int] | None = None
    team_names: Mapping[int, str] = field(default_factory=dict)
    rider_names: Mapping[int, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "teams", {int(t): tuple(rs) for t, rs in sorted(self.teams.items())})
        object.__setattr__(self, "finish_order", tuple(self.finish_order))
        object.__setattr__(self, "sprints", tuple(self.sprints))
        object.__setattr__(self, "chase_uses", tuple(self.chase_uses))
        object.__setattr__(self, "jersey_rounds", dict(self.jersey_rounds))
        object.__setattr__(self, "team_names", dict(self.team_names))
        object.__setattr__(self, "rider_names", dict(self.rider_names))
        if self.final_photos is not None:
            object.__setattr__(self, "final_photos", tuple(self.final_photos))
        self._validate()

    def _validate(self) -> None:
        riders: set[int] = set()
        if not self.teams:
            raise RaceResultError("teams: no teams")
        for team, members in self.teams.items():
            if not members:
                raise RaceResultError(f"teams[{team}]: no riders")
            for r in members:
                if not _is_int(r):
                    raise RaceResultError(f"teams[{team}]: rider {r!r} is not a number")
                if r in riders:
                    raise RaceResultError(f"teams[{team}]: rider {r} is in two teams")
                riders.add(r)

        def known(r: object, where: str) -> None:
            if not _is_int(r) or r not in riders:
                raise RaceResultError(f"{where}: {r!r} is not a rider of any team")

        for r in self.finish_order:
            known(r, "finish_order")
        if len(set(self.finish_order)) != len(self.finish_order):
            raise RaceResultError("finish_order: a rider finishes twice")
        for i, s in enumerate(self.sprints):
            where = f"sprints[{i}] (line {s.line})"
            for r in s.riders:
                known(r, where)
            if len(set(s.riders)) != len(s.riders):
                raise RaceResultError(f"{where}: a rider is placed twice")
            if len(s.riders) > len(s.points):
                raise RaceResultError(f"{where}: {len(s.riders)} riders placed but only {len(s.points)} points")
            if not all(_is_int(p) and p >= 0 for p in s.points):
                raise RaceResultError(f"{where}: points must be whole numbers >= 0")
        for r, n in self.jersey_rounds.items():
            known(r, "jersey_rounds")
            if not _is_int(n) or n < 0:
                raise RaceResultError(f"jersey_rounds[{r}]: must be a whole number >= 0")
        uses: dict[int, int] = {}
        for i, use in enumerate(self.chase_uses):
            known(use.rider, f"chase_uses[{i}]")
            if len(use.photos) not in (1, 2):
                raise RaceResultError(
                    f"chase_uses[{i}] (rider {use.rider}): draws 1 or 2 photo-cards, not {len(use.photos)}"
                )
            for p in use.photos:
                if p not in PHOTO_NUMBERS:
                    raise RaceResultError(f"chase_uses[{i}] (rider {use.rider}): photo-card {p!r} is not 1-6")
            uses[use.rider] = uses.get(use.rider, 0) + 1
            if uses[use.rider] > MAX_CHASE_USES:
                raise RaceResultError(f"chase_uses[{i}]: rider {use.rider} hangs on more than {MAX_CHASE_USES} times")
        if self.final_photos is not None:
            if len(self.final_photos) != 2 or not all(p in PHOTO_NUMBERS for p in self.final_photos):
                raise RaceResultError(f"final_photos: two photo-card numbers 1-6, got {self.final_photos!r}")

    @property
    def riders(self) -> tuple[int, ...]:
        """Every rider, team by team."""
        return tuple(r for members in self.teams.values() for r in members)

    def team_of(self, rider: int) -> int:
        for team, members in self.teams.items():
            if rider in members:
                return team
        raise KeyError(rider)


# --- the rules ------------------------------------------------------------------


def yellow_jersey_after_sprint(
    holder: int | None,
    sprint_points: Mapping[int, int],
    winner: int | None,
    placed: Sequence[int] = (),
) -> int | None:
    """Who wears the yellow jersey once a sprint is decided.

    ``holder`` wears it riding into the sprint (None before the first sprint);
    ``sprint_points`` are every rider's actual sprint points *including this
    sprint* and never the jersey bonus; ``winner`` is first across the line
    (None: nobody crossed, nothing changes); ``placed`` is this sprint's
    crossing order, used only to break a tie between challengers.

    - The winner of the first sprint takes the jersey.
    - If the wearer wins the sprint, he keeps it.
    - If another rider wins, the sprint points are compared: a rider with more
      sprint points than the wearer takes the jersey (the text: "if another
      rider has more sprint points then that rider gets the yellow jersey";
      FACTS.md: it goes to "the rider with the most sprint points"). That is
      usually the winner, but may be a rider placed 2nd or 3rd.
    - On a tie with the wearer, the wearer keeps it ("more" points are needed).
    - If several challengers tie for the most points, the one who crossed this
      sprint line first takes it (only riders placed at this sprint can have
      passed the wearer); failing that, the lowest rider number.
    """
    if winner is None:
        return holder
    if holder is None:
        return winner
    if winner == holder:
        return holder
    best = max(sprint_points.values(), default=0)
    if sprint_points.get(holder, 0) >= best:
        return holder
    leaders = {r for r, p in sprint_points.items() if p == best}
    for r in (winner, *placed):
        if r in leaders:
            return r
    return min(leaders)


def jersey_holders(sprints: Iterable[SprintResult]) -> tuple[int | None, ...]:
    """The yellow-jersey holder after each sprint, by :func:`yellow_jersey_after_sprint`."""
    points: dict[int, int] = {}
    holder: int | None = None
    out: list[int | None] = []
    for s in sprints:
        for rider, pts in s.awarded:
            points[rider] = points.get(rider, 0) + pts
        holder = yellow_jersey_after_sprint(holder, points, s.winner, s.riders)
        out.append(holder)
    return tuple(out)


def disqualified(chase_uses: Iterable[ChaseUse], final_photos: Sequence[int] | None) -> set[int]:
    """Riders photographed hanging onto the chase car.

    A rider is disqualified when one of the two photo-cards drawn after the
    race shows a number he drew at any of his chase car uses. Nobody is
    disqualified while the final photo-cards are not drawn (``None``).
    """
    if final_photos is None:
        return set()
    caught = set(final_photos)
    return {use.rider for use in chase_uses if caught.intersection(use.photos)}


# --- the score sheet ------------------------------------------------------------


@dataclass(frozen=True)
class RiderScore:
    """One rider's line on the sheet.

    ``place_points``, ``sprint_points`` and ``jersey_points`` are what he
    earned; a disqualified rider keeps them on the sheet for the record but
    his ``total`` is 0 (``forfeited`` shows what was lost).
    """

    rider: int
    team: int
    place: int | None
    place_points: int
    sprint_points: int
    jersey_points: int
    disqualified: bool = False
    name: str = ""

    @property
    def earned(self) -> int:
        return self.place_points + self.sprint_points + self.jersey_points

    @property
    def total(self) -> int:
        return 0 if self.disqualified else self.earned

    @property
    def forfeited(self) -> int:
        return self.earned if self.disqualified else 0


@dataclass(frozen=True)
class TeamScore:
    """A team's section of the sheet: its riders (by number) and its total."""

    team: int
    riders: tuple[int, ...]
    total: int
    name: str = ""


@dataclass(frozen=True)
class SprintColumn:
    """A sprint column of the sheet: the first 3 riders, their points, the jersey.

    ``number`` counts the sprints from 1. ``holder_before`` wore the jersey
    riding into the sprint, ``holder_after`` wears it once the sprint is
    decided. ``jersey_bonus`` is ``(rider, points)`` of the full rules' jersey
    bonus paid at this sprint, or None.
    """

    number: int
    line: str
    route_index: int
    riders: tuple[int, ...]
    points: tuple[int, ...]
    holder_before: int | None
    holder_after: int | None
    jersey_bonus: tuple[int, int] | None = None

    @property
    def awarded(self) -> tuple[tuple[int, int], ...]:
        return tuple(zip(self.riders, self.points, strict=False))


@dataclass(frozen=True)
class ChaseRecord:
    """A rider who hung onto the chase car: the photo-cards of each use, caught or not."""

    rider: int
    uses: tuple[tuple[int, ...], ...]
    caught: bool = False

    @property
    def photos(self) -> tuple[int, ...]:
        """Every photo-card number he drew, in order."""
        return tuple(p for use in self.uses for p in use)


@dataclass(frozen=True)
class ScoreSheet:
    """The filled-in score sheet of one race."""

    riders: tuple[RiderScore, ...]
    teams: tuple[TeamScore, ...]
    winners: tuple[int, ...]
    finish_order: tuple[int, ...]
    sprints: tuple[SprintColumn, ...]
    chase_car: tuple[ChaseRecord, ...]
    final_photos: tuple[int, int] | None
    jersey_variant: JerseyVariant
    jersey_holder: int | None

    def rider(self, number: int) -> RiderScore:
        for r in self.riders:
            if r.rider == number:
                return r
        raise KeyError(number)

    def team(self, number: int) -> TeamScore:
        for t in self.teams:
            if t.team == number:
                return t
        raise KeyError(number)

    @property
    def disqualified(self) -> tuple[int, ...]:
        return tuple(r.rider for r in self.riders if r.disqualified)


def _winners(totals: Mapping[int, int]) -> tuple[int, ...]:
    if not totals:
        return ()
    best = max(totals.values())
    return tuple(sorted(t for t, v in totals.items() if v == best))


def score_race(result: RaceResult, table: ScoreTable) -> ScoreSheet:
    """Fill in the score sheet of a race.

    Per rider: place points (by ``table``), sprint points (first 3 across
    each sprint line), jersey points (full variant: the table's bonus to the
    jersey wearer at each sprint; short variant: points per round kept),
    total; a disqualified rider's total is 0. A team's total is the sum of its
    riders' totals; the team(s) with the most points win.
    """
    place = {r: i + 1 for i, r in enumerate(result.finish_order)}
    sprint_pts: dict[int, int] = {}
    jersey_pts: dict[int, int] = {}
    columns: list[SprintColumn] = []
    holder: int | None = None
    running: dict[int, int] = {}
    for n, s in enumerate(result.sprints, start=1):
        for rider, pts in s.awarded:
            sprint_pts[rider] = sprint_pts.get(rider, 0) + pts
            running[rider] = running.get(rider, 0) + pts
        before = holder
        holder = yellow_jersey_after_sprint(holder, running, s.winner, s.riders)
        bonus: tuple[int, int] | None = None
        if s.riders and table.jersey_variant == "full":
            wearer = holder if table.jersey_bonus_to == "holder_after" else before
            if wearer is not None and table.jersey_points_per_sprint:
                bonus = (wearer, table.jersey_points_per_sprint)
                jersey_pts[wearer] = jersey_pts.get(wearer, 0) + bonus[1]
        columns.append(SprintColumn(n, s.line, s.route_index, s.riders, s.points, before, holder, bonus))
    if table.jersey_variant == "short":
        for rider, rounds in result.jersey_rounds.items():
            if rounds:
                jersey_pts[rider] = rounds * table.jersey_points_per_round

    out = disqualified(result.chase_uses, result.final_photos)
    riders = tuple(
        RiderScore(
            rider=r,
            team=team,
            place=place.get(r),
            place_points=table.points_for_place(place.get(r)),
            sprint_points=sprint_pts.get(r, 0),
            jersey_points=jersey_pts.get(r, 0),
            disqualified=r in out,
            name=result.rider_names.get(r, ""),
        )
        for team, members in result.teams.items()
        for r in sorted(members)
    )
    teams = tuple(
        TeamScore(
            team=team,
            riders=tuple(sorted(members)),
            total=sum(rs.total for rs in riders if rs.team == team),
            name=result.team_names.get(team, ""),
        )
        for team, members in result.teams.items()
    )
    uses: dict[int, list[tuple[int, ...]]] = {}
    for use in result.chase_uses:
        uses.setdefault(use.rider, []).append(tuple(use.photos))
    chase = tuple(ChaseRecord(rider, tuple(u), rider in out) for rider, u in sorted(uses.items()))
    return ScoreSheet(
        riders=riders,
        teams=teams,
        winners=_winners({t.team: t.total for t in teams}),
        finish_order=result.finish_order,
        sprints=tuple(columns),
        chase_car=chase,
        final_photos=cast("tuple[int, int] | None", result.final_photos),
        jersey_variant=table.jersey_variant,
        jersey_holder=holder,
    )


# --- stage races ----------------------------------------------------------------


@dataclass(frozen=True)
class StageTeam:
    """A team's stage race score: ``final = team_points + stages x best_rider_points``."""

    team: int
    stage_totals: tuple[int, ...]
    team_points: int
    best_rider: int
    best_rider_points: int
    bonus: int
    final: int
    name: str = ""


@dataclass(frozen=True)
class StageResult:
    """The result of a stage race: one :class:`StageTeam` per team, and the winner(s)."""

    stages: int
    teams: tuple[StageTeam, ...]
    winners: tuple[int, ...]
    rider_totals: Mapping[int, int]

    def team(self, number: int) -> StageTeam:
        for t in self.teams:
            if t.team == number:
                return t
        raise KeyError(number)


def stage_race(sheets: Sequence[ScoreSheet]) -> StageResult:
    """Add up the score sheets of a stage race.

    Per team: the sum of its team totals over the stages, plus the bonus: the
    number of stages times the overall total of the team's best rider (the
    rider with the most points over all stages; on a tie the lowest number is
    named, the bonus is the same). The example of the rules: rider 41 with
    18+55+40+22+26 = 161 over 5 stages, team points 319: 5 x 161 + 319 = 1124.
    """
    if not sheets:
        raise ValueError("a stage race needs at least one score sheet")
    layout = [(t.team, t.riders) for t in sheets[0].teams]
    for i, sheet in enumerate(sheets[1:], start=2):
        if [(t.team, t.riders) for t in sheet.teams] != layout:
            raise ValueError(f"stage {i}: the teams differ from stage 1's")
    n = len(sheets)
    rider_totals: dict[int, int] = {}
    for sheet in sheets:
        for rs in sheet.riders:
            rider_totals[rs.rider] = rider_totals.get(rs.rider, 0) + rs.total
    teams: list[StageTeam] = []
    for team, members in layout:
        stage_totals = tuple(sheet.team(team).total for sheet in sheets)
        best_points = max(rider_totals[r] for r in members)
        best = min(r for r in members if rider_totals[r] == best_points)
        team_points = sum(stage_totals)
        bonus = n * best_points
        names = [sheet.team(team).name for sheet in sheets if sheet.team(team).name]
        teams.append(
            StageTeam(
                team=team,
                stage_totals=stage_totals,
                team_points=team_points,
                best_rider=best,
                best_rider_points=best_points,
                bonus=bonus,
                final=team_points + bonus,
                name=names[-1] if names else "",
            )
        )
    return StageResult(
        stages=n,
        teams=tuple(teams),
        winners=_winners({t.team: t.final for t in teams}),
        rider_totals=rider_totals,
    )
