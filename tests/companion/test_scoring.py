"""Scoring: every number of the professional rules is a test here."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.scoring import (
    DEFAULT_SCORE_TABLE,
    MAX_CHASE_USES,
    ChaseUse,
    RaceResult,
    RaceResultError,
    ScoreSheet,
    ScoreTable,
    ScoreTableError,
    SprintResult,
    disqualified,
    jersey_holders,
    load_score_table,
    score_race,
    score_table_from_dict,
    stage_race,
    standard_teams,
    yellow_jersey_after_sprint,
)

TEAMS = standard_teams()
ALL = tuple(r for rs in TEAMS.values() for r in rs)

# Sprint points of the four courses (FACTS.md; um-reifenbreite.txt section 13.2).
COURSES: dict[str, list[tuple[str, int, tuple[int, int, int]]]] = {
    "A": [("D", 1, (11, 8, 5))],
    "B": [("B", 1, (11, 8, 5))],
    "C": [("D", 1, (11, 8, 5)), ("A", 2, (7, 5, 3)), ("B", 3, (5, 4, 2))],
    "D": [("B", 1, (11, 8, 5)), ("C", 2, (7, 5, 3)), ("E", 3, (5, 4, 2))],
}


def sprints(course: str, *placed: tuple[int, ...]) -> tuple[SprintResult, ...]:
    """The sprints of a course with the riders placed at each (first 3, crossing order)."""
    return tuple(
        SprintResult(line, index, riders, points)
        for (line, index, points), riders in zip(COURSES[course], placed, strict=False)
    )


def finish(*first: int) -> tuple[int, ...]:
    """A full finish order starting with ``first``, the others by rider number."""
    return tuple(first) + tuple(r for r in ALL if r not in first)


@pytest.fixture
def table() -> ScoreTable:
    return load_score_table()


# --- the score table -----------------------------------------------------------


def test_default_table_covers_16_places_and_5th_is_30(table: ScoreTable) -> None:
    assert len(table.place_points) == 16
    assert table.points_for_place(5) == 30  # "maybe even finish 5th for 30 points"
    gaps = [a - b for a, b in zip(table.place_points, table.place_points[1:], strict=False)]
    assert all(g > 0 for g in gaps), "every place is worth more than the next"
    assert gaps == sorted(gaps, reverse=True), "larger gaps among the first places"
    assert gaps[0] > gaps[-1]


def test_default_jersey_settings(table: ScoreTable) -> None:
    assert table.jersey_variant == "full"
    assert table.jersey_points_per_sprint == 5
    assert table.jersey_bonus_to == "holder_after"
    assert table.jersey_points_per_round == 2  # short rules: 2 points per round kept
    assert table.source == str(DEFAULT_SCORE_TABLE)


def test_data_file_is_found_without_a_package_init() -> None:
    assert DEFAULT_SCORE_TABLE.is_file()
    assert not (DEFAULT_SCORE_TABLE.parent / "__init__.py").exists()


@pytest.mark.parametrize("place", [None, 0, -1, 17, 100])
def test_no_points_off_the_table(table: ScoreTable, place: int | None) -> None:
    assert table.points_for_place(place) == 0


def _write(tmp_path: Path, data: object) -> Path:
    p = tmp_path / "table.json"
    p.write_text(json.dumps(data), encoding="utf-8")
    return p


def test_custom_table_file(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        {
            "_comment": "ours",
            "place_points": [60, 45, 38, 33, 30],
            "yellow_jersey": {"variant": "short", "points_per_round": 3},
        },
    )
    t = load_score_table(p)
    assert t.place_points == (60, 45, 38, 33, 30)
    assert t.points_for_place(6) == 0
    assert t.jersey_variant == "short"
    assert t.jersey_points_per_round == 3
    assert t.jersey_points_per_sprint == 5  # the default where the file is silent


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"place_points": [50, 40, -3]}, "place_points[2]"),
        ({"place_points": [50, 40, 2.5]}, "place_points[2]"),
        ({"place_points": [50, True]}, "place_points[1]"),
        ({"place_points": [30, 40]}, "place_points[1]"),
        ({"place_points": []}, "place_points"),
        ({"place_points": "50,40"}, "place_points"),
        ({}, "place_points"),
        ({"place_points": [5], "yelow_jersey": {}}, "yelow_jersey"),
        ({"place_points": [5], "yellow_jersey": {"variant": "long"}}, "yellow_jersey.variant"),
        ({"place_points": [5], "yellow_jersey": {"bonus_to": "x"}}, "yellow_jersey.bonus_to"),
        (
            {"place_points": [5], "yellow_jersey": {"points_per_sprint": -1}},
            "yellow_jersey.points_per_sprint",
        ),
        (
            {"place_points": [5], "yellow_jersey": {"points_per_round": "2"}},
            "yellow_jersey.points_per_round",
        ),
        ({"place_points": [5], "yellow_jersey": {"pts": 1}}, "yellow_jersey.pts"),
        ({"place_points": [5], "yellow_jersey": []}, "yellow_jersey"),
        ([50, 40], "JSON object"),
    ],
)
def test_bad_table_names_file_and_field(tmp_path: Path, data: object, field: str) -> None:
    p = _write(tmp_path, data)
    with pytest.raises(ScoreTableError) as err:
        load_score_table(p)
    assert str(p) in str(err.value)
    assert field in str(err.value)
    assert isinstance(err.value, ValueError)


def test_unreadable_table_files(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    with pytest.raises(ScoreTableError, match="none.json"):
        load_score_table(missing)
    broken = tmp_path / "broken.json"
    broken.write_text("{place_points: [", encoding="utf-8")
    with pytest.raises(ScoreTableError, match="broken.json"):
        load_score_table(broken)


def test_table_from_dict_names_its_source() -> None:
    with pytest.raises(ScoreTableError, match=r"^mine: place_points\[0\]"):
        score_table_from_dict({"place_points": [-1]}, "mine")


# --- sprint points of the courses -------------------------------------------------


@pytest.mark.parametrize("course", sorted(COURSES))
def test_sprint_points_of_each_course(table: ScoreTable, course: str) -> None:
    # Different riders on the podium of every sprint, so each rider's sprint points
    # are exactly one course value.
    podiums = [(21, 31, 41), (22, 32, 42), (23, 33, 43)]
    sheet = score_race(RaceResult(TEAMS, finish(), sprints(course, *podiums)), replace(table, jersey_variant="short"))
    for (_line, _index, points), podium in zip(COURSES[course], podiums, strict=False):
        assert tuple(sheet.rider(r).sprint_points for r in podium) == points
    assert [c.points for c in sheet.sprints] == [p for _, _, p in COURSES[course]]
    assert [c.line for c in sheet.sprints] == [line for line, _, _ in COURSES[course]]


def test_course_files_carry_the_facts_sprint_points() -> None:
    """Cross-check with the shipped course files, once they exist."""
    from companion.boards.course import load_course

    folder = Path(__file__).resolve().parents[2] / "companion/boards/data/courses"
    for name, expected in COURSES.items():
        if not (folder / f"{name}.json").exists():
            pytest.skip(f"course file {name}.json not shipped yet")
        course = load_course(folder / f"{name}.json")
        assert [(s.line, s.points) for s in course.sprints] == [(line, points) for line, _, points in expected]


def test_sprint_points_add_up_over_sprints(table: ScoreTable) -> None:
    # Giro d'Italia: 41 second at D (8), first at A (7), third at B (2).
    sheet = score_race(
        RaceResult(TEAMS, finish(), sprints("C", (21, 41, 31), (41, 22, 32), (23, 33, 41))),
        replace(table, jersey_variant="short"),
    )
    assert sheet.rider(41).sprint_points == 8 + 7 + 2
    assert sheet.rider(21).sprint_points == 11


# --- place points ----------------------------------------------------------------


def test_place_points_and_non_finishers(table: ScoreTable) -> None:
    order = (31, 43, 22, 51, 33)  # 33 finishes 5th "for 30 points"
    sheet = score_race(RaceResult(TEAMS, order), table)
    assert sheet.rider(33).place == 5
    assert sheet.rider(33).place_points == 30
    assert sheet.rider(31).place_points == table.place_points[0]
    assert sheet.rider(24).place is None  # did not finish
    assert sheet.rider(24).total == 0
    assert sheet.finish_order == order


def test_full_field_totals_and_winner(table: ScoreTable) -> None:
    sheet = score_race(RaceResult(TEAMS, finish()), table)
    assert sum(t.total for t in sheet.teams) == sum(table.place_points)
    for t in sheet.teams:
        assert t.total == sum(sheet.rider(r).total for r in t.riders)
    assert sheet.winners == (2,)  # 21-24 finish 1st to 4th


def test_team_tie_gives_two_winners() -> None:
    flat = ScoreTable(place_points=(10, 10, 10, 10, 10, 10, 10, 10))
    order = (21, 31, 22, 32, 23, 33, 24, 34)
    sheet = score_race(RaceResult(TEAMS, order), flat)
    assert sheet.team(2).total == sheet.team(3).total == 40
    assert sheet.winners == (2, 3)


# --- the yellow jersey ---------------------------------------------------------------


def test_first_sprint_winner_takes_the_jersey() -> None:
    assert yellow_jersey_after_sprint(None, {21: 11, 33: 8, 42: 5}, 21) == 21
    assert yellow_jersey_after_sprint(None, {}, None) is None
    assert yellow_jersey_after_sprint(21, {21: 11}, None) == 21  # nobody crossed yet


def test_rulebook_jersey_example() -> None:
    """Section 18: 21 wins sprint 1 (11); 42, third there (5), wins sprint 2 (7): 12 > 11."""
    holder = yellow_jersey_after_sprint(None, {21: 11, 33: 8, 42: 5}, 21)
    assert holder == 21
    points = {21: 11, 33: 8, 42: 5 + 7, 51: 5, 43: 3}
    assert yellow_jersey_after_sprint(holder, points, 42, (42, 51, 43)) == 42
    assert jersey_holders(sprints("C", (21, 33, 42), (42, 51, 43))) == (21, 42)


def test_rulebook_jersey_example_on_the_sheet(table: ScoreTable) -> None:
    # 21 has 11 sprint points + jersey points, but jersey points never count for the
    # comparison: 42 with 12 sprint points takes the jersey.
    result = RaceResult(TEAMS, finish(31, 43), sprints("C", (21, 33, 42), (42, 51, 43)))
    sheet = score_race(result, table)
    assert sheet.rider(21).sprint_points == 11
    assert sheet.rider(42).sprint_points == 12
    assert sheet.rider(21).jersey_points == 5  # held it after sprint 1
    assert sheet.rider(21).sprint_points + sheet.rider(21).jersey_points > 12
    assert [c.riders for c in sheet.sprints] == [(21, 33, 42), (42, 51, 43)]
    assert [(c.holder_before, c.holder_after) for c in sheet.sprints] == [(None, 21), (21, 42)]
    assert sheet.jersey_holder == 42
    assert sheet.rider(42).jersey_points == 5
    assert sheet.finish_order[:2] == (31, 43)  # "rider 31 is first, 43 second"


def test_wearer_who_wins_keeps_the_jersey() -> None:
    assert jersey_holders(sprints("D", (21, 33, 42), (21, 42, 33), (42, 33, 21))) == (21, 21, 21)


def test_tie_with_the_wearer_keeps_the_jersey() -> None:
    # Own course: sprint 2 pays 3 to the winner. 33 (8 + 3 = 11) ties 21 (11): 21 keeps it.
    own = (SprintResult("D", 1, (21, 33, 42), (11, 8, 5)), SprintResult("A", 2, (33,), (3,)))
    assert jersey_holders(own) == (21, 21)
    assert yellow_jersey_after_sprint(21, {21: 11, 33: 11, 42: 5}, 33) == 21
    # One point more and the jersey changes hands.
    assert yellow_jersey_after_sprint(21, {21: 11, 33: 12, 42: 5}, 33) == 33


def test_winner_short_of_the_wearer_does_not_take_it() -> None:
    # 51 wins sprint 2 (7) but has fewer sprint points than 21 (11).
    assert jersey_holders(sprints("C", (21, 33, 42), (51, 42, 22))) == (21, 21)


def test_jersey_goes_to_the_rider_with_the_most_sprint_points() -> None:
    # Another rider wins sprint 2 (43, 7 points), but 33, second there, now has 8 + 5 = 13
    # sprint points, more than the wearer 21 (11): "if another rider has more sprint
    # points then that rider gets the yellow jersey" (FACTS: the most sprint points).
    assert jersey_holders(sprints("C", (21, 33, 42), (43, 33, 51))) == (21, 33)


def test_challengers_tied_for_the_most_points_go_by_crossing_order() -> None:
    points = {21: 11, 33: 13, 42: 13}
    assert yellow_jersey_after_sprint(21, points, 42, (42, 33)) == 42
    assert yellow_jersey_after_sprint(21, points, 51, (51, 33, 42)) == 33
    assert yellow_jersey_after_sprint(21, points, 51, (51,)) == 33  # lowest number


def test_full_variant_bonus_goes_to_the_holder_after_each_sprint(table: ScoreTable) -> None:
    result = RaceResult(TEAMS, finish(), sprints("D", (21, 33, 42), (42, 51, 43), (31, 22, 23)))
    sheet = score_race(result, table)
    assert [c.jersey_bonus for c in sheet.sprints] == [(21, 5), (42, 5), (42, 5)]
    assert sheet.rider(21).jersey_points == 5
    assert sheet.rider(42).jersey_points == 10
    assert sheet.rider(42).total == sheet.rider(42).place_points + 12 + 10
    # Second at sprint E (4) brings 21 to 15 > 12: the jersey goes back, with the bonus.
    back = replace(result, sprints=sprints("D", (21, 33, 42), (42, 51, 43), (31, 21, 22)))
    assert [c.jersey_bonus for c in score_race(back, table).sprints] == [
        (21, 5),
        (42, 5),
        (21, 5),
    ]


def test_full_variant_bonus_to_the_wearer_riding_into_the_sprint(table: ScoreTable) -> None:
    before = replace(table, jersey_bonus_to="holder_before", jersey_points_per_sprint=4)
    result = RaceResult(TEAMS, finish(), sprints("D", (21, 33, 42), (42, 51, 43), (31, 21, 22)))
    sheet = score_race(result, before)
    # Nobody wears it at sprint 1; 21 wears it into sprint 2, 42 into sprint 3.
    assert [c.jersey_bonus for c in sheet.sprints] == [None, (21, 4), (42, 4)]
    assert sheet.rider(21).jersey_points == 4
    assert sheet.rider(42).jersey_points == 4


def test_short_variant_two_points_per_round(table: ScoreTable) -> None:
    short = replace(table, jersey_variant="short")
    result = RaceResult(
        TEAMS,
        finish(),
        sprints("C", (21, 33, 42), (42, 51, 43)),
        jersey_rounds={21: 3, 42: 5},
    )
    sheet = score_race(result, short)
    assert sheet.rider(21).jersey_points == 6
    assert sheet.rider(42).jersey_points == 10
    assert all(c.jersey_bonus is None for c in sheet.sprints)  # no sprint bonus
    assert sheet.jersey_variant == "short"
    # And the full variant ignores the rounds.
    assert score_race(result, table).rider(21).jersey_points == 5


def test_sprint_not_ridden_yet_changes_nothing(table: ScoreTable) -> None:
    result = RaceResult(TEAMS, (), sprints("D", (21, 33, 42), (), ()))
    sheet = score_race(result, table)
    assert [c.holder_after for c in sheet.sprints] == [21, 21, 21]
    assert [c.jersey_bonus for c in sheet.sprints] == [(21, 5), None, None]


# --- the chase car ------------------------------------------------------------------


def test_disqualified_by_one_of_the_two_final_photos() -> None:
    uses = [ChaseUse(21, (3,)), ChaseUse(21, (5, 6)), ChaseUse(42, (1, 2)), ChaseUse(33, (4,))]
    assert disqualified(uses, (6, 2)) == {21, 42}
    assert disqualified(uses, (4, 4)) == {33}
    assert disqualified(uses, (1, 5)) == {21, 42}
    assert disqualified(uses, None) == set()  # not drawn yet
    assert disqualified([], (1, 2)) == set()


def test_disqualification_forfeits_only_that_riders_points(table: ScoreTable) -> None:
    base = RaceResult(
        TEAMS,
        finish(22, 31, 21),
        sprints("C", (21, 33, 42), (21, 22, 31)),
        chase_uses=(ChaseUse(22, (3,)), ChaseUse(22, (1, 6)), ChaseUse(41, (2,))),
    )
    clean = score_race(replace(base, final_photos=(4, 5)), table)
    caught = score_race(replace(base, final_photos=(6, 4)), table)
    assert clean.disqualified == ()
    assert caught.disqualified == (22,)
    r22 = caught.rider(22)
    assert r22.disqualified and r22.total == 0
    assert r22.forfeited == clean.rider(22).total == 50 + 5  # 1st place, 2nd at sprint A
    assert (r22.place, r22.place_points, r22.sprint_points) == (1, 50, 5)
    assert caught.team(2).total == clean.team(2).total - clean.rider(22).total
    for r in ALL:
        if r != 22:
            assert caught.rider(r) == clean.rider(r)  # places, sprints, jersey unchanged
    for t in (3, 4, 5):
        assert caught.team(t).total == clean.team(t).total
    records = {c.rider: c for c in caught.chase_car}
    assert records[22].uses == ((3,), (1, 6)) and records[22].caught
    assert records[22].photos == (3, 1, 6)
    assert records[41].uses == ((2,),) and not records[41].caught
    assert caught.final_photos == (6, 4)


def test_disqualified_jersey_wearer_keeps_the_jersey_on_the_sheet(table: ScoreTable) -> None:
    result = RaceResult(
        TEAMS,
        finish(),
        sprints("A", (21, 33, 42)),
        chase_uses=(ChaseUse(21, (2,)),),
        final_photos=(2, 3),
    )
    sheet = score_race(result, table)
    assert sheet.jersey_holder == 21
    assert sheet.rider(21).total == 0
    assert sheet.rider(21).forfeited == 50 + 11 + 5
    assert sheet.rider(33).sprint_points == 8  # places at the sprint stand


# --- validation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"finish_order": (21, 99)}, "finish_order"),
        ({"finish_order": (21, 21)}, "finishes twice"),
        ({"sprints": (SprintResult("D", 1, (21, 21), (11, 8, 5)),)}, "placed twice"),
        ({"sprints": (SprintResult("D", 1, (21, 22), (11,)),)}, "only 1 points"),
        ({"chase_uses": (ChaseUse(21, (7,)),)}, "not 1-6"),
        ({"chase_uses": (ChaseUse(21, ()),)}, "1 or 2"),
        ({"chase_uses": (ChaseUse(21, (1, 2, 3)),)}, "1 or 2"),
        ({"chase_uses": (ChaseUse(21, (1,)),) * (MAX_CHASE_USES + 1)}, "more than 4"),
        ({"final_photos": (1, 9)}, "final_photos"),
        ({"final_photos": (1,)}, "final_photos"),
        ({"jersey_rounds": {21: -1}}, "jersey_rounds"),
        ({"jersey_rounds": {77: 1}}, "jersey_rounds"),
    ],
)
def test_bad_race_results_are_refused(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"teams": TEAMS, "finish_order": ()}
    args.update(kwargs)
    with pytest.raises(RaceResultError, match=message):
        RaceResult(**args)  # type: ignore[arg-type]


def test_four_chase_uses_are_allowed() -> None:
    RaceResult(TEAMS, (), chase_uses=(ChaseUse(21, (1, 2)),) * MAX_CHASE_USES)


def test_rider_in_two_teams_is_refused() -> None:
    with pytest.raises(RaceResultError, match="two teams"):
        RaceResult({2: (21, 22), 3: (22, 31)}, ())


# --- stage races -------------------------------------------------------------------

# Five stages in which rider 41 scores 18, 55, 40, 22, 26 and his team 46, 68, 92, 66,
# 47: the example of the rules (default score table, full jersey rules).
STAGES: list[tuple[str, tuple[int, ...], tuple[tuple[int, ...], ...]]] = [
    (
        "D",
        (53, 31, 51, 34, 32, 33, 24, 43, 54, 22, 41, 21, 23, 44, 42, 52),
        ((22, 52, 53), (41, 31, 51), (22, 32, 31)),
    ),
    (
        "C",
        (32, 51, 22, 24, 23, 41, 34, 54, 33, 21, 52, 53, 42, 43, 31, 44),
        ((41, 24, 54), (53, 54, 41), (31, 24, 33)),
    ),
    (
        "D",
        (23, 22, 33, 43, 41, 54, 21, 32, 53, 51, 42, 31, 44, 24, 34, 52),
        ((23, 53, 41), (54, 41, 51), (21, 31, 23)),
    ),
    (
        "B",
        (53, 52, 21, 54, 51, 31, 22, 42, 43, 41, 34, 32, 44, 33, 24, 23),
        ((33, 41, 22),),
    ),
    (
        "C",
        (54, 32, 51, 52, 31, 41, 34, 33, 43, 53, 21, 23, 24, 22, 42, 44),
        ((51, 31, 24), (52, 21, 22), (21, 54, 33)),
    ),
]


def stage_sheets(table: ScoreTable) -> list[ScoreSheet]:
    return [score_race(RaceResult(TEAMS, order, sprints(course, *placed)), table) for course, order, placed in STAGES]


def test_rulebook_stage_race_example(table: ScoreTable) -> None:
    sheets = stage_sheets(table)
    assert [s.rider(41).total for s in sheets] == [18, 55, 40, 22, 26]
    assert [s.team(4).total for s in sheets] == [46, 68, 92, 66, 47]
    result = stage_race(sheets)
    team4 = result.team(4)
    assert result.stages == 5
    assert team4.best_rider == 41
    assert team4.best_rider_points == 161
    assert team4.team_points == 319
    assert team4.bonus == 5 * 161
    assert team4.final == 5 * 161 + 319 == 1124
    assert team4.stage_totals == (46, 68, 92, 66, 47)
    for t in result.teams:
        assert t.final == t.team_points + 5 * t.best_rider_points
        assert t.best_rider_points == max(result.rider_totals[r] for r in TEAMS[t.team])
    best = max(t.final for t in result.teams)
    assert result.winners == tuple(t.team for t in result.teams if t.final == best)


def test_stage_race_counts_a_disqualified_rider_as_zero(table: ScoreTable) -> None:
    sheets = stage_sheets(table)
    course, order, placed = STAGES[1]
    caught = RaceResult(
        TEAMS,
        order,
        sprints(course, *placed),
        chase_uses=(ChaseUse(41, (6,)),),
        final_photos=(6, 1),
    )
    sheets[1] = score_race(caught, table)
    team4 = stage_race(sheets).team(4)
    assert team4.team_points == 319 - 55
    assert (team4.best_rider, team4.best_rider_points) == (41, 161 - 55)
    assert team4.final == 5 * (161 - 55) + 319 - 55


def test_stage_race_needs_sheets_with_the_same_teams(table: ScoreTable) -> None:
    with pytest.raises(ValueError):
        stage_race([])
    two_teams = score_race(RaceResult({2: TEAMS[2], 3: TEAMS[3]}, ()), table)
    with pytest.raises(ValueError, match="stage 2"):
        stage_race([stage_sheets(table)[0], two_teams])


def test_one_stage_is_a_plain_race_plus_the_best_rider(table: ScoreTable) -> None:
    sheet = stage_sheets(table)[0]
    result = stage_race([sheet])
    for t in result.teams:
        best = max(sheet.rider(r).total for r in TEAMS[t.team])
        assert t.final == sheet.team(t.team).total + best


# --- properties ----------------------------------------------------------------------

podium = st.lists(st.sampled_from(ALL), min_size=0, max_size=3, unique=True).map(tuple)


@given(
    placed=st.lists(podium, min_size=1, max_size=4),
    order=st.permutations(ALL),
    finishers=st.integers(0, 16),
    photos=st.lists(st.tuples(st.sampled_from(ALL), st.integers(1, 6)), max_size=MAX_CHASE_USES),
    final=st.one_of(st.none(), st.tuples(st.integers(1, 6), st.integers(1, 6))),
)
def test_sheet_invariants(
    placed: list[tuple[int, ...]],
    order: list[int],
    finishers: int,
    photos: list[tuple[int, int]],
    final: tuple[int, int] | None,
) -> None:
    table = load_score_table()
    points = [(11, 8, 5), (7, 5, 3), (5, 4, 2), (11, 8, 5)]
    result = RaceResult(
        TEAMS,
        tuple(order[:finishers]),
        tuple(SprintResult("X", i, p, points[i]) for i, p in enumerate(placed)),
        chase_uses=tuple(ChaseUse(r, (n,)) for r, n in photos),
        final_photos=final,
    )
    sheet = score_race(result, table)
    # Team totals add up; the winners have the most points.
    for t in sheet.teams:
        assert t.total == sum(sheet.rider(r).total for r in t.riders)
    assert {t.team for t in sheet.teams if t.total == max(x.total for x in sheet.teams)} == set(sheet.winners)
    # The jersey is always with a rider who has the most sprint points (ties allowed).
    running: dict[int, int] = {}
    for col in sheet.sprints:
        for r, p in col.awarded:
            running[r] = running.get(r, 0) + p
        if col.holder_after is not None:
            assert running[col.holder_after] == max(running.values())
    # Disqualification removes exactly that rider's points.
    clean = score_race(replace(result, final_photos=None), table)
    out = disqualified(result.chase_uses, final)
    assert set(sheet.disqualified) == out
    for r in ALL:
        assert sheet.rider(r).total == (0 if r in out else clean.rider(r).total)
