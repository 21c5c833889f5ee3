"""Draw a board file as an image: for printing, and as the synthetic table's board.

Spaces are filled in their surface colour (cream asphalt, aqua cobblestone,
red uphill, yellow downhill) with their numbers, thick lines where a diagonal
step is missing, start dots, finish lines labelled A-E, the box the dice are
rolled in (``dice_area_mm``, where the board file has one), and the corner
markers at the places the board file gives, each on a white quiet zone.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from companion.boards import Board, Space, Surface
from vision.markers import marker_image

# BGR colours of the printed board.
SURFACE_BGR: dict[Surface, tuple[int, int, int]] = {
    Surface.ASPHALT: (200, 232, 245),  # cream
    Surface.COBBLESTONE: (205, 205, 120),  # aqua
    Surface.UPHILL: (110, 120, 235),  # red
    Surface.DOWNHILL: (70, 215, 245),  # yellow
}
PAPER_BGR = (165, 200, 170)  # the landscape around the road (pale green)
EDGE_BGR = (70, 70, 70)
INK_BGR = (25, 25, 25)
DICE_AREA_BGR = (95, 130, 100)  # the frame of the box the dice are rolled in (dark green)
_SHIFT = 4
_ONE = 1 << _SHIFT
DEFAULT_HALF_MM = 12.0  # half size of a space drawn without a polygon


def space_polygon(space: Space) -> np.ndarray:
    """The outline of a space in mm: its polygon, or a square around its centre."""
    if space.polygon_mm:
        return np.asarray(space.polygon_mm, dtype=np.float64)
    x, y = space.center_mm
    h = DEFAULT_HALF_MM
    return np.array([[x - h, y - h], [x + h, y - h], [x + h, y + h], [x - h, y + h]], float)


def _fix(pts: np.ndarray, ppm: float) -> np.ndarray:
    # Pixel i covers mm [i, i + 1) / ppm: its centre, OpenCV's coordinate i, is (i + 0.5) / ppm.
    return np.round((np.asarray(pts, float) * ppm - 0.5) * _ONE).astype(np.int32)


def shared_edge(a: np.ndarray, b_center: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The edge of polygon ``a`` facing a point (a neighbour's centre): its two ends."""
    best = None
    for i in range(len(a)):
        p, q = a[i], a[(i + 1) % len(a)]
        d = float(np.linalg.norm((p + q) / 2 - b_center))
        if best is None or d < best[0]:
            best = (d, p, q)
    assert best is not None
    return best[1], best[2]


def _text(img: np.ndarray, text: str, center: tuple[float, float], height_px: float,
          colour: tuple[int, int, int], thickness_rate: float = 0.12) -> None:
    font = cv2.FONT_HERSHEY_SIMPLEX
    scale = max(height_px / 22.0, 0.2)
    thick = max(1, int(round(height_px * thickness_rate)))
    (tw, th), _ = cv2.getTextSize(text, font, scale, thick)
    org = (int(round(center[0] - tw / 2)), int(round(center[1] + th / 2)))
    cv2.putText(img, text, org, font, scale, colour, thick, cv2.LINE_AA)


def draw_marker(img: np.ndarray, marker_id: int, x_mm: float, y_mm: float, side_mm: float,
                ppm: float, quiet: float = 0.25) -> None:
    """Draw a marker (top-left corner and side in mm) on a white quiet zone."""
    q = side_mm * quiet
    x0, y0 = int(math.floor((x_mm - q) * ppm)), int(math.floor((y_mm - q) * ppm))
    x1, y1 = int(math.ceil((x_mm + side_mm + q) * ppm)), int(math.ceil((y_mm + side_mm + q) * ppm))
    cv2.rectangle(img, (x0, y0), (x1, y1), (255, 255, 255), -1)
    side_px = max(6, int(round(side_mm * ppm)))
    mk = marker_image(marker_id, side_px * 4)  # oversample then place with sub-pixel accuracy
    src = np.array([[0, 0], [mk.shape[1], 0], [mk.shape[1], mk.shape[0]]], np.float32)
    dst = np.array([[x_mm * ppm, y_mm * ppm], [(x_mm + side_mm) * ppm, y_mm * ppm],
                    [(x_mm + side_mm) * ppm, (y_mm + side_mm) * ppm]], np.float32)
    dst -= 0.5  # pixel centres: pixel i covers [i - 0.5, i + 0.5] in OpenCV's convention
    m = cv2.getAffineTransform(src, dst)
    h, w = img.shape[:2]
    bx0, by0 = max(0, x0), max(0, y0)
    bx1, by1 = min(w, x1 + 1), min(h, y1 + 1)
    if bx1 <= bx0 or by1 <= by0:
        return
    m[:, 2] -= (bx0, by0)
    patch = cv2.warpAffine(mk, m, (bx1 - bx0, by1 - by0), flags=cv2.INTER_AREA,
                           borderValue=255)
    roi = img[by0:by1, bx0:bx1]
    roi[:] = np.minimum(roi, patch[..., None] if roi.ndim == 3 else patch)


def render_board(board: Board, px_per_mm: float = 4.0, *, markers: bool = True,
                 numbers: bool = True, paper: tuple[int, int, int] = PAPER_BGR) -> np.ndarray:
    """The board as a BGR image, ``px_per_mm`` pixels to the millimetre (mm (0,0) = pixel 0,0)."""
    ppm = float(px_per_mm)
    w = int(math.ceil(board.size_mm[0] * ppm))
    h = int(math.ceil(board.size_mm[1] * ppm))
    img = np.empty((h, w, 3), np.uint8)
    img[:] = paper
    polys = {sid: space_polygon(s) for sid, s in board.spaces.items()}
    edge = max(1, int(round(0.4 * ppm)))
    for sid, s in board.spaces.items():
        pts = _fix(polys[sid], ppm)
        cv2.fillPoly(img, [pts], SURFACE_BGR.get(s.surface, SURFACE_BGR[Surface.ASPHALT]),
                     cv2.LINE_AA, _SHIFT)
    for sid in board.spaces:
        cv2.polylines(img, [_fix(polys[sid], ppm)], True, EDGE_BGR, edge, cv2.LINE_AA, _SHIFT)
    # Thick lines: between side-by-side spaces where no diagonal crosses.
    thick = max(2, int(round(2.0 * ppm)))
    for sid, s in board.spaces.items():
        for beside, diag in ((s.beside_left, s.left), (s.beside_right, s.right)):
            if beside is None or diag is not None or beside not in board.spaces:
                continue
            if board.spaces[beside].straight is None and s.straight is None:
                continue  # both lanes end here: nothing to step into
            p, q = shared_edge(polys[sid], np.asarray(board.spaces[beside].center_mm, float))
            cv2.line(img, tuple(_fix(p, ppm)), tuple(_fix(q, ppm)), INK_BGR, thick,
                     cv2.LINE_AA, _SHIFT)
    # Finish lines: a black and white bar across the road after the space.
    lines: dict[str, list[np.ndarray]] = {}
    for sid, s in board.spaces.items():
        if not s.line_after:
            continue
        if s.straight and s.straight in board.spaces:
            toward = np.asarray(board.spaces[s.straight].center_mm, float)
        else:
            toward = np.asarray(s.center_mm, float) + np.array([1.0, 0.0])
        p, q = shared_edge(polys[sid], toward)
        _checker_line(img, p, q, ppm)
        lines.setdefault(s.line_after, []).extend([p, q])
    for label, ends in lines.items():
        arr = np.asarray(ends)
        c = arr.mean(axis=0)
        d = arr - c
        axis = np.linalg.svd(d)[2][0] if len(arr) > 1 else np.array([0.0, 1.0])
        proj = d @ axis
        end = arr[int(np.argmin(proj))]
        pos = end - axis * 8.0
        _text(img, label, (pos[0] * ppm, pos[1] * ppm), 9.0 * ppm, INK_BGR, 0.14)
    for s in board.spaces.values():
        cx, cy = s.center_mm
        if numbers and s.number:
            _text(img, str(s.number), (cx * ppm, cy * ppm), 8.0 * ppm, INK_BGR, 0.12)
        if s.start:
            r = 2.2
            v = np.array([1.0, 0.0])
            if s.straight and s.straight in board.spaces:
                nx, ny = board.spaces[s.straight].center_mm
                v = np.array([nx - cx, ny - cy])
                v = v / (np.linalg.norm(v) or 1.0)
            dot = (cx - v[0] * 9.0, cy - v[1] * 9.0)
            cv2.circle(img, tuple(_fix(np.array(dot), ppm)), int(round(r * ppm * _ONE)),
                       INK_BGR, -1, cv2.LINE_AA, _SHIFT)
            if s.start != "1":
                _text(img, s.start, ((dot[0] + 4.5) * ppm, dot[1] * ppm), 4.0 * ppm, INK_BGR)
    if board.dice_area_mm is not None:
        _dice_area(img, board.dice_area_mm, ppm)
    if markers:
        for m in board.markers.values():
            draw_marker(img, m.id, m.x_mm, m.y_mm, m.side_mm, ppm)
    return img


def _dice_area(img: np.ndarray, area: tuple[float, float, float, float], ppm: float) -> None:
    """The box the dice are rolled in: a dashed frame (no label: the dice reader
    looks at the box and its surroundings, and took printed letters for dice)."""
    x, y, w, h = area
    corners = np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], float)
    line = max(1, int(round(1.0 * ppm)))
    for i in range(4):
        p, q = corners[i], corners[(i + 1) % 4]
        n = max(1, int(np.linalg.norm(q - p) // 12.0))  # 6 mm dashes, 6 mm gaps
        for k in range(n):
            a = p + (q - p) * (k / n)
            b = p + (q - p) * ((k + 0.5) / n)
            cv2.line(img, tuple(_fix(a, ppm)), tuple(_fix(b, ppm)), DICE_AREA_BGR, line,
                     cv2.LINE_AA, _SHIFT)


def _checker_line(img: np.ndarray, p: np.ndarray, q: np.ndarray, ppm: float) -> None:
    """A finish line: a bar of black and white squares 2.5 mm wide along p-q."""
    length = float(np.linalg.norm(q - p))
    if length == 0:
        return
    u = (q - p) / length
    n = np.array([-u[1], u[0]])
    cell = 2.5
    k = max(1, int(round(length / cell)))
    step = length / k
    for i in range(k):
        for j, off in enumerate((-cell, 0.0)):
            a = p + u * (i * step) + n * off
            quad = np.array([a, a + u * step, a + u * step + n * cell, a + n * cell])
            colour = INK_BGR if (i + j) % 2 == 0 else (255, 255, 255)
            cv2.fillPoly(img, [_fix(quad, ppm)], colour, cv2.LINE_AA, _SHIFT)
