"""Readings drawn on the frame (`vision.dice.annotate`), `companion dice --annotate` and
`companion bench dice --errors`."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from vision.dice import DieReading
from vision.dice.annotate import READ_BGR, UNCLEAR_BGR, annotate, summary
from vision.dice.data import LabelledDie
from vision.dice.synth import draw_die


def _five(path: Path | None = None) -> np.ndarray:
    """A frame with one clearly readable 5 at (160, 130)."""
    img = np.full((480, 640, 3), (170, 200, 225), np.uint8)
    draw_die(img, np.random.default_rng(0), 160, 130, 60, 5, angle=30,
             body=(235, 240, 240), pip=(20, 20, 20))
    if path is not None:
        cv2.imwrite(str(path), img)
    return img


def _colour_near(img: np.ndarray, x: int, y: int, r: int, bgr: tuple[int, int, int]) -> int:
    """Pixels within ``r`` of (x, y) that have about the colour ``bgr``."""
    patch = img[max(0, y - r):y + r, max(0, x - r):x + r].astype(int)
    return int((np.abs(patch - np.array(bgr)).sum(axis=2) < 40).sum())


def test_summary_says_what_was_read() -> None:
    assert summary([]) == "no dice"
    assert summary([DieReading(4, (1.0, 2.0), 0.9)]) == "1 die: 4"
    assert summary([DieReading(2, (0.0, 0.0), 0.9), DieReading(None, (9.0, 9.0), 0.3)]) \
        == "2 dice: 2, ? (1 unclear: roll again)"


def test_annotate_draws_values_and_unclear_dice_on_a_copy() -> None:
    img = np.full((480, 640, 3), 128, np.uint8)
    before = img.copy()
    readings = [DieReading(3, (150.0, 200.0), 0.9, 40.0), DieReading(None, (450.0, 300.0), 0.4, 40.0)]
    out = annotate(img, readings, roi=(100, 100, 400, 300))
    assert np.array_equal(img, before)  # the input is left alone
    assert out.shape == img.shape and out.dtype == np.uint8
    # a green ring round the read die, an amber one round the unclear die, not crossed
    assert _colour_near(out, 150, 200, 40, READ_BGR) > 50
    assert _colour_near(out, 150, 200, 40, UNCLEAR_BGR) == 0
    assert _colour_near(out, 450, 300, 40, UNCLEAR_BGR) > 50
    assert _colour_near(out, 450, 300, 40, READ_BGR) == 0
    # the top banner is darkened for the summary line
    assert out[2, 600].max() < 128


def test_annotate_takes_grey_frames_and_truth_boxes() -> None:
    grey = np.full((200, 300), 200, np.uint8)
    out = annotate(grey, [], truth=[LabelledDie(6, (50.0, 60.0, 90.0, 100.0))])
    assert out.shape == (200, 300, 3)
    assert not np.array_equal(out[60:101, 50], np.full((41, 3), 200, np.uint8))  # box edge
    with pytest.raises(ValueError):
        annotate(np.zeros((0, 0, 3), np.uint8), [])


def test_cli_dice_annotate_writes_one_picture_per_image(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "roll.png", tmp_path / "b" / "roll.png"
    _five(first)
    _five(second)
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"not an image")
    out_dir = tmp_path / "drawn" / "here"  # made when missing
    status = main(["dice", "--json", "--annotate", str(out_dir), str(first), str(junk),
                   str(second)])
    assert status == 1  # the junk file
    recs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["dice"][0]["value"] if r["dice"] else None for r in recs] == [5, None, 5]
    assert set(recs[0]) == {"image", "dice", "ms"}  # the JSON contract is unchanged
    assert sorted(p.name for p in out_dir.iterdir()) == ["roll-2.dice.jpg", "roll.dice.jpg"]
    drawn = cv2.imread(str(out_dir / "roll.dice.jpg"))
    assert drawn is not None and drawn.shape == (480, 640, 3)
    assert _colour_near(drawn, 160, 130, 60, READ_BGR) > 50


def test_cli_annotate_folder_that_cannot_be_made(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a folder")
    img = tmp_path / "roll.png"
    _five(img)
    assert main(["dice", "--annotate", str(blocker / "sub"), str(img)]) == 2
    assert "--annotate" in capsys.readouterr().err


def test_cli_bench_dice_errors_draws_only_images_not_exactly_right(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    set_dir = tmp_path / "data" / "mini"
    (set_dir / "images").mkdir(parents=True)
    (set_dir / "labels").mkdir()
    _five(set_dir / "images" / "good.jpg")
    (set_dir / "labels" / "good.txt").write_text("4 0.25 0.2708 0.125 0.1667\n")
    cv2.imwrite(str(set_dir / "images" / "empty.jpg"), np.full((480, 640, 3), 128, np.uint8))
    (set_dir / "labels" / "empty.txt").write_text("2 0.5 0.5 0.1 0.1\n")  # a die not there
    errors = tmp_path / "errors"
    assert main(["bench", "dice", "--data", str(tmp_path / "data"), "--split", "all",
                 "--json", "--errors", str(errors)]) == 0
    rec = json.loads(capsys.readouterr().out.splitlines()[0])
    assert rec["images"] == 2 and rec["exact"] == 1 and rec["missed"] == 1
    assert [p.name for p in (errors / "mini").iterdir()] == ["empty.jpg"]
