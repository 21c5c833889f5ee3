"""Boards and courses: the board file format, its loader and validator, the notation.

See ``docs/boards.md`` for the file schema.
"""

from companion.boards.course import (
    Course,
    CourseError,
    CourseMap,
    Position,
    Sprint,
    course_from_dict,
    load_board_and_course,
    load_course,
)
from companion.boards.loader import BoardError, board_from_dict, board_to_dict, load_board
from companion.boards.model import Board, Direction, Marker, Space, Surface
from companion.boards.notation import board_text, parse_board, space_id

__all__ = [
    "Board", "BoardError", "Course", "CourseError", "CourseMap", "Direction", "Marker",
    "Position", "Space", "Sprint", "Surface", "board_from_dict", "board_text", "board_to_dict",
    "course_from_dict", "load_board", "load_board_and_course", "load_course", "parse_board",
    "space_id",
]
