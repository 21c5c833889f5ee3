"""The labelled photo sets: label parsing (``vision.dice.data.read_labels``) and the splits."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.dice.data import LabelError, LabelledDie, is_val, list_images, read_labels


def _labels(tmp_path: Path, text: str | bytes) -> Path:
    p = tmp_path / "a.txt"
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


def test_yolo_lines_become_pixel_boxes(tmp_path: Path) -> None:
    p = _labels(tmp_path, "0 0.5 0.25 0.1 0.2\n\n5 0.1 0.9 0.05 0.05\n")
    dice = read_labels(p, 640, 480)
    assert dice[0] == LabelledDie(1, (288.0, 72.0, 352.0, 168.0))
    assert dice[1].value == 6 and dice[1].contains(64, 432)
    assert len(dice) == 2


def test_missing_file_means_no_dice(tmp_path: Path) -> None:
    assert read_labels(tmp_path / "none.txt", 640, 480) == []


@pytest.mark.parametrize(("line", "says"), [
    ("garbage", "5 fields"),
    ("0 0.5 0.5 0.1", "5 fields"),
    ("0 0.5 0.5 0.1 0.1 0.3", "5 fields"),
    ("x 0.5 0.5 0.1 0.1", "not numbers"),
    ("6 0.5 0.5 0.1 0.1", "class must be 0..5"),
    ("-1 0.5 0.5 0.1 0.1", "class must be 0..5"),
    ("2.5 0.5 0.5 0.1 0.1", "class must be 0..5"),
    ("1 nan 0.5 0.1 0.1", "coordinates"),
    ("1 0.5 0.5 0 0.1", "coordinates"),
    ("1 320 240 40 40", "coordinates"),
])
def test_malformed_line_names_file_and_line(tmp_path: Path, line: str, says: str) -> None:
    p = _labels(tmp_path, f"0 0.5 0.5 0.1 0.1\n{line}\n")
    with pytest.raises(LabelError, match=says) as info:
        read_labels(p, 640, 480)
    assert f"{p}:2:" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_binary_file_is_a_label_error(tmp_path: Path) -> None:
    with pytest.raises(LabelError, match="not a readable text file"):
        read_labels(_labels(tmp_path, b"\xff\xfe\x00\x81garbage"), 640, 480)


def test_rounding_overshoot_is_accepted(tmp_path: Path) -> None:
    dice = read_labels(_labels(tmp_path, "3 0.9996 0.5 0.0012 0.1\n"), 1000, 1000)
    assert dice[0].value == 4


def test_splits_partition_the_images(tmp_path: Path) -> None:
    """Held out and dev split all images; val is the part of dev that is_val picks."""
    set_dir = tmp_path / "s"
    (set_dir / "images").mkdir(parents=True)
    for i in range(60):
        (set_dir / "images" / f"im{i}.jpg").write_bytes(b"")
    (set_dir / "images" / "notes.txt").write_text("not an image")
    every = list_images(set_dir, "all")
    held, dev, val = (list_images(set_dir, s) for s in ("heldout", "dev", "val"))
    assert len(every) == 60 and sorted(held + dev) == every
    assert val and set(val) < set(dev)
    assert val == [p for p in dev if is_val("s", p.name)]
    with pytest.raises(ValueError, match="unknown split"):
        list_images(set_dir, "train")
