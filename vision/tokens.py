"""Rider tokens: find the token markers on the board and map each to its space.

A token is a round white sticker (``STICKER_RATE`` marker sides across) with
one ArUco marker of ``DICT_4X4_100`` (the rider number, or team x 10 for a
yellow-jersey piece) stuck on a plastic rider. Seen from 1-1.5 m, a 10 mm
marker is only 15-20 px across, too small for a plain ArUco pass to read
reliably under blur, so tokens are read in board coordinates, once the board
is located (``vision.board``):

1. *Candidates*: the board is warped top-down at 1 px/mm; a token is a
   high-contrast spot (black cells, white sticker) on otherwise flat spaces,
   so local maxima of the local contrast are candidates (those with a pale
   rim are read last, and only while a token in the game is still unread).
2. *Reading*: around each candidate a patch of the full-size frame is warped
   top-down at 5 px/mm; the marker's angle comes from the gradient
   orientations (a square's edges), its centre from the dark square's
   profiles, and its 4x4 inner cells are compared (soft, correlation) with the
   20 token codes in their 4 rotations only. A read needs a dark border, a
   white ring all round (a token half covered is not read), a clear best
   code and a clear margin over the next best. With the list of the tokens
   in the game, a read without that margin (or below ``CLEAR_SCORE``) is
   named among the ids still open (in the game, not read clearly elsewhere)
   when it is clear among those and the codes fitted to the pixels
   (``vision.token_fit``) neither name it another id nor fit it badly (a
   hand over half of it) (``_settle``).
3. *Mapping*: the token's centre in board mm goes to the space whose polygon
   holds it. Within ``margin_mm`` of a polygon edge where another space lies
   just across, it is "unclear" rather than a guess; the margin grows where
   the board fit is uncertain (``BoardPose.fit_sigma_mm``). A board without polygons
   uses the nearest centre within a tolerance. Off the track: ``unplaced``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np

from companion.boards import Board
from vision.board import BoardPose, camera_centre
from vision.markers import (
    JERSEYS,
    RIDERS,
    STICKER_RATE,
    TOKEN_IDS,
    marker_cells,
    to_gray,
)
from vision.render import space_polygon
from vision.token_fit import FitRead, fit_token

MARGIN_MM = 2.5  # a centre this close to a border between two spaces is unclear
# ... plus this many times the board fit's uncertainty there (``BoardPose.fit_sigma_mm``)
# beyond what a fit on all four corner markers has.
FIT_SIGMAS, FIT_SIGMA_OK = 4.0, 0.3
RECT_PPM = 1.0  # px/mm of the top-down view used to find candidates
PATCH_PPM = 5.0  # px/mm of the patch a token is read from
MAX_CANDIDATES = 48
MAX_PALE = 12  # candidates with a pale rim read at most (after the others)
RIM_MM = 2.0  # the coloured rim round a sticker (printed, or the rider's top)
# A candidate's contrasts (relative to the sticker's white): sticker against the
# base around it, marker against the sticker, spread of the marker's cells.
MIN_RING, MIN_DARK, MIN_CELLS = 0.12, 0.25, 0.08
# Pale candidates, read last: a paler rim round a darker marker, or any rim and marker
# at least PALE[0] and PALE[1] whose sum reaches PALE[2]; cells at least PALE[3].
MIN_RING_PALE, MIN_DARK_PALE = 0.05, 0.30
PALE = (0.04, 0.20, 0.45, 0.06)
# The 12 points of the white ring round the marker: all but two must be at least this
# far from the marker's black toward the sticker's white (else the token is partly
# covered, and what is seen of its code can pass for another id's).
MIN_RING_WHITE = 0.45
MIN_SCORE = 0.85  # correlation of the inner cells with the best code
# With ``expected``, a read counts as clear on its own from this score; between
# MIN_SCORE and this, it is settled among the ids still open. Over 12,500 logged
# clear reads, all 12,420 from 0.93 up were right; of the 77 below, 3 were misreads.
CLEAR_SCORE = 0.93
MIN_MARGIN = 0.1  # over the best code of another id
WEAK_BELOW = 0.05  # a weak read's open id may score this much below its best id
BLURS_MM = (0.0, 0.3, 0.5, 0.7, 0.9, 1.1, 1.3)
# The second look (``_second_look``, ``vision.token_fit``): spots of a dark, cellular
# centre searched when tokens of the game are still unread (rim, marker and cells
# contrasts at least), how many of them, and how many fits a frame may cost at most.
RELAXED = (0.0, 0.15, 0.05)
RELAXED_SPOTS = 24
MAX_FITS = 8
# A fit names a token when its id explains the pixels e^FIT_EVIDENCE times better than
# any other id, with the fitted contrast at least FIT_QUALITY times the residual noise.
# Over ~2000 fits on synthetic frames, every token's best-fitting id was its own (1st
# percentile of the evidence 120; one exception since: FIT_EVIDENCE_OPEN); spots that
# were no token but passed the marker checks reached up to 40, all of them with a blur
# far from the frame's (below).
FIT_EVIDENCE = 25.0
FIT_QUALITY = 10.0
# ... and with the blur that fits best within this many px of the blur fitted on the
# nearest token read clearly: a token's fitted blur was within 0.3 px of the frame's,
# while smudges that fit some code (evidence up to 40) did so blurred by 2.3-2.5 px in
# frames blurred by 1.2-1.5 px.
BLUR_TOLERANCE_PX = 0.45
# A fit whose next-best id (``FitRead.runner_up``) is open too - a rider in the game, not
# read yet, who may be this very token - must explain the pixels this much better: over
# 113 second-look fits of bench frames (seeds 0-3, 1000, 2000) the one misread (rider 51's
# token named 44, 51 the runner-up and open) had an evidence of 33; the 24 right fits
# with an open runner-up had 46.6 and more. Without the list of the riders in the game
# every id not read is open, so every fit needs this much.
FIT_EVIDENCE_OPEN = 40.0
# Two stickers cannot overlap: a read that is not clear, within this many sticker
# diameters of a token read already, is not another token (a ghost on its edge named a
# hidden rider in bench scene 78 of the hidden-corner run).
SAME_TOKEN_RATE = 0.9


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
    # How the id was read: "cells" (the fast reader) or "fit" (the codes fitted to the
    # pixels, ``vision.token_fit``), with the fit's evidence for it over the next id.
    method: str = "cells"
    evidence: float | None = None


@dataclass
class TokenReading:
    """What the camera says about the tokens of one frame."""

    tokens: dict[int, str] = field(default_factory=dict)  # rider -> space id
    jerseys: dict[int, str] = field(default_factory=dict)  # jersey id (20..50) -> space id
    unplaced: list[int] = field(default_factory=list)  # seen off the track
    unclear: dict[int, list[str]] = field(default_factory=dict)  # seen, space in doubt
    missing: list[int] = field(default_factory=list)  # expected but not seen
    unexpected: list[int] = field(default_factory=list)  # seen, but not among the expected
    sightings: list[Sighting] = field(default_factory=list)


# --- mapping a point to a space -----------------------------------------------


class TrackIndex:
    """The spaces' outlines of a board, for point -> space queries."""

    def __init__(self, board: Board):
        self.ids = list(board.spaces)
        self.polys = [space_polygon(board.spaces[s]).astype(np.float32) for s in self.ids]
        self.has_polygons = all(board.spaces[s].polygon_mm for s in self.ids)
        self.centers = np.array([board.spaces[s].center_mm for s in self.ids], float)
        if self.has_polygons:
            sizes = [float(np.sqrt(cv2.contourArea(p))) for p in self.polys]
            self.typical = float(np.median(sizes)) if sizes else 25.0
        elif len(self.centers) > 1:  # the usual distance between neighbouring centres
            d = np.linalg.norm(self.centers[:, None] - self.centers[None], axis=2)
            np.fill_diagonal(d, np.inf)
            self.typical = float(np.median(d.min(axis=1)))
        else:
            self.typical = 25.0

    def locate(self, pt: tuple[float, float], margin_mm: float = MARGIN_MM,
               ) -> tuple[str, str | None, tuple[str, ...]]:
        """("placed", space, ()), ("unclear", None, candidates) or ("unplaced", None, ())."""
        p = np.asarray(pt, float)
        d2 = np.sum((self.centers - p) ** 2, axis=1)
        near = np.argsort(d2)[:8]
        if not self.has_polygons:
            # Nearest centre within a tolerance; unclear when two are about as near.
            d = np.sqrt(d2[near])
            if d[0] > 0.75 * self.typical:
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


@dataclass
class _Spots:
    """Board-mm spots with a token's local contrast, strongest first: ``strong`` (a clear
    rim), ``pale`` (at most ``MAX_PALE``, a pale rim round a darker centre), and on demand
    ``relaxed()``: every other spot with a marker's dark centre, for a second look."""

    strong: list[tuple[float, float]]
    pale: list[tuple[float, float]]
    _maps: _Contrasts
    _kd: int
    _extra_mm: float

    def relaxed(self, limit: int, away_from: Sequence[tuple[float, float]] = (),
                clear_mm: float = 0.0) -> list[tuple[float, float]]:
        """Up to ``limit`` spots, strongest first, with at least the ``RELAXED`` rim, marker
        and cells contrasts (the strong and pale spots again, and fainter ones), none
        within ``clear_mm`` of a point of ``away_from`` (tokens already read)."""
        m = self._maps
        rr, rd, rc = RELAXED
        ok = (m.ring >= rr) & (m.dark >= rd) & (m.cells >= rc) & ~m.masked
        score = np.where(ok, m.ring + m.dark, np.float32(0))
        top = _local_maxima(m.ys, m.xs, score, m.shape, self._kd)
        e = self._extra_mm
        out: list[tuple[float, float]] = []
        for i in top[np.argsort(-score[top])]:
            p = ((m.xs[i] + 0.5) / RECT_PPM - e, (m.ys[i] + 0.5) / RECT_PPM - e)
            if all(math.dist(p, q) >= clear_mm for q in away_from):
                out.append(p)
                if len(out) >= limit:
                    break
        return out


@dataclass(frozen=True)
class _Contrasts:
    """A token's contrasts at the pixels of the top-down view where it may be (a dark
    enough centre; everywhere else it cannot): their rows and columns (row-major), the
    rim, marker and cells contrasts, and which lie where no token can (``masked``)."""

    shape: tuple[int, int]
    ys: np.ndarray
    xs: np.ndarray
    ring: np.ndarray
    dark: np.ndarray
    cells: np.ndarray
    masked: np.ndarray


def _local_maxima(ys: np.ndarray, xs: np.ndarray, score: np.ndarray, shape: tuple[int, int],
                  kd: int) -> np.ndarray:
    """The indices of the points (rows ``ys``, columns ``xs``) whose positive ``score`` is
    the largest within a ``kd`` x ``kd`` window (ties all kept), every other pixel of
    the ``shape`` scoring 0."""
    idx = np.flatnonzero(score > 0)
    if len(idx) == 0:
        return idx
    y, x, v = ys[idx], xs[idx], score[idx].astype(np.float32)
    dense = np.zeros(shape, np.float32)
    dense[y, x] = v
    peak = cv2.dilate(dense, cv2.getStructuringElement(cv2.MORPH_RECT, (kd, kd)))
    return idx[v >= peak[y, x]]


def _contrasts(rect: np.ndarray, sticker_px: float, s: float, min_dark: float) -> _Contrasts:
    """A token's contrasts in the top-down view ``rect`` (uint8, ``s`` px/mm) for stickers
    ``sticker_px`` across, at every pixel whose marker contrast reaches ``min_dark``.

    Rim: the white of the sticker (between the marker and the sticker's edge) against
    the darker rider base just outside it, from box means; marker: the dark marker
    inside the white; cells: the spread of its black and white cells; each relative to
    the sticker's white. The marker contrast is found first at every pixel (three box
    filters), the rest only where it is high enough (a few percent of the view), from
    integral images of the view padded as the box filters pad it.
    """
    H, W = rect.shape
    r = sticker_px / 2
    (i0, i1), (o0, o1) = [(max(1, int(round(2 * r0)) | 1), max(3, int(round(2 * r1)) | 1))
                          for r0, r1 in ((0.65 * r, 0.95 * r), (r + 0.5 * s, r + RIM_MM * s))]
    k = max(3, int(round(0.45 * sticker_px)) | 1)  # the marker's box
    di = float(i1 * i1 - i0 * i0)
    inner = cv2.addWeighted(cv2.boxFilter(rect, cv2.CV_32F, (i1, i1), normalize=False), 1 / di,
                            cv2.boxFilter(rect, cv2.CV_32F, (i0, i0), normalize=False), -1 / di,
                            0.0)
    centre = cv2.boxFilter(rect, cv2.CV_32F, (k, k))
    # dark = (inner - centre) / (inner + 10) >= t  <=>  (1 - t) inner - centre >= 10 t
    t = min_dark - 0.01  # a little wider: the exact test follows, point by point
    test = cv2.addWeighted(inner, 1.0 - t, centre, -1.0, -10.0 * t)
    pts = cv2.findNonZero(np.greater_equal(test, 0).view(np.uint8))
    pts = np.zeros((0, 2), np.int32) if pts is None else pts.reshape(-1, 2)
    xs, ys = pts[:, 0].astype(np.intp), pts[:, 1].astype(np.intp)
    at = ys * W + xs
    inn, cen = inner.ravel()[at], centre.ravel()[at]
    # Box sums of any size at the points, from integral images of the view padded by
    # reflection (BORDER_REFLECT_101, as the box filters above).
    pad = max(o1, k) // 2 + 1
    sums, sqsums = cv2.integral2(cv2.copyMakeBorder(rect, pad, pad, pad, pad,
                                                    cv2.BORDER_REFLECT_101), sdepth=cv2.CV_32S)
    stride = sums.shape[1]
    base = (ys + pad) * stride + (xs + pad)  # the point in the tables (flat)

    def box(table: np.ndarray, kk: int) -> np.ndarray:
        flat = table.ravel()
        a = base - (kk // 2) * (stride + 1)  # the box's top left corner
        c = a + kk * stride
        return (flat[c + kk] - flat[a + kk] - flat[c] + flat[a]).astype(np.float64)

    do = float(o1 * o1 - o0 * o0)
    outer = ((box(sums, o1) - box(sums, o0)) / do).astype(np.float32)
    sq = (box(sqsums, k) / (k * k)).astype(np.float32)
    spread = np.sqrt(np.maximum(sq - cen * cen, 0))
    inv = np.float32(1.0) / (inn + np.float32(10.0))
    dark = (inn - cen) * inv
    keep = dark >= min_dark
    ys, xs = ys[keep], xs[keep]
    return _Contrasts((H, W), ys, xs, ((inn - outer) * inv)[keep], dark[keep],
                      (spread * inv)[keep], np.zeros(len(ys), bool))


def _candidates(gray: np.ndarray, pose: BoardPose, board: Board, extra_mm: float,
                sticker_mm: float) -> _Spots:
    """Board-mm spots with a token's local contrast (see :class:`_Spots`)."""
    w_mm, h_mm = board.size_mm
    s = RECT_PPM
    A = np.array([[s, 0, s * extra_mm - 0.5], [0, s, s * extra_mm - 0.5], [0, 0, 1.0]])
    assert pose.H is not None
    W, H = int((w_mm + 2 * extra_mm) * s), int((h_mm + 2 * extra_mm) * s)
    rect = cv2.warpPerspective(gray, A @ pose.H, (W, H), flags=cv2.INTER_AREA,
                               borderMode=cv2.BORDER_REPLICATE)
    m = _contrasts(rect, sticker_mm * s, s, min(MIN_DARK, MIN_DARK_PALE, PALE[1], RELAXED[1]))
    # Ignore the corner markers and the margin round them where a token's centre
    # cannot be (less than a sticker's radius from the marker).
    for mk in board.markers.values():
        q = min(0.4 * mk.side_mm, 0.4 * sticker_mm)
        x0, y0 = int((mk.x_mm - q + extra_mm) * s), int((mk.y_mm - q + extra_mm) * s)
        x1 = int((mk.x_mm + mk.side_mm + q + extra_mm) * s) + 1
        y1 = int((mk.y_mm + mk.side_mm + q + extra_mm) * s) + 1
        m.masked[(m.ys >= y0) & (m.ys < y1) & (m.xs >= x0) & (m.xs < x1)] = True
    ring_c, dark_c, cells_c = m.ring, m.dark, m.cells
    score = ring_c + dark_c
    # A pale rim (blurred at 1 px/mm) is let in with a darker marker, or a paler
    # marker with a clear rim, as long as both together are strong: the board's
    # own prints seldom are (``PALE``: rim, marker, rim + marker, cells).
    pale = (ring_c < MIN_RING) | (dark_c < MIN_DARK) | (cells_c < MIN_CELLS)
    pr, pd, ps, pc = PALE
    pale_ok = (((ring_c >= MIN_RING_PALE) & (dark_c >= MIN_DARK_PALE))
               | ((score >= ps) & (ring_c >= pr) & (dark_c >= pd))) & (cells_c >= pc)
    score[(pale & ~pale_ok) | m.masked] = 0
    kd = max(3, int(round(0.7 * sticker_mm * s)) | 1)
    top = _local_maxima(m.ys, m.xs, score, (H, W), kd)
    order = top[np.argsort(-score[top])]
    strong = [i for i in order if not pale[i]][:MAX_CANDIDATES]
    weak = [i for i in order if pale[i]][:MAX_PALE]

    def mm(i: int) -> tuple[float, float]:
        return ((m.xs[i] + 0.5) / s - extra_mm, (m.ys[i] + 0.5) / s - extra_mm)

    return _Spots([mm(i) for i in strong], [mm(i) for i in weak], m, kd, extra_mm)


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
    patch = cv2.warpPerspective(gray, M, (n, n), flags=cv2.INTER_CUBIC | cv2.WARP_INVERSE_MAP,
                                borderMode=cv2.BORDER_REPLICATE)
    return patch.astype(np.float32), P


def _angle(patch: np.ndarray, radius_px: float) -> float:
    """The marker's angle (mod 90 degrees) from the orientations of its edges.

    The mean of exp(4i phi) over the gradients within ``radius_px`` of the patch
    centre, weighted by the squared gradient magnitude m^2; with a = gx^2 - gy^2 and
    b = 2 gx gy, m^2 exp(4i phi) = (a + ib)^2 / m^2 (no angles computed).
    """
    gx = cv2.Sobel(patch, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(patch, cv2.CV_32F, 0, 1, ksize=3)
    a = gx * gx - gy * gy
    b = 2.0 * gx * gy
    m2 = gx * gx + gy * gy
    k = _disc(patch.shape[0], radius_px) / np.maximum(m2, 1e-12)
    return float(math.atan2(float(np.sum(2.0 * a * b * k)), float(np.sum((a * a - b * b) * k))) / 4)


@lru_cache(maxsize=8)
def _disc(n: int, radius_px: float) -> np.ndarray:
    """1 within ``radius_px`` of the centre of an n x n patch, else 0 (float32)."""
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) - (n - 1) / 2
    return (xx * xx + yy * yy < radius_px**2).astype(np.float32)


def _angle_patch_mm(side_mm: float) -> float:
    """Half the side (mm) of the patch the angle is measured on: the disc of
    ``_angle`` (0.6 marker sides) and 2 px for the Sobel kernel, on the grid of the
    reading patch (an even number of pixels fewer, so the pixels coincide)."""
    return (math.ceil(0.6 * side_mm * PATCH_PPM) + 2) / PATCH_PPM


def _square_centre(prof: np.ndarray, side_px: float, reach: float) -> float:
    """Where a dark run ``side_px`` long is centred in a darkness profile (to half a pixel).

    Only centres within ``reach`` px of the profile's middle are considered.
    """
    n = len(prof)
    cs = np.concatenate([[0.0], np.cumsum(prof)])
    c, ia, ib, na, la, lb, nl, ra, rb, nr = _centre_index(n, side_px, reach)
    if len(c) == 0:
        return n / 2
    v = (cs[ib] - cs[ia]) / na - 0.5 * ((cs[lb] - cs[la]) / nl + (cs[rb] - cs[ra]) / nr)
    return float(c[int(np.argmax(v))])


@lru_cache(maxsize=16)
def _centre_index(n: int, side_px: float, reach: float) -> tuple[np.ndarray, ...]:
    """For :func:`_square_centre`: the centres tried, and for the run and the two
    edges beside it the cumulative-sum indices of their ends and their lengths."""
    half = side_px / 2
    edge = 0.35 * side_px
    mid = (n - 1) / 2
    c = np.arange(max(half, mid - reach), min(n - half, mid + reach) + 1e-9, 0.5)

    def ends(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ia = np.clip(np.round(a), 0, n).astype(int)
        ib = np.clip(np.round(b), 0, n).astype(int)
        return ia, ib, np.maximum(1, ib - ia).astype(float)

    return (c, *ends(c - half, c + half), *ends(c - half - edge, c - half),
            *ends(c + half, c + half + edge))


def read_token(gray: np.ndarray, pose: BoardPose, at_mm: tuple[float, float],
               side_mm: float) -> tuple[int, tuple[float, float], float] | None:
    """Read the token near a board point: (id, centre mm, score) or None."""
    got = _read_scores(gray, pose, at_mm, side_mm)
    if got is None:
        return None
    per_id, c_mm, _ = got
    tid, score, second = _decide(per_id, np.ones(len(TOKEN_IDS), bool))
    _LAST["score"], _LAST["second"] = score, second
    if score < MIN_SCORE or score - second < MIN_MARGIN:
        return None
    return tid, c_mm, score


_ID_INDEX = {t: k for k, t in enumerate(TOKEN_IDS)}


def _decide(per_id: np.ndarray, allowed: np.ndarray) -> tuple[int, float, float]:
    """The best allowed id, its score and the best score of another allowed id."""
    s = np.where(allowed, per_id, -np.inf)
    order = np.argsort(-s)
    second = float(s[order[1]]) if len(s) > 1 and np.isfinite(s[order[1]]) else -1.0
    return TOKEN_IDS[int(order[0])], float(s[order[0]]), second


def _read_scores(gray: np.ndarray, pose: BoardPose, at_mm: tuple[float, float],
                 side_mm: float) -> tuple[np.ndarray, tuple[float, float], float] | None:
    """The correlation of the token near a board point with every token id (``TOKEN_IDS``
    order, best over rotations and blurs, at the clearest of the tried poses), its
    centre in mm and the angle of its cell grid (radians, mod 90 degrees, against the
    board's x axis); None when no marker-like square is there."""
    half = side_mm * STICKER_RATE / 2 + 2.0
    side_px = side_mm * PATCH_PPM
    at = at_mm
    half_angle = _angle_patch_mm(side_mm)
    for _ in range(2):
        theta = _angle(_patch(gray, pose, at, half_angle)[0], 0.6 * side_px)
        patch, P = _patch(gray, pose, at, half, theta)
        n = patch.shape[0]
        dark = 255.0 - patch
        band = int(max(2, 0.3 * side_px))
        mid = n // 2
        reach = 0.45 * side_px  # the candidate is within a few mm of the token's centre
        cx = _square_centre(dark[mid - band:mid + band].mean(axis=0), side_px, reach)
        cy = _square_centre(dark[:, max(0, int(cx) - band):int(cx) + band].mean(axis=1),
                            side_px, reach)
        cx = _square_centre(dark[max(0, int(cy) - band):int(cy) + band].mean(axis=0),
                            side_px, reach)
        q = P @ np.array([cx, cy, 1.0])
        new_at = (float(q[0] / q[2]), float(q[1] / q[2]))
        moved = math.dist(new_at, at)
        at = new_at
        if moved < 0.15 * side_mm:
            break
    cell = side_px / 6
    integral = cv2.integral(patch, sdepth=cv2.CV_64F)
    bank, rows, blurs = _bank(side_mm)
    # Only blurs the camera can produce at this scale: 0.25-2 px of the frame.
    scale = pose.px_per_mm(at)
    ok = (blurs >= 0.25 / scale - 0.2) & (blurs <= 2.0 / scale + 0.2)
    bank, rows = bank[ok], rows[ok]
    best_read: tuple[float, np.ndarray, float, float, float] | None = None
    # Read at the estimated pose; when that is not clear, try small corrections of the
    # angle and centre and keep the clearest read.
    tries = [(0.0, 0.0, 0.0)] + [(dt, ddx, ddy) for dt in (-0.05, 0.0, 0.05)
                                 for ddx, ddy in ((0, 0), (-0.15, 0), (0.15, 0), (0, -0.15),
                                                  (0, 0.15)) if (dt, ddx, ddy) != (0, 0, 0)]
    _LAST.clear()
    # The first pose alone (most reads are clear there), then the corrections at once.
    for batch in (tries[:1], tries[1:]):
        dts = np.array([t[0] for t in batch])
        xs = cx + np.array([t[1] for t in batch]) * cell
        ys = cy + np.array([t[2] for t in batch]) * cell
        obs, inside = _sample_many(integral, xs, ys, cell, dts)
        fails, scores = _judge(obs, bank)
        done = False
        for k in range(len(batch)):
            if not inside[k]:
                _LAST["off"] = _LAST.get("off", 0) + 1
                continue
            fail = fails[k]
            if fail is not None:
                _LAST[fail[0]] = fail[1]
                continue
            if scores is None or not np.isfinite(scores[k, 0]):
                continue
            b = int(np.argmax(scores[k]))
            if best_read is None or scores[k, b] > best_read[0]:
                per_id = np.full(len(TOKEN_IDS), -1.0)
                np.maximum.at(per_id, rows, scores[k])
                best_read = (float(scores[k, b]), per_id, float(xs[k]), float(ys[k]),
                             theta + float(dts[k]))
                second = float(np.sort(per_id)[-2])
                if best_read[0] > 0.95 and best_read[0] - second > 0.2:
                    done = True  # clear enough
                    break
        if done:
            break
    if best_read is None:
        return None
    _, per_id, fx, fy, turn = best_read
    c_mm = P @ np.array([fx, fy, 1.0])
    return per_id, (float(c_mm[0] / c_mm[2]), float(c_mm[1] / c_mm[2])), turn


_LAST: dict[str, float] = {}  # the last read's scores (for calibration)


@lru_cache(maxsize=16)
def _grid_points(cell: float) -> np.ndarray:
    """Offsets (from the marker centre) of the 6x6 cell centres, then 12 points on the white."""
    pts = [((j - 2.5) * cell, (i - 2.5) * cell) for i in range(6) for j in range(6)]
    for t in np.linspace(0, 2 * math.pi, 12, endpoint=False):
        rr = 4.0 * cell
        pts.append((rr * math.cos(t), rr * math.sin(t)))
    return np.array(pts)


_INNER = np.array([i * 6 + j for i in range(1, 5) for j in range(1, 5)])
_BORDER = np.array([i * 6 + j for i in range(6) for j in range(6) if i in (0, 5) or j in (0, 5)])
_MEDIAN = [len(_BORDER) // 2 - 1, len(_BORDER) // 2]  # the middle of the 20 border cells


def _sample_cells(integral: np.ndarray, cx: float, cy: float, cell: float,
                  turn: float = 0.0) -> np.ndarray | None:
    """Mean of a small window at every grid point (48 values), or None off the patch.

    ``integral`` is the patch's integral image; ``turn`` rotates the grid (radians).
    """
    n = integral.shape[0] - 1
    r = max(1, int(cell * 0.25))
    pts = _grid_points(cell)
    if turn:
        c, s = math.cos(turn), math.sin(turn)
        pts = pts @ np.array([[c, s], [-s, c]])
    xi = np.round(cx + pts[:, 0]).astype(int)
    yi = np.round(cy + pts[:, 1]).astype(int)
    if xi.min() < r or yi.min() < r or xi.max() >= n - r or yi.max() >= n - r:
        return None
    x0, x1, y0, y1 = xi - r, xi + r + 1, yi - r, yi + r + 1
    tot = integral[y1, x1] - integral[y0, x1] - integral[y1, x0] + integral[y0, x0]
    return np.asarray(tot / float((2 * r + 1) ** 2))


def _sample_many(integral: np.ndarray, cxs: np.ndarray, cys: np.ndarray, cell: float,
                 turns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_sample_cells` for several grid poses at once: (T, 48) means and which
    poses lie inside the patch (the others' rows are meaningless)."""
    n = integral.shape[0] - 1
    r = max(1, int(cell * 0.25))
    pts = _grid_points(cell)
    c, s = np.cos(turns)[:, None], np.sin(turns)[:, None]
    xi = np.round(cxs[:, None] + (pts[None, :, 0] * c - pts[None, :, 1] * s)).astype(int)
    yi = np.round(cys[:, None] + (pts[None, :, 0] * s + pts[None, :, 1] * c)).astype(int)
    inside = ((xi.min(1) >= r) & (yi.min(1) >= r) & (xi.max(1) < n - r) & (yi.max(1) < n - r))
    xi, yi = np.clip(xi, r, n - r - 1), np.clip(yi, r, n - r - 1)
    x0, x1, y0, y1 = xi - r, xi + r + 1, yi - r, yi + r + 1
    tot = integral[y1, x1] - integral[y0, x1] - integral[y1, x0] + integral[y0, x0]
    return tot / float((2 * r + 1) ** 2), inside


def _judge(obs: np.ndarray, bank: np.ndarray,
           ) -> tuple[list[tuple[str, float] | None], np.ndarray | None]:
    """For each row of grid samples (T, 48): why it is no marker (a reason and its value,
    or None when it is one: a dark square on a white sticker, a dark border all round,
    a white ring all round) and its correlation with every row of ``bank`` (NaN where
    its inner cells are flat)."""
    border = obs[:, _BORDER]
    ring = np.sort(obs[:, 36:], axis=1)
    mid = np.partition(border, _MEDIAN, axis=1)[:, _MEDIAN]
    black = (mid[:, 0] + mid[:, 1]) / 2
    white = ring[:, 6:].mean(axis=1)
    span = white - black
    dark_border = np.count_nonzero(border - black[:, None] < 0.5 * span[:, None], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ring_white = (ring[:, 2] - black) / span
    fails: list[tuple[str, float] | None] = []
    for k in range(len(obs)):
        if span[k] < 20:
            fails.append(("contrast", float(span[k])))
        elif dark_border[k] < 0.8 * border.shape[1]:
            fails.append(("border", float(dark_border[k])))
        elif ring_white[k] < MIN_RING_WHITE:
            fails.append(("ring", float(ring_white[k])))
        else:
            fails.append(None)
    if all(f is not None for f in fails):
        return fails, None
    v = obs[:, _INNER] - obs[:, _INNER].mean(axis=1, keepdims=True)
    norm = np.linalg.norm(v, axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        unit = np.where(norm >= 1e-6, v / norm, np.nan)
    return fails, unit @ bank.T


@lru_cache(maxsize=4)
def _bank(side_mm: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the 48 grid samples of every token code look like under several blurs.

    Rows are zero mean and unit norm (for a correlation); with each row's id (its index in
    ``TOKEN_IDS``) and blur (mm).
    """
    side_px = side_mm * PATCH_PPM
    cell = side_px / 6
    o = 4  # oversampling of the drawn marker
    n = int(round(side_px * 1.8))
    c = (n - 1) / 2
    rows, ids, blurs = [], [], []
    for tid in TOKEN_IDS:
        cells = marker_cells(tid)
        for k in range(4):
            rot = np.rot90(cells, k)
            big = np.full((n * o, n * o), 255.0, np.float32)
            x0 = (c + 0.5) * o - 3 * cell * o
            for i in range(6):
                for j in range(6):
                    if rot[i, j]:
                        big[int(round(x0 + i * cell * o)):int(round(x0 + (i + 1) * cell * o)),
                            int(round(x0 + j * cell * o)):int(round(x0 + (j + 1) * cell * o))] = 0
            img = cv2.resize(big, (n, n), interpolation=cv2.INTER_AREA)
            for sigma_mm in BLURS_MM:
                t = cv2.GaussianBlur(img, (0, 0), sigma_mm * PATCH_PPM) if sigma_mm else img
                obs = _sample_cells(cv2.integral(t, sdepth=cv2.CV_64F), c, c, cell)
                assert obs is not None
                v = obs[_INNER] - obs[_INNER].mean()
                rows.append(v / np.linalg.norm(v))
                ids.append(_ID_INDEX[tid])
                blurs.append(sigma_mm)
    return np.array(rows), np.array(ids), np.array(blurs)


def _settle(weak: list[tuple[np.ndarray, tuple[float, float]]],
            found: dict[int, list[tuple[tuple[float, float], float]]], expected: list[int],
            side_mm: float,
            refuted: Callable[[int, tuple[float, float]], bool] | None = None,
            ) -> list[tuple[int, tuple[float, float], float]]:
    """Name the reads that were not clear among all token ids, among the ids still open.

    The session knows which tokens are on the table (``expected``) and each id is on one
    token only: an id read clearly elsewhere, or not in the game, is out. A weak read is
    named when its best open id scores ``MIN_SCORE`` and beats every other open id by
    ``MIN_MARGIN`` (the same margin a clear read needs over all ids), and is not far below
    the best of all ids. Clearest first; an id named is then out for the others.
    ``refuted(id, centre)``, when given, is asked last for a read below ``CLEAR_SCORE``:
    True leaves the read unnamed and the id open (``read_tokens`` passes the fit of the
    codes to the pixels: a read the fit names another id, or where no clean token fits,
    is left to the second look).
    """
    open_ids = np.array([t in expected and t not in found for t in TOKEN_IDS])
    taken: list[tuple[float, float]] = [c for v in found.values() for c, _ in v]
    apart = _apart_mm(side_mm)
    ranked = []
    for per_id, c in weak:
        if any(math.dist(c, o) < apart for o in taken):
            continue  # the edge of a token read clearly (or a ghost on it)
        tid, score, second = _decide(per_id, open_ids)
        ranked.append((score - second, per_id, c))
    ranked.sort(key=lambda r: -r[0])
    out: list[tuple[int, tuple[float, float], float]] = []
    looked: list[tuple[float, float]] = []
    for _, per_id, c in ranked:
        if any(math.dist(c, o) < apart for o in taken) or \
                any(math.dist(c, o) < 0.8 * side_mm for o in looked):
            continue
        looked.append(c)
        tid, score, second = _decide(per_id, open_ids)
        if (score < MIN_SCORE or score - second < MIN_MARGIN
                or score < float(per_id.max()) - WEAK_BELOW):
            continue
        if score < CLEAR_SCORE and refuted is not None and refuted(tid, c):
            continue
        open_ids[_ID_INDEX[tid]] = False
        taken.append(c)
        out.append((tid, c, score))
    return out


def _apart_mm(side_mm: float) -> float:
    """How far apart two tokens' centres are at least: stickers cannot overlap. A read
    nearer than this to a token already read is that token's edge, or a ghost on it
    (``SAME_TOKEN_RATE`` sticker diameters)."""
    return SAME_TOKEN_RATE * STICKER_RATE * side_mm


@dataclass(frozen=True)
class _Read:
    """A marker-like square the fast reader could not name: its correlation with every
    id (``TOKEN_IDS`` order), its centre (mm) and the angle of its cells."""

    per_id: np.ndarray
    center_mm: tuple[float, float]
    turn: float


def _second_look(gray: np.ndarray, pose: BoardPose, spots: _Spots,
                 found: dict[int, list[tuple[tuple[float, float], float]]], unnamed: list[_Read],
                 expected: list[int] | None, side_mm: float,
                 ) -> list[tuple[int, tuple[float, float], float, FitRead]]:
    """Fit the codes to the pixels (``vision.token_fit``) where a token may still be unread.

    With ``expected``, only while tokens of the game are unread: the squares the fast
    reader could not name, then fainter spots (``_Spots.relaxed``), likeliest first (by
    their correlation with the ids still open); a fit names an open id only. Without
    ``expected``, the squares not named. At most ``MAX_FITS`` fits a frame. Returns
    (id, centre mm, correlation of that id, the fit) for each token named.
    """
    if expected is None:
        open_ids = np.array([t not in found for t in TOKEN_IDS])
    else:
        open_ids = np.array([t in expected and t not in found for t in TOKEN_IDS])
    if not open_ids.any() or pose.H is None:
        return []
    seen = [c for v in found.values() for c, _ in v]
    apart = _apart_mm(side_mm)
    looks = [r for r in unnamed if all(math.dist(r.center_mm, c) >= apart for c in seen)]
    if expected is not None:
        for spot in spots.relaxed(RELAXED_SPOTS, seen, apart):
            if any(math.dist(spot, r.center_mm) < 0.8 * side_mm for r in looks):
                continue
            got = _read_scores(gray, pose, spot, side_mm)
            if got is not None:
                looks.append(_Read(*got))
    looks.sort(key=lambda r: -float(np.max(np.where(open_ids, r.per_id, -1.0))))
    out: list[tuple[int, tuple[float, float], float, FitRead]] = []
    H, Hi = pose.H, pose.H_inv
    clear = [(tid, c) for tid, v in found.items() for c, _ in v]
    blur_of: dict[int, float | None] = {}  # the camera's blur measured on clear tokens

    def blur_near(at: tuple[float, float]) -> float | None:
        """The blur (px) of the fit of the nearest token read clearly (of the 3 nearest
        that give a clear fit of their own id)."""
        for tid, c in sorted(clear, key=lambda tc: math.dist(tc[1], at))[:3]:
            if tid not in blur_of:
                blur_of[tid] = None
                got = _read_scores(gray, pose, c, side_mm)
                if got is not None:
                    ref = fit_token(gray, H, Hi, got[1], got[2], side_mm)
                    if ref is not None and ref.id == tid and ref.evidence >= FIT_EVIDENCE:
                        blur_of[tid] = ref.blur_px
            if blur_of[tid] is not None:
                return blur_of[tid]
        return None

    for r in looks[:MAX_FITS]:
        if any(math.dist(r.center_mm, c) < apart for c in seen):
            continue
        fit = fit_token(gray, H, Hi, r.center_mm, r.turn, side_mm)
        if fit is None or fit.evidence < FIT_EVIDENCE or fit.quality < FIT_QUALITY:
            continue
        k = _ID_INDEX[fit.id]
        if not open_ids[k]:
            continue  # read elsewhere already, or not in the game: not named here
        if open_ids[_ID_INDEX[fit.runner_up]] and fit.evidence < FIT_EVIDENCE_OPEN:
            continue  # the next-best id is unread too: too close to call
        if any(math.dist(fit.center_mm, c) < apart for c in seen):
            continue  # the fit walked onto a token already read
        # A dark smudge fits best as a marker blurred beyond recognition: the blur must be
        # the camera's, as a token read clearly nearby shows it.
        ref_blur = blur_near(fit.center_mm)
        if ref_blur is None or abs(fit.blur_px - ref_blur) > BLUR_TOLERANCE_PX:
            continue
        open_ids[k] = False
        seen.append(fit.center_mm)
        out.append((fit.id, fit.center_mm, float(r.per_id[k]), fit))
        if not open_ids.any():
            break
    return out


def read_tokens(image: np.ndarray, board: Board, pose: BoardPose, *,
                expected: list[int] | None = None, side_mm: float = 10.0,
                margin_mm: float = MARGIN_MM, gray: np.ndarray | None = None,
                extra_mm: float = 30.0, height_mm: float = 0.0) -> TokenReading:
    """The tokens of a frame whose board was located (see the module doc).

    ``expected`` lists the token ids the session knows are on the table (jersey
    pieces included): those not seen are ``missing`` (a hand over them: ask
    for another look), ids seen but not listed are ``unexpected``.
    ``height_mm`` is how high the stickers sit above the board (on top of the
    riders): a tilted camera sees them shifted away from itself, by up to
    height x tan(viewing angle); the shift is taken back using the camera
    position found from the board (``vision.board.camera_centre``).
    """
    out = TokenReading()
    if not pose.found or pose.H is None:
        out.missing = sorted(expected or [])
        return out
    g = gray if gray is not None else to_gray(image)
    index = track_index(board)
    cam = camera_centre(pose, (g.shape[1], g.shape[0])) if height_mm > 0 else None
    found: dict[int, list[tuple[tuple[float, float], float]]] = {}
    weak: list[tuple[np.ndarray, tuple[float, float]]] = []  # reads not clear on their own
    unnamed: list[_Read] = []  # reads of a marker-like square that named no id
    fitted: dict[int, FitRead] = {}
    spots = _candidates(g, pose, board, extra_mm, side_mm * STICKER_RATE)
    for n, cand in enumerate(spots.strong + spots.pale):
        if n == len(spots.strong) and expected is not None and all(t in found for t in expected):
            break  # every token in the game read clearly: the pale spots are not needed
        if any(math.dist(cand, c) < 0.8 * side_mm for v in found.values() for c, _ in v):
            continue  # already read from a nearby candidate
        got = _read_scores(g, pose, cand, side_mm)
        if got is None:
            continue
        per_id, c, turn = got
        tid, score, second = _decide(per_id, np.ones(len(TOKEN_IDS), bool))
        # With the tokens in the game known, a read below CLEAR_SCORE waits for the
        # clear ones and is then named among the ids still open (``_settle``).
        clear = MIN_SCORE if expected is None else CLEAR_SCORE
        if score >= clear and score - second >= MIN_MARGIN:
            found.setdefault(tid, []).append((c, score))
            continue
        if score >= MIN_SCORE:
            weak.append((per_id, c))
        unnamed.append(_Read(per_id, c, turn))
    if expected is not None:
        turns = {r.center_mm: r.turn for r in unnamed}  # each weak read is unnamed too

        def refuted(tid: int, c: tuple[float, float]) -> bool:
            """The codes fitted to the pixels name another id clearly (a token too
            blurred for its cells can read best as another rider still unread: bench
            seed 1, scene 129 touching, rider 52's token read 34 at 0.89, 52 at 0.67;
            the fit names 52), or no clean token fits there (fingers over half a token
            read as a hidden rider: 32 on 41's token, hide_tokens seed 7000 scene 173)."""
            assert pose.H is not None
            fit = fit_token(g, pose.H, pose.H_inv, c, turns[c], side_mm)
            if fit is None:
                return False
            if fit.quality < FIT_QUALITY:
                return True  # no clean token there: a hand over half of it, say
            return fit.id != tid and fit.evidence >= FIT_EVIDENCE

        for tid, c, score in _settle(weak, found, expected, side_mm, refuted):
            found.setdefault(tid, []).append((c, score))
    for tid, c, score, fit_read in _second_look(g, pose, spots, found, unnamed, expected, side_mm):
        found.setdefault(tid, []).append((c, score))
        fitted[tid] = fit_read
    for tid, seen in sorted(found.items()):
        if expected is not None and tid not in expected:
            out.unexpected.append(tid)  # not in this game: a misread is likelier than a ghost
            continue
        (c, score) = max(seen, key=lambda cs: cs[1])
        px = pose.to_px(np.array([c]))[0]
        far = [s for s in seen if math.dist(s[0], c) > side_mm]
        if cam is not None and cam[2] > height_mm:
            # The sticker is seen where the camera's ray through it meets the board:
            # the rider stands nearer the camera's foot point, by height / camera height.
            k = height_mm / cam[2]
            c = (c[0] + (cam[0] - c[0]) * k, c[1] + (cam[1] - c[1]) * k)
        if far:  # the same id twice in different places
            out.unclear[tid] = []
            out.sightings.append(Sighting(tid, c, (float(px[0]), float(px[1])), score,
                                          "unclear"))
            continue
        # Where the board fit is weak (a corner marker hidden, the fit extrapolating
        # toward it), a point may be off by several mm: widen the doubt there.
        sigma = float(pose.fit_sigma_mm(np.array([c]))[0])
        m = margin_mm + FIT_SIGMAS * max(0.0, sigma - FIT_SIGMA_OK)
        status, space, cands = index.locate(c, m)
        how = fitted.get(tid)
        out.sightings.append(Sighting(tid, c, (float(px[0]), float(px[1])), score, status,
                                      space, cands, "cells" if how is None else "fit",
                                      None if how is None else round(how.evidence, 1)))
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
