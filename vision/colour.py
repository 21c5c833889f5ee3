"""Riders without stickers: find them by team colour and keep who is who.

The plastic riders come in four team colours (red, blue, black, green). Without
markers, a frame only says "a red rider stands on space x"; identity comes
from the last known state: the riders that did not move must still be on their
spaces, and the one rider that moved is the team-coloured rider that is on a
new space. Anything that does not fit that story is reported, not guessed:
a rider not found where he was is ``missing``, two possible new spaces for the
moving rider make it ``unclear``.

Colours are judged on the board warped top-down (1 px/mm), in a disc at the
centre of every space: a space "holds team t" when most of that disc has t's
colour (saturated red, blue or green, or very dark for black). The board's own
colours are pale by comparison (uphill red, cobblestone aqua, the landscape's
green), so saturation separates them.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from companion.boards import Board
from vision.board import BoardPose
from vision.markers import TEAMS
from vision.tokens import TokenReading

PPM = 1.0
DISC_MM = 7.0  # radius of the disc looked at around a space's centre
MIN_SHARE = 0.5  # share of the disc in a team colour for the space to hold that team


def team_map(bgr: np.ndarray) -> np.ndarray:
    """Per pixel: the team number whose rider colour it has (2 red, 3 blue, 4 black, 5 green), else 0."""
    hsv = cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV)
    h, s, v = hsv[..., 0].astype(np.int16), hsv[..., 1], hsv[..., 2]
    out = np.zeros(bgr.shape[:2], np.uint8)
    out[((h <= 8) | (h >= 170)) & (s >= 165) & (v >= 60)] = 2
    out[(h >= 98) & (h <= 130) & (s >= 150) & (v >= 50)] = 3
    out[(h >= 45) & (h <= 90) & (s >= 120) & (v >= 50)] = 5
    out[v < 55] = 4
    return out


@dataclass(frozen=True)
class _Discs:
    ids: list[str]
    rows: np.ndarray  # pixel rows of every disc sample
    cols: np.ndarray
    owner: np.ndarray  # index of the space of every sample
    counts: np.ndarray  # samples per space


_CACHE: dict[int, tuple[Board, _Discs]] = {}


def _discs(board: Board, extra_mm: float) -> _Discs:
    hit = _CACHE.get(id(board))
    if hit is not None and hit[0] is board:
        return hit[1]
    ids = list(board.spaces)
    r = int(np.ceil(DISC_MM * PPM))
    dy, dx = np.mgrid[-r:r + 1, -r:r + 1]
    inside = dx * dx + dy * dy <= (DISC_MM * PPM) ** 2
    dx, dy = dx[inside], dy[inside]
    rows, cols, owner = [], [], []
    for k, sid in enumerate(ids):
        cx, cy = board.spaces[sid].center_mm
        u, v = int(round((cx + extra_mm) * PPM)), int(round((cy + extra_mm) * PPM))
        rows.append(v + dy)
        cols.append(u + dx)
        owner.append(np.full(len(dx), k))
    d = _Discs(ids, np.concatenate(rows), np.concatenate(cols), np.concatenate(owner),
               np.full(len(ids), len(dx)))
    if len(_CACHE) > 8:
        _CACHE.clear()
    _CACHE[id(board)] = (board, d)
    return d


def space_teams(image: np.ndarray, board: Board, pose: BoardPose,
                min_share: float = MIN_SHARE) -> dict[str, int]:
    """The spaces that hold a team-coloured rider: space id -> team number."""
    if not pose.found or pose.H is None:
        return {}
    extra = 5.0
    w, h = board.size_mm
    A = np.array([[PPM, 0, PPM * extra - 0.5], [0, PPM, PPM * extra - 0.5], [0, 0, 1.0]])
    W, H = int((w + 2 * extra) * PPM), int((h + 2 * extra) * PPM)
    bgr = image if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    rect = cv2.warpPerspective(bgr[..., :3], A @ pose.H, (W, H), flags=cv2.INTER_AREA)
    teams = team_map(rect)
    d = _discs(board, extra)
    rows = np.clip(d.rows, 0, H - 1)
    cols = np.clip(d.cols, 0, W - 1)
    labels = teams[rows, cols]
    out: dict[str, int] = {}
    for t in TEAMS:
        share = np.bincount(d.owner, weights=(labels == t), minlength=len(d.ids)) / d.counts
        for k in np.nonzero(share >= min_share)[0]:
            sid = d.ids[int(k)]
            if sid not in out:
                out[sid] = t
    return out


def read_by_colour(image: np.ndarray, board: Board, pose: BoardPose,
                   previous: dict[int, str], moving: int | None = None) -> TokenReading:
    """Riders found by colour, named from the previous state (see the module doc).

    ``previous`` maps rider -> space before the move; ``moving`` is the rider
    the session expects to have moved (None: nobody).
    """
    out = TokenReading()
    if not pose.found:
        out.missing = sorted(previous)
        return out
    holds = space_teams(image, board, pose)
    return assign_by_colour(holds, previous, moving)


def assign_by_colour(holds: dict[str, int], previous: dict[int, str],
                     moving: int | None = None) -> TokenReading:
    """Name the team-coloured spaces ``holds`` (space -> team) from the previous state."""
    out = TokenReading()
    claimed: set[str] = set()
    for rider, space in sorted(previous.items()):
        if rider == moving:
            continue
        if holds.get(space) == rider // 10:
            out.tokens[rider] = space
            claimed.add(space)
        else:
            out.missing.append(rider)
    if moving is not None:
        team = moving // 10
        new = sorted(s for s, t in holds.items() if t == team and s not in claimed)
        if len(new) == 1:
            out.tokens[moving] = new[0]
            claimed.add(new[0])
        elif not new:
            out.missing.append(moving)
        else:
            out.unclear[moving] = new
    # A stationary rider missing while another rider of his team shows up elsewhere:
    # he may have been moved by mistake; say where he might be rather than guess.
    for rider in list(out.missing):
        if rider == moving:
            continue
        extra = sorted(s for s, t in holds.items() if t == rider // 10 and s not in claimed
                       and s not in out.unclear.get(moving or -1, []))
        if extra:
            out.missing.remove(rider)
            out.unclear[rider] = extra
    out.missing.sort()
    return out
