"""Settling a roll over frames (vision.dice.settle), and ``companion dice --settle``."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from vision.dice import DieReading, read_dice
from vision.dice.settle import Roll, RollSettler, same_dice, settle
from vision.dice.synth import draw_die, motion_kernel

FEWER = ("expected 2 dice, 1 seen (dice touching may be seen as one or none, or one lies "
         "outside the dice area): roll again")


def _die(value: int | None, x: float, y: float = 100.0, size: float = 40.0) -> DieReading:
    return DieReading(value=value, center=(x, y), confidence=0.9, size=size)


def test_same_dice_pairs_by_place_in_any_order() -> None:
    a = [_die(4, 100), _die(2, 200)]
    assert same_dice(a, [_die(2, 201.5), _die(4, 99)])           # jitter of a pixel or two
    assert not same_dice(a, [_die(4, 100), _die(2, 209)])        # moved by a fifth of a die
    assert not same_dice(a, [_die(4, 100), _die(3, 200)])        # another value
    assert not same_dice(a, [_die(4, 100)])                      # a die gone
    assert same_dice([_die(None, 50)], [_die(None, 51)])         # still cocked is still
    assert not same_dice([_die(None, 50)], [_die(5, 50)])
    assert same_dice([], [])


def test_small_dice_and_dice_without_size_may_jitter_two_pixels() -> None:
    assert same_dice([_die(6, 10, size=8)], [_die(6, 11.9, size=8)])
    assert not same_dice([_die(6, 10, size=0)], [_die(6, 12.5, size=0)])


def test_settler_gives_a_roll_once_when_the_dice_lie_still() -> None:
    s = RollSettler(2)
    assert s.feed([_die(6, 100)]) is None                 # first sight
    assert s.feed([_die(4, 130)]) is None                 # still rolling
    roll = s.feed([_die(4, 131)])
    assert isinstance(roll, Roll) and roll.values == (4,) and roll.frames == 2 and roll.ok
    assert s.feed([_die(4, 131)]) is None                 # the same roll is not given twice
    assert s.feed([]) is None                             # picked up
    assert s.feed([]) is None                             # an empty table never settles
    assert s.feed([_die(3, 80)]) is None
    assert s.feed([_die(3, 80)]) == Roll(dice=(_die(3, 80),), frames=2)
    s.reset()
    assert s.feed([_die(3, 80)]) is None


def test_roll_says_why_to_roll_again() -> None:
    s = RollSettler(1, expected=2, patience=0)
    roll = s.feed([_die(5, 50)])
    assert roll is not None and not roll.ok
    assert roll.problem == FEWER
    unclear = Roll(dice=(_die(5, 50), _die(None, 90)), frames=3, expected=2)
    assert unclear.values == (5, None)
    assert unclear.problem == "a die cannot be read (cocked, hidden or unclear): roll again"
    assert Roll(dice=(_die(1, 5), _die(2, 50)), frames=2, expected=2).problem is None
    assert Roll(dice=(_die(1, 5), _die(2, 50)), frames=2, expected=1).problem == (
        "expected 1 die, 2 seen (another die or something like one is in sight): roll again")
    with pytest.raises(ValueError):
        RollSettler(0)
    with pytest.raises(ValueError):
        RollSettler(2, expected=0)


def test_settle_stops_at_the_first_roll() -> None:
    frames = [[_die(1, 10)], [_die(2, 40)], [_die(2, 40)], [_die(2, 40)], [_die(5, 90)]]
    roll, seen = settle(iter(frames), 2)
    assert roll is not None and roll.values == (2,) and seen == 3
    roll, seen = settle(frames, 4)
    assert roll is None and seen == 5


def _rolling_die_frames(value: int, size: float = 38) -> list[np.ndarray]:
    """A white die sliding right and coming to rest, as a camera exposing for the whole
    frame interval sees it: each frame smears it over the way it went in that frame,
    centred halfway. Smears of 0.45, three of 0.3 and 0.15 of its size, then two still
    frames with sensor noise."""
    smears = [0.45, 0.3, 0.3, 0.3, 0.15, 0.0, 0.0]
    rng = np.random.default_rng(value)
    frames, x = [], 60.0
    for smear in smears:
        length = smear * size
        img = np.full((240, 320, 3), (170, 200, 225), np.uint8)
        draw_die(img, np.random.default_rng(value), x + length / 2, 120, size, value, angle=15,
                 body=(235, 240, 240), pip=(20, 20, 20))
        if length:
            img = np.asarray(cv2.filter2D(img, -1, motion_kernel(length, 0),
                                          borderType=cv2.BORDER_REPLICATE))
        noisy = img + rng.normal(0, 3, img.shape)
        frames.append(np.clip(noisy, 0, 255).astype(np.uint8))
        x += length
    return frames


@pytest.mark.parametrize("value", range(1, 7))
def test_a_rolling_die_settles_on_its_value(value: int) -> None:
    """Smeared by 0.3 of its size a '5' can read '6' in a single frame (the known gap of
    test_smeared_by_a_third_never_misread); two frames in a row agree only once it lies
    still, and then on its value."""
    readings = [read_dice(f) for f in _rolling_die_frames(value)]
    roll, seen = settle(readings, 2, expected=1)
    assert roll is not None and roll.ok, readings
    assert roll.values == (value,)
    assert seen >= 6, readings         # not before the still frames (the 5th overlaps them)


def test_cli_dice_settle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    paths = []
    for i, frame in enumerate(_rolling_die_frames(5)):
        paths.append(str(tmp_path / f"f{i}.png"))
        cv2.imwrite(paths[-1], frame)
    assert main(["dice", "--json", "--settle", "2", "--expect", "1", *paths]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [rec["image"] for rec in lines[:-1]] == paths         # one line per frame as ever
    settled = lines[-1]["settled"]
    assert settled["image"] in paths[5:] and settled["problem"] is None
    assert [d["value"] for d in settled["dice"]] == [5]

    assert main(["dice", "--settle", "3", paths[0], paths[1], paths[2]]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("not settled")
    assert main(["dice", "--settle", "2", "--expect", "2", *paths]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("not settled")  # waits for a 2nd
    assert main(["dice", "--settle", "2", "--expect", "2", *paths, *[paths[-1]] * 4]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("settled at ") and last.endswith(
        ": 5: " + FEWER), last

    assert main(["dice", "--settle", "0", paths[0]]) == 2
    assert main(["dice", "--expect", "2", paths[0]]) == 2
    assert "--settle" in capsys.readouterr().err


def test_a_still_die_whose_reading_keeps_changing_is_given_unclear() -> None:
    """A doubtful die flickering between "5" and unclear under sensor noise: the settler
    waits for two alike frames, and after ``patience`` more still frames gives the
    roll with that die unclear rather than wait for ever."""
    s = RollSettler(2, patience=2)
    sure = _die(3, 50)
    frames = [[sure, _die(5, 100)], [sure, _die(None, 100.5)], [sure, _die(5, 100)],
              [sure, _die(None, 100)]]
    assert [s.feed(f) for f in frames[:3]] == [None] * 3
    roll = s.feed(frames[3])                       # 2 alike frames + 2 frames of patience
    assert roll is not None and roll.values == (3, None) and roll.frames == 4
    assert roll.problem == "a die cannot be read (cocked, hidden or unclear): roll again"
    assert s.feed([sure, _die(5, 101)]) is None    # given once

    s = RollSettler(2, patience=2)                 # it comes good in time: read
    assert [s.feed(f) for f in frames[:3]] == [None] * 3
    roll = s.feed([sure, _die(5, 100)])
    assert roll is not None and roll.values == (3, 5) and roll.ok


def test_moving_dice_restart_the_count() -> None:
    s = RollSettler(2, patience=1)
    for x in (10, 30, 50, 70):                      # sliding, each frame half a die
        assert s.feed([_die(4, x)]) is None
    roll = s.feed([_die(4, 70)])
    assert roll is not None and roll.frames == 2 and roll.values == (4,)


def test_a_missing_die_is_waited_for() -> None:
    """Two dice expected, one lying still: the other may be rolling in, or missed in a few
    frames. The roll is taken as soon as both lie still; "roll again" only after
    ``patience`` frames beyond the two alike."""
    s = RollSettler(2, patience=3, expected=2)
    assert [s.feed([_die(4, 10)]) for _ in range(3)] == [None] * 3
    assert s.feed([_die(4, 10), _die(6, 90)]) is None     # the second arrives: still once
    roll = s.feed([_die(4, 10), _die(6, 90)])
    assert roll is not None and roll.ok and roll.values == (4, 6)
    s.reset()
    assert [s.feed([_die(4, 10)]) for _ in range(4)] == [None] * 4
    roll = s.feed([_die(4, 10)])
    assert roll is not None and roll.frames == 5
    assert roll.problem == FEWER


def test_an_unclear_die_is_given_only_after_patience() -> None:
    """A cocked die is unclear in every frame; so is a die sliding slowly enough to look
    still. "Roll again" is said only after ``patience`` frames beyond the two alike."""
    s = RollSettler(2, patience=3, expected=2)
    frames = [[_die(2, 10), _die(None, 100 + k)] for k in range(5)]   # a pixel a frame
    assert [s.feed(f) for f in frames[:4]] == [None] * 4
    roll = s.feed(frames[4])
    assert roll is not None and roll.frames == 5 and roll.values == (2, None)
    assert roll.problem == "a die cannot be read (cocked, hidden or unclear): roll again"
