"""Game records: reading, malformed lines, replay verdicts, the replay command."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pytest

from companion.cli import main
from companion.games.reifenbreite import Decline, Draft, Move, Roll, Setup, event_from_dict, event_to_dict
from companion.record import (
    RecordError,
    parse_lines,
    read_record,
    read_record_lenient,
    replay,
    start_race,
    write_record,
)

BOARD = """
. . . . . . . . . . |A . . . . . . . . . . . .
. 42 31 51 . . . . . . |A . . . . . . . . . . . .
. . c2:41 . . . . . . . |A . . . . . . . . . . . .
"""

SETUP = Setup(seed=5, board_text=BOARD, course={"name": "test", "start": "1", "route": ["A"]}, round=2)


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_events_round_trip_through_json():
    for ev in (SETUP, Roll(51, (6, 4)), Move(51, "b13"), Draft(31), Decline(42), Roll(21, (3,), ("21-5",), True)):
        assert event_from_dict(json.loads(json.dumps(event_to_dict(ev)))) == ev


def test_replay_reports_illegal_events_and_goes_on(tmp_path):
    rec = tmp_path / "game.jsonl"
    write_record(
        rec,
        [
            SETUP,
            Roll(51, (6, 4)),
            Move(51, "b13"),
            Draft(31),
            Draft(42),
            Roll(41, (5, 5)),
            Draft(42),  # seq 7: 41 has rolled and must move first
            Move(41, "c30"),  # seq 8: not a space
            Move(41, "c10"),  # 10 - 2 on cobblestone
        ],
    )
    entries = read_record(rec)
    race = start_race(entries)
    verdicts = list(replay(entries, race))
    assert [v["seq"] for v in verdicts] == list(range(1, 10))
    bad = {v["seq"]: v for v in verdicts if not v["ok"]}
    assert set(bad) == {7, 8}
    assert bad[7]["rule"] == "turn.must-move"
    assert bad[8]["rule"] == "move.unknown-space"
    assert race.riders[41].pos.space == "c10"
    # Replaying again gives the same state.
    race2 = start_race(entries)
    assert list(replay(entries, race2)) == verdicts
    assert race2.at == race.at


def test_the_architecture_example_verdict(tmp_path):
    rec = tmp_path / "game.jsonl"
    board = """
    . . . . . . . . . . . . . . . .
    . . . . c2:51 41 . . . . . . . . . .
    """
    write_record(rec, [Setup(seed=1, board_text=board, course={"name": "t", "start": "1", "route": []}, round=2),
                       Roll(41, (3, 3)), Move(41, "b11"), Draft(51)])
    code, out, _ = run_cli("replay", "--json", str(rec))
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 0
    assert lines[3] == {
        "seq": 4,
        "ok": False,
        "rule": "draft.same-surface",
        "reason": lines[3]["reason"],
    }
    assert lines[3]["reason"].startswith("51 starts on cobblestone, 41 on asphalt")
    assert "score" in lines[-1] and "teams" in lines[-1]["score"]


def test_malformed_lines_name_their_line_number(tmp_path):
    setup = {"type": "setup", "seed": 1, "board_text": BOARD, "round": 2,
             "course": {"name": "t", "start": "1", "route": ["A"]}}
    text = [json.dumps(setup),
            "",
            '{"type": "roll", "rider": 51, "dice": [6, 4]',
            json.dumps({"type": "roll", "rider": 51, "dice": [9]}),
            json.dumps({"type": "jump", "rider": 51}),
            json.dumps({"type": "move", "rider": 51, "to": "b13"})]
    with pytest.raises(RecordError, match="line 3: not valid JSON"):
        parse_lines(text)
    rec = tmp_path / "bad.jsonl"
    rec.write_text("\n".join(text) + "\n")
    items = read_record_lenient(rec)
    code, out, _ = run_cli("replay", "--json", str(rec))
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 0 and len(items) == 5
    assert lines[1]["rule"] == "record.malformed" and "line 3" in lines[1]["reason"]
    assert lines[2]["rule"] == "record.malformed" and "a die shows 1 to 6" in lines[2]["reason"]
    assert lines[3]["rule"] == "record.malformed" and "unknown event type 'jump'" in lines[3]["reason"]
    assert lines[4]["rule"] == "move.not-rolled"  # nothing was lost: the move is judged


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "empty"),
        ('{"type": "roll", "rider": 21, "dice": [1, 2]}\n', "starts with a 'setup'"),
        ('{"type": "setup", "seed": 1, "board": "nope.json"}\n', "bad setup"),
        ('{"type": "setup"}\n', "line 1"),
        ("\x00\xff garbage", "cannot read the record"),
    ],
)
def test_bad_records_get_a_clear_error(tmp_path, content, message):
    rec = tmp_path / "r.jsonl"
    rec.write_text(content, encoding="latin-1")
    code, out, err = run_cli("replay", "--json", str(rec))
    assert code == 2 and message in err and "Traceback" not in err


def test_missing_record_file(tmp_path):
    code, _, err = run_cli("replay", str(tmp_path / "none.jsonl"))
    assert code == 2 and "no such record file" in err


def test_stage_command_adds_up_the_stages(tmp_path):
    paths = []
    for seed in (1, 2):
        rec = tmp_path / f"stage{seed}.jsonl"
        code, _, _ = run_cli("simulate", "--json", "--course", "A", "--seed", str(seed), "--record", str(rec))
        assert code == 0
        paths.append(str(rec))
    code, out, _ = run_cli("stage", "--json", *paths)
    result = json.loads(out)
    assert code == 0 and result["stages"] == 2
    for team in result["teams"].values():
        assert team["team_points"] == sum(team["stage_totals"])
        assert team["final"] == team["team_points"] + 2 * team["best_rider_points"]
