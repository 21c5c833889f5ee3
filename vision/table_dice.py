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

from dataclasses import dataclass

import numpy as np

from companion.boards import Board
from vision.board import BoardPose
from vision.dice.reader import DiceReader, DieReading, default_reader

#: How far past the dice area a die may lie and still count (in dice): a die
#: rolled against the box's line still belongs to the roll.
AREA_MARGIN_DICE = 1.0


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
                    reader: DiceReader | None = None, expected: int | None = None
                    ) -> list[DieReading]:
    """The dice of a roll: those in the board's dice area, or in the whole frame.

    In the dice area, only dice whose centre lies within the area (plus
    :data:`AREA_MARGIN_DICE` dice) are kept. ``die_mm`` is the side of the
    dice; ``reader`` defaults to the shared one. ``expected``, the number of
    dice the game rolls (two in Um Reifenbreite, one in the others), lets the
    reader search the dice area harder when it sees fewer (docs/dice.md, "A
    roll short of dice"); None: as many as are seen.
    """
    reader = reader or default_reader()
    h, w = frame.shape[:2] if getattr(frame, "ndim", 0) >= 2 else (0, 0)
    region = dice_region(board, pose, (w, h), die_mm)
    if region is None:
        return reader.read(frame)
    # The dice area is plain (nothing printed inside): the detector need only look
    # round what stands out there (``vision.dice.spots``). The dice of a roll are
    # one set, all ``die_mm`` across: a reading proposed far smaller is checked.
    found = reader.read(frame, region.roi, die_px=region.die_px, plain=region.area_px,
                        one_size=True, expected=expected)
    if not found:
        return found
    assert board.dice_area_mm is not None
    x, y, aw, ah = board.dice_area_mm
    m = AREA_MARGIN_DICE * die_mm
    at = pose.to_mm(np.array([d.center for d in found], float))
    return [d for d, (u, v) in zip(found, at, strict=True)
            if x - m <= u <= x + aw + m and y - m <= v <= y + ah + m]
