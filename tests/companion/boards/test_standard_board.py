"""The shipped standard board and the four courses of the rules laid over it."""

from __future__ import annotations

import math
from collections import deque
from pathlib import Path

import numpy as np
import pytest

from companion.boards import (
    Board,
    CourseError,
    CourseMap,
    Surface,
    board_to_dict,
    course_from_dict,
    load_board,
    load_course,
)
from companion.boards.builder import build_board_file
from companion.boards.loader import BOARD_DIR

DESCRIPTION = BOARD_DIR / "standard-board.json"


@pytest.fixture(scope="module")
def board() -> Board:
    return load_board("standard")


def test_the_shipped_board_is_built_from_its_description(board: Board) -> None:
    assert board_to_dict(build_board_file(DESCRIPTION)) == board_to_dict(board)


def test_size_and_corner_markers(board: Board) -> None:
    w, h = board.size_mm
    assert w <= 1200 and h <= 850
    assert sorted(board.markers) == [0, 1, 2, 3]
    corners = {0: (0, 0), 1: (w, 0), 2: (w, h), 3: (0, h)}
    for mid, marker in board.markers.items():
        assert 40 <= marker.side_mm <= 60
        cx, cy = marker.x_mm + marker.side_mm / 2, marker.y_mm + marker.side_mm / 2
        assert math.dist((cx, cy), corners[mid]) < 60  # in its own corner
        assert 0 <= marker.x_mm and marker.x_mm + marker.side_mm <= w
        assert 0 <= marker.y_mm and marker.y_mm + marker.side_mm <= h
    for s in board.spaces.values():
        for x, y in s.polygon_mm or ():
            assert 0 <= x <= w and 0 <= y <= h


def test_no_two_spaces_overlap_and_no_marker_covers_a_space(board: Board) -> None:
    cv2 = pytest.importorskip("cv2")
    k = 2.0  # pixels a millimetre
    w, h = (int(math.ceil(v * k)) + 1 for v in board.size_mm)
    count = np.zeros((h, w), np.uint8)
    for s in board.spaces.values():
        poly = np.array(s.polygon_mm, float)
        centre = poly.mean(axis=0)
        shrunk = centre + (poly - centre) * 0.97  # shared edges may touch, areas may not
        one = np.zeros((h, w), np.uint8)
        cv2.fillPoly(one, [np.round(shrunk * k).astype(np.int32)], 1)
        assert not (count & one).any(), f"space {s.id} overlaps another space"
        count |= one
    for m in board.markers.values():
        x0, y0 = int(m.x_mm * k), int(m.y_mm * k)
        x1, y1 = int((m.x_mm + m.side_mm) * k), int((m.y_mm + m.side_mm) * k)
        assert not count[y0:y1, x0:x1].any(), f"marker {m.id} covers a space"


def test_spaces_fit_the_riders(board: Board) -> None:
    steps = [math.dist(s.center_mm, board[s.straight].center_mm)
             for s in board.spaces.values() if s.straight]
    assert 30 <= min(steps) and max(steps) <= 42
    for s in board.spaces.values():
        right = s.beside_right
        if right and board[right].order == s.order:
            assert math.dist(s.center_mm, board[right].center_mm) == pytest.approx(27, abs=0.5)


def test_lanes_starts_and_lines(board: Board) -> None:
    assert {s.lane for s in board.spaces.values()} == {0, 1, 2, 3}
    assert board.starts() == ["1", "2"]
    for start in ("1", "2"):
        dots = board.start_spaces(start)
        assert len(dots) == 16
        assert sorted(s.lane for s in dots) == [0] * 4 + [1] * 4 + [2] * 4 + [3] * 4
    assert board.lines() == ["A", "B", "C", "D", "E"]
    for line in board.lines():
        at = [s for s in board.spaces.values() if s.line_after == line]
        # all lanes of the road at the same place: one space a lane, side by side
        assert len({s.lane for s in at}) == len(at) >= 2
        assert max(s.order for s in at) - min(s.order for s in at) < 1
        for s in at:
            assert s.straight is not None
            assert all(board[t].line_after is None for _, t in s.successors())


def test_curves_have_a_longer_outer_lane_and_thick_lines(board: Board) -> None:
    fractional = [s for s in board.spaces.values() if s.order != int(s.order)]
    assert len(fractional) > 50
    thick = [s for s in board.spaces.values()
             if s.right is None and s.beside_right is not None]
    assert len(thick) > 20


def test_surfaces_and_numbers(board: Board) -> None:
    by_surface: dict[Surface, set[int]] = {}
    for s in board.spaces.values():
        by_surface.setdefault(s.surface, set()).add(s.number)
    assert by_surface[Surface.ASPHALT] == {0}
    assert by_surface[Surface.UPHILL] == {1, 2, 3}
    assert by_surface[Surface.DOWNHILL] == {1, 2, 3, 4}
    assert by_surface[Surface.COBBLESTONE] == {1, 2, 3}


def steps_to_line(board: Board, cmap: CourseMap, leg: int, entries: list[str]) -> int:
    """The fewest steps from the entries of a leg over its line."""
    line = cmap.course.route[leg]
    spaces = cmap.leg_spaces[leg]
    dist = {e: 0 for e in entries if e in spaces}
    queue = deque(dist)
    while queue:
        s = queue.popleft()
        if board[s].line_after == line:
            return dist[s] + 1
        for _, t in board[s].successors():
            if t in spaces and t not in dist:
                dist[t] = dist[s] + 1
                queue.append(t)
    raise AssertionError(f"line {line} not reached")


def leg_lengths(board: Board, name: str) -> list[int]:
    cmap = CourseMap(board, load_course(name))
    entries = [s.id for s in board.start_spaces(cmap.course.start)]
    out = []
    for leg, line in enumerate(cmap.course.route):
        out.append(steps_to_line(board, cmap, leg, entries))
        entries = sorted({t for s in cmap.leg_spaces[leg] if board[s].line_after == line
                          for _, t in board[s].successors()})
    return out


def test_a_lap_is_long_enough_for_a_race(board: Board) -> None:
    via_d = sum(leg_lengths(board, "C")[1:])  # C -> D -> A -> B -> C
    via_e = sum(leg_lengths(board, "D")[1:])  # A -> B -> C -> E -> A
    assert 80 <= via_d < via_e <= 150
    assert 100 <= sum(leg_lengths(board, "D")) <= 150  # 15-30 rounds at ~7 a move
    assert sum(leg_lengths(board, "A")) < sum(leg_lengths(board, "C"))
    assert sum(leg_lengths(board, "B")) < sum(leg_lengths(board, "D"))


# --- the four courses ------------------------------------------------------------------


def race_surfaces(cmap: CourseMap) -> list[set[Surface]]:
    """The surfaces of each leg a course races on (not the road past the finish)."""
    return [{cmap.board[s].surface for s in spaces} for spaces in cmap.leg_spaces[:-1]]


@pytest.mark.parametrize("name", ["A", "B", "C", "D"])
def test_the_shipped_courses_lie_on_the_standard_board(board: Board, name: str) -> None:
    cmap = CourseMap(board, load_course(name))
    assert cmap.legs == len(cmap.course.route) + 1
    assert all(cmap.leg_spaces)


def test_course_facts() -> None:
    a, b, c, d = (load_course(x) for x in "ABCD")
    assert (a.start, a.route, a.short) == ("2", ("C", "D", "A"), True)
    assert (b.start, b.route, b.short) == ("1", ("A", "B", "C"), True)
    assert (c.start, c.route, c.short) == ("2", ("C", "D", "A", "B", "C"), False)
    assert (d.start, d.route, d.short) == ("1", ("A", "B", "C", "E", "A"), False)
    assert [(s.line, s.points) for s in a.sprints] == [("D", (11, 8, 5))]
    assert [(s.line, s.points) for s in b.sprints] == [("B", (11, 8, 5))]
    assert [(s.line, s.points) for s in c.sprints] == [
        ("D", (11, 8, 5)), ("A", (7, 5, 3)), ("B", (5, 4, 2))]
    assert [(s.line, s.points) for s in d.sprints] == [
        ("B", (11, 8, 5)), ("C", (7, 5, 3)), ("E", (5, 4, 2))]


def test_each_course_rides_its_own_surfaces(board: Board) -> None:
    cob, up, down = Surface.COBBLESTONE, Surface.UPHILL, Surface.DOWNHILL
    legs = {x: race_surfaces(CourseMap(board, load_course(x))) for x in "ABCD"}
    every = {x: set().union(*ls) for x, ls in legs.items()}
    # A Paris-Roubaix: cobbles and asphalt, no mountains
    assert cob in every["A"] and up not in every["A"] and down not in every["A"]
    assert cob in legs["A"][1]  # between C and D
    # B Liege-Bastogne-Liege: asphalt and mountains, no cobbles
    assert up in every["B"] and down in every["B"] and cob not in every["B"]
    assert {up, down} <= legs["B"][1]  # between A and B
    # C Giro d'Italia: cobbles, asphalt, mountains
    assert {cob, up, down, Surface.ASPHALT} <= every["C"]
    # D Tour de France: mountains (A-B), cobbles and mountains (C-E)
    assert {up, down} <= legs["D"][1]
    assert {cob, up, down} <= legs["D"][3]
    assert cob not in legs["D"][1]


def test_course_d_passes_line_a_twice(board: Board) -> None:
    cmap = CourseMap(board, load_course("D"))
    assert cmap.course.route.count("A") == 2
    # the start dots lie before the first pass; the finish is the second
    dot = board.start_spaces("1")[0].id
    assert cmap.position_of(dot).leg == 0
    first_a = next(s for s in cmap.leg_spaces[0] if board[s].line_after == "A")
    last_a = next(s for s in cmap.leg_spaces[4] if board[s].line_after == "A")
    assert board[first_a].line_after == board[last_a].line_after == "A"
    assert cmap.crossed(cmap.position_of(first_a)) == "A"
    # the last leg (E -> A) runs through the Start 1 area again
    assert any(board[s].start == "1" for s in cmap.leg_spaces[4])
    # and takes branch E, course C takes branch D
    assert any(s.startswith("E-") for s in cmap.leg_spaces[3])
    assert not any(s.startswith("D-") for s in cmap.leg_spaces[3])
    c_map = CourseMap(board, load_course("C"))
    assert any(s.startswith("D-") for s in c_map.leg_spaces[1])
    assert not any(s.startswith("E-") for s in c_map.leg_spaces[1])


@pytest.mark.parametrize(
    ("course", "message"),
    [
        ({"start": "1", "route": ["A", "F"]}, "has no finish line 'F'"),
        ({"start": "3", "route": ["A"]}, "has no start '3'"),
        ({"start": "2", "route": ["C", "D", "E"]}, "leads from line D to line E"),
        ({"start": "1", "route": ["B"]}, "leads from the start to line B"),
        ({"start": "2", "route": ["C", "A"]}, "leads from line C to line A"),
    ],
)
def test_a_custom_course_the_board_cannot_carry_is_refused(
    board: Board, course: dict[str, object], message: str
) -> None:
    with pytest.raises(CourseError, match=message):
        CourseMap(board, course_from_dict({"name": "mine", **course}))


def test_a_custom_course_the_board_can_carry(board: Board, tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_text('{"name": "Two laps", "start": "1", "route": ["A", "B", "C", "D", "A", '
                    '"B", "C", "E", "A"], "sprints": [{"line": "A", "pass": 2, "points": [3, 2, 1]}]}')
    cmap = CourseMap(board, load_course(path))
    assert cmap.legs == 10
    assert cmap.course.sprints[0].leg == 4
