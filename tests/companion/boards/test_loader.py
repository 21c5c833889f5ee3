"""Board files: validation errors name the file, the space and what is wrong; notation; courses."""

from __future__ import annotations

import json

import pytest

from companion.boards import (
    BoardError,
    Course,
    CourseError,
    CourseMap,
    Position,
    board_from_dict,
    board_text,
    board_to_dict,
    course_from_dict,
    load_board,
    parse_board,
)

SMALL = """
.o .o c3 c3 u2 |A d1 .
.o .o c3 .  u2 |A d1 .
=  =  _  _  _     _  _
.o .o c3 c3 u2 |A d1 .
"""


def small_dict() -> dict:
    board, _ = parse_board(SMALL)
    return board_to_dict(board)


def test_round_trip_through_json(tmp_path):
    board, _ = parse_board(SMALL)
    path = tmp_path / "b.json"
    path.write_text(json.dumps(board_to_dict(board)))
    assert load_board(path) == board


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("name"), "missing 'name'"),
        (lambda d: d.update(size_mm=[0, 3]), "'size_mm' must be positive"),
        (lambda d: d.update(markers={"7": [0, 0, 30]}), "corner marker id 7 must be 0-3"),
        (lambda d: d["spaces"][2].update(surface="gravel"), "space 'c0': unknown surface 'gravel'"),
        (lambda d: d["spaces"][0]["next"].update(straight="zz"), "space 'a0': 'next.straight' names 'zz'"),
        (lambda d: d["spaces"][0]["next"].update(right="a1"), "space 'a0': right diagonal 'a1' is not in lane 1"),
        (lambda d: d["spaces"][1].update(id="a0"), "space 'a0': the id is used twice"),
        (lambda d: d["spaces"][0].update(number=4), "space 'a0': an asphalt space carries no number"),
        (lambda d: d["spaces"][0].update(lane=-1), "space 'a0': 'lane' must be a whole number"),
        (lambda d: d["spaces"][0].update(center_mm="here"), "space 'a0': 'center_mm' must be [x, y]"),
        (lambda d: d["spaces"][0].update(colour="red"), "space 'a0': unknown fields ['colour']"),
        (lambda d: d.update(spaces=[]), "missing 'spaces'"),
    ],
)
def test_a_wrong_board_file_names_file_space_and_problem(tmp_path, change, message):
    data = small_dict()
    change(data)
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(data))
    with pytest.raises(BoardError) as info:
        load_board(path)
    assert str(path) in str(info.value)
    assert message in str(info.value)


def test_unreadable_board_files(tmp_path):
    with pytest.raises(BoardError, match="no such board file"):
        load_board(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(BoardError, match="not valid JSON"):
        load_board(bad)
    with pytest.raises(BoardError, match="must hold a JSON object"):
        board_from_dict([1, 2], "x.json")


def test_notation_reads_surfaces_numbers_starts_lines_and_thick_lines():
    board, riders = parse_board(SMALL + "\n")
    assert riders == {}
    assert board["a2"].surface.value == "cobblestone" and board["a2"].number == 3
    assert board["a2"].modifier == -3 and board["a5"].modifier == 1
    assert board["b3"].surface.value == "asphalt"  # the asphalt patch in the cobbles
    assert board["a4"].line_after == "A" and board.lines() == ["A"]
    assert [s.id for s in board.start_spaces("1")][:3] == ["c1", "b1", "a1"]
    # The thick line between lanes b and c over columns 0 and 1.
    assert board["b0"].right is None and board["c1"].left is None and board["b2"].right == "c3"
    assert board.behind("a3") == "a2" and board.beside("b2") == ("a2", "c2")
    assert parse_board(board_text(board))[0] == board


def test_notation_holes_make_a_curve_with_a_shorter_inner_lane():
    board, riders = parse_board(". . . . . .\n. 21 - . - .")
    assert riders == {21: "b1"}
    assert board["b1"].straight == "b3" and board["b3"].straight == "b5"
    assert board["a2"].right == "b3"


def test_notation_errors():
    with pytest.raises(BoardError, match="cannot read token 'x7'"):
        parse_board(". x7 .")
    with pytest.raises(BoardError, match="stands on two spaces"):
        parse_board(". 21 21")
    with pytest.raises(BoardError, match="barrier row needs a lane above"):
        parse_board("= =\n. .")


def test_course_legs_follow_the_route_and_refuse_wrong_routes():
    board, _ = parse_board(
        """
        .o .o . |A . . |B . . |A . .
        .o .o . |A . . |B . . |A . .
        """
    )
    # A circuit is not needed to pass a line name twice: here two lines are both called A.
    cm = CourseMap(board, Course("t", "1", ("A", "B", "A")))
    assert cm.legs == 4
    assert cm.step(Position("a2", 0), "a3") == Position("a3", 1)
    assert cm.distance(Position("a3", 1)) > cm.distance(Position("b2", 0))
    assert cm.finished(Position("a10", 3))
    with pytest.raises(CourseError, match="no finish line 'C'"):
        CourseMap(board, Course("t", "1", ("C",)))
    with pytest.raises(CourseError, match="no start '2'"):
        CourseMap(board, Course("t", "2", ("A",)))
    with pytest.raises(CourseError, match="without crossing another line"):
        CourseMap(board, Course("t", "1", ("B",)))


def test_course_files():
    c = course_from_dict({"name": "x", "start": "1", "route": ["A", "B", "A"],
                          "sprints": [{"line": "B", "points": [11, 8, 5]}, {"line": "A", "points": [3], "pass": 1}]})
    assert c.finish == "A" and c.sprint_at(1).points == (11, 8, 5) and c.sprint_at(0).points == (3,)
    with pytest.raises(CourseError, match="cannot also be a sprint"):
        course_from_dict({"name": "x", "start": "1", "route": ["A", "B"], "sprints": [{"line": "B", "points": [1]}]})
    with pytest.raises(CourseError, match="not on the route"):
        course_from_dict({"name": "x", "start": "1", "route": ["A"], "sprints": [{"line": "C", "points": [1]}]})
    with pytest.raises(CourseError, match="missing 'start'"):
        course_from_dict({"name": "x", "route": ["A"]})
