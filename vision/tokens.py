"""Rider tokens: find the token markers on the board and map each to its space.

A token is a round white sticker (``STICKER_RATE`` marker sides across) with
one ArUco marker of ``DICT_4X4_100`` (the rider number, or team x 10 for a
yellow-jersey piece) stuck on a plastic rider. Seen from 1-1.5 m, a 10 mm
marker is only 15-20 px across, too small for a plain ArUco pass to read
reliably under blur, so tokens are read in board coordinates, once the board
is located (``vision.board``):

1. *Candidates*: the board is warped top-down at 1 px/mm; a token is a
   high-contrast spot (black cells, white sticker) on otherwise flat spaces,
   so local maxima of the local contrast are candidates.
2. *Reading*: around each candidate a patch of the full-size frame is warped
   top-down at 5 px/mm; the marker's angle comes from the gradient
   orientations (a square's edges), its centre from the dark square's
   profiles, and its 4x4 inner cells are compared (soft, correlation) with the
   20 token codes in their 4 rotations only. A read needs a dark border, a
   clear best code and a clear margin over the next best.
3. *Mapping*: the token's centre in board mm goes to the space whose polygon
   holds it. Within ``margin_mm`` of a polygon edge where another space lies
   just across, it is "unclear" rather than a guess. A board without polygons
   uses the nearest centre within a tolerance. Off the track: ``unplaced``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np

from companion.boards import Board
from vision.board import BoardPose
from vision.markers import (
    JERSEYS,
    RIDERS,
    STICKER_RATE,
    TOKEN_IDS,
    marker_cells,
    to_gray,
)
from vision.render import space_polygon

MARGIN_MM = 2.5  # a centre this close to a border between two spaces is unclear
RECT_PPM = 1.0  # px/mm of the top-down view used to find candidates
PATCH_PPM = 5.0  # px/mm of the patch a token is read from
MAX_CANDIDATES = 48
MIN_RING = 0.06  # ring contrast of a candidate
MIN_SCORE = 0.7  # correlation of the cells with the best code
MIN_MARGIN = 0.2  # over the best code of another id


@dataclass(frozen=True)
class Sighting:
    """One token read in the frame."""

    id: int
    center_mm: tuple[float, float]
    center_px: tuple[float, float]
    score: float  # 0..1, how clearly the code was read
    status: str  # "placed", "unplaced" or "unclear"
    space: str | None = None
    candidates: tuple[str, ...] = ()  # the spaces in doubt when unclear


@dataclass
class TokenReading:
    """What the camera says about the tokens of one frame."""

    tokens: dict[int, str] = field(default_factory=dict)  # rider -> space id
    jerseys: dict[int, str] = field(default_factory=dict)  # jersey id (20..50) -> space id
    unplaced: list[int] = field(default_factory=list)  # seen off the track
    unclear: dict[int, list[str]] = field(default_factory=dict)  # seen, space in doubt
    missing: list[int] = field(default_factory=list)  # expected but not seen
    sightings: list[Sighting] = field(default_factory=list)


# --- mapping a point to a space -----------------------------------------------


class TrackIndex:
    """The spaces' outlines of a board, for point -> space queries."""

    def __init__(self, board: Board):
        self.ids = list(board.spaces)
        self.polys = [space_polygon(board.spaces[s]).astype(np.float32) for s in self.ids]
        self.has_polygons = all(board.spaces[s].polygon_mm for s in self.ids)
        self.centers = np.array([board.spaces[s].center_mm for s in self.ids], float)
        sizes = [float(np.sqrt(cv2.contourArea(p))) for p in self.polys]
        self.typical = float(np.median(sizes)) if sizes else 25.0

    def locate(self, pt: tuple[float, float], margin_mm: float = MARGIN_MM,
               ) -> tuple[str, str | None, tuple[str, ...]]:
        """("placed", space, ()), ("unclear", None, candidates) or ("unplaced", None, ())."""
        p = np.asarray(pt, float)
        d2 = np.sum((self.centers - p) ** 2, axis=1)
        near = np.argsort(d2)[:8]
        if not self.has_polygons:
            # Nearest centre within a tolerance; unclear when two are about as near.
            d = np.sqrt(d2[near])
            if d[0] > 0.6 * self.typical:
                return "unplaced", None, ()
            if len(d) > 1 and d[1] - d[0] < 2 * margin_mm:
                return "unclear", None, (self.ids[near[0]], self.ids[near[1]])
            return "placed", self.ids[near[0]], ()
        dist = {int(i): cv2.pointPolygonTest(self.polys[i], (float(p[0]), float(p[1])), True)
                for i in near}
        inside = [i for i, s in dist.items() if s >= 0]
        close = [i for i, s in dist.items() if s > -margin_mm]
        if inside and len(close) == 1:
            return "placed", self.ids[inside[0]], ()
        if inside and all(dist[i] >= margin_mm for i in inside[:1]):
            return "placed", self.ids[inside[0]], ()
        if close:
            ids = tuple(self.ids[i] for i in sorted(close, key=lambda i: -dist[i]))
            if len(ids) == 1:
                # Just outside one space and near no other: the token's base overhangs.
                return "placed", ids[0], ()
            return "unclear", None, ids
        # Outside every polygon: near the track still counts if only one space is close.
        nearest = int(near[0])
        if -dist[nearest] < 0.35 * self.typical:
            second = [i for i in near[1:] if -dist[int(i)] < -dist[nearest] + 2 * margin_mm]
            if not second:
                return "placed", self.ids[nearest], ()
            return "unclear", None, (self.ids[nearest], self.ids[int(second[0])])
        return "unplaced", None, ()


_INDEX: dict[int, tuple[Board, TrackIndex]] = {}


def track_index(board: Board) -> TrackIndex:
    """The (cached) index of a board."""
    hit = _INDEX.get(id(board))
    if hit is not None and hit[0] is board:
        return hit[1]
    if len(_INDEX) > 16:
        _INDEX.clear()
    idx = TrackIndex(board)
    _INDEX[id(board)] = (board, idx)
    return idx


# --- reading token markers ----------------------------------------------------


@lru_cache(maxsize=1)
def _codes() -> tuple[np.ndarray, np.ndarray]:
    """The inner 4x4 cells of every token id in its 4 rotations, zero mean, unit norm."""
    rows, ids = [], []
    for tid in TOKEN_IDS:
        inner = marker_cells(tid)[1:5, 1:5].astype(float)
        for k in range(4):
            c = np.rot90(inner, k).ravel()
            c = c - c.mean()
            rows.append(c / (np.linalg.norm(c) or 1.0))
            ids.append(tid)
    return np.array(rows), np.array(ids)


def _candidates(gray: np.ndarray, pose: BoardPose, board: Board, extra_mm: float,
                sticker_mm: float) -> list[tuple[float, float]]:
    """Board-mm spots with a token's local contrast, strongest first."""
    w_mm, h_mm = board.size_mm
    s = RECT_PPM
    A = np.array([[s, 0, s * extra_mm - 0.5], [0, s, s * extra_mm - 0.5], [0, 0, 1.0]])
    assert pose.H is not None
    W, H = int((w_mm + 2 * extra_mm) * s), int((h_mm + 2 * extra_mm) * s)
    rect = cv2.warpPerspective(gray, A @ pose.H, (W, H), flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
    # Ring contrast: the white of the sticker (between the marker and the sticker's
    # edge) against the darker rider base just outside it, from box means.
    r = sticker_mm / 2 * s

    def ring(r0: float, r1: float) -> np.ndarray:
        k0, k1 = max(1, int(round(2 * r0)) | 1), max(3, int(round(2 * r1)) | 1)
        b0 = cv2.boxFilter(rect, -1, (k0, k0))
        b1 = cv2.boxFilter(rect, -1, (k1, k1))
        return (b1 * (k1 * k1) - b0 * (k0 * k0)) / (k1 * k1 - k0 * k0)

    inner = ring(0.65 * r, 0.95 * r)
    outer = ring(1.05 * r, 1.25 * r)
    score = (inner - outer) / (inner + 10.0)
    # Ignore the corner markers and their quiet zones.
    for m in board.markers.values():
        q = 0.4 * m.side_mm
        x0, y0 = int((m.x_mm - q + extra_mm) * s), int((m.y_mm - q + extra_mm) * s)
        x1 = int((m.x_mm + m.side_mm + q + extra_mm) * s) + 1
        y1 = int((m.y_mm + m.side_mm + q + extra_mm) * s) + 1
        score[max(0, y0):max(0, y1), max(0, x0):max(0, x1)] = 0
    kd = max(3, int(round(0.7 * sticker_mm * s)) | 1)
    peak = cv2.dilate(score, cv2.getStructuringElement(cv2.MORPH_RECT, (kd, kd)))
    ys, xs = np.nonzero((score >= peak) & (score > MIN_RING))
    order = np.argsort(-score[ys, xs])[:MAX_CANDIDATES]
    return [((xs[i] + 0.5) / s - extra_mm, (ys[i] + 0.5) / s - extra_mm) for i in order]


def _patch(gray: np.ndarray, pose: BoardPose, center_mm: tuple[float, float], half_mm: float,
           angle: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """A top-down patch of the frame around a board point, rotated by ``angle``.

    Returns the patch and the matrix patch px -> board mm.
    """
    n = int(round(2 * half_mm * PATCH_PPM))
    c, s = math.cos(angle), math.sin(angle)
    # patch px (u, v) -> mm: centre + R(angle) @ ((u + 0.5) / ppm - half)
    k = 1.0 / PATCH_PPM
    off = 0.5 * k - half_mm
    P = np.array([[c * k, -s * k, center_mm[0] + c * off - s * off],
                  [s * k, c * k, center_mm[1] + s * off + c * off],
                  [0, 0, 1.0]])
    M = pose.H_inv @ P  # patch px -> image px
    patch = cv2.warpPerspective(gray, M, (n, n), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                borderMode=cv2.BORDER_REPLICATE)
    return patch.astype(np.float32), P


def _angle(patch: np.ndarray, radius_px: float) -> float:
    """The marker's angle (mod 90 degrees) from the orientations of its edges."""
    gx = cv2.Sobel(patch, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(patch, cv2.CV_32F, 0, 1, ksize=3)
    n = patch.shape[0]
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) - (n - 1) / 2
    w = (gx * gx + gy * gy) * (xx * xx + yy * yy < radius_px**2)
    phi = np.arctan2(gy, gx)
    z = np.sum(w * np.cos(4 * phi)) + 1j * np.sum(w * np.sin(4 * phi))
    return float(np.angle(z) / 4)


def _square_centre(prof: np.ndarray, side_px: float) -> float:
    """Where a dark run ``side_px`` long is centred in a darkness profile (to half a pixel)."""
    n = len(prof)
    half = side_px / 2
    edge = 0.35 * side_px
    cs = np.concatenate([[0.0], np.cumsum(prof)])
    c = np.arange(half, n - half + 1e-9, 0.5)
    if len(c) == 0:
        return n / 2

    def box(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ia = np.clip(np.round(a), 0, n).astype(int)
        ib = np.clip(np.round(b), 0, n).astype(int)
        return (cs[ib] - cs[ia]) / np.maximum(1, ib - ia)

    v = box(c - half, c + half) - 0.5 * (box(c - half - edge, c - half)
                                         + box(c + half, c + half + edge))
    return float(c[int(np.argmax(v))])


def read_token(gray: np.ndarray, pose: BoardPose, at_mm: tuple[float, float],
               side_mm: float) -> tuple[int, tuple[float, float], float] | None:
    """Read the token near a board point: (id, centre mm, score) or None."""
    half = side_mm * STICKER_RATE / 2 + 2.0
    side_px = side_mm * PATCH_PPM
    at = at_mm
    for _ in range(2):
        patch, P = _patch(gray, pose, at, half)
        theta = _angle(patch, 0.6 * side_px)
        patch, P = _patch(gray, pose, at, half, theta)
        n = patch.shape[0]
        dark = 255.0 - patch
        band = int(max(2, 0.3 * side_px))
        mid = n // 2
        cx = _square_centre(dark[mid - band:mid + band].mean(axis=0), side_px)
        cy = _square_centre(dark[:, max(0, int(cx) - band):int(cx) + band].mean(axis=1), side_px)
        cx = _square_centre(dark[max(0, int(cy) - band):int(cy) + band].mean(axis=0), side_px)
        q = P @ np.array([cx, cy, 1.0])
        new_at = (float(q[0] / q[2]), float(q[1] / q[2]))
        moved = math.dist(new_at, at)
        at = new_at
        if moved < 0.15 * side_mm:
            break
    cell = side_px / 6
    # Mean of the centre part of every cell (6 x 6, border included).
    grid = np.zeros((6, 6))
    r = max(1, int(cell * 0.25))
    for i in range(6):
        for j in range(6):
            x = cx + (j - 2.5) * cell
            y = cy + (i - 2.5) * cell
            xi, yi = int(round(x)), int(round(y))
            if not (r <= xi < n - r and r <= yi < n - r):
                return None
            grid[i, j] = patch[yi - r:yi + r + 1, xi - r:xi + r + 1].mean()
    # The white of the sticker around the marker.
    ring = []
    for t in np.linspace(0, 2 * math.pi, 16, endpoint=False):
        rr = side_px * 0.5 + cell * 1.0
        x, y = cx + rr * math.cos(t), cy + rr * math.sin(t)
        if 0 <= int(x) < n and 0 <= int(y) < n:
            ring.append(patch[int(y), int(x)])
    if not ring:
        return None
    border = np.concatenate([grid[0], grid[5], grid[1:5, 0], grid[1:5, 5]])
    black = float(np.median(border))
    white = float(np.percentile(ring, 60))
    if white - black < 25:
        return None
    inner = grid[1:5, 1:5].ravel()
    if np.mean((border - black) / (white - black) < 0.5) < 0.8:
        return None  # no dark border all round: not a marker
    d = inner.mean() - inner  # > 0 darker than the average cell
    norm = float(np.linalg.norm(d))
    if norm < 1e-6:
        return None
    codes, ids = _codes()
    scores = codes @ (d / norm)  # Pearson correlation with every code
    order = np.argsort(-scores)
    best = int(order[0])
    second = next(int(i) for i in order[1:] if ids[i] != ids[best])
    if scores[best] < MIN_SCORE or scores[best] - scores[second] < MIN_MARGIN:
        return None
    c_mm = P @ np.array([cx, cy, 1.0])
    return int(ids[best]), (float(c_mm[0] / c_mm[2]), float(c_mm[1] / c_mm[2])), float(
        scores[best])


def read_tokens(image: np.ndarray, board: Board, pose: BoardPose, *,
                expected: list[int] | None = None, side_mm: float = 10.0,
                margin_mm: float = MARGIN_MM, gray: np.ndarray | None = None,
                extra_mm: float = 30.0) -> TokenReading:
    """The tokens of a frame whose board was located (see the module doc).

    ``expected`` lists the token ids the session knows are on the table: those
    not seen are ``missing`` (a hand over them: ask for another look).
    """
    out = TokenReading()
    if not pose.found or pose.H is None:
        out.missing = sorted(expected or [])
        return out
    g = gray if gray is not None else to_gray(image)
    index = track_index(board)
    found: dict[int, list[tuple[tuple[float, float], float]]] = {}
    for cand in _candidates(g, pose, board, extra_mm, side_mm * STICKER_RATE):
        if any(math.dist(cand, c) < 0.8 * side_mm for v in found.values() for c, _ in v):
            continue  # already read from a nearby candidate
        got = read_token(g, pose, cand, side_mm)
        if got is None:
            continue
        tid, c, score = got
        found.setdefault(tid, []).append((c, score))
    for tid, seen in sorted(found.items()):
        (c, score) = max(seen, key=lambda cs: cs[1])
        px = pose.to_px(np.array([c]))[0]
        far = [s for s in seen if math.dist(s[0], c) > side_mm]
        if far:  # the same id twice in different places
            out.unclear[tid] = []
            out.sightings.append(Sighting(tid, c, (float(px[0]), float(px[1])), score,
                                          "unclear"))
            continue
        status, space, cands = index.locate(c, margin_mm)
        out.sightings.append(Sighting(tid, c, (float(px[0]), float(px[1])), score, status,
                                      space, cands))
        if status == "placed" and space is not None:
            (out.jerseys if tid in JERSEYS else out.tokens)[tid] = space
        elif status == "unclear":
            out.unclear[tid] = list(cands)
        else:
            out.unplaced.append(tid)
    if expected is not None:
        out.missing = sorted(t for t in expected if t not in found)
    return out


__all__ = ["JERSEYS", "RIDERS", "Sighting", "TokenReading", "TrackIndex", "read_token",
           "read_tokens", "track_index"]
