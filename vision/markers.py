"""ArUco markers: the dictionary, the ids, drawing and detecting them.

Ids (see ARCHITECTURE.md): ``DICT_4X4_100``; board corner markers 0-3 (0 top
left, 1 top right, 2 bottom right, 3 bottom left); a rider token carries its
rider number (21-24, 31-34, 41-44, 51-54); a team's yellow-jersey piece carries
the team number times ten (20, 30, 40, 50).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

DICTIONARY = cv2.aruco.DICT_4X4_100
CORNER_IDS = (0, 1, 2, 3)
TEAMS = (2, 3, 4, 5)
RIDERS = tuple(10 * t + k for t in TEAMS for k in (1, 2, 3, 4))
JERSEYS = tuple(10 * t for t in TEAMS)
TOKEN_IDS = RIDERS + JERSEYS
STICKER_RATE = 2.0  # a token sticker is a white disc this many marker sides across

# Team colours of the plastic riders (BGR) and their names, by team number.
TEAM_COLOURS: dict[int, tuple[int, int, int]] = {
    2: (40, 40, 200),  # red
    3: (190, 90, 30),  # blue
    4: (35, 35, 35),  # black
    5: (50, 150, 40),  # green
}
TEAM_NAMES = {2: "red", 3: "blue", 4: "black", 5: "green"}


def team_of(token_id: int) -> int:
    """The team number of a rider or jersey id (21 -> 2, 40 -> 4)."""
    return token_id // 10


def is_jersey(token_id: int) -> bool:
    """True for a yellow-jersey piece (20, 30, 40, 50)."""
    return token_id in JERSEYS


@lru_cache(maxsize=1)
def dictionary() -> cv2.aruco.Dictionary:
    """The ArUco dictionary every Peloton marker comes from."""
    return cv2.aruco.getPredefinedDictionary(DICTIONARY)


def marker_image(marker_id: int, side_px: int) -> np.ndarray:
    """The marker (black border included, no quiet zone) as a uint8 image side_px square."""
    return cv2.aruco.generateImageMarker(dictionary(), marker_id, side_px, borderBits=1)


def marker_cells(marker_id: int) -> np.ndarray:
    """The 6x6 cell grid of a marker (border included): 1 = black, 0 = white."""
    img = marker_image(marker_id, 6 * 10)
    return (img[5::10, 5::10] < 128).astype(np.uint8)


@lru_cache(maxsize=4)
def detector(small: bool = True, fast: bool = False) -> cv2.aruco.ArucoDetector:
    """An ArUco detector tuned for the table, without corner refinement.

    ``small`` accepts markers down to ~6 px a side; ``fast`` uses one adaptive
    threshold window (the board is full of square spaces, each a candidate the
    detector must decode, so every extra window costs). Corner refinement is
    left to the caller (``cornerSubPix`` on the board markers only).
    """
    p = cv2.aruco.DetectorParameters()
    p.adaptiveThreshWinSizeMin = 13 if fast else 3
    p.adaptiveThreshWinSizeMax = 13 if fast else 23
    p.adaptiveThreshWinSizeStep = 10
    p.minMarkerPerimeterRate = 0.012 if small else 0.04
    p.polygonalApproxAccuracyRate = 0.05
    p.minCornerDistanceRate = 0.05
    p.perspectiveRemovePixelPerCell = 6
    p.perspectiveRemoveIgnoredMarginPerCell = 0.2
    p.errorCorrectionRate = 0.5
    p.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_NONE
    return cv2.aruco.ArucoDetector(dictionary(), p)


@dataclass(frozen=True)
class Detection:
    """One detected marker: id and its 4 corners in image px (clockwise from top left)."""

    id: int
    corners: np.ndarray  # (4, 2) float32

    @property
    def center(self) -> tuple[float, float]:
        c = self.corners.mean(axis=0)
        return float(c[0]), float(c[1])

    @property
    def side_px(self) -> float:
        d = np.linalg.norm(self.corners - np.roll(self.corners, 1, axis=0), axis=1)
        return float(d.mean())


def to_gray(image: np.ndarray) -> np.ndarray:
    """A uint8 grey image from a BGR, BGRA or grey frame (raises ValueError on junk)."""
    if not isinstance(image, np.ndarray) or image.size == 0:
        raise ValueError("empty frame")
    if image.ndim == 2:
        gray = image
    elif image.ndim == 3 and image.shape[2] in (3, 4):
        code = cv2.COLOR_BGR2GRAY if image.shape[2] == 3 else cv2.COLOR_BGRA2GRAY
        gray = cv2.cvtColor(image, code)
    elif image.ndim == 3 and image.shape[2] == 1:
        gray = image[:, :, 0]
    else:
        raise ValueError(f"not an image: array of shape {image.shape}")
    if gray.dtype != np.uint8:
        g = gray.astype(np.float64)
        if g.max() <= 1.0:
            g = g * 255.0
        gray = np.clip(g, 0, 255).astype(np.uint8)
    if gray.shape[0] < 8 or gray.shape[1] < 8:
        raise ValueError(f"frame too small: {gray.shape[1]}x{gray.shape[0]}")
    return np.ascontiguousarray(gray)


def detect(gray: np.ndarray, small: bool = True, fast: bool = False) -> list[Detection]:
    """All ArUco markers of the dictionary in a grey frame."""
    corners, ids, _ = detector(small, fast).detectMarkers(gray)
    if ids is None:
        return []
    return [Detection(int(i), c.reshape(4, 2).astype(np.float32))
            for c, i in zip(corners, ids.ravel(), strict=True)]


def refine(gray: np.ndarray, detections: list[Detection]) -> list[Detection]:
    """Sub-pixel corners (``cornerSubPix``) for the given detections."""
    if not detections:
        return []
    out = []
    crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.05)
    for d in detections:
        win = int(max(2, min(8, d.side_px / 12)))
        pts = d.corners.reshape(-1, 1, 2).copy()
        cv2.cornerSubPix(gray, pts, (win, win), (-1, -1), crit)
        out.append(Detection(d.id, pts.reshape(4, 2)))
    return out
