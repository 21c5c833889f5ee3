"""The reader's decision on a candidate (pure logic, no networks run)."""

from __future__ import annotations

import pytest

from vision.dice.reader import Candidate, default_reader


def _cand(probs: list[float], not_die: float = 0.0, weak: bool = False,
          die_sized: bool = False) -> Candidate:
    return Candidate(100.0, 100.0, 40.0, 0.6, tuple(probs), not_die, weak, die_sized)


FOUR = [0.0, 0.0, 0.0, 0.97, 0.01, 0.01, 0.01]  # "4" at 0.97


def test_a_clear_value_is_reported() -> None:
    reading = default_reader().decide(_cand(FOUR))
    assert reading.value == 4 and reading.center == (100.0, 100.0)


@pytest.mark.parametrize("probs", [[0.1, 0.1, 0.1, 0.6, 0.05, 0.05, 0.0],  # below 0.8
                                   [0.0, 0.0, 0.0, 0.05, 0.0, 0.0, 0.95]])  # "unreadable"
def test_doubt_gives_null(probs: list[float]) -> None:
    assert default_reader().decide(_cand(probs)).value is None


def test_not_a_die_is_dropped() -> None:
    reader = default_reader()
    assert reader.keeps(_cand(FOUR, not_die=0.2))
    assert not reader.keeps(_cand(FOUR, not_die=reader.not_die_threshold))


def test_a_weak_proposal_needs_a_clear_value() -> None:
    """A weak detector peak (a die touching another, a proposal far from the known
    die size) is kept only when read clearly, never as null."""
    reader = default_reader()
    assert reader.keeps(_cand(FOUR, weak=True))  # 0.97 >= 0.95, not-a-die 0
    assert not reader.keeps(_cand(FOUR, not_die=0.05, weak=True))  # unsure it is a die
    unsure = [0.0, 0.0, 0.0, 0.9, 0.05, 0.05, 0.0]
    assert reader.keeps(_cand(unsure))  # reported (as null) when strong
    assert not reader.keeps(_cand(unsure, weak=True))
    unreadable = [0.0, 0.0, 0.0, 0.02, 0.0, 0.0, 0.98]
    assert not reader.keeps(_cand(unreadable, weak=True))


def test_a_weak_proposal_of_the_known_size_needs_less() -> None:
    """At a known die size, a weak peak whose size matches needs a value at 0.85."""
    reader = default_reader()
    fair = [0.0, 0.0, 0.0, 0.9, 0.05, 0.05, 0.0]
    assert reader.keeps(_cand(fair, weak=True, die_sized=True))
    assert not reader.keeps(_cand(fair, weak=True))
    doubtful = [0.0, 0.0, 0.0, 0.8, 0.1, 0.1, 0.0]
    assert not reader.keeps(_cand(doubtful, weak=True, die_sized=True))
