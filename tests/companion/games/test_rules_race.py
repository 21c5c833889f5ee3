"""Surfaces, falls, finishing, order of play, movement, setup and chance cards."""

from __future__ import annotations

import json

from companion.boards import Course, parse_board
from companion.games.reifenbreite import (
    Chance,
    Draft,
    Level,
    Move,
    Phase,
    Place,
    PlacementRoll,
    Race,
    Roll,
    Settings,
)
from companion.games.reifenbreite.movement import fall_chain
from tests.companion.games.conftest import make_race, ok, refused

# --- surfaces (advanced rules) -------------------------------------------------------------


def test_uphill_6_minus_3():
    race = make_race(". u3:21 . . . . . . . . . .")
    v = ok(race, Roll(21, (4, 2)))
    assert v.details["steps"] == 3
    assert "subtracts 3" in v.reason
    assert max(race.destinations(21, 3).values()) == 3


def test_downhill_6_plus_4():
    race = make_race(". d4:21 . . . . . . . . . . . .")
    v = ok(race, Roll(21, (3, 3)))
    assert v.details["steps"] == 10


def test_cobblestone_5_minus_3_and_the_asphalt_patch():
    race = make_race(". c3:21 . . . . . . . . . .")
    assert ok(race, Roll(21, (3, 2))).details["steps"] == 2
    race = make_race(". c3 21 c3 . . . . . . . .")  # the asphalt patch in the cobbles
    assert ok(race, Roll(21, (3, 2))).details["steps"] == 5


def test_surfaces_do_not_count_in_the_basic_game():
    race = make_race(". u3:21 . . . . . . . . . .", level=Level.BASIC)
    assert ok(race, Roll(21, (4, 2))).details["steps"] == 6


def test_a_rider_who_rolls_too_low_on_a_climb_dismounts_and_comes_back_after_the_round():
    race = make_race(
        """
        . . . . . . . . . .
        . u3:21 32 . . . . . . .
        """
    )
    ok(race, Roll(32, (4, 4)))
    ok(race, Move(32, "b9"))
    v = ok(race, Roll(21, (1, 2)))
    assert v.rule == "surface.dismount-uphill"
    assert "dismounts" in v.reason
    assert race.round == 3  # everyone has moved: the round ended and 21 is back on his space
    assert race.riders[21].pos.space == "b1" and race.riders[21].on_road


def test_a_dismounted_rider_whose_space_is_taken_goes_beside_or_behind_it():
    race = make_race(
        """
        . . . . . . . . .
        33 c3:21 32 . . . . . .
        """
    )
    ok(race, Roll(32, (4, 4)))
    ok(race, Move(32, "b9") if "b9" in race.board else Move(32, "b8"))
    ok(race, Roll(21, (1, 2)))  # 3 - 3 = 0: dismount
    assert race.riders[21].dismounted and "b1" not in race.at
    ok(race, Roll(33, (2, 2)))
    ok(race, Move(33, "b1"))  # 33 takes 21's space
    # End of the round: 21 comes back beside his space (a1), the nearest free one.
    assert race.riders[21].pos.space == "a1"


def test_return_space_prefers_beside_then_behind():
    from companion.boards import Position
    from companion.games.reifenbreite.movement import return_space

    board, _ = parse_board(". . . .\n. . . .")
    from companion.boards import CourseMap

    cm = CourseMap(board, Course("t", "1", ()))
    assert return_space(cm, Position("b2", 0), {"b2"}).space in ("a2",)
    assert return_space(cm, Position("b2", 0), {"b2", "a2"}).space == "b1"
    assert return_space(cm, Position("b2", 0), set()).space == "b2"


# --- falls ---------------------------------------------------------------------------------

FALL = """
    . 23 . 34 21 . . . . . . . . . . .
    . .  33 52 31 . . . . . . . . . . .
    . 32 . 42 51 . . . . . . . . . . .
    . 53 . 54 41 . . . . . . . . . . .
    """


def test_the_fall_chain_example():
    board, riders = parse_board(FALL)
    at = {space: rider for rider, space in riders.items()}
    from companion.boards import CourseMap

    cm = CourseMap(board, Course("t", "1", ()))
    fallen = fall_chain(cm, at, riders[31])
    assert fallen[0] == 31
    assert set(fallen) == {31, 21, 52, 34, 42, 33, 54}
    # 51 and 41 are ahead of 31 (on his right); 32, 53 and 23 are not next to a faller.
    assert not set(fallen) & {51, 41, 32, 53, 23}


def test_a_fall_card_brings_riders_down_and_they_miss_the_round(tmp_path):
    deck = tmp_path / "falls.json"
    deck.write_text(json.dumps({"cards": [{"id": "f", "kind": "fall", "text": "You fall."}]}))
    race = make_race(FALL, chance_deck=str(deck))
    order = race.order_of_play()
    assert order[:3] == [41, 51, 31]  # rightmost first on a tie; 21 is on the left
    ok(race, Roll(41, (5, 5)))
    ok(race, Move(41, "d14"))
    ok(race, Roll(51, (1, 1)))
    ok(race, Move(51, "c6"))
    v = ok(race, Roll(31, (4, 3)))
    assert v.rule == "chance.fall" and v.details["chance"] == "f"
    assert {n for n, r in race.riders.items() if r.fallen} == {31, 21, 52, 34, 42, 33, 54}
    # Fallen riders stay on the road and block; they do not move this round.
    refused(race, Roll(21, (2, 2)), "chance.fallen")
    assert race.at["b4"] == 31
    assert race.next_roller() == 53
    ok(race, Roll(53, (2, 2)))
    assert "d4" not in race.destinations(53, 4)  # 41's old space is free, 54 on d3 blocks


# --- finishing -----------------------------------------------------------------------------

FINISH = """
    . . . . . . . . . . . |A . . . . . . . . . . . .
    . 24 52 43 31 . . . . . . |A . . . . . . . . . . . .
    . . . 33 . . . . . . . |A . . . . . . . . . . . .
    """


def test_the_finish_example_31_crosses_and_43_52_draft_him_over_the_line_24_does_not():
    race = make_race(FINISH)
    ok(race, Roll(31, (5, 4)))
    # He must use his whole move once he crosses the line: stopping on b11 or b12 is refused.
    refused(race, Move(31, "b12"), "move.finish-whole-move")
    v = ok(race, Move(31, "b13"))  # 3 spaces past the line
    assert "finish line A in place 1" in v.reason
    ok(race, Draft(43))
    ok(race, Draft(52))
    ok(race, Draft(24))
    assert race.finish_order == [31, 43, 52]
    assert race.riders[24].finished is None and race.riders[24].pos.space == "b10"
    # 33 (one space further back than in the text, so he rolls 6, not 5) could ride straight
    # ahead to B (c9); he moves to A instead, directly behind 24 (b9).
    ok(race, Roll(33, (4, 2)))
    assert {"c9", "b9"} <= set(race.destinations(33, 6))
    ok(race, Move(33, "b9"))
    # Next round 24 moves first (the finished riders have left the road) and 33 drafts him.
    assert race.round == 3 and race.next_roller() == 24
    ok(race, Roll(24, (4, 4)))
    ok(race, Move(24, "b18"))
    ok(race, Draft(33))
    assert race.finish_order == [31, 43, 52, 24, 33]  # 33 is 5th: 30 points
    assert race.phase is Phase.OVER


def test_a_rider_blocked_past_the_line_may_stop_short():
    race = make_race(
        """
        . . . . |A . 41 . .
        . . . 21 |A . 42 . .
        . . . . |A . 43 . .
        """
    )
    for r in (41, 42, 43):
        race.riders[r].moved = True
    ok(race, Roll(21, (4, 2)))
    # Past the line he would have to use all 6, but the wall of 41, 42, 43 stops him.
    assert set(race.destinations(21, 6)) == {"b3", "a4", "b4", "c4"}
    ok(race, Move(21, "b4"))
    assert race.finish_order == [21]


# --- order of play, movement ---------------------------------------------------------------


def test_order_of_play_farthest_ahead_then_rightmost():
    race = make_race(
        """
        . . 21 . 31 .
        . . 22 . . .
        . 41 . . 32 .
        """
    )
    assert race.order_of_play() == [32, 31, 22, 21, 41]
    refused(race, Roll(31, (2, 2)), "turn.order")


def test_movement_forward_only_never_sideways_back_or_through_riders():
    race = make_race(
        """
        . . . 33 . . . .
        . 21 34 . . . . .
        . . . 44 . . . .
        """
    )
    for r in (33, 34, 44):
        race.riders[r].moved = True
    ok(race, Roll(21, (2, 2)))
    dests = race.destinations(21, 4)
    assert "b1" in dests  # staying is "fewer spaces"
    assert "b2" not in dests and "b0" not in dests and "a1" not in dests and "c1" not in dests
    # Diagonally between 33 and 35 (a3, c3) is allowed: b1 -> a2 -> b3 -> ...
    assert "b3" in dests
    refused(race, Move(21, "a1"), "move.not-forward")
    refused(race, Move(21, "b2"), "move.occupied")
    refused(race, Move(21, "b7"), "move.too-far")


def test_a_thick_line_may_never_be_crossed():
    race = make_race(
        """
        . . . . . .
        = = = = = =
        . 21 . . . .
        """
    )
    ok(race, Roll(21, (2, 2)))
    assert all(s.startswith("b") for s in race.destinations(21, 4))
    refused(race, Move(21, "a3"), "move.not-forward")


def test_a_blocked_rider_stops_and_loses_the_rest():
    race = make_race(". 21 . 31 . . . .")
    race.riders[31].moved = True
    ok(race, Roll(21, (3, 3)))
    assert set(race.destinations(21, 6)) == {"a1", "a2"}
    refused(race, Move(21, "a4"), "move.blocked")


# --- setup ---------------------------------------------------------------------------------

START = """
    .o .o .o .o . . . . |A . .
    .o .o .o .o . . . . |A . .
    .o .o .o .o . . . . |A . .
    .o .o .o .o . . . . |A . .
    """


def test_placing_order_from_the_managers_rolls_then_clockwise():
    board, _ = parse_board(START)
    race = Race(board, Course("t", "1", ("A",)), Settings(), seed=3)
    assert race.prompt().kind == "placement_roll"
    ok(race, PlacementRoll(2, (3, 3)))
    ok(race, PlacementRoll(3, (6, 5)))
    ok(race, PlacementRoll(4, (6, 5)))
    v = ok(race, PlacementRoll(5, (1, 1)))
    assert v.rule == "setup.placement-tie"
    refused(race, PlacementRoll(2, (6, 6)), "setup.placement-roll")  # not in the roll-off
    ok(race, PlacementRoll(3, (2, 2)))
    v = ok(race, PlacementRoll(4, (5, 1)))
    assert v.rule == "setup.placement-order" and "team 4" in v.reason
    refused(race, Place(21, "a3"), "setup.place-order")
    ok(race, Place(41, "a3"))
    ok(race, Place(51, "b3"))
    ok(race, Place(21, "c3"))
    ok(race, Place(31, "d3"))
    refused(race, Place(42, "a2"), "setup.same-lane")
    refused(race, Place(42, "a5"), "setup.start-dot")
    refused(race, Place(42, "b3"), "setup.start-dot")
    ok(race, Place(42, "b2"))


def test_a_full_placement_starts_the_race():
    board, _ = parse_board(START)
    race = Race(board, Course("t", "1", ("A",)), Settings(), seed=3)
    for t, d in ((2, (6, 6)), (3, (1, 1)), (4, (1, 1)), (5, (1, 1))):
        ok(race, PlacementRoll(t, d))
    lanes = "abcd"
    for k in range(4):
        for t in (2, 3, 4, 5):
            rider = t * 10 + k + 1
            lane = lanes[(t + k) % 4]
            ok(race, Place(rider, f"{lane}{3 - k}"))
    assert race.phase is Phase.RACE and race.round == 1
    # No chance cards and no energy cards in the first round.
    leader = race.next_roller()
    assert race.riders[leader].pos.space.endswith("3")
    v = ok(race, Roll(leader, (4, 3)))
    assert "chance" not in v.details


# --- chance cards --------------------------------------------------------------------------


def test_chance_deck_has_22_cards_and_reshuffles_when_used_up():
    from companion.decks import Deck
    from companion.games.reifenbreite.cards import load_chance_cards

    cards = load_chance_cards()
    assert len(cards) == 22
    deck = Deck.seeded(cards, 7)
    first = [deck.draw() for _ in range(22)]
    assert sorted(c.id for c in first) == sorted(c.id for c in cards)
    again = deck.draw()
    assert deck.reshuffles == 1 and again in cards
    other = Deck.seeded(cards, 7)
    assert [other.draw() for _ in range(22)] == first  # seeded: same order


def _chance_race(tmp_path, kind, amount=0, text=". 21 . . . . . . . . . . . . ."):
    deck = tmp_path / "deck.json"
    deck.write_text(json.dumps({"cards": [{"id": "x", "kind": kind, "amount": amount, "text": kind}]}))
    return make_race(text, chance_deck=str(deck))


def test_chance_lose_turn(tmp_path):
    race = _chance_race(tmp_path, "lose_turn", text=". 21 . . . . . .\n. . 31 . . . . .")
    ok(race, Roll(31, (1, 1)))
    ok(race, Move(31, "b4"))
    v = ok(race, Roll(21, (5, 2)))
    assert v.rule == "chance.lose-turn"
    assert race.riders[21].pos.space == "a1" and race.round == 3


def test_chance_a_roll_of_seven_with_an_energy_card_draws_too(tmp_path):
    race = _chance_race(tmp_path, "faster", 2)
    v = ok(race, Roll(21, (2,), cards=("21-5",)))
    assert v.details["chance"] == "x" and v.details["steps"] == 9
    ok(race, Chance(21, "x"))
    refused(race, Chance(21, "x"), "chance.not-drawn")


def test_chance_slower(tmp_path):
    race = _chance_race(tmp_path, "slower", 3)
    assert ok(race, Roll(21, (3, 4))).details["steps"] == 4


def test_chance_gain_takes_back_only_his_own_played_card(tmp_path):
    race = _chance_race(tmp_path, "gain_energy")
    team = race.teams[2]
    from companion.games.reifenbreite import EnergyCard

    team.hand.remove(EnergyCard.parse("21-6M"))
    team.spent.append(EnergyCard.parse("21-6M"))
    team.spent.append(EnergyCard.parse("22-5"))
    ok(race, Roll(21, (3, 4)))
    assert EnergyCard.parse("21-6M") in team.hand
    assert EnergyCard.parse("22-5") in team.spent


def test_chance_lose_his_card_else_a_joker_else_nothing(tmp_path):
    from companion.games.reifenbreite import EnergyCard

    race = _chance_race(tmp_path, "lose_energy")
    team = race.teams[2]
    team.hand = [EnergyCard.parse(c) for c in ("21-5", "J-6M", "22-5")]
    ok(race, Roll(21, (3, 4)))
    assert [str(c) for c in team.hand] == ["J-6M", "22-5"]
    race = _chance_race(tmp_path, "lose_energy")
    team = race.teams[2]
    team.hand = [EnergyCard.parse(c) for c in ("J-6M", "22-5")]
    ok(race, Roll(21, (3, 4)))
    assert [str(c) for c in team.hand] == ["22-5"]
    race = _chance_race(tmp_path, "lose_energy")
    team = race.teams[2]
    team.hand = [EnergyCard.parse("22-5")]
    ok(race, Roll(21, (3, 4)))
    assert [str(c) for c in team.hand] == ["22-5"]


def test_no_chance_cards_in_the_first_round():
    race = make_race(". 21 . . . . . . . .", round_=1)
    v = ok(race, Roll(21, (3, 4)))
    assert "chance" not in v.details and v.details["steps"] == 7


def test_the_two_photo_cards_after_the_race_are_different():
    from companion.games.reifenbreite import Photos

    for seed in range(20):
        race = make_race(". 21 . |A . . .", level=Level.PROFESSIONAL, seed=seed)
        refused(race, Photos((1, 2)), "chase.photos-early")
        ok(race, Roll(21, (1, 1)))
        ok(race, Move(21, "a3"))
        a, b = race.final_photos
        assert a != b and {a, b} <= {1, 2, 3, 4, 5, 6}
        ok(race, Photos((a, b)))
        refused(race, Photos((b, a)), "chase.photos-mismatch")


def test_the_chase_car():
    race = make_race(". 21 . . . . . . . . . . . . . . . . . . . . . .", level=Level.PROFESSIONAL)
    refused(race, Roll(21, (3, 3), chase_car=True), "chase.dice")
    refused(race, Roll(21, (), cards=("21-5",), chase_car=True), "chase.with-cards")
    v = ok(race, Roll(21, (), chase_car=True))
    assert v.details["steps"] == 12 and len(v.details["photos"]) == 2
    ok(race, Move(21, "a13"))
    for _ in range(3):
        v = ok(race, Roll(21, (2,), chase_car=True))
        assert v.details["steps"] == 8 and len(v.details["photos"]) == 1
        ok(race, Move(21, race.riders[21].pos.space))
    refused(race, Roll(21, (2,), chase_car=True), "chase.limit")
    assert len(race.riders[21].chase_photos) == 4
    race = make_race(". 21 . . . .")
    refused(race, Roll(21, (2,), chase_car=True), "chase.professional")


def test_the_camera_expects_the_jersey_piece_for_the_wearer():
    race = make_race(". 21 . . 31 . .", level=Level.PROFESSIONAL)
    assert race.token_markers() == {21: "a1", 31: "a4"}
    race.yellow = 21
    assert race.token_markers() == {20: "a1", 31: "a4"}
