"""A second, slower look at a token: fit every code, drawn as the camera sees it, to the pixels.

The fast reader (``vision.tokens``) samples a token's cells in a top-down
patch and correlates them with the codes. Seen at about 1 px/mm under blur and
a steep slant, a 10 mm marker is 9-11 px wide with cells under 2 px: the
samples of neighbouring cells run together and the best correlation can be
another id. This module reads such a token the other way round (analysis by
synthesis): for every token code in its four turns, it draws what the camera
would see - the black and white cells, the white sticker, the rim round it,
mapped through the board pose into the frame's own pixels (each pixel the
average of 3x3 points), blurred with a Gaussian of the camera's blur - and
fits that picture to the frame's pixels by least squares (four free grey
levels: black, white, rim, beyond). The token's centre, turn and the blur are
searched so that the best code fits best; the code that next best explains
the pixels gets a search of its own. The evidence for the best id over the
next is the log-likelihood ratio of the two fits under Gaussian pixel noise
(``FitRead.evidence``).

It costs some 10-40 ms a token, so ``vision.tokens`` calls it only for the
spots that may be a token of the game still unread.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from vision.markers import STICKER_RATE, TOKEN_IDS, marker_cells

SUB = 2  # points per pixel side averaged when a code is drawn into the frame's pixels
RIM_MM = 2.0  # the rider's top (or the printed rim) round the sticker: its own grey level
FIT_EXTRA_MM = 0.5  # pixels are compared up to this far beyond the sticker's edge
SIGMAS_PX = (0.7, 1.1, 1.5, 1.9)  # first guesses of the camera's blur (Gaussian sigma, px)
#: The pose search's steps, coarse to fine: centre (mm), turn (radians), blur (px).
STEPS = ((0.3, 0.06, 0.2), (0.15, 0.03, 0.1), (0.07, 0.015, 0.05))
MAX_SIDE_PX = 64  # a patch larger than this (a token seen large) is not worth a fit
_N_CLASSES = 39  # 36 cells, the sticker's white ring, the rim, beyond


@dataclass(frozen=True)
class FitRead:
    """The outcome of fitting the codes to one token.

    ``evidence`` is the log-likelihood ratio of the best id's fit over the
    next best id's (``runner_up``), with the pixel noise estimated from the
    best fit: 10 means the pixels are e^10 times likelier under ``id``.
    ``contrast`` is the fitted white minus black (grey levels) and ``noise``
    the best fit's residual (RMS, grey levels): a real token has a clear
    contrast and a residual near the camera's noise.
    """

    id: int
    center_mm: tuple[float, float]
    angle: float  # radians, of the marker's cell grid against the board's x axis (mod 90 deg)
    blur_px: float
    evidence: float
    runner_up: int
    contrast: float
    noise: float
    pixels: int

    @property
    def quality(self) -> float:
        """Contrast over residual noise: about 20-60 for a token, lower for a smudge."""
        return self.contrast / max(self.noise, 1e-6)


@lru_cache(maxsize=1)
def _codes() -> tuple[np.ndarray, np.ndarray]:
    """Every token code in its 4 turns: (80, 36) cells (1 = black) and the id of each row."""
    rows, ids = [], []
    for t in TOKEN_IDS:
        cells = marker_cells(t).astype(np.float64)
        for k in range(4):
            rows.append(np.rot90(cells, k).reshape(-1))
            ids.append(t)
    return np.array(rows), np.array(ids)


@lru_cache(maxsize=64)
def _kernel(sigma: float) -> np.ndarray:
    """A 1-D Gaussian kernel of ``sigma`` px (to 3 sigma)."""
    r = max(1, int(math.ceil(3 * sigma)))
    return cv2.getGaussianKernel(2 * r + 1, sigma, cv2.CV_32F)


@lru_cache(maxsize=1)
def _designs() -> np.ndarray:
    """(80, 39, 4): for every code, how its four grey levels (black, white, rim, beyond)
    are made of the 39 classes (36 cells, the white ring, the rim, beyond)."""
    codes, _ = _codes()
    M = np.zeros((len(codes), _N_CLASSES, 4))
    M[:, :36, 0] = codes
    M[:, :36, 1] = 1.0 - codes
    M[:, 36, 1] = 1.0
    M[:, 37, 2] = 1.0
    M[:, 38, 3] = 1.0
    return M


class _Problem:
    """One token's pixels and the geometry to draw codes into them."""

    def __init__(self, gray: np.ndarray, H: np.ndarray, Hi: np.ndarray, at_mm: tuple[float, float],
                 side_mm: float) -> None:
        self.side_mm = side_mm
        self.cell_mm = side_mm / 6
        self.r_mm = side_mm * STICKER_RATE / 2
        ext = self.r_mm + RIM_MM + 3.0
        cx, cy = at_mm
        box = np.array([[cx - ext, cy - ext], [cx + ext, cy - ext], [cx + ext, cy + ext],
                        [cx - ext, cy + ext]], np.float64)
        px = cv2.perspectiveTransform(box.reshape(-1, 1, 2), Hi).reshape(-1, 2)
        self.ok = bool(np.all(np.isfinite(px)))
        if not self.ok:
            return
        x0, y0 = (int(v) for v in np.floor(px.min(axis=0)))
        x1, y1 = (int(v) for v in np.ceil(px.max(axis=0)))
        h, w = gray.shape[:2]
        self.ok = (x0 >= 0 and y0 >= 0 and x1 < w and y1 < h
                   and max(x1 - x0, y1 - y0) < MAX_SIDE_PX and min(x1 - x0, y1 - y0) > 4)
        if not self.ok:
            return
        self.pixels = gray[y0:y1 + 1, x0:x1 + 1].astype(np.float64)
        self.h, self.w = self.pixels.shape
        o = (np.arange(SUB) + 0.5) / SUB - 0.5
        ou, ov = np.meshgrid(o, o)
        uu, vv = np.meshgrid(np.arange(self.w) + x0, np.arange(self.h) + y0)
        su = (uu[..., None] + ou.reshape(-1)).reshape(-1)
        sv = (vv[..., None] + ov.reshape(-1)).reshape(-1)
        pts = np.stack([su, sv], axis=1).reshape(-1, 1, 2)
        self.sub_mm = cv2.perspectiveTransform(pts, H).reshape(-1, 2)  # every point, board mm
        ctr = np.stack([uu.reshape(-1), vv.reshape(-1)], axis=1).astype(np.float64)
        self.pix_mm = cv2.perspectiveTransform(ctr.reshape(-1, 1, 2), H).reshape(-1, 2)
        # The width of one point's square in cells (at the token's centre).
        ppm = float(np.linalg.norm(px[1] - px[0])) / (2 * ext)
        self.spread = min(0.9, 1.0 / (SUB * ppm * self.cell_mm))
        self.pix_of_sub = np.repeat(np.arange(self.h * self.w), SUB * SUB) * _N_CLASSES
        self.codes, self.code_ids = _codes()
        self.y_all = self.pixels.reshape(-1)

    def coverage(self, cx: float, cy: float, theta: float) -> np.ndarray:
        """(h, w, 39): the share of each pixel on each cell, the white ring, the rim, beyond.

        Each point stands for a small square (``self.spread`` cells wide) and is shared
        between the cells it overlaps, so that the shares change smoothly with the pose
        (the pose search would stall on steps of whole points otherwise).
        """
        ex = self.sub_mm[:, 0] - cx
        ey = self.sub_mm[:, 1] - cy
        c, s = math.cos(theta), math.sin(theta)
        qx = (c * ex + s * ey) / self.cell_mm + 3.0
        qy = (-s * ex + c * ey) / self.cell_mm + 3.0
        r2 = ex * ex + ey * ey
        outer = np.where(r2 < self.r_mm ** 2, 36, np.where(r2 < (self.r_mm + RIM_MM) ** 2, 37, 38))
        half = self.spread / 2
        ix, iy = np.floor(qx), np.floor(qy)
        fx, fy = qx - ix, qy - iy
        # Share of the square over the cell's edge, toward the neighbour it overlaps.
        ax = np.clip((fx + half - 1.0) / self.spread, 0, 1) + np.clip((half - fx) / self.spread, 0, 1)
        ay = np.clip((fy + half - 1.0) / self.spread, 0, 1) + np.clip((half - fy) / self.spread, 0, 1)
        sx = np.where(fx >= 0.5, 1, -1)
        sy = np.where(fy >= 0.5, 1, -1)
        ix_i, iy_i = ix.astype(np.int64), iy.astype(np.int64)
        size = self.h * self.w * _N_CLASSES
        jx = np.concatenate([ix_i, ix_i + sx, ix_i, ix_i + sx])
        jy = np.concatenate([iy_i, iy_i, iy_i + sy, iy_i + sy])
        wgt = np.concatenate([(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay])
        inside = (jx >= 0) & (jx < 6) & (jy >= 0) & (jy < 6)
        # Off the marker's 6x6 cells, within the sticker: its white ring.
        cls = np.where(inside, np.clip(jy, 0, 5) * 6 + np.clip(jx, 0, 5),
                       np.tile(np.where(outer < 37, 36, outer), 4))
        counts = np.bincount(np.tile(self.pix_of_sub, 4) + cls, weights=wgt, minlength=size)
        return (counts.reshape(self.h, self.w, _N_CLASSES) / float(SUB * SUB)).astype(np.float32)

    def rss(self, cov: np.ndarray, cx: float, cy: float, sigma: float,
            rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
        """Residual sum of squares of every code (or ``rows`` of them) at one pose and blur,
        with the fitted grey levels (black, white, rim, beyond) of each; and the pixel count.

        Each code's picture is a mix of the 39 blurred class images (``B``), so its
        least-squares fit needs only ``B``'s Gram matrix and ``B``'s product with the
        pixels: one small matrix per code instead of drawing each code.
        """
        k = _kernel(round(sigma, 3))
        B = cv2.sepFilter2D(cov, cv2.CV_32F, k, k, borderType=cv2.BORDER_REPLICATE)
        d = self.pix_mm - (cx, cy)
        near = np.einsum("ij,ij->i", d, d) <= (self.r_mm + FIT_EXTRA_MM) ** 2
        B = B.reshape(-1, _N_CLASSES)[near].astype(np.float64)
        y = self.y_all[near]
        G = B.T @ B
        By = B.T @ y
        M = _designs() if rows is None else _designs()[rows]
        Mt = M.transpose(0, 2, 1)
        XtX = (Mt @ G) @ M + 1e-6 * np.eye(4)
        Xty = Mt @ By
        beta = np.linalg.solve(XtX, Xty[..., None])[..., 0]
        rss = float(y @ y) - np.einsum("ki,ki->k", beta, Xty)
        # A code only explains the pixels with its black darker than its white.
        rss = np.where(beta[:, 1] - beta[:, 0] > 8.0, np.maximum(rss, 0.0), np.inf)
        return rss, beta, int(near.sum())


def fit_token(gray: np.ndarray, H: np.ndarray, Hi: np.ndarray, at_mm: tuple[float, float],
              angle: float, side_mm: float) -> FitRead | None:
    """Fit every token code to the pixels round a board point (see the module doc).

    ``H`` maps image px -> board mm and ``Hi`` back; ``at_mm`` and ``angle``
    (radians) are the first guesses of the marker's centre and turn, from the
    fast reader. None when the token is too near the frame's edge or seen too
    large for a fit (the fast reader reads those).
    """
    pb = _Problem(gray, H, Hi, at_mm, side_mm)
    if not pb.ok:
        return None
    n_codes = len(pb.codes)
    best = np.full(n_codes, np.inf)
    where: list[tuple[float, float, float, float]] = [(at_mm[0], at_mm[1], angle, 1.1)] * n_codes
    levels = np.zeros((n_codes, 4))
    npix = 0

    def look(cx: float, cy: float, th: float, sig: float, rows: np.ndarray | None = None) -> float:
        nonlocal npix
        rss, beta, n = pb.rss(pb.coverage(cx, cy, th), cx, cy, sig, rows)
        idx = np.arange(n_codes) if rows is None else rows
        better = rss < best[idx]
        for k in np.nonzero(better)[0]:
            j = int(idx[k])
            best[j] = rss[k]
            where[j] = (cx, cy, th, sig)
            levels[j] = beta[k]
        npix = max(npix, n)
        return float(rss.min())

    # The blur first, at the fast reader's pose; then the pose, for the code that fits best.
    cx, cy, th = at_mm[0], at_mm[1], angle
    sig = min(SIGMAS_PX, key=lambda s: look(cx, cy, th, s))
    for rows in (None, "runner-up"):
        if rows is None:
            sel = None
            start = int(np.argmin(best))
        else:
            top = int(np.argmin(best))
            others = np.nonzero(pb.code_ids != pb.code_ids[top])[0]
            start = int(others[np.argmin(best[others])])
            sel = np.array([start])
        cx, cy, th, sig = where[start]
        cur = float(best[start])
        for step_mm, step_th, step_sig in STEPS:
            moved = True
            while moved:
                moved = False
                for dx, dy, dth, ds in ((step_mm, 0, 0, 0), (-step_mm, 0, 0, 0), (0, step_mm, 0, 0),
                                        (0, -step_mm, 0, 0), (0, 0, step_th, 0), (0, 0, -step_th, 0),
                                        (0, 0, 0, step_sig), (0, 0, 0, -step_sig)):
                    s2 = sig + ds
                    if s2 < 0.4 or s2 > 2.6:
                        continue
                    got = look(cx + dx, cy + dy, th + dth, s2, sel)
                    if sel is not None:
                        got = float(best[start])
                    if got < cur - 1e-6:
                        cur, cx, cy, th, sig, moved = got, cx + dx, cy + dy, th + dth, s2, True
                        break
    per_id: dict[int, int] = {}
    for j in np.argsort(best):
        per_id.setdefault(int(pb.code_ids[j]), int(j))
    ranked = sorted(per_id.values(), key=lambda j: best[j])
    if not np.isfinite(best[ranked[0]]):
        return None
    top, second = ranked[0], ranked[1]
    dof = max(1, npix - 4)
    var = max(float(best[top]) / dof, 1.0)
    evidence = (float(best[second]) - float(best[top])) / (2 * var) if np.isfinite(best[second]) \
        else float("inf")
    cx, cy, th, sig = where[top]
    black, white = levels[top][0], levels[top][1]
    return FitRead(int(pb.code_ids[top]), (cx, cy), th, sig, evidence, int(pb.code_ids[second]),
                   float(white - black), math.sqrt(var), npix)


__all__ = ["FitRead", "fit_token"]
