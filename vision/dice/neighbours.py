"""Where to look for a die lying face to face with one already found.

Two dice thrown together often come to rest touching, one face against the
other. The detector then often sees the pair as one die: the second one gets
no proposal at all (synthetic table, dice face to face: about a third of the
second dice; docs/dice.md, "Dice face to face"). At a known die size the reader
looks for it itself (:meth:`vision.dice.reader.DiceReader._neighbours`):
beside a lone die it has read, at the distance of a die face to face with it,
all round, wherever something stands out from the surface there; the
classifier then decides, as strictly as for any weak proposal. This module
says where to look.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.dice.spots import CONTRAST

#: Round a probe point, what :func:`busyness` counts: the pixels within
#: ``BUSY_RADIUS`` dice of it (a die there: its outline and pips) that lie more
#: than ``BUSY_CLEAR`` dice from the lone die's centre (its own outline, corners
#: and shadow are not counted).
BUSY_RADIUS = 0.6
BUSY_CLEAR = 0.75
#: Dice larger than this (pixels) are shrunk to it first: pips and outlines
#: still stand out, at a fraction of the time.
BUSY_DIE_PX = 24.0


def probe_points(cx: float, cy: float, die_px: float, distance: float,
                 directions: int) -> list[tuple[float, float]]:
    """Centres ``distance`` dice from (cx, cy), ``directions`` of them evenly round."""
    return [(cx + distance * die_px * math.cos(a), cy + distance * die_px * math.sin(a))
            for a in (2 * math.pi * k / directions for k in range(directions))]


def grid_points(cx: float, cy: float, die_px: float, step: float, reach: tuple[float, float]
                ) -> list[tuple[float, float]]:
    """The points of a square grid ``step`` dice apart, centred on (cx, cy), that lie
    ``reach`` = (nearest, farthest) dice from it."""
    n = int(reach[1] / step)
    return [(cx + i * step * die_px, cy + j * step * die_px)
            for i in range(-n, n + 1) for j in range(-n, n + 1)
            if reach[0] <= math.hypot(i, j) * step <= reach[1]]


def points_around(cx: float, cy: float, x: float, y: float, die_px: float, turn: float,
                  reach: float = 0.1) -> list[tuple[float, float]]:
    """The 8 points round (x, y), a probe point of the die at (cx, cy): ``reach``
    dice nearer, as far and farther, and ``turn`` radians either way round the
    die: on the table's tilted views a pair lies about 0.95-1.2 dice apart, not
    always in one of the probed directions."""
    r0 = math.hypot(x - cx, y - cy) / die_px
    a0 = math.atan2(y - cy, x - cx)
    return [(cx + r * die_px * math.cos(a0 + t), cy + r * die_px * math.sin(a0 + t))
            for r in (r0 - reach, r0, r0 + reach) for t in (-turn, 0.0, turn)
            if r != r0 or t != 0.0]


def busyness(img: np.ndarray, centre: tuple[float, float],
             points: list[tuple[float, float]], die_px: float) -> list[float]:
    """For each point of ``img`` (BGR or grey, dice ``die_px`` across) round the die at
    ``centre``, the share of its surroundings (:data:`BUSY_RADIUS`,
    :data:`BUSY_CLEAR`) whose local contrast (the 3x3 spread of the most different
    colour channel) reaches ``spots.CONTRAST``: how much stands out from a plain
    surface there. Measured with dice shrunk to at most :data:`BUSY_DIE_PX` pixels
    (time). A point too near the image's border: 0."""
    reach = BUSY_RADIUS * die_px
    h, w = img.shape[:2]
    inside = [reach <= x < w - reach - 1 and reach <= y < h - reach - 1 for x, y in points]
    out = [0.0] * len(points)
    if not any(inside):
        return out
    xs = [p[0] for p, ok in zip(points, inside, strict=True) if ok]
    ys = [p[1] for p, ok in zip(points, inside, strict=True) if ok]
    x0, y0 = max(0, int(min(xs) - reach) - 1), max(0, int(min(ys) - reach) - 1)
    x1, y1 = min(w, int(max(xs) + reach) + 2), min(h, int(max(ys) + reach) + 2)
    patch = img[y0:y1, x0:x1]
    k = min(1.0, BUSY_DIE_PX / die_px)
    if k < 1.0:
        patch = cv2.resize(patch, (max(1, round(patch.shape[1] * k)),
                                   max(1, round(patch.shape[0] * k))),
                           interpolation=cv2.INTER_AREA)
    k3 = np.ones((3, 3), np.uint8)
    spread = cv2.subtract(cv2.dilate(patch, k3), cv2.erode(patch, k3))
    if spread.ndim == 3:
        spread = spread.max(axis=2)
    busy = spread >= CONTRAST
    ph, pw = busy.shape
    yy, xx = np.mgrid[0:ph, 0:pw].astype(np.float32)
    counted = np.hypot(xx - (centre[0] - x0) * k,
                       yy - (centre[1] - y0) * k) > BUSY_CLEAR * die_px * k
    r = max(2, int(round(reach * k)))
    disc = np.zeros((2 * r + 1, 2 * r + 1), np.uint8)
    cv2.circle(disc, (r, r), r, 1, -1)
    disc_b = disc.astype(bool)
    for i, ((x, y), ok) in enumerate(zip(points, inside, strict=True)):
        ix, iy = int(round((x - x0) * k)), int(round((y - y0) * k))
        if ok and r <= ix < pw - r and r <= iy < ph - r:
            window = (slice(iy - r, iy + r + 1), slice(ix - r, ix + r + 1))
            mask = disc_b & counted[window]
            out[i] = float(busy[window][mask].mean()) if mask.any() else 0.0
    return out
