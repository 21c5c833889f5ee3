"""The reader's decision on a candidate (pure logic, no networks run), and the
third look that may confirm one (which runs the classifier)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.dice.reader import Candidate, DiceReader, default_reader
from vision.dice.reading import UNREADABLE
from vision.dice.synth import draw_die


def _cand(probs: list[float], not_die: float = 0.0, weak: bool = False,
          die_sized: bool = False, noise: float = 0.0, blur: float = 0.0,
          confirmed: bool = False) -> Candidate:
    return Candidate(100.0, 100.0, 40.0, 0.6, tuple(probs), not_die, weak, die_sized, noise,
                     blur, confirmed)


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


def test_a_die_in_a_noisy_crop_gets_no_value() -> None:
    """Past ``noise_threshold`` grey levels of noise a clear-looking value is withheld,
    and a weak proposal (which is never reported as null) is not reported."""
    reader = default_reader()
    t = reader.noise_threshold
    assert reader.decide(_cand(FOUR, noise=t)).value == 4
    assert reader.decide(_cand(FOUR, noise=t + 0.1)).value is None
    assert reader.keeps(_cand(FOUR, noise=t + 0.1))  # seen: reported, as null
    assert reader.keeps(_cand(FOUR, weak=True, noise=t))
    assert not reader.keeps(_cand(FOUR, weak=True, noise=t + 0.1))


def test_a_blurred_die_gets_no_value() -> None:
    """Edges softer than ``blur_threshold`` pixels: the value is withheld, a weak
    proposal dropped."""
    reader = default_reader()
    t = reader.blur_threshold
    assert reader.decide(_cand(FOUR, blur=t)).value == 4
    assert reader.decide(_cand(FOUR, blur=t + 0.1)).value is None
    assert reader.keeps(_cand(FOUR, blur=t + 0.1))
    assert not reader.keeps(_cand(FOUR, weak=True, blur=t + 0.1))


def _documented_settings() -> dict[str, str]:
    """The settings table of docs/dice.md: attribute name -> documented default."""
    doc = Path(__file__).resolve().parents[2] / "docs" / "dice.md"
    table = doc.read_text(encoding="utf-8").split("| setting | default |", 1)[1]
    settings: dict[str, str] = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        names, defaults = (cell.strip() for cell in line.split("|")[1:3])
        keys = [n.strip(" `") for n in names.split(",")]
        values = [d.strip() for d in defaults.split(",")]
        assert len(keys) == len(values), line
        settings.update(zip(keys, values, strict=True))
    return settings


def test_documented_settings_are_the_defaults() -> None:
    """Every setting in the table of docs/dice.md has the reader's default: a changed
    default must change the documentation too."""
    reader = default_reader()
    settings = _documented_settings()
    assert len(settings) >= 15
    for name, documented in settings.items():
        actual = getattr(reader, name)
        if isinstance(actual, tuple) and len(actual) == 2:  # a range, documented as "lo-hi"
            assert documented == "-".join(f"{v:g}" for v in actual), name
        elif isinstance(actual, tuple):  # a list, documented as "a / b / c"
            assert documented == " / ".join(f"{v:g}" for v in actual), name
        elif isinstance(actual, str):
            assert documented == f'"{actual}"', name
        elif isinstance(actual, bool):
            assert documented == str(actual), name
        else:
            assert float(documented) == pytest.approx(actual), name


def test_a_doubtful_value_confirmed_by_the_second_look_is_reported() -> None:
    """A value below ``value_threshold`` that the contrast view read the same surely
    is reported, from ``confirm_floor`` up; never when degraded."""
    reader = default_reader()
    fair = [0.0, 0.0, 0.0, 0.6, 0.38, 0.02, 0.0]
    assert reader.decide(_cand(fair)).value is None
    assert reader.decide(_cand(fair, confirmed=True)).value == 4
    below_floor = [0.0, 0.0, 0.0, 0.45, 0.4, 0.15, 0.0]
    assert reader.confirm_floor > 0.45
    assert reader.decide(_cand(below_floor, confirmed=True)).value is None
    assert reader.decide(_cand(fair, confirmed=True, blur=reader.blur_threshold + 1)).value is None


def _doubtful_five(reader_probs_top: int = 4) -> tuple[np.ndarray, Candidate]:
    """A plain white "5" drawn on wood, and a candidate for it whose first look was
    in doubt (its most likely outcome index ``reader_probs_top`` at 0.6)."""
    img = np.full((240, 320, 3), (150, 190, 225), np.uint8)
    draw_die(img, np.random.default_rng(7), 160, 120, 44, 5, angle=10,
             body=(235, 240, 240), pip=(20, 20, 20))
    probs = [0.05] * 7
    probs[reader_probs_top] = 0.6
    probs[UNREADABLE] = 0.05
    return img, Candidate(160.0, 120.0, 44.0, 0.9, tuple(probs))


def test_the_zoom_look_confirms_a_doubtful_value_it_reads_surely() -> None:
    """The third look (rule 72) reads a clear die surely at other crop sizes and
    confirms the first look's value; off with ``zoom_look_sizes=()``."""
    reader = default_reader()
    img, cand = _doubtful_five()
    assert reader.decide(cand).value is None
    looked = reader._zoom_look([cand], [0], img, 0.0)[0]
    assert looked.confirmed and reader.decide(looked).value == 5
    off = DiceReader()
    off.zoom_look_sizes = ()
    assert not off._zoom_look([cand], [0], img, 0.0)[0].confirmed


def test_the_zoom_look_never_changes_a_value() -> None:
    """A first look in doubt about a "3" is not confirmed by a zoom look that reads a
    "5": the third look only turns a ``null`` into the value already most likely."""
    reader = default_reader()
    img, cand = _doubtful_five(reader_probs_top=2)
    looked = reader._zoom_look([cand], [0], img, 0.0)[0]
    assert not looked.confirmed and reader.decide(looked).value is None
