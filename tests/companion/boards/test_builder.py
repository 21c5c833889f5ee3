"""The board builder: descriptions in, validated boards out."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from companion.boards import Board, BoardError, Surface, board_to_dict, load_board
from companion.boards.builder import build_board, build_board_file, write_board
from companion.cli import _board_subparsers, build_parser, main


def describe(
    *road: dict[str, Any], lanes: list[int] | None = None, at: list[int] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    desc: dict[str, Any] = {
        "name": "test",
        "start": {"at_mm": at or [100, 100], "heading_deg": 0, "lanes": lanes or [0, 2]},
        "road": list(road),
    }
    desc.update(extra)
    return desc


def lane_of(board: Board, lane: int, prefix: str = "") -> list[str]:
    ids = [s.id for s in board.spaces.values() if s.lane == lane and s.id.startswith(prefix)
           and ("-" in s.id) == ("-" in prefix)]
    return sorted(ids, key=lambda i: board[i].order)


# --- a straight ----------------------------------------------------------------------


def test_a_straight_gives_rows_of_side_by_side_spaces() -> None:
    board = build_board(describe({"straight": 5, "start": "1", "line_after": "A"}))
    assert len(board.spaces) == 15
    a0, b0, c0 = board["a0"], board["b0"], board["c0"]
    assert (a0.lane, b0.lane, c0.lane) == (0, 1, 2)
    assert a0.order == b0.order == c0.order == 0.0
    assert [board[f"b{i}"].order for i in range(5)] == [0, 1, 2, 3, 4]
    # links: straight in the lane, diagonals into the next row of the neighbouring lanes
    assert (b0.straight, b0.left, b0.right) == ("b1", "a1", "c1")
    assert (a0.left, c0.right) == (None, None)
    assert board.beside("b2") == ("a2", "c2")
    assert board["a4"].straight is None
    # start dots on every space, line A after the last row on every lane
    assert len(board.start_spaces("1")) == 15
    assert {s.id for s in board.spaces.values() if s.line_after == "A"} == {"a4", "b4", "c4"}
    # geometry: heading east from (100, 100), lane 0 on the riders' left (north)
    assert a0.center_mm == pytest.approx((118, 113.5))
    assert c0.center_mm == pytest.approx((118, 167.5))
    xs = [p[0] for p in a0.polygon_mm or ()]
    ys = [p[1] for p in a0.polygon_mm or ()]
    assert (max(xs) - min(xs), max(ys) - min(ys)) == pytest.approx((36, 27))


def test_a_straight_can_be_stretched_to_a_measured_length() -> None:
    board = build_board(describe({"straight": 4, "length_mm": 160}))
    assert math.dist(board["a0"].center_mm, board["a1"].center_mm) == pytest.approx(40)


def test_surfaces_numbers_and_paint() -> None:
    board = build_board(describe(
        {"straight": 4, "surface": "cobblestone", "numbers": [1, 2, 3, 3],
         "paint": [{"rows": [2, 2], "lanes": [1, 1], "surface": "asphalt"}]},
        {"straight": 2, "surface": "downhill", "number": 4},
    ))
    assert [board[f"a{i}"].number for i in range(4)] == [1, 2, 3, 3]
    assert board["b2"].surface is Surface.ASPHALT and board["b2"].number == 0
    assert board["a2"].surface is Surface.COBBLESTONE
    assert board["c5"].surface is Surface.DOWNHILL and board["c5"].modifier == 4


# --- a curve -------------------------------------------------------------------------


def test_a_curve_gives_the_outer_lane_more_spaces() -> None:
    board = build_board(describe(
        {"straight": 2},
        {"curve": "right", "angle_deg": 90, "inner_radius_mm": 40},
        {"straight": 2},
    ))
    counts = [len(lane_of(board, lane)) - 4 for lane in range(3)]
    assert counts[0] > counts[1] > counts[2] >= 1  # lane 0 is the outer lane of a right turn
    inner = [board[i].order for i in lane_of(board, 2)]
    assert inner == [0, 1, 2, 3, 4, 5]  # the inner lane gives the rows
    outer = [board[i].order for i in lane_of(board, 0)]
    assert outer == sorted(outer) and any(o != int(o) for o in outer)
    assert outer[0] == 0 and outer[-1] == 5 and outer[-2] == 4
    for s in board.spaces.values():
        for _, t in s.successors():
            assert board[t].order > s.order  # every step goes forward
        if s.straight:
            assert board[s.straight].lane == s.lane
    # side by side: the nearest space of the neighbouring lane
    for s in board.spaces.values():
        if s.beside_left:
            assert abs(board[s.beside_left].order - s.order) <= 0.5
    # the road turned right: now heading south
    last = board[lane_of(board, 2)[-1]]
    before = board[lane_of(board, 2)[-2]]
    assert last.center_mm[1] - before.center_mm[1] == pytest.approx(36)


def test_a_left_curve_has_its_outer_lane_on_the_right() -> None:
    board = build_board(
        describe({"curve": "left", "angle_deg": 90, "inner_radius_mm": 50}, at=[100, 300])
    )
    counts = [len(lane_of(board, lane)) for lane in range(3)]
    assert counts[2] > counts[0]


def test_curve_space_counts_can_be_given() -> None:
    board = build_board(describe(
        {"curve": "right", "angle_deg": 60, "inner_radius_mm": 50, "spaces": [5, 4, 2]}
    ))
    assert [len(lane_of(board, lane)) for lane in range(3)] == [5, 4, 2]


# --- thick lines -----------------------------------------------------------------------


def test_a_thick_line_removes_the_diagonals_across_it() -> None:
    board = build_board(describe({"straight": 6, "thick": [{"between": [1, 2], "rows": [2, 4]}]}))
    for i in range(2, 5):
        assert board[f"b{i}"].right is None
        assert board[f"c{i}"].left is None
        assert board[f"b{i}"].left == f"a{i + 1}"  # other lanes unaffected
    assert board["b1"].right == "c2" and board["c1"].left == "b2"
    assert board["b5"].right is None  # end of the road
    assert board.beside("b3") == ("a3", "c3")  # still side by side


# --- lanes, forks and merges -----------------------------------------------------------


def test_a_road_narrows_and_widens() -> None:
    board = build_board(describe(
        {"straight": 2}, {"lanes": [0, 1]}, {"straight": 2}, {"lanes": [0, 2]}, {"straight": 2},
    ))
    assert board["c1"].straight is None and board["c1"].left == "b2"
    assert board["b3"].right == "c2"
    assert board.beside("b2") == ("a2", None)


def test_a_fork_and_a_merge() -> None:
    board = build_board(describe(
        {"straight": 2, "line_after": "C"},
        {"fork": [
            {"name": "D", "lanes": [0, 0], "road": [{"straight": 2, "line_after": "D"}]},
            {"name": "E", "lanes": [1, 2], "road": [
                {"straight": 4, "length_mm": 72, "line_after": "E"}]},
        ]},
        {"straight": 2},
        lanes=[0, 2],
    ))
    # at the fork: lane 0 goes on into branch D, lanes 1 and 2 into branch E
    assert (board["a1"].straight, board["a1"].right) == ("D-a0", "E-b0")
    assert (board["b1"].straight, board["b1"].left) == ("E-b0", "D-a0")
    assert board.beside("D-a0") == (None, "E-b0")
    assert board.beside("D-a1")[1] == "E-b3"  # the branches meet again side by side
    # at the merge: both branches lead into the road after it
    assert (board["D-a1"].straight, board["D-a1"].right) == ("a2", "b2")
    assert (board["E-b3"].straight, board["E-b3"].left) == ("b2", "a2")
    assert board["E-c3"].straight == "c2"
    # the shorter branch spans the same stretch of road: orders stretched to fit
    assert [board[f"D-a{i}"].order for i in range(2)] == [2, 4]
    assert [board[f"E-b{i}"].order for i in range(4)] == [2, 3, 4, 5]
    assert board["a2"].order == 6
    assert board.lines() == ["C", "D", "E"]


def test_a_circuit_closes_and_has_an_order_period() -> None:
    quarter: list[dict[str, Any]] = [
        {"straight": 3}, {"curve": "right", "angle_deg": 90, "inner_radius_mm": 30}
    ]
    board = build_board(describe(*(quarter * 4), circuit=True, at=[200, 100]))
    assert board.order_period == 4 * 3 + 4 * 2
    assert all(s.straight is not None for s in board.spaces.values())
    last = lane_of(board, 0)[-1]
    assert board[last].straight == "a0" and board[last].right == "b0"
    assert board.order_delta(last, "a0") < 1


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("road", "extra", "message"),
    [
        ([{"straight": 2}, {"bend": 3}], {}, "road[1]: a segment needs exactly one of"),
        ([{"curve": "up", "angle_deg": 90, "inner_radius_mm": 30}], {}, "road[0]: 'curve' must"),
        ([{"straight": 0}], {}, "road[0]: 'straight' must be a whole number 1-1000"),
        ([{"straight": 2, "label": "climb", "surface": "uphill"}], {},
         "road[0] (climb): a uphill space needs a number"),
        ([{"straight": 2, "numbers": [1]}], {}, "'numbers' must list one number for each of the 2"),
        ([{"straight": 2, "surface": "gravel", "number": 1}], {}, "unknown surface 'gravel'"),
        ([{"straight": 2, "thick": [[0, 2]]}], {}, "road[0] thick[0]: a thick line lies between"),
        ([{"straight": 2, "colour": "red"}], {}, "unknown keys ['colour']"),
        ([{"straight": 2}], {"circuit": True}, "the circuit does not close"),
        ([{"straight": 60}], {"size_mm": [500, 400]}, "the road runs off the board"),
        ([{"straight": 2}, {"fork": [
            {"name": "D", "lanes": [0, 0], "road": [{"straight": 2}]},
            {"name": "E", "lanes": [1, 2], "road": [{"straight": 3}]}]}], {},
         "road[1] (the split): the branches do not meet"),
        ([{"straight": 2}, {"fork": [
            {"name": "D", "lanes": [0, 1], "road": [{"straight": 2}]},
            {"name": "E", "lanes": [1, 2], "road": [{"straight": 2}]}]}], {},
         "two branches start in the same lane"),
    ],
)
def test_bad_descriptions_are_refused_with_the_file_and_segment(
    tmp_path: Path, road: list[dict[str, Any]], extra: dict[str, Any], message: str
) -> None:
    for seg in road:
        if "fork" in seg:
            seg["label"] = "the split"
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(describe(*road, **extra)))
    with pytest.raises(BoardError) as err:
        build_board_file(path)
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_a_marker_over_a_space_is_refused() -> None:
    desc = describe({"straight": 3}, markers={"0": [90, 90, 50]})
    with pytest.raises(BoardError, match="corner marker 0 covers part of the space"):
        build_board(desc)


def test_a_dice_area_is_kept_and_must_stay_clear_of_the_spaces(tmp_path: Path) -> None:
    """``dice_area_mm`` (where the dice are rolled) goes into the board file as given; it
    may reach past the board's edge (a tray beside it) but not over a space."""
    board = build_board(describe({"straight": 3}, at=[100, 300],
                                 dice_area_mm=[-80, 20, 150, 100]))
    assert board.dice_area_mm == (-80.0, 20.0, 150.0, 100.0)
    out = tmp_path / "board.json"
    write_board(board, out)
    assert load_board(out).dice_area_mm == board.dice_area_mm
    with pytest.raises(BoardError, match="the dice area covers part of the space"):
        build_board(describe({"straight": 3}, at=[100, 300], dice_area_mm=[90, 250, 100, 100]))
    for bad, message in (([1, 2, 3], "must be"), ([0, 0, 10, 0], "both must be > 0"),
                         ("box", "must be"), ([0, "a", 10, 10], "dice_area_mm")):
        with pytest.raises(BoardError, match=message):
            build_board(describe({"straight": 3}, at=[100, 300], dice_area_mm=bad))


def test_unreadable_descriptions(tmp_path: Path) -> None:
    with pytest.raises(BoardError, match="no such board description"):
        build_board_file(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{\"name\": ")
    with pytest.raises(BoardError, match="bad.json: not valid JSON"):
        build_board_file(bad)


# --- writing and the command line --------------------------------------------------------


def test_round_trip_load_write(tmp_path: Path) -> None:
    board = build_board(describe(
        {"straight": 2, "start": "1"},
        {"curve": "left", "angle_deg": 90, "inner_radius_mm": 30, "thick": [[0, 1]]},
        {"lanes": [0, 1]},
        {"straight": 2, "surface": "uphill", "number": 2, "line_after": "A"},
        at=[100, 300],
    ))
    out = tmp_path / "board.json"
    write_board(board, out)
    again = load_board(out)
    assert board_to_dict(again) == board_to_dict(board)
    assert again.beside("a1") == board.beside("a1")


def test_cli_board_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    desc = tmp_path / "desc.json"
    desc.write_text(json.dumps(describe({"straight": 4, "start": "1", "line_after": "A"})))
    out = tmp_path / "board.json"
    assert main(["board", "build", str(desc), "--out", str(out)]) == 0
    assert "12 spaces" in capsys.readouterr().out
    assert len(load_board(out).spaces) == 12
    desc.write_text(json.dumps(describe({"straight": "four"})))
    assert main(["board", "build", str(desc), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("companion: ") and "road[0]" in err and "Traceback" not in err


def test_the_board_group_is_created_once() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    group = _board_subparsers(sub)  # type: ignore[arg-type]
    assert _board_subparsers(sub) is group  # type: ignore[arg-type]
    assert "build" in group.choices


def test_the_worked_example_of_the_docs_builds_as_described() -> None:
    text = (Path(__file__).parents[3] / "docs" / "board-builder.md").read_text()
    block = text.split("## Worked example", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    board = build_board(json.loads(block))
    assert len(board.spaces) == 146
    assert board.order_period == 30
    assert board.size_mm == (773, 441)
    assert len(board.start_spaces("1")) == 16


def test_the_loader_derives_beside_only_where_the_file_leaves_it_out() -> None:
    from companion.boards import board_from_dict

    board = build_board(describe({"straight": 3}))
    data = board_to_dict(board)
    for raw in data["spaces"]:
        if raw["id"] == "b1":
            raw["beside"] = {"left": None}  # explicitly nobody on the left, right left out
    again = board_from_dict(data)
    assert again.beside("b1") == (None, "c1")
    assert again.beside("b2") == ("a2", "c2")
