"""`companion bench vision`'s judgement of one frame's dice as a roll."""

from __future__ import annotations

from vision.bench import roll_verdict
from vision.dice.reading import DieReading

TRUTH = [(3, (100.0, 100.0)), (5, (200.0, 100.0))]


def _read(*dice: tuple[int | None, float]) -> list[DieReading]:
    return [DieReading(v, (x, 100.0), 0.5) for v, x in dice]


def test_a_roll_read_right_is_taken_right() -> None:
    assert roll_verdict(TRUTH, _read((5, 201.0), (3, 99.0)), 2) == "right"
    assert roll_verdict(TRUTH, _read((3, 100.0), (5, 200.0)), None) == "right"


def test_a_roll_the_table_cannot_take_is_rolled_again() -> None:
    assert roll_verdict(TRUTH, _read((3, 100.0), (None, 200.0)), 2) == "again"  # unclear die
    assert roll_verdict(TRUTH, _read((3, 100.0)), 2) == "again"  # a die missed
    assert roll_verdict(TRUTH, _read((3, 100.0), (5, 200.0), (2, 300.0)), 2) == "again"
    assert roll_verdict(TRUTH, [], 2) == "again"


def test_a_roll_taken_with_anything_wrong_is_wrong() -> None:
    assert roll_verdict(TRUTH, _read((3, 100.0), (6, 200.0)), 2) == "wrong"  # a wrong value
    assert roll_verdict(TRUTH, _read((3, 100.0), (5, 260.0)), 2) == "wrong"  # a false die
    # not told how many: a die missed, or a false die beside the two, is taken
    assert roll_verdict(TRUTH, _read((3, 100.0)), None) == "wrong"
    assert roll_verdict(TRUTH, _read((3, 100.0), (5, 200.0), (2, 300.0)), None) == "wrong"
    cocked = [(3, (100.0, 100.0)), (0, (200.0, 100.0))]  # value 0: cocked, unreadable
    assert roll_verdict(cocked, _read((3, 100.0), (4, 200.0)), 2) == "wrong"
    assert roll_verdict(cocked, _read((3, 100.0), (None, 200.0)), 2) == "again"
    assert roll_verdict(cocked, _read((3, 100.0)), 2) == "again"
