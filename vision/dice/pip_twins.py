"""Twins of photographed dice with the centre pip added or taken away (training data).

On real photographs the face classifier's doubts are mostly between faces that
differ by the centre pip alone (3 or 2, 5 or 4) on dice whose pips hardly stand
out (docs/dice-history.md). A twin is the same die in the same light and
camera with that pip inpainted away (3 -> 2, 5 -> 4) or one of its own pips
copied to the face's centre (2 -> 3, 4 -> 5): two examples that differ in
exactly what the classifier must look at. ``tools/train_dice_cls.py
--pip-twins`` adds them to the real crops.

A twin is made only where the pips are found cleanly: as many pip-like blobs
on the face as the die's value, of like sizes, in the value's pattern. Dice
where that fails (marbled faces whose veins look like pips, oblique views
with the side faces' pips) get no twin rather than a wrong one.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import cv2
import numpy as np

#: A pip-like blob's area, in (face side)^2 times pi: from (0.05 side)^2 pi to (0.16 side)^2 pi.
PIP_RADIUS = (0.05, 0.16)


@dataclass(frozen=True)
class Pip:
    """One pip-like blob: centre in image pixels, area in pixels, and its pixels as a
    boolean mask of the face's region (:attr:`FacePips.origin`)."""

    x: float
    y: float
    area: int
    mask: np.ndarray


@dataclass(frozen=True)
class FacePips:
    """The pips found on a die's top face, the face's side and centre in image pixels,
    and the top-left corner of the region the pips' masks cover. ``outline`` is the
    face's pixels (a boolean mask of that region) where the face was told from its
    surroundings by colour; None where a disk round the centre stood for it."""

    pips: list[Pip]
    side: float
    center: tuple[float, float]
    origin: tuple[int, int]
    outline: np.ndarray | None = None

    def pips_mask(self) -> np.ndarray:
        """Every pip's pixels, as a uint8 mask (1 = pip) of the face's region (0 x 0 when
        neither a pip nor the outline was found, as the region's size is then unknown)."""
        shape = (self.outline.shape if self.outline is not None
                 else self.pips[0].mask.shape if self.pips else (0, 0))
        mask = np.zeros(shape, np.uint8)
        for p in self.pips:
            mask[p.mask] = 1
        return mask


@dataclass(frozen=True)
class Twin:
    """A patch of the photo round a die with the die changed (its centre pip here, its
    colours in ``vision.dice.restyle``): the die's centre in the patch, its value, and
    where the patch lies in the photo."""

    image: np.ndarray
    cx: float
    cy: float
    value: int
    origin: tuple[int, int]


def find_pips(img: np.ndarray, cx: float, cy: float, size: float) -> FacePips | None:
    """The pip-like blobs on the face of the die centred at (cx, cy), ``size`` pixels
    across as the detector sees it (BGR uint8 image); None when the face cannot be
    told from what lies round it.

    The face is found by its colour against the surroundings (small dice on a table);
    where it fills the whole region (a close-up), a disk round the centre is the face.
    """
    r = int(math.ceil(0.65 * size))
    x0, y0 = round(cx) - r, round(cy) - r
    h, w = img.shape[:2]
    if r < 4 or x0 < 0 or y0 < 0 or x0 + 2 * r + 1 > w or y0 + 2 * r + 1 > h:
        return None
    region = img[y0:y0 + 2 * r + 1, x0:x0 + 2 * r + 1]
    lab = cv2.GaussianBlur(cv2.cvtColor(region, cv2.COLOR_BGR2LAB), (3, 3), 0).astype(np.float32)
    yy, xx = np.mgrid[0:2 * r + 1, 0:2 * r + 1]
    rr = np.hypot(xx + x0 - cx, yy + y0 - cy)
    face = _face_by_outline(lab, rr, size)
    outlined = face is not None
    if face is None:
        face = ((rr <= 0.47 * size).astype(np.uint8), 0.8 * size, (cx - x0, cy - y0))
    inner, side, (fx, fy) = face
    ins = inner > 0
    if not ins.any():
        return None
    # Pips: what differs from the face's median colour more than Otsu's split of the face.
    d = _distance(lab, np.median(lab[ins], axis=0))
    if float(np.percentile(d[ins], 99)) < 24:
        return None  # a blank or washed-out face
    thr, _ = cv2.threshold(d[ins].reshape(-1, 1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    spots = (ins & (d > max(thr, 30))).astype(np.uint8)
    n, labels, stats, cents = cv2.connectedComponentsWithStats(spots, connectivity=8)
    amin, amax = (math.pi * (k * side) ** 2 for k in PIP_RADIUS)
    pips = []
    for i in range(1, n):
        a = int(stats[i, cv2.CC_STAT_AREA])
        bw, bh = int(stats[i, cv2.CC_STAT_WIDTH]), int(stats[i, cv2.CC_STAT_HEIGHT])
        round_enough = max(bw, bh) <= 2.2 * min(bw, bh) and a >= 0.45 * bw * bh
        if amin <= a <= amax and round_enough:
            pips.append(Pip(float(cents[i][0]) + x0, float(cents[i][1]) + y0, a, labels == i))
    return FacePips(pips, side, (fx + x0, fy + y0), (x0, y0), ins if outlined else None)


def _distance(lab: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """Colour distance from ``colour`` as uint8 (2 per Lab unit, capped at 255)."""
    return np.clip(np.linalg.norm(lab - colour, axis=2) * 2, 0, 255).astype(np.uint8)


def _face_by_outline(lab: np.ndarray, rr: np.ndarray,
                     size: float) -> tuple[np.ndarray, float, tuple[float, float]] | None:
    """The face as the convex hull of the region's largest patch of the colour round its
    centre (pips inside it included), shrunk by a pixel; with the hull's side and centre.
    None when that patch reaches the region's border (the die fills it or blends in)."""
    d = _distance(lab, np.median(lab[rr <= 0.2 * size], axis=0))
    thr, _ = cv2.threshold(d.reshape(-1, 1), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    like = (d <= max(thr, 24)).astype(np.uint8)
    _, labels = cv2.connectedComponents(like, connectivity=4)
    near = labels[(rr <= 0.25 * size) & (like > 0)]
    if near.size == 0:
        return None
    patch = (labels == int(np.bincount(near).argmax())).astype(np.uint8)
    contours, _ = cv2.findContours(patch, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    hull = np.zeros_like(patch)
    cv2.fillPoly(hull, [cv2.convexHull(max(contours, key=cv2.contourArea))], 1)
    if hull[0].any() or hull[-1].any() or hull[:, 0].any() or hull[:, -1].any():
        return None
    side = math.sqrt(float(hull.sum()))
    if side < 0.4 * size:
        return None
    m = cv2.moments(hull, binaryImage=True)
    inner = cv2.erode(hull, np.ones((3, 3), np.uint8))
    return inner, side, (m["m10"] / m["m00"], m["m01"] / m["m00"])


def in_pattern(face: FacePips, value: int) -> bool:
    """Whether the face's pips are exactly those of ``value`` (1..6) where a die shows
    them: as many as the value, of like sizes, centred on the face; a 3's in a row
    through the centre, a 4's (and a 5's outer four) at the corners of a parallelogram
    round it, a 5's fifth at its centre, a 6's in pairs opposite each other through
    its centre."""
    side = face.side
    if len(face.pips) != value or not 1 <= value <= 6:
        return False
    areas = [p.area for p in face.pips]
    if max(areas) > 2.5 * min(areas):
        return False
    pts = np.array([(p.x, p.y) for p in face.pips])
    mean = pts.mean(0)
    if math.dist(mean, face.center) > 0.15 * side:
        return False
    if value == 1:
        return True
    if value == 6:
        reach6 = [math.dist(p, mean) for p in pts]
        if not (0.15 * side <= min(reach6) and max(reach6) <= 0.6 * side):
            return False
        return all(min(math.dist(q, 2 * mean - p) for q in pts) <= 0.1 * side for p in pts)
    if value == 2:
        return 0.45 * side <= math.dist(pts[0], pts[1]) <= 1.1 * side
    middle = int(np.argmin([math.dist(p, mean) for p in pts]))
    outer = np.delete(pts, middle, axis=0) if value in (3, 5) else pts
    if value in (3, 5) and math.dist(pts[middle], outer.mean(0)) > 0.08 * side:
        return False
    if value == 3:
        return 0.45 * side <= math.dist(outer[0], outer[1]) <= 1.1 * side
    centre = outer.mean(0)
    reach = [math.dist(p, centre) for p in outer]
    if min(reach) < 0.7 * max(reach) or not 0.22 * side <= float(np.mean(reach)) <= 0.55 * side:
        return False
    # each corner has one opposite it through the centre
    return all(min(math.dist(q, 2 * centre - p) for q in outer) <= 0.1 * side for p in outer)


def patch_round(img: np.ndarray, cx: float, cy: float, size: float) -> tuple[np.ndarray, tuple[int, int]]:
    """A copy of the image within 2.5 die sizes of (cx, cy) (clipped to the image), and
    where its top-left corner lies in the image."""
    h, w = img.shape[:2]
    reach = math.ceil(2.5 * size) + 2
    px0, py0 = max(0, int(cx) - reach), max(0, int(cy) - reach)
    px1, py1 = min(w, int(cx) + reach), min(h, int(cy) + reach)
    return img[py0:py1, px0:px1].copy(), (px0, py0)


def pip_twin(img: np.ndarray, cx: float, cy: float, size: float, value: int,
             rng: random.Random, min_side: float = 14.0) -> Twin | None:
    """The die at (cx, cy) (``size`` as the detector sees it) with its centre pip taken
    away (3 -> 2, 5 -> 4) or one of its pips copied to the centre (2 -> 3, 4 -> 5), in a
    patch of 2.5 sizes round it; None where its pips are not found cleanly
    (:func:`in_pattern`) or its face is under ``min_side`` pixels."""
    face = find_pips(img, cx, cy, size) if value in (2, 3, 4, 5) else None
    if face is None or face.side < min_side or not in_pattern(face, value):
        return None
    patch, (px0, py0) = patch_round(img, cx, cy, size)
    grow = max(1, round(0.04 * face.side))
    disk = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * grow + 1, 2 * grow + 1))
    pts = np.array([(p.x, p.y) for p in face.pips])
    mean = pts.mean(0)

    def in_patch(pip: Pip) -> np.ndarray:
        """The pip's mask over the patch (which holds the face's region), grown by ``grow``."""
        mask = np.zeros(patch.shape[:2], np.uint8)
        rh, rw = pip.mask.shape
        x, y = face.origin[0] - px0, face.origin[1] - py0
        mask[y:y + rh, x:x + rw] = pip.mask
        return cv2.dilate(mask, disk)

    if value in (3, 5):
        middle = face.pips[int(np.argmin([math.dist(p, mean) for p in pts]))]
        patch = cv2.inpaint(patch, in_patch(middle), grow + 2, cv2.INPAINT_TELEA)
        return Twin(patch, cx - px0, cy - py0, value - 1, (px0, py0))
    src = face.pips[rng.randrange(len(face.pips))]
    alpha = cv2.GaussianBlur(in_patch(src).astype(np.float32), (0, 0), 0.7)
    # The pip and the face round it lie well inside the patch: moving the patch moves them.
    move = np.array([[1, 0, mean[0] - src.x], [0, 1, mean[1] - src.y]], np.float32)
    patch_wh = (patch.shape[1], patch.shape[0])
    moved = cv2.warpAffine(patch, move, patch_wh, flags=cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REFLECT)
    a = cv2.warpAffine(alpha, move, patch_wh, flags=cv2.INTER_LINEAR)[..., None]
    patch = np.clip(moved * a + patch * (1.0 - a) + 0.5, 0, 255).astype(np.uint8)
    return Twin(patch, cx - px0, cy - py0, value + 1, (px0, py0))
