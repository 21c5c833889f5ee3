"""`companion locate --json` and `companion bench vision`."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.boards import board_to_dict, load_board, parse_board
from companion.cli import main
from vision.locate import locate_frame
from vision.synth import random_riders, table_scene

BOARD, _ = parse_board("""
.o  .o  .   c3  c3  .   .   u2  u2 |A .
.o  .o  .   c3  .   .   .   u2  u2 |A .
.o  .o  .   c3  c3  .   .   d1  d1 |A .
""", name="cli board")
RIDERS = {21: "a2", 31: "b2", 41: "c2", 22: "a5", 52: "b8"}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("locate")
    board = d / "board.json"
    board.write_text(json.dumps(board_to_dict(BOARD)))
    other = d / "other.json"
    other.write_text(json.dumps(board_to_dict(parse_board(". . . . . . . . . . . . . . .\n"
                                                          ". . . . . . . . . . . . . . .\n",
                                                          name="other")[0])))
    scene = table_scene(BOARD, RIDERS, rng=np.random.default_rng(0), size=(1014, 760),
                        tilt_deg=20.0, token_at_mm=None)
    frame = d / "frame.png"
    cv2.imwrite(str(frame), scene.image)
    off = dict(RIDERS)
    scene2 = table_scene(BOARD, off, rng=np.random.default_rng(1), size=(1014, 760),
                         tilt_deg=10.0, token_at_mm={52: (200.0, 15.0)})
    frame2 = d / "offtrack.png"
    cv2.imwrite(str(frame2), scene2.image)
    broken = d / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n not really a png")
    empty = d / "empty.jpg"
    empty.write_bytes(b"")
    grey = d / "grey.png"
    cv2.imwrite(str(grey), np.full((480, 640), 128, np.uint8))
    bad_board = d / "bad.json"
    bad_board.write_text('{"name": "x", "size_mm": [10, 10], "spaces": [')
    return {"board": board, "other": other, "frame": frame, "offtrack": frame2,
            "broken": broken, "empty": empty, "grey": grey, "bad_board": bad_board}


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict], str]:
    code = main(args)
    cap = capsys.readouterr()
    lines = [json.loads(x) for x in cap.out.splitlines() if x.strip()]
    return code, lines, cap.err


def test_locate_json_lines(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = _run(["locate", "--json", "--board", str(files["board"]),
                             str(files["frame"]), str(files["offtrack"])], capsys)
    assert code == 0 and err == ""
    assert [x["image"] for x in lines] == [str(files["frame"]), str(files["offtrack"])]
    first, second = lines
    for rec in lines:
        assert {"image", "board_found", "tokens", "unplaced", "ms"} <= set(rec)
        assert isinstance(rec["ms"], float)
    assert first["board_found"] is True
    assert first["tokens"] == {str(k): v for k, v in sorted(RIDERS.items())}
    assert first["unplaced"] == []
    assert second["unplaced"] == [52] and "52" not in second["tokens"]


def test_bad_images_are_reported_and_the_rest_processed(
        files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    paths = [files["broken"], files["frame"], files["empty"], files["grey"],
             files["board"].parent / "missing.png"]
    code, lines, err = _run(["locate", "--json", "--board", str(files["board"]),
                             *map(str, paths)], capsys)
    assert code == 1
    assert len(lines) == 5
    broken, good, empty, grey, missing = lines
    assert "error" in broken and broken["board_found"] is False
    assert good["board_found"] is True and len(good["tokens"]) == len(RIDERS)
    assert "error" in empty and "error" in missing
    assert grey["board_found"] is False and "reason" in grey and grey["tokens"] == {}
    assert "broken.png" in err and "missing.png" in err


def test_wrong_board_file_and_missing_riders(
        files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _ = _run(["locate", "--json", "--board", str(files["other"]),
                           str(files["frame"])], capsys)
    assert code == 0 and lines[0]["board_found"] is False
    assert "wrong board file" in lines[0]["reason"]
    code, lines, _ = _run(["locate", "--json", "--board", str(files["board"]), "--riders",
                           "21,22,33", str(files["frame"])], capsys)
    assert lines[0]["missing"] == [33]
    assert lines[0]["tokens"] == {"21": "a2", "22": "a5"}
    assert lines[0]["unexpected"] == [31, 41, 52]  # seen but not in this game


def test_bad_board_file_is_a_clear_error(files: dict[str, Path],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = _run(["locate", "--json", "--board", str(files["bad_board"]),
                             str(files["frame"])], capsys)
    assert code == 2 and lines == []
    assert "bad.json" in err and "JSON" in err
    code, _, err = _run(["locate", "--board", "no-such-board", str(files["frame"])], capsys)
    assert code == 2 and "no such board file" in err


def test_locate_text_output(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["locate", "--board", str(files["board"]), str(files["frame"])]) == 0
    out = capsys.readouterr().out
    assert "21 a2" in out and "52 b8" in out


def test_locate_frame_never_crashes() -> None:
    for frame in (np.zeros((0, 0, 3), np.uint8), np.zeros((5, 5), np.uint8),
                  np.full((600, 800, 3), 200, np.uint8)):
        rec = locate_frame(frame, BOARD, expected=[21])
        assert rec["board_found"] is False and rec["tokens"] == {}
        assert rec.get("missing", [21]) == [21]


def test_bench_vision_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bf = tmp_path / "b.json"
    bf.write_text(json.dumps(board_to_dict(BOARD)))
    assert main(["bench", "vision", "--scenes", "2", "--board", str(bf), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["scenes"] == 2 and res["riders"] > 0
    assert res["wrong_pct"] == 0.0
    assert res["right_pct"] + res["missing_pct"] + res["unclear_pct"] == pytest.approx(100.0)
    assert res["ms_board_tokens_median"] > 0


def test_bench_vision_hidden_corner(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bf = tmp_path / "b.json"
    bf.write_text(json.dumps(board_to_dict(BOARD)))
    assert main(["bench", "vision", "--scenes", "2", "--board", str(bf), "--hide-corner"]) == 0
    text = capsys.readouterr().out
    assert "a hand over one corner marker in every scene" in text
    assert "board found 100.0%" in text and "wrong 0.0%" in text


def test_locate_with_dice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--dice`` adds the dice read in the standard board's dice area; a broken image
    still gets its line with no dice."""
    board = load_board("standard")
    rng = np.random.default_rng([7, 1])
    sc = table_scene(board, random_riders(board, rng, 4), rng=rng, dice_values=[2, 5])
    frame = tmp_path / "roll.png"
    cv2.imwrite(str(frame), sc.image)
    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    code, recs, _ = _run(["locate", "--json", "--board", "standard", "--dice", str(frame),
                          str(broken)], capsys)
    assert code == 1
    assert recs[0]["board_found"] and len(recs[0]["tokens"]) == 4
    seen = recs[0]["dice"]
    assert len(seen) == 2 and {d["value"] for d in seen} <= {2, 5, None}
    assert {d["value"] for d in seen} - {None}, seen  # at least one read
    assert recs[1]["dice"] == [] and "error" in recs[1]
    assert main(["locate", "--board", "standard", "--dice", str(frame)]) == 0
    assert "dice: " in capsys.readouterr().out


def test_locate_told_the_dice_rolled_searches_for_the_missing_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--dice-rolled 2``: a "3" face to face with a "2", neither seen with
    ``--dice``, are searched for and read (scene 45 of `companion bench vision
    --seed 1 --dice-touching --plain-sides`); a count that is no number of dice is
    refused."""
    from vision.bench import bench_board_image, bench_scene

    board = load_board("standard")
    sc = bench_scene(board, bench_board_image(board), 1, 45, dice_touching=True,
                     side_pips=False)
    frame = tmp_path / "roll.png"
    cv2.imwrite(str(frame), sc.image)
    _, recs, _ = _run(["locate", "--json", "--board", "standard", "--dice", str(frame)], capsys)
    assert recs[0]["dice"] == []
    _, recs, _ = _run(["locate", "--json", "--board", "standard", "--dice-rolled", "2",
                       str(frame)], capsys)
    assert sorted(d["value"] for d in recs[0]["dice"]) == sorted(d.value for d in sc.dice) == [2, 3]
    assert main(["locate", "--board", "standard", "--dice-rolled", "0", str(frame)]) == 2
    assert "--dice-rolled must be between 1 and 6" in capsys.readouterr().err


def test_bench_dice_matching_takes_closest_pairs_first() -> None:
    """Two touching dice, the reader saw only the second: the one reading is the second
    die's (right or wrong by its value), not a wrong value for the first."""
    from vision.dice.data import closest_pairs

    truth = [(100.0, 100.0), (100.0, 120.0)]
    assert closest_pairs(truth, [(100.5, 119.0)], 25.0) == [(1, 0)]
    assert closest_pairs(truth, [(100.0, 121.0), (99.0, 101.0)], 25.0) == [(1, 0), (0, 1)]
    assert closest_pairs(truth, [(200.0, 200.0)], 25.0) == []


def test_bench_vision_touching_dice(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "vision", "--scenes", "2", "--dice-touching", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["dice_touching"] is True and res["dice_told"] is True
    assert res["dice_right_pct"] + res["dice_wrong_pct"] + res["dice_null_pct"] + \
        res["dice_missed_pct"] == pytest.approx(100.0)
    assert res["rolls_right_pct"] + res["rolls_again_pct"] + res["rolls_wrong_pct"] == \
        pytest.approx(100.0)


def test_bench_vision_dice_not_told(capsys: pytest.CaptureFixture[str]) -> None:
    """``--dice-not-told``: the reader is not told how many dice were rolled, and the
    text report says which way it was read."""
    assert main(["bench", "vision", "--scenes", "1", "--dice-not-told"]) == 0
    assert "not told how many were rolled" in capsys.readouterr().out


def test_bench_vision_cocked_dice(capsys: pytest.CaptureFixture[str]) -> None:
    """``--dice-cocked``: the second die of every scene is cocked and counted apart
    (given a number, unreadable, not seen); the dice figures are the flat dice's."""
    assert main(["bench", "vision", "--scenes", "2", "--dice-cocked", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["dice_cocked"] is True
    assert res["cocked_numbered_pct"] + res["cocked_null_pct"] + res["cocked_unseen_pct"] == \
        pytest.approx(100.0)
    assert res["dice_right_pct"] + res["dice_wrong_pct"] + res["dice_null_pct"] + \
        res["dice_missed_pct"] == pytest.approx(100.0)
    assert main(["bench", "vision", "--scenes", "1", "--dice-cocked"]) == 0
    text = capsys.readouterr().out
    assert "cocked dice (must be unreadable or unseen): given a number" in text
    assert "rolls, as the table takes them: right 0.0%" in text  # a cocked die: never right


@pytest.mark.parametrize(("flag", "key", "flagged", "said"), [
    # the dice's side faces drawn without pips (the render before 2026-11-29)
    ("--plain-sides", "plain_sides", True, "the dice's side faces plain"),
    # the dice read without the table's check for cocked dice (rules 61b and 61c)
    ("--no-tilt-check", "tilt_check", False, "no tilt check"),
])
def test_bench_vision_options_say_so_in_the_figures(
        flag: str, key: str, flagged: bool, said: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``--plain-sides`` and ``--no-tilt-check`` are in the JSON figures (as ``key``:
    ``flagged`` with the option, the other way without) and in the text's first line."""
    assert main(["bench", "vision", "--scenes", "1", flag, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[key] is flagged
    assert main(["bench", "vision", "--scenes", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[key] is (not flagged)
    assert main(["bench", "vision", "--scenes", "1", flag]) == 0
    assert said in capsys.readouterr().out
