"""How `vision.dice.run` pairs readings with labelled dice (what every dice bench counts)."""

from __future__ import annotations

from vision.dice.data import LabelledDie
from vision.dice.reading import DieReading
from vision.dice.run import die_outcomes, match

A = LabelledDie(3, (80.0, 80.0, 120.0, 120.0))
B = LabelledDie(5, (115.0, 80.0, 155.0, 120.0))  # overlaps A's box on x 115..120


def _at(value: int | None, x: float, y: float = 100.0) -> DieReading:
    return DieReading(value, (x, y), 0.5)


def test_each_die_takes_its_closest_reading_once() -> None:
    # Both readings lie in the overlap; each die takes the reading nearer its centre.
    outcomes, false = die_outcomes([A, B], [_at(5, 119.0), _at(3, 116.0)])
    assert outcomes == ["right", "right"] and false == 0
    # One reading for two dice: the nearer die has it, the other is missed.
    assert die_outcomes([A, B], [_at(5, 118.0)]) == (["missed", "right"], 0)


def test_wrong_unread_missed_and_false_dice_are_told_apart() -> None:
    seen = [_at(4, 100.0), _at(None, 135.0), _at(2, 300.0)]
    assert die_outcomes([A, B], seen) == (["wrong", "unread"], 1)
    assert match([A, B], seen) == (0, 1, 1, 0, 1)
    assert match([A, B, LabelledDie(1, (0.0, 0.0, 10.0, 10.0))], seen) == (0, 1, 1, 1, 1)
    assert die_outcomes([], seen) == ([], 3)
