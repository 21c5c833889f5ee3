"""The board: a graph of spaces with geometry, surfaces and finish lines.

A board is pure data. Spaces are joined by forward links only: each space has
at most one *straight* successor (the next space in its lane) and one
*diagonal* successor to each side (the next space in the lane to the left or
right, in the riders' direction of travel). A missing diagonal is a thick
line. Lanes are numbered from the left: lane 0 is the leftmost lane as the
riders see it, so "the rider on the right" is the one with the higher lane.

``order`` places a space along the road: spaces side by side share it, and in
a curve whose outer lane has more spaces the outer spaces take the values in
between. On a circuit, ``order_period`` is the order of one full lap, and
orders are compared modulo it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class Surface(StrEnum):
    """Road surface of a space (the colour on the printed board)."""

    ASPHALT = "asphalt"  # cream
    COBBLESTONE = "cobblestone"  # aqua
    UPHILL = "uphill"  # red
    DOWNHILL = "downhill"  # yellow


class Direction(StrEnum):
    """A forward step from one space to the next."""

    STRAIGHT = "straight"
    LEFT = "left"
    RIGHT = "right"


@dataclass(frozen=True)
class Marker:
    """An ArUco corner marker printed on the board: top-left corner and side, in mm."""

    id: int
    x_mm: float
    y_mm: float
    side_mm: float

    def corners_mm(self) -> tuple[tuple[float, float], ...]:
        """The four corners, clockwise from top left, as ArUco reports them."""
        x, y, s = self.x_mm, self.y_mm, self.side_mm
        return ((x, y), (x + s, y), (x + s, y + s), (x, y + s))


@dataclass(frozen=True)
class Space:
    """One space of the board."""

    id: str
    lane: int
    order: float
    center_mm: tuple[float, float]
    surface: Surface = Surface.ASPHALT
    number: int = 0
    straight: str | None = None
    left: str | None = None
    right: str | None = None
    beside_left: str | None = None
    beside_right: str | None = None
    start: str | None = None
    line_after: str | None = None
    polygon_mm: tuple[tuple[float, float], ...] | None = None

    def successor(self, direction: Direction) -> str | None:
        """The next space in a direction, or None (end of lane, or a thick line)."""
        if direction is Direction.STRAIGHT:
            return self.straight
        if direction is Direction.LEFT:
            return self.left
        return self.right

    def successors(self) -> Iterator[tuple[Direction, str]]:
        """The forward steps from this space: straight first, then left, then right."""
        for d in Direction:
            target = self.successor(d)
            if target is not None:
                yield d, target

    @property
    def modifier(self) -> int:
        """What the space adds to a roll started on it (advanced rules).

        Uphill and cobblestone subtract their number, downhill adds it,
        asphalt (including the asphalt patch in the cobbles) adds nothing.
        """
        if self.surface in (Surface.UPHILL, Surface.COBBLESTONE):
            return -self.number
        if self.surface is Surface.DOWNHILL:
            return self.number
        return 0


@dataclass(frozen=True)
class Board:
    """A validated board. Build it with :func:`companion.boards.load_board` or the notation."""

    name: str
    size_mm: tuple[float, float]
    spaces: Mapping[str, Space]
    markers: Mapping[int, Marker] = field(default_factory=dict)
    order_period: float | None = None
    game: str = "um-reifenbreite"
    pieces: Mapping[int, str] = field(default_factory=dict)
    #: Where the dice are rolled: ``(x, y, w, h)`` in board mm (it may reach past
    #: the board's edges, for a tray beside it), or None: anywhere in the frame.
    dice_area_mm: tuple[float, float, float, float] | None = None

    def __post_init__(self) -> None:
        behind: dict[str, str] = {}
        for space in self.spaces.values():
            if space.straight is not None:
                behind[space.straight] = space.id
        object.__setattr__(self, "_behind", behind)

    def __getitem__(self, space_id: str) -> Space:
        return self.spaces[space_id]

    def __contains__(self, space_id: object) -> bool:
        return space_id in self.spaces

    def behind(self, space_id: str) -> str | None:
        """The space directly behind (the straight predecessor), or None."""
        result: str | None = self._behind.get(space_id)  # type: ignore[attr-defined]
        return result

    def ahead(self, space_id: str) -> str | None:
        """The space directly ahead (the straight successor), or None."""
        return self.spaces[space_id].straight

    def beside(self, space_id: str) -> tuple[str | None, str | None]:
        """The spaces side by side with this one: (left, right)."""
        s = self.spaces[space_id]
        return s.beside_left, s.beside_right

    def start_spaces(self, start: str) -> list[Space]:
        """The start dots of a start, frontmost first, rightmost first on a tie."""
        dots = [s for s in self.spaces.values() if s.start == start]
        return sorted(dots, key=lambda s: (-s.order, -s.lane))

    def starts(self) -> list[str]:
        """The names of the starts on this board."""
        return sorted({s.start for s in self.spaces.values() if s.start is not None})

    def lines(self) -> list[str]:
        """The names of the finish lines on this board."""
        return sorted({s.line_after for s in self.spaces.values() if s.line_after is not None})

    def order_delta(self, a: str, b: str) -> float:
        """How far ``b`` lies ahead of ``a`` along the road (modulo a lap on a circuit)."""
        d = self.spaces[b].order - self.spaces[a].order
        if self.order_period:
            d %= self.order_period
        return d
