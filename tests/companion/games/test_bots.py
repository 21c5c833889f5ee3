"""The bot and random managers: legal, sensible, fast, and better than random play."""

from __future__ import annotations

import time

from companion.boards import load_board, load_course
from companion.games.reifenbreite import Level, Move, Race, Roll, Settings
from companion.games.reifenbreite.bench import bots_against, demo_board
from companion.games.reifenbreite.bots import (
    BotManager,
    BotStyle,
    Manager,
    RandomManager,
    legal_places,
    legal_roll_choices,
)
from companion.games.reifenbreite.simulate import simulate_race
from tests.companion.games.conftest import make_race

TEAMS = (2, 3, 4, 5)


def two_lanes(riders: str, finish_at: int = 18) -> str:
    """Lane a empty, lane b with the riders given (e.g. "31 21"), finish line A after column ``finish_at - 1``."""
    toks = riders.split()
    lane_b = toks + ["."] * (finish_at - len(toks))
    lane_a = ["."] * finish_at
    tail = " |A " + " ".join(["."] * 8)
    return " ".join(lane_a) + tail + "\n" + " ".join(lane_b) + tail + "\n"


def rolled(race: Race, rider: int, dice: tuple[int, int], to: str) -> None:
    assert race.apply(Roll(rider, dice)).ok
    assert race.apply(Move(rider, to)).ok


def test_bot_drafts_a_long_move_and_not_a_short_one() -> None:
    race = make_race(two_lanes("31 21"))
    rolled(race, 21, (5, 5), "b11")
    assert race.prompt().kind == "draft_or_roll"
    assert BotManager().draft(race, 31, 21)
    race = make_race(two_lanes("31 21"))
    rolled(race, 21, (1, 1), "b3")
    assert race.prompt().kind == "draft_or_roll"
    assert not BotManager().draft(race, 31, 21)


def test_bot_moves_so_that_its_teammate_can_draft() -> None:
    race = make_race(two_lanes("22 21"))
    assert race.apply(Roll(21, (6, 4))).ok
    p = race.prompt()
    assert p.steps == 10
    to = BotManager().move(race, 21, 10, race.destinations(21, 10))
    assert race.apply(Move(21, to)).ok
    assert race.can_draft(22) is None


def test_bot_spends_cards_at_the_finish_with_a_breakaway_from_an_opponent() -> None:
    race = make_race(two_lanes("31 21", finish_at=8))
    choice = BotManager().roll(race, 21)
    assert choice.cards and len(choice.cards) == 2
    assert choice.breakaway  # an opponent sits on his wheel
    race = make_race(two_lanes("22 21", finish_at=8))
    choice = BotManager().roll(race, 21)
    assert choice.cards and not choice.breakaway  # his teammate may draft him


def test_bot_star_keeps_his_cards_far_from_the_finish() -> None:
    race = make_race(two_lanes("31 21", finish_at=60))
    assert BotManager().roll(race, 21).cards == ()


def test_bot_places_the_star_first_on_the_front_dot() -> None:
    board, course, _ = demo_board()
    race = Race(board, course, Settings(), seed=1)
    from companion.games.reifenbreite import PlacementRoll

    for t, dice in zip(TEAMS, [(6, 6), (1, 1), (2, 1), (1, 2)], strict=True):
        assert race.apply(PlacementRoll(t, dice)).ok
    assert race.prompt().kind == "place" and race.prompt().team == 2
    rider, space = BotManager().place(race, 2)
    assert rider == 21
    assert space == board.start_spaces(course.start)[0].id
    _, dots = legal_places(race, 2)
    assert space in dots


def test_random_roll_choices_are_all_legal() -> None:
    board, course = load_board("standard"), load_course("D")
    managers: dict[int, Manager] = {t: BotManager(style=BotStyle()) for t in TEAMS}  # cards kept for later
    race, _ = simulate_race(board, course, 3, managers, Settings(level=Level.PROFESSIONAL), stop_round=6)
    p = race.prompt()
    assert p.kind == "roll" and p.rider is not None
    choices = legal_roll_choices(race, p.rider)
    assert len(choices) > 3
    for c in choices:
        n = (1 if c.chase_die else 0) if c.chase_car else 2 - len(c.cards)
        trial = race.copy()
        verdict = trial.apply(Roll(p.rider, (3,) * n, c.cards, c.breakaway, c.chase_car))
        assert verdict.ok, (c, verdict)


def test_bot_race_on_course_d_is_fast_and_uses_the_chase_car_sparingly() -> None:
    board, course = load_board("standard"), load_course("D")
    t0 = time.process_time()
    race, _ = simulate_race(board, course, 8, {t: BotManager() for t in TEAMS},
                            Settings(level=Level.PROFESSIONAL))
    assert time.process_time() - t0 < 2.0
    assert race.phase.value == "over"
    assert all(len(r.chase_photos) <= 2 for r in race.riders.values())


def test_bots_beat_random_play() -> None:
    one = bots_against("random", 1, races=4, seed0=100)
    assert one.bot_win_rate >= 0.75
    assert one.mean_difference > 30
    managers: dict[int, Manager] = {2: RandomManager(1), 3: BotManager(), 4: RandomManager(2), 5: RandomManager(3)}
    board, course, text = demo_board()
    race, _ = simulate_race(board, course, 9, managers, board_text=text)
    assert race.riders[31].finished is not None and race.riders[31].finished <= 8


def test_professional_bots_play_cards_early_and_advanced_bots_save_them() -> None:
    race = make_race(two_lanes("31 21", finish_at=60), level=Level.PROFESSIONAL)
    assert len(BotManager().roll(race, 21).cards) == 2
    assert not BotManager().roll(race, 21).breakaway
    race = make_race(two_lanes("31 21", finish_at=60), level=Level.ADVANCED)
    assert BotManager().roll(race, 21).cards == ()
