"""Read the dice where they are rolled: the board's dice area, seen through the board pose.

A board file may say where the dice are rolled (``dice_area_mm``: a box in
the infield, or a tray beside the board). With the board found in the frame,
the dice reader then looks only at that box, at the scale that makes a die
the size its detector knows best (the board gives the pixels per mm): faster
than the whole frame, better on small dice, and blind to the start dots and
numbers printed on the track, which a whole-frame read can take for a "1".
Without a dice area, or without the board, it reads the whole frame.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from companion.boards import Board
from vision.board import BoardPose, camera_centre
from vision.dice.neighbours import grid_points
from vision.dice.reader import DiceReader, DieReading, default_reader
from vision.dice.tilt_check import TiltCheck, default_tilt_check
from vision.top_view import top_view

#: How far past the dice area a die may lie and still count (in dice): a die
#: rolled against the box's line still belongs to the roll.
AREA_MARGIN_DICE = 1.0
#: A die read `null` and seen this far off straight down (degrees) or more is read
#: again toward its top face (:func:`read_nulls_at_their_tops`)...
TOP_REREAD_MIN_VIEW_DEG = 15.0
#: ...at these distances from where it was reported, in dice, away from the
#: camera's foot on the board; at least this many of them must read its value.
TOP_REREAD_STEPS = (0.15, 0.3, 0.45)
TOP_REREAD_AGREE = 2
#: A die still `null` is then read in the top view (:mod:`vision.top_view`), this
#: many dice across, at these distances (in dice) away from the camera's foot.
TOP_VIEW_DICE_ACROSS = 3.0
TOP_VIEW_STEPS = (0.0, 0.15, 0.3, 0.45, 0.6)
#: Told how many dice were rolled and reading fewer, the reader looks for the die
#: touching a lone die (no other within :data:`BESIDE_LONELY` dice) in the top view
#: round it, :data:`BESIDE_VIEW_DICE_ACROSS` dice across (:func:`find_beside_in_top_view`):
#: at the points of a grid :data:`BESIDE_STEP` dice apart, :data:`BESIDE_REACH` dice
#: from its centre, of which the :data:`BESIDE_SUREST` read most surely as a value
#: (:data:`BESIDE_SURE` or more, as they are) are read as a die found by looking is;
#: none on the camera's side of the lone die within :data:`BESIDE_SIDE_ACROSS` dice
#: of its line to the camera's foot, where its own side faces show.
BESIDE_LONELY = 1.6
BESIDE_VIEW_DICE_ACROSS = 4.5
BESIDE_STEP = 0.15
BESIDE_REACH = (0.9, 1.45)
BESIDE_SUREST = 8
BESIDE_SURE = 0.9
BESIDE_SIDE_ACROSS = 0.5


@dataclass(frozen=True)
class DiceRegion:
    """Where to read dice in a frame: ``roi`` (x, y, w, h px), the die's side in px and
    the dice area with its margin as a polygon in frame px (4 x 2)."""

    roi: tuple[int, int, int, int]
    die_px: float
    area_px: np.ndarray


def dice_region(board: Board, pose: BoardPose, frame_size: tuple[int, int],
                die_mm: float = 16.0) -> DiceRegion | None:
    """The frame region of the board's dice area (with a margin), or None.

    None when the board has no dice area, the board was not found, or the
    area lies outside the frame. ``frame_size`` is (width, height).
    """
    if board.dice_area_mm is None or not pose.found or pose.H is None:
        return None
    x, y, w, h = board.dice_area_mm
    m = AREA_MARGIN_DICE * die_mm
    corners = np.array([[x - m, y - m], [x + w + m, y - m], [x + w + m, y + h + m],
                        [x - m, y + h + m]], float)
    px = pose.to_px(corners)
    if not np.all(np.isfinite(px)):
        return None
    fw, fh = frame_size
    x0, y0 = max(0, int(np.floor(px[:, 0].min()))), max(0, int(np.floor(px[:, 1].min())))
    x1, y1 = min(fw, int(np.ceil(px[:, 0].max()))), min(fh, int(np.ceil(px[:, 1].max())))
    if x1 <= x0 or y1 <= y0:
        return None
    cx, cy = x + w / 2, y + h / 2
    probe = pose.to_px(np.array([[cx - die_mm / 2, cy], [cx + die_mm / 2, cy],
                                 [cx, cy - die_mm / 2], [cx, cy + die_mm / 2]], float))
    die_px = (float(np.linalg.norm(probe[1] - probe[0]))
              + float(np.linalg.norm(probe[3] - probe[2]))) / 2
    if not np.isfinite(die_px) or die_px <= 0:
        return None
    return DiceRegion((x0, y0, x1 - x0, y1 - y0), die_px, px)


def read_table_dice(frame: np.ndarray, board: Board, pose: BoardPose, *, die_mm: float = 16.0,
                    reader: DiceReader | None = None, expected: int | None = None,
                    tilt_check: TiltCheck | bool = True) -> list[DieReading]:
    """The dice of a roll: those in the board's dice area, or in the whole frame.

    In the dice area, only dice whose centre lies within the area (plus
    :data:`AREA_MARGIN_DICE` dice) are kept. ``die_mm`` is the side of the
    dice; ``reader`` defaults to the shared one. ``expected``, the number of
    dice the game rolls (two in Um Reifenbreite, one in the others), lets the
    reader search the dice area harder when it sees fewer (docs/dice.md, "A
    roll short of dice"); None: as many as are seen. In the dice area, a die read
    ``null`` from the side is read again at its top face
    (:func:`read_nulls_at_their_tops`); reading fewer dice than ``expected``, the
    die touching a lone one is looked for in the top view round it
    (:func:`find_beside_in_top_view`). Last, each die read with a value and seen
    nearly straight down or from far off is checked for lying cocked
    (``tilt_check``: True the shared :class:`~vision.dice.tilt_check.TiltCheck`,
    False none; rules 61b, 61c and 62b) and reported unreadable if it does.
    """
    reader = reader or default_reader()
    h, w = frame.shape[:2] if getattr(frame, "ndim", 0) >= 2 else (0, 0)
    region = dice_region(board, pose, (w, h), die_mm)
    if region is None:
        return reader.read(frame)
    found = read_dice_area(frame, region, reader, expected)
    if not found:
        return found
    assert board.dice_area_mm is not None
    x, y, aw, ah = board.dice_area_mm
    m = AREA_MARGIN_DICE * die_mm
    at = pose.to_mm(np.array([d.center for d in found], float))
    kept = [d for d, (u, v) in zip(found, at, strict=True)
            if x - m <= u <= x + aw + m and y - m <= v <= y + ah + m]
    found = read_nulls_at_their_tops(frame, pose, kept, reader, die_mm, region.die_px)
    if expected is not None and 0 < len(found) < expected:
        found = find_beside_in_top_view(frame, pose, found, reader, die_mm, region.die_px,
                                        expected)
    check = default_tilt_check() if tilt_check is True else tilt_check or None
    return check.check(frame, pose, found, die_mm) if check is not None and found else found


def read_dice_area(frame: np.ndarray, region: DiceRegion, reader: DiceReader,
                   expected: int | None = None) -> list[DieReading]:
    """The reader's own readings in the dice area ``region``, before the table's
    further looks (:func:`read_table_dice`'s first step).

    The dice area is plain (nothing printed inside): the detector need only look
    round what stands out there (``vision.dice.spots``). The dice of a roll are one
    set, all one size: a reading proposed far smaller is checked.
    """
    return reader.read(frame, region.roi, die_px=region.die_px, plain=region.area_px,
                       one_size=True, expected=expected)


def read_nulls_at_their_tops(frame: np.ndarray, pose: BoardPose, found: list[DieReading],
                             reader: DiceReader, die_mm: float, die_px: float
                             ) -> list[DieReading]:
    """``found`` with each `null` die seen from the side read again at its top face.

    A tilted camera sees a die's side faces with their pips, and the detector
    often reports such a die between its top and its sides, where the crop shows
    two faces and reads "unreadable". Away from the camera's foot (known from the
    board's pose: :func:`vision.board.camera_centre`) lies the top face: the die is
    read again at :data:`TOP_REREAD_STEPS` dice that way, one die across, and given
    the value read there clearly (as a die found by looking is) where at least
    :data:`TOP_REREAD_AGREE` points read it so and none reads another value; its
    centre moves to the first such point (rule 57b of docs/dice-history.md). A die
    still `null` is read so once more in the top view (:mod:`vision.top_view`),
    where its top face is a square of the die's size, at :data:`TOP_VIEW_STEPS`
    (rule 58). Dice seen less than :data:`TOP_REREAD_MIN_VIEW_DEG` off straight
    down are left alone: their sides hardly show, and a cocked die seen so reads
    clearly on a face.
    """
    if all(d.value is not None for d in found):
        return found
    h, w = frame.shape[:2]
    camera = camera_centre(pose, (w, h))
    if camera is None:
        return found
    foot = np.array(camera[:2])
    out = list(found)
    for i, d in enumerate(found):
        if d.value is not None:
            continue
        b = pose.to_mm(np.array([d.center], float))[0]
        away = b - foot
        dist = float(np.hypot(*away))
        if dist == 0 or math.degrees(math.atan2(dist, camera[2])) < TOP_REREAD_MIN_VIEW_DEG:
            continue
        points = pose.to_px(np.array([b + away / dist * die_mm * t for t in TOP_REREAD_STEPS]))
        read = (_agreed(frame, [(float(x), float(y)) for x, y in points], reader, die_px)
                or _read_in_top_view(frame, pose, camera, d.center, reader, die_mm, die_px))
        if read is not None:
            out[i] = replace(d, value=read[0].value, center=read[1])
    return out


def find_beside_in_top_view(frame: np.ndarray, pose: BoardPose, found: list[DieReading],
                            reader: DiceReader, die_mm: float, die_px: float, expected: int
                            ) -> list[DieReading]:
    """``found`` with the dice touching its lone dice that the reader missed, while
    fewer than ``expected``.

    Two dice thrown together often come to rest face to face, and a tilted camera
    sees the pair with their side faces' pips between and round them: the detector
    and the reader's own look beside a lone die (``vision.dice.look_round``) now
    and then miss the second one. Round each lone die read with a value, the top
    view (:mod:`vision.top_view`) shows every flat die's top as a square of the
    die's size: the points of a grid :data:`BESIDE_REACH` dice from its centre are
    screened in one batch (:meth:`DiceReader.surest_at`), and the surest read as a
    die found by looking is, the value given where at least
    :data:`TOP_REREAD_AGREE` of them read it clearly and none another (rule 60b of
    docs/dice-history.md). The die found is placed at the first such point and
    kept unless another reading lies within half a die of it. The lone die's own
    side faces are not searched (:data:`BESIDE_SIDE_ACROSS`): their pips read as
    a die there.
    """
    h, w = frame.shape[:2]
    camera = camera_centre(pose, (w, h))
    if camera is None:
        return found
    out = list(found)
    for d in found:
        if len(out) >= expected:
            break
        if d.value is None or any(o is not d and math.dist(o.center, d.center)
                                  < BESIDE_LONELY * die_px for o in out):
            continue
        view = top_view(frame, pose, camera, d.center, die_mm, die_px / die_mm,
                        int(round(BESIDE_VIEW_DICE_ACROSS * die_px)))
        if view is None:
            continue
        # Not on the camera's side of the lone die, in line with it: its own side
        # faces show there, and their pips can read as a die (rules 59, 60).
        (cx, cy), (ux, uy) = view.centre, view.away
        points = [(x, y) for x, y in grid_points(cx, cy, die_px, BESIDE_STEP, BESIDE_REACH)
                  if (x - cx) * ux + (y - cy) * uy >= 0
                  or abs((x - cx) * uy - (y - cy) * ux) > BESIDE_SIDE_ACROSS * die_px]
        surest = reader.surest_at(view.image, points, die_px, BESIDE_SUREST, BESIDE_SURE)
        read = _agreed(view.image, [points[i] for i in surest], reader, die_px)
        if read is None:
            continue
        at = view.frame_point(*read[1])
        if not any(math.dist(at, o.center) < 0.5 * die_px for o in out):
            out.append(replace(read[0], center=at, size=die_px))
    return out


def _read_in_top_view(frame: np.ndarray, pose: BoardPose, camera: tuple[float, float, float],
                      at: tuple[float, float], reader: DiceReader, die_mm: float,
                      die_px: float) -> tuple[DieReading, tuple[float, float]] | None:
    """The die reported at frame px ``at`` read in the top view of its tops' plane at
    :data:`TOP_VIEW_STEPS` away from the camera's foot (:func:`_agreed`): its reading
    and the frame px of the first point that reads it; else None."""
    view = top_view(frame, pose, camera, at, die_mm, die_px / die_mm,
                    int(round(TOP_VIEW_DICE_ACROSS * die_px)))
    if view is None:
        return None
    (cx, cy), (ux, uy) = view.centre, view.away
    read = _agreed(view.image, [(cx + ux * die_px * t, cy + uy * die_px * t)
                                for t in TOP_VIEW_STEPS], reader, die_px)
    return None if read is None else (read[0], view.frame_point(*read[1]))


def _agreed(img: np.ndarray, points: list[tuple[float, float]], reader: DiceReader,
            die_px: float) -> tuple[DieReading, tuple[float, float]] | None:
    """The reading of a value read clearly (:meth:`DiceReader.read_at`) at
    :data:`TOP_REREAD_AGREE` or more of ``points`` of ``img`` and at none another, at
    the first point that reads it, with that point; else None."""
    reads = [(r, p) for p in points if (r := reader.read_at(img, p[0], p[1], die_px)) is not None]
    if len(reads) >= TOP_REREAD_AGREE and len({r.value for r, _ in reads}) == 1:
        return reads[0]
    return None
