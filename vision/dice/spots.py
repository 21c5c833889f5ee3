"""Where dice can be on a plain background: the windows the detector needs to look at.

A dice tray or the board's dice area is a plain surface (one colour, smooth
light). A die on it stands out: its edges, its sides and its pips make strong
local contrast, where the plain surface has none. So at a known die size the
detector need not look at the whole region: only at windows round the spots
that stand out. On the table camera that is a few small windows instead of a
region of 900x650 pixels (docs/dice.md, "Plain background").

When too much of the region stands out (a patterned tray, a hand, a board
printed there), there is no gain and :func:`busy_windows` says so (``None``):
the caller then reads the whole region as before.

The same spots (:func:`stand_out_mask`) tell where a die the detector missed
can still lie: :func:`spot_grid` lays a grid over each die-sized one, for the
table's search when a roll is short of dice (``LookRound._search_short``).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

#: Local contrast (levels of the most different colour channel, the spread of a 3x3
#: neighbourhood: max - min) from which a pixel stands out from a plain surface. Noise of sigma 6 and the smooth
#: light of a tray stay below it; a die's outline, sides and pips are far above.
CONTRAST = 28
#: A window is this many dice wide (a die, its shadow and a die and more of context
#: round them: in smaller windows the detector saw weak dice more weakly than in the
#: whole region).
WINDOW_DICE = 5.5
#: Beyond this share of the region in windows, reading the whole region is about as
#: cheap (the windows overlap, and each costs a little more than its pixels).
MAX_COVER = 0.75
#: A spot :func:`spot_grid` searches: this many dice in area (part of a die up to
#: three touching with their shadows), at most ``SPOT_MAX_SIDE`` dice across, its
#: points within ``SPOT_REACH`` dice of it.
SPOT_AREA = (0.4, 6.0)
SPOT_MAX_SIDE = 4.0
SPOT_REACH = 0.25


def busy_windows(region: np.ndarray, die_px: float, align: int = 32,
                 within: np.ndarray | None = None) -> list[tuple[int, int, int, int]] | None:
    """Windows (x, y, w, h) of ``region`` (BGR or grey, dice ``die_px`` across) holding
    every spot that stands out from a plain background, or None when the background
    is not plain enough for that to pay (read the whole region then). ``within``, a
    polygon (N x 2, region px), is where the plain surface is: spots elsewhere in the
    region (the board beyond a dice area's corner) are not looked at.

    Every window is square, the same size (``WINDOW_DICE`` dice, rounded up to a
    multiple of ``align``) and starts at multiples of ``align``: the detector's grid
    then falls where it falls on the whole region, and it sees a die as it does
    there. Windows lie inside the region padded to a multiple of ``align`` (pad it
    so, by replication, before cutting them out). A spot larger than a window (dice
    side by side, a hand) is covered by overlapping windows. Thin lines (a printed
    outline, a crack) and specks of noise are not spots: the contrast (at half
    size) is closed over a quarter of a die and opened over a third, which only a
    die-sized blob survives. An empty list: nothing stands out (no dice).
    """
    h, w = region.shape[:2]
    win = int(np.ceil(WINDOW_DICE * die_px / align) * align)
    hp, wp = -(-h // align) * align, -(-w // align) * align
    if hp < win or wp < win:
        return None
    mask = stand_out_mask(region, die_px, within)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    step = max(align, (win - int(round(1.5 * die_px))) // align * align)  # tiles overlap
    windows: list[tuple[int, int, int, int]] = []
    for c in sorted(contours, key=lambda c: -cv2.contourArea(c)):  # largest spots first
        x, y, bw, bh = (2 * v for v in cv2.boundingRect(c))
        # The spot and a die of context round it, unless a window has it already.
        x0, y0 = max(0.0, x - die_px), max(0.0, y - die_px)
        x1, y1 = min(float(wp), x + bw + die_px), min(float(hp), y + bh + die_px)
        if any(wx <= x0 and x1 <= wx + win and wy <= y0 and y1 <= wy + win
               for wx, wy, _, _ in windows):
            continue
        for wy in _starts(y0, y1, win, step, hp, align):
            for wx in _starts(x0, x1, win, step, wp, align):
                if (wx, wy, win, win) not in windows:
                    windows.append((wx, wy, win, win))
    if len(windows) * win * win > MAX_COVER * w * h:
        return None
    return windows


def stand_out_mask(region: np.ndarray, die_px: float,
                   within: np.ndarray | None = None) -> np.ndarray:
    """Where something die-sized stands out from the plain surface of ``region`` (BGR
    or grey, dice ``die_px`` across; ``within`` as for :func:`busy_windows`): a mask
    at half the region's size (255: stands out). The contrast is closed over a
    quarter of a die and opened over a third: specks of noise and hairlines go,
    a die stays (and so does a line drawn as thick as the dice area's outline)."""
    h, w = region.shape[:2]
    # Found at half size (a die is still 20 px there): four times less work.
    small = cv2.resize(region, ((w + 1) // 2, (h + 1) // 2), interpolation=cv2.INTER_AREA)
    k3 = np.ones((3, 3), np.uint8)
    spread = cv2.subtract(cv2.dilate(small, k3), cv2.erode(small, k3))
    if spread.ndim == 3:  # a yellow die on green differs in blue and red more than in grey
        b, g, r = cv2.split(spread)
        spread = cv2.max(cv2.max(b, g), r)
    _, mask = cv2.threshold(spread, CONTRAST - 1, 255, cv2.THRESH_BINARY)  # >= CONTRAST
    if within is not None:
        inside = np.zeros_like(mask)
        cv2.fillPoly(inside, [np.round(np.asarray(within, float) * 8).astype(np.int32)], 255,
                     cv2.LINE_8, 4)
        cv2.bitwise_and(mask, inside, dst=mask)
    close = max(3, int(round(die_px / 8)) | 1)
    opening = max(3, int(round(die_px / 6)) | 1)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (close, close)))
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (opening, opening)))


def spot_grid(mask: np.ndarray, die_px: float, step: float, *,
              area: tuple[float, float] = SPOT_AREA, max_side: float = SPOT_MAX_SIDE,
              reach: float = SPOT_REACH) -> list[tuple[float, float]]:
    """Points ``step`` dice apart over every die-sized spot of ``mask`` (a
    :func:`stand_out_mask`, half the size of a region whose dice are ``die_px``
    across), in the region's pixels, the thickest spots first.

    A spot is die-sized from ``area[0]`` to ``area[1]`` dice in area and at most
    ``max_side`` dice across: a die, part of one, or two or three touching,
    with their shadows; not the long lines of a printed outline, nor specks.
    Only points within ``reach`` dice of the spot are given (a black die's
    plain top is not in the mask, only its pips and edges). Thickness is the
    spot's widest inscribed circle once its holes are filled: a die is thick,
    the broken dashes of an outline under a hand are thin.
    """
    if not (math.isfinite(die_px) and die_px > 0 and math.isfinite(step) and step > 0):
        raise ValueError(f"die size and step must be positive, not {die_px} and {step}")
    half = die_px / 2  # a die's side in the mask
    _, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    filled = np.zeros_like(mask)
    outlines, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(filled, outlines, -1, 255, thickness=-1)
    thick = np.zeros(len(stats))
    np.maximum.at(thick, np.asarray(labels, np.intp).ravel(),
                  cv2.distanceTransform(filled, cv2.DIST_L2, 3).ravel())
    near = cv2.dilate(mask, cv2.getStructuringElement(
        cv2.MORPH_ELLIPSE, (max(3, int(round(2 * reach * half)) | 1),) * 2))
    h, w = mask.shape[:2]
    spots: list[tuple[float, list[tuple[float, float]]]] = []
    px_step = step * die_px
    for k in range(1, len(stats)):
        x, y, bw, bh, n = (int(v) for v in stats[k])
        if not (area[0] <= n / half**2 <= area[1] and max(bw, bh) <= max_side * half):
            continue
        points = [(float(px), float(py))
                  for py in np.arange(2 * y + px_step / 2, 2 * (y + bh), px_step)
                  for px in np.arange(2 * x + px_step / 2, 2 * (x + bw), px_step)
                  if near[min(h - 1, int(py / 2)), min(w - 1, int(px / 2))]]
        spots.append((float(thick[k]), points))
    spots.sort(key=lambda s: -s[0])
    return [p for _, points in spots for p in points]


def _starts(a: float, b: float, win: int, step: int, size: int, align: int) -> list[int]:
    """Starts (multiples of ``align``) of windows ``win`` long, inside [0, size), that
    cover [a, b) clipped to it: one window when one can, about centred, else windows
    ``step`` apart."""
    a, b = max(0.0, a), min(float(size), b)
    lo = int(np.ceil(max(0.0, b - win) / align)) * align  # one window: s <= a, s + win >= b
    hi = min(int(a) // align * align, size - win)
    if lo <= hi:
        mid = (a + b - win) / 2
        return [min(range(lo, hi + 1, align), key=lambda s: abs(s - mid))]
    starts = []
    s = min(int(a) // align * align, size - win)
    while True:
        starts.append(s)
        if s + win >= b or s >= size - win:
            return starts
        s = min(s + step, size - win)
