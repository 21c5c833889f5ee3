"""The runnable examples in examples/ run and say what their docstrings promise."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from types import ModuleType

import cv2
import pytest

from tests.scripts import load_script


def _load(name: str) -> ModuleType:
    return load_script("examples", name)


def test_read_dice_reads_its_synthetic_photo(capsys: pytest.CaptureFixture[str]) -> None:
    example = _load("read_dice")
    assert example.main([]) == 0
    out = capsys.readouterr().out.splitlines()
    drawn = [int(v) for v in re.findall(r"\d", out[0].split(":", 1)[1])]
    read = [int(m.group(1)) for line in out[1:] if (m := re.search(r"\): (\d)  \(", line))]
    assert read == drawn and len(drawn) == 3, out


def test_read_dice_reads_files_and_reports_bad_ones(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    example = _load("read_dice")
    frame, drawn = example.synthetic_photo(seed=9)
    photo = tmp_path / "photo.png"
    cv2.imwrite(str(photo), frame)
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not an image")
    assert example.main([str(broken), str(photo)]) == 1       # the bad file, then go on
    out = capsys.readouterr().out
    assert f"{broken}: " in out and f"{photo}:" in out
    read = [int(v) for v in re.findall(r"\): (\d)  \(", out)]
    assert read == drawn


@pytest.mark.parametrize("args", [["--seed", "3"], ["--seed", "5", "--touching"]])
def test_table_roll_takes_the_roll_at_rest(args: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Dice apart, and dice face to face (seed 5: seen as one die between them, which
    the reader splits: docs/dice.md, "Dice face to face")."""
    example = _load("table_roll")
    assert example.main(args) == 0
    out = capsys.readouterr().out.splitlines()
    rest = re.search(r"showing \[(\d), (\d)\]", out[0])
    assert rest is not None, out
    taken = re.search(r"frame (\d+): roll taken \[(\d), (\d)\]", out[-1])
    assert taken is not None, out
    assert taken.group(2, 3) == rest.group(1, 2)
    assert int(taken.group(1)) > example.TUMBLING        # not while the dice still turn


def test_table_roll_asks_again_for_a_cocked_die(capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Seed 32, the second die cocked and seen nearly straight down: the table's tilt
    check reports it unreadable and the roll is asked again; without the check the
    die is read "6" and the roll taken."""
    example = _load("table_roll")
    assert example.main(["--seed", "32", "--cocked"]) == 0
    assert "roll again" in capsys.readouterr().out.splitlines()[-1]
    monkeypatch.setattr(example, "read_table_dice",
                        functools.partial(example.read_table_dice, tilt_check=False))
    assert example.main(["--seed", "32", "--cocked"]) == 1
    assert "the cocked die was given a number" in capsys.readouterr().out
