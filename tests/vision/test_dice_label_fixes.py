"""Label fixes (``vision.dice.label_fixes``): corrections to the shared sets' labels, and
``bench dice --label-fixes`` scoring against them."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.cli import main
from vision.dice import DiceReader
from vision.dice.data import LabelError, LabelledDie, default_data_dir, label_path_for, read_labels
from vision.dice.label_fixes import (
    DEFAULT_FIXES,
    add_label_fix_args,
    apply_fixes,
    fixes_from_args,
    labelled_photos,
    load_fixes,
    photo_labels,
    training_labels,
)
from vision.dice.run import bench_set
from vision.dice.synth import draw_die


def _fix_file(tmp_path: Path, fixes: object) -> Path:
    path = tmp_path / "fixes.json"
    path.write_text(json.dumps({"fixes": fixes}))
    return path


def test_a_value_is_corrected_a_die_added_and_a_region_ignored(tmp_path: Path) -> None:
    dice = [LabelledDie(2, (10, 10, 30, 30)), LabelledDie(6, (50, 10, 70, 30))]
    path = _fix_file(tmp_path, [
        {"set": "s", "image": "a", "die": 2, "was": 6, "value": 5, "why": "five pips"},
        {"set": "s", "image": "a", "add": [100, 100, 120, 120], "value": 3, "why": "no box"},
        {"set": "s", "image": "a", "ignore": [0, 200, 40, 240], "why": "in a hand"},
        {"set": "s", "image": "b", "die": 1, "was": 1, "value": 2, "why": "another image"},
    ])
    fixes = load_fixes(path)
    assert sorted(fixes) == [("s", "a"), ("s", "b")]
    fixed = apply_fixes(dice, fixes[("s", "a")], scale=2.0, offset=(5.0, 0.0))
    assert [d.value for d in fixed.dice] == [2, 5, 3]
    assert fixed.dice[1].box == (50, 10, 70, 30)  # a label's box was mapped already
    assert fixed.dice[2].box == (205.0, 200.0, 245.0, 240.0)  # a fix's box is mapped
    assert fixed.ignore == [(5.0, 400.0, 85.0, 480.0)]
    assert fixed.applied == 3
    assert [d.value for d in dice] == [2, 6]  # the labels given are not changed


def test_a_fix_that_no_longer_matches_its_labels_is_an_error(tmp_path: Path) -> None:
    dice = [LabelledDie(4, (10, 10, 30, 30))]
    stale = load_fixes(_fix_file(tmp_path, [
        {"set": "s", "image": "a", "die": 1, "was": 6, "value": 5, "why": "x"}]))
    with pytest.raises(LabelError, match="expects a labelled 6, the labels have 4"):
        apply_fixes(dice, stale[("s", "a")], where="a.txt")
    gone = load_fixes(_fix_file(tmp_path, [
        {"set": "s", "image": "a", "die": 3, "was": 6, "value": 5, "why": "x"}]))
    with pytest.raises(LabelError, match="no such die"):
        apply_fixes(dice, gone[("s", "a")])


@pytest.mark.parametrize(("fix", "says"), [
    ({"image": "a", "die": 1, "was": 2, "value": 3, "why": "x"}, "'set' must be"),
    ({"set": "s", "image": "a", "die": 1, "was": 2, "value": 3}, "'why' must be"),
    ({"set": "s", "image": "a", "why": "x"}, "exactly one of"),
    ({"set": "s", "image": "a", "die": 1, "add": [0, 0, 1, 1], "value": 3, "why": "x"}, "exactly one of"),
    ({"set": "s", "image": "a", "die": 0, "was": 2, "value": 3, "why": "x"}, "1-based"),
    ({"set": "s", "image": "a", "die": 1, "was": 2, "value": 7, "why": "x"}, "face value 1..6"),
    ({"set": "s", "image": "a", "die": 1, "value": 3, "why": "x"}, "'was' must be"),
    ({"set": "s", "image": "a", "add": [0, 0, 1], "value": 3, "why": "x"}, "a box is"),
    ({"set": "s", "image": "a", "add": [5, 0, 1, 1], "value": 3, "why": "x"}, "x1 > x0"),
    ({"set": "s", "image": "a", "ignore": [0, 0, 1, 1], "value": 3, "why": "x"}, "no value"),
    ({"set": "s", "image": "a", "ignore": [0, 0, 1, 1], "why": "x", "colour": 1}, "unknown keys"),
    ("not a fix", "a fix is an object"),
])
def test_a_malformed_fix_names_the_file_and_the_fix(tmp_path: Path, fix: object, says: str) -> None:
    with pytest.raises(LabelError, match=says) as err:
        load_fixes(_fix_file(tmp_path, [fix]))
    assert "fixes.json: fix 1" in str(err.value)


@pytest.mark.parametrize("text", ["", "[]", "{\"fixes\": 3}", "\xff\xfe"])
def test_a_file_that_is_no_fix_file_is_an_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "fixes.json"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(LabelError, match="fixes.json"):
        load_fixes(path)
    with pytest.raises(LabelError, match="not a readable"):
        load_fixes(tmp_path / "missing.json")


def _one_die_set(tmp_path: Path, label: str) -> Path:
    """A set of one photo: a "5" in the middle and a "2" at the lower left, labelled ``label``."""
    set_dir = tmp_path / "data" / "mini"
    (set_dir / "images").mkdir(parents=True)
    (set_dir / "labels").mkdir()
    img = np.full((480, 640, 3), (170, 200, 225), np.uint8)
    rng = np.random.default_rng(0)
    draw_die(img, rng, 320, 240, 60, 5, angle=10, body=(235, 240, 240), pip=(20, 20, 20))
    draw_die(img, rng, 100, 400, 60, 2, angle=20, body=(235, 240, 240), pip=(20, 20, 20))
    cv2.imwrite(str(set_dir / "images" / "a.png"), img)
    (set_dir / "labels" / "a.txt").write_text(label)
    return set_dir


def test_bench_scores_against_the_fixed_labels(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """The "5" labelled "6" counts wrong against the labels and right once fixed; the "2"
    without a box counts false, and not at all once its region is ignored."""
    set_dir = _one_die_set(tmp_path, "5 0.5 0.5 0.1 0.125\n")
    reader = DiceReader()
    plain = bench_set(set_dir, "all", reader)
    assert (plain.right, plain.wrong, plain.false, plain.exact, plain.fixed) == (0, 1, 1, 0, None)
    fixes = load_fixes(_fix_file(tmp_path, [
        {"set": "mini", "image": "a", "die": 1, "was": 6, "value": 5, "why": "five pips"},
        {"set": "mini", "image": "a", "ignore": [60, 360, 140, 440], "why": "held in a hand"}]))
    fixed = bench_set(set_dir, "all", reader, fixes=fixes)
    assert (fixed.right, fixed.wrong, fixed.false, fixed.exact, fixed.fixed) == (1, 0, 0, 1, 2)
    # a frame of another size: the fix's boxes follow the image into it
    framed = bench_set(set_dir, "all", reader, resize=(1280, 1280), fixes=fixes)
    assert (framed.right, framed.false, framed.exact) == (1, 0, 1)

    path = _fix_file(tmp_path, [
        {"set": "mini", "image": "a", "die": 1, "was": 6, "value": 5, "why": "five pips"},
        {"set": "mini", "image": "a", "add": [70, 370, 130, 430], "value": 2, "why": "no box"}])
    assert main(["bench", "dice", "--data", str(tmp_path / "data"), "--split", "all", "--json",
                 "--label-fixes", str(path)]) == 0
    rec = json.loads(capsys.readouterr().out.splitlines()[0])
    assert rec["name"] == "mini (all, labels fixed)"
    assert (rec["dice"], rec["right"], rec["false"], rec["exact"], rec["label_fixes"]) == (2, 2, 0, 1, 2)
    # a stale fix skips the image, named with why; a broken fix file is a clear error
    stale = _fix_file(tmp_path, [{"set": "mini", "image": "a", "die": 1, "was": 3, "value": 5,
                                  "why": "x"}])
    assert main(["bench", "dice", "--data", str(tmp_path / "data"), "--split", "all",
                 "--label-fixes", str(stale)]) == 1
    assert "expects a labelled 3, the labels have 6" in capsys.readouterr().err
    (tmp_path / "broken.json").write_text("{")
    assert main(["bench", "dice", "--data", str(tmp_path / "data"), "--label-fixes",
                 str(tmp_path / "broken.json")]) == 2
    assert "not a readable JSON fix file" in capsys.readouterr().err


def test_a_photos_labels_are_read_moved_and_fixed(tmp_path: Path) -> None:
    """``photo_labels`` reads the label file for the frame's size, moves the boxes by
    the offset, and applies the image's fixes (none given: the labels as they are);
    ``labelled_photos`` does so for each decodable image of a split."""
    set_dir = _one_die_set(tmp_path, "5 0.5 0.5 0.1 0.125\n")
    image = set_dir / "images" / "a.png"
    fixes = load_fixes(_fix_file(tmp_path, [
        {"set": "mini", "image": "a", "die": 1, "was": 6, "value": 5, "why": "five pips"},
        {"set": "mini", "image": "a", "add": [70, 370, 130, 430], "value": 2, "why": "no box"},
        {"set": "other", "image": "a", "die": 1, "was": 1, "value": 2, "why": "another set"}]))
    raw = photo_labels("mini", image, 640, 480, None)
    assert [(d.value, d.box) for d in raw.dice] == [(6, (288.0, 210.0, 352.0, 270.0))]
    assert (raw.ignore, raw.applied) == ([], 0)
    fixed = photo_labels("mini", image, 1280, 960, fixes, scale=2.0, offset=(10.0, 20.0))
    assert [(d.value, d.box) for d in fixed.dice] == [
        (5, (586.0, 440.0, 714.0, 560.0)), (2, (150.0, 760.0, 270.0, 880.0))]
    assert fixed.applied == 2
    assert photo_labels("elsewhere", image, 640, 480, fixes).dice == raw.dice  # no fix for that set
    (set_dir / "images" / "b.png").write_bytes(b"not an image")
    photos = list(labelled_photos(set_dir, "all", fixes))
    assert [(p.name, img.shape, [d.value for d in labels.dice]) for p, img, labels in photos] == [
        ("a.png", (480, 640, 3), [5, 2])]
    (set_dir / "labels" / "a.txt").write_text("9 0.5 0.5 0.1 0.1\n")
    with pytest.raises(LabelError, match="a.txt"):
        photo_labels("mini", image, 640, 480, fixes)


def test_labelled_photos_without_fixes_are_the_labels_as_they_are(tmp_path: Path) -> None:
    """Each image with its dice in pixels of that image; an image without a label
    file has no dice, and one OpenCV cannot decode is skipped."""
    set_dir = tmp_path / "s"
    (set_dir / "images").mkdir(parents=True)
    (set_dir / "labels").mkdir()
    cv2.imwrite(str(set_dir / "images" / "a.png"), np.zeros((40, 80, 3), np.uint8))
    (set_dir / "labels" / "a.txt").write_text("2 0.5 0.5 0.25 0.5\n")
    cv2.imwrite(str(set_dir / "images" / "b.png"), np.zeros((10, 10, 3), np.uint8))  # no labels
    (set_dir / "images" / "c.jpg").write_bytes(b"not a jpeg")
    got = list(labelled_photos(set_dir, "all", None))
    assert [p.name for p, _, _ in got] == ["a.png", "b.png"]
    assert got[0][1].shape == (40, 80, 3)
    assert got[0][2].dice == [LabelledDie(3, (30.0, 10.0, 50.0, 30.0))]
    assert (got[0][2].ignore, got[0][2].applied) == ([], 0)
    assert got[1][2].dice == []


@pytest.mark.parametrize("learn", [True, False])
def test_the_tools_label_fix_arguments(tmp_path: Path, learn: bool) -> None:
    """The trainers' and tuning tools' ``--label-fixes FILE`` / ``--raw-labels``: the
    project's fixes by default, another file's, or none."""
    ap = argparse.ArgumentParser()
    add_label_fix_args(ap, learn=learn)
    assert fixes_from_args(ap.parse_args([])) == load_fixes(DEFAULT_FIXES)
    assert fixes_from_args(ap.parse_args(["--raw-labels"])) is None
    other = _fix_file(tmp_path, [{"set": "s", "image": "a", "ignore": [0, 0, 5, 5], "why": "a hand"}])
    assert list(fixes_from_args(ap.parse_args(["--label-fixes", str(other)]))) == [("s", "a")]
    (tmp_path / "broken.json").write_text("[")
    with pytest.raises(LabelError, match="broken.json"):
        fixes_from_args(ap.parse_args(["--label-fixes", str(tmp_path / "broken.json")]))
    assert ("learn" in ap.format_help()) == learn


def test_the_trainers_learn_fixed_labels_and_leave_out_photos_with_ignored_dice(
        tmp_path: Path) -> None:
    """``training_labels``: the fixed labels; a photo with a die to ignore is None (the
    trainers leave it out rather than teach that die as background)."""
    set_dir = _one_die_set(tmp_path, "5 0.5 0.5 0.1 0.125\n")
    image = set_dir / "images" / "a.png"
    relabel = {"set": "mini", "image": "a", "die": 1, "was": 6, "value": 5, "why": "five pips"}
    assert [d.value for d in training_labels("mini", image, 640, 480, None) or []] == [6]
    fixes = load_fixes(_fix_file(tmp_path, [relabel]))
    assert [d.value for d in training_labels("mini", image, 640, 480, fixes) or []] == [5]
    held = load_fixes(_fix_file(tmp_path, [
        relabel, {"set": "mini", "image": "a", "ignore": [60, 360, 140, 440], "why": "in a hand"}]))
    assert training_labels("mini", image, 640, 480, held) is None


def test_the_projects_fixes_match_the_shared_labels() -> None:
    """Every fix of vision/dice/label_fixes.json applies to the labels as they are now."""
    data = default_data_dir()
    fixes = load_fixes(DEFAULT_FIXES)
    assert fixes
    for (set_name, stem), image_fixes in fixes.items():
        image = data / set_name / "images" / f"{stem}.jpg"
        if not image.is_file():
            pytest.skip(f"dice photographs not found at {data} (set PELOTON_DICE_DATA)")
        h, w = cv2.imread(str(image)).shape[:2]
        dice = read_labels(label_path_for(image), w, h)
        fixed = apply_fixes(dice, image_fixes, where=stem)
        assert all(0 <= b[0] < b[2] <= w and 0 <= b[1] < b[3] <= h
                   for b in [d.box for d in fixed.dice[len(dice):]] + fixed.ignore)
