"""The worked examples of the rule texts, rebuilt on small boards, and the rules around them."""

from __future__ import annotations

from companion.games.reifenbreite import Decline, Draft, Level, Move, Roll, SwitchLead
from tests.companion.games.conftest import make_race, ok, refused

LONG = " ".join(["."] * 24)


# --- energy cards: the examples of 21, 54 and 32 -------------------------------------------


def test_energy_card_example_rider_21_catches_up_behind_22_and_drafts_him_next_round():
    race = make_race(
        f"""
        {LONG}
        . . . . . . . . . . . . 22 . . . . . . . . . . .
        . . 21 . . . . . . . . . . . . . . . . . . . . .
        {LONG}
        """
    )
    race.riders[22].moved = True  # 22 has moved this round; 21 has fallen behind the pack
    v = ok(race, Roll(21, (4,), cards=("21-6M",)))
    assert v.details["steps"] == 10  # 6 + 4
    assert "b11" in race.destinations(21, 10)
    ok(race, Move(21, "b11"))  # directly behind 22 (b12)
    assert race.round == 3
    ok(race, Roll(22, (5, 3)))
    ok(race, Move(22, "b20"))
    v = ok(race, Draft(21))
    assert race.riders[21].pos.space == "b19"
    assert v.rule == "draft"


def test_energy_card_example_54_plays_two_cards_and_the_line_drafts_him():
    race = make_race(
        f"""
        {LONG}
        . 51 52 31 41 54 . . . . . . . . . . . . . . . . . .
        {LONG}
        """
    )
    v = ok(race, Roll(54, (), cards=("54-5", "J-6M")))
    assert v.details["steps"] == 11
    ok(race, Move(54, "b16"))
    for rider, space in ((41, "b15"), (31, "b14"), (52, "b13"), (51, "b12")):
        ok(race, Draft(rider))
        assert race.riders[rider].pos.space == space
    assert [str(c) for c in race.teams[5].hand].count("J-6M") == 1


def test_energy_card_example_32_announces_a_breakaway_and_nobody_may_draft_him():
    race = make_race(
        f"""
        {LONG}
        . . . 21 32 . . . . . . . . . . . . . . . . . . .
        {LONG}
        """
    )
    ok(race, Roll(32, (4,), cards=("32-6M",), breakaway=True))
    ok(race, Move(32, "b14"))
    v = refused(race, Draft(21), "draft.breakaway")
    assert "breakaway" in v.reason


def test_energy_card_rules():
    text = f"""
        {LONG}
        . . . 21 . . . . . . . . . . . . . . . . . . . .
        {LONG}
        """
    race = make_race(text, round_=1)
    refused(race, Roll(21, (4,), cards=("21-6M",)), "energy.first-round")
    race = make_race(text)
    refused(race, Roll(21, (4,), cards=("22-6M",)), "energy.wrong-rider")
    refused(race, Roll(21, (), cards=("21-6M", "21-5", "J-5")), "energy.too-many")
    refused(race, Roll(21, (4, 3), cards=("21-6M",)), "roll.dice-count")
    refused(race, Roll(21, (4,), cards=("31-6M",)), "energy.wrong-rider")
    refused(race, Roll(21, (4,), cards=("X-9",)), "energy.unknown-card")
    ok(race, Roll(21, (), cards=("J-5", "J-5")))  # the team has two J-5 jokers
    race = make_race(text)
    race.teams[2].hand = [c for c in race.teams[2].hand if str(c) != "J-5"]
    refused(race, Roll(21, (4,), cards=("J-5",)), "energy.not-in-hand")


def test_energy_cards_on_cobblestones_and_climbs():
    race = make_race(". . . c2:21 . . . . . . . . . . . .")
    refused(race, Roll(21, (), cards=("21-6M", "21-5")), "energy.cobblestone")
    ok(race, Roll(21, (3,), cards=("21-5",)))  # one card is fine
    race = make_race(". . . u2:21 . . . . . . . . . . . .")
    refused(race, Roll(21, (3,), cards=("21-6M",)), "energy.mountain-shield")
    v = ok(race, Roll(21, (), cards=("21-5", "J-5")))
    assert v.details["steps"] == 8  # 5 + 5 - 2
    race = make_race(". . . u2:21 . . . . . . . . . . . .", level=Level.BASIC)
    ok(race, Roll(21, (3,), cards=("21-6M",)))  # the shield means nothing in the basic game


def test_short_courses_use_seven_cards():
    from companion.boards import Course, parse_board
    from companion.games.reifenbreite import Race

    board, riders = parse_board(". 21 . . . |A . .")
    race = Race(board, Course("A", "1", ("A",), short=True))
    assert len(race.teams[2].hand) == 7
    race = Race(board, Course("D", "1", ("A",)))
    assert len(race.teams[2].hand) == 14


# --- drafting: figures 6, 7 and 14, and the advanced rules --------------------------------


FIG6 = f"""
    {LONG}
    . 42 31 51 . . . . . . . . . . . . . . . . . . . .
    {LONG}
    """


def test_figure_6_an_unbroken_line_drafts_one_behind_the_other():
    race = make_race(FIG6)
    ok(race, Roll(51, (6, 4)))
    ok(race, Move(51, "b13"))
    v = ok(race, Draft(31))
    assert race.riders[31].pos.space == "b12"
    assert "31 drafts 51" in v.reason
    ok(race, Draft(42))  # 42 drafts 31
    assert race.riders[42].pos.space == "b11"


def test_figure_6_when_31_does_not_draft_42_may_not_draft_51():
    race = make_race(FIG6)
    ok(race, Roll(51, (6, 4)))
    ok(race, Move(51, "b13"))
    ok(race, Decline(31))
    refused(race, Draft(42), "draft.not-directly-behind")
    # 42 may still draft 31 when 31 moves.
    ok(race, Roll(31, (3, 2)))
    ok(race, Move(31, "b7"))
    ok(race, Draft(42))
    assert race.riders[42].pos.space == "b6"


def test_a_drafting_rider_may_not_move_more_spaces_than_his_leader():
    race = make_race(
        f"""
        {LONG}
        . 31 51 . . . . . . . . . . . . . . . . . . . . .
        {LONG}
        """
    )
    ok(race, Roll(51, (1, 1)))
    ok(race, Move(51, "b4"))  # 2 spaces
    ok(race, Draft(31))  # 31 needs 2 as well
    assert race.riders[31].pos.space == "b3"


def test_a_drafting_rider_follows_his_leader_into_another_lane():
    race = make_race(
        """
        .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
        .  54 22 41 .  .  .  .  .  .  .  .  .  .  .  .
        =  =  =  =  =  =  =  =  =  =  =  =  =  =  =  =
        .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
        """
    )
    # 41 rides 4 spaces diagonally into lane a and on: b3 -> a4 -> a5 -> a6 -> a7.
    ok(race, Roll(41, (2, 2)))
    ok(race, Move(41, "a7"))
    # The space behind 41 is a6: 22 on b2 needs b3, a4, a5, a6: 4 spaces, allowed.
    ok(race, Draft(22))
    assert race.riders[22].pos.space == "a6"


def test_figure_7_22_cannot_reach_the_space_behind_41_and_so_54_cannot_draft_either():
    # The outer lane (a) of a curve has more spaces than the inner lane (b: holes). 41 takes the
    # inner lane; 22 would land on E (the inner lane) but must reach D in the outer lane, which
    # needs one space more than 41 moved. A thick line separates the lanes in the curve.
    race = make_race(
        """
        .  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .
        _  _  _  =  =  =  =  =  =  _  _  _  _  _  _  _
        .  54 22 41 -  .  -  .  -  .  .  .  .  .  .  .
        """
    )
    # 41 in lane b: b3 -> b5 -> b7 -> b9 -> a10: 4 spaces.
    ok(race, Roll(41, (2, 2)))
    ok(race, Move(41, "a10"))
    v = refused(race, Draft(22), "draft.too-far")
    assert "moved only 4" in v.reason
    # Since 22 cannot draft, 54 cannot draft 41.
    refused(race, Draft(54), "draft.not-directly-behind")


def test_figure_7_52_cannot_reach_b_without_riding_through_41():
    race = make_race(
        """
        .  .  .  .  .  .  .  .  .  .  .  .  .  .
        .  52 21 .  .  41 .  .  .  .  .  .  .  .
        =  =  =  =  =  =  =  =  =  =  =  =  =  =
        .  .  .  .  .  .  .  .  .  .  .  .  .  .
        """
    )
    race.riders[41].moved = True
    ok(race, Roll(21, (3, 1)))
    # "Rider 21 can prevent this by moving to A": he passes 41 through lane a
    # (b2 -> a3 -> a4 -> a5 -> b6) and stops right in front of him. The space behind 21 is
    # taken by 41, so 52 cannot draft him.
    ok(race, Move(21, "b6"))
    refused(race, Draft(52), "draft.occupied")


def test_figure_7_51_waits_behind_33_to_draft_him_and_is_drafted_by_42_and_32():
    race = make_race(
        f"""
        {LONG}
        . 32 42 51 . . . . . . . . . 33 . . . . . . . . . .
        {LONG}
        """
    )
    race.riders[33].moved = True
    # 51 rolls 10 and could ride next to 33, but stops directly behind him (9 spaces).
    ok(race, Roll(51, (6, 4)))
    assert "c13" in race.destinations(51, 10)
    ok(race, Move(51, "b12"))
    ok(race, Draft(42))
    ok(race, Draft(32))
    assert race.riders[42].pos.space == "b11" and race.riders[32].pos.space == "b10"


def test_figure_14_switching_the_lead_in_a_breakaway():
    race = make_race(
        f"""
        {LONG}
        . . . . 41 21 51 . . . . . . . . . . . . . . . . .
        . . 32 31 . . . . . . . . . . . . . . . . . . . .
        """,
        level=Level.PROFESSIONAL,
    )
    refused(race, SwitchLead(21, 51), "switch.turn")
    ok(race, SwitchLead(51, 41))  # 21 refused; 41 agrees
    assert race.riders[41].pos.space == "b6" and race.riders[51].pos.space == "b4"
    assert race.next_roller() == 41  # "then rider 41 moves first"
    refused(race, SwitchLead(41, 21), "switch.once")
    ok(race, Roll(41, (5, 5)))
    ok(race, Move(41, "b16"))
    race2 = make_race(f"{LONG}\n. . 41 21 51 . . . . . . . . .", level=Level.ADVANCED)
    refused(race2, SwitchLead(51, 21), "switch.professional")


def test_advanced_drafting_needs_the_same_surface_at_the_start_of_the_round():
    race = make_race(
        f"""
        {LONG}
        . . 44 . 23 32 41 . . . . . . . . . . . . . . . . .
        . . . . . . c2:51 42 . . . . . . . . . . . . . . . .
        """
    )
    ok(race, Roll(42, (5, 3)))
    ok(race, Move(42, "c15"))
    v = refused(race, Draft(51), "draft.same-surface")
    assert v.reason.startswith("51 starts on cobblestone, 42 on asphalt")
    # 51 and 41 are level: the rider on the right (51) goes first.
    assert race.next_roller() == 51
    v = ok(race, Roll(51, (5, 4)))
    assert v.details["steps"] == 7  # 9 - 2 on cobblestone
    ok(race, Move(51, "c13"))
    # "Rider 41 rolls a 9. Riders 32 and 23 can draft him since they are all on asphalt.
    #  Rider 44 cannot draft because he is a space behind the group."
    ok(race, Roll(41, (4, 5)))
    ok(race, Move(41, "b15"))
    ok(race, Draft(32))
    ok(race, Draft(23))
    assert (race.riders[32].pos.space, race.riders[23].pos.space) == ("b14", "b13")
    refused(race, Draft(44), "draft.not-directly-behind")


def test_basic_rules_ignore_the_surface_for_drafting():
    race = make_race(
        f"""
        {LONG}
        . . . . . . c2:51 42 . . . . . . . . . . . . . . . .
        """,
        level=Level.BASIC,
    )
    v = ok(race, Roll(42, (5, 3)))
    ok(race, Move(42, "b15"))
    ok(race, Draft(51))
    assert v.details["steps"] == 8


def test_drafting_in_the_first_round_is_a_setting():
    race = make_race(FIG6, round_=1, first_round_drafting=False)
    ok(race, Roll(51, (6, 4)))
    ok(race, Move(51, "b13"))
    refused(race, Draft(31), "draft.first-round")
    race = make_race(FIG6, round_=1)
    ok(race, Roll(51, (6, 4)))
    ok(race, Move(51, "b13"))
    ok(race, Draft(31))
