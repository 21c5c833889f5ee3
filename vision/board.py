"""Board localisation: the corner markers and the homography image px -> board mm.

The four corner markers (ids 0-3, placed as the board file says) are found in
the frame, and the homography is fitted with RANSAC on *all* their visible
corners, so one marker hidden by a hand still leaves 12 points. The result
says clearly when the board is not found and why, and gives the reprojection
error. For speed the markers are searched in a quarter-size copy of the frame,
then a half-size one, then the full frame, stopping as soon as all corner
markers are seen; their corners are refined (``cornerSubPix``) in the
full-size frame.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.boards import Board
from vision.markers import Detection, detect, refine, to_gray

MAX_ERROR_MM = 3.0  # RMS reprojection error above which the markers do not fit the board file
RANSAC_MM = 2.5
DEFAULT_FOCAL_RATE = 0.8  # focal length in frame widths when it cannot be measured


@dataclass
class BoardPose:
    """Where the board lies in a frame. ``H`` maps image px -> board mm."""

    found: bool
    reason: str = ""
    H: np.ndarray | None = None
    markers_seen: list[int] = field(default_factory=list)
    inliers: int = 0
    points: int = 0
    error_mm: float = float("nan")  # RMS reprojection error of the inliers, board mm
    error_px: float = float("nan")  # the same, image px
    detections: list[Detection] = field(default_factory=list)  # every marker seen

    @property
    def H_inv(self) -> np.ndarray:
        """Board mm -> image px."""
        if self.H is None:
            raise ValueError("board not found")
        Hi = np.linalg.inv(self.H)
        return Hi / Hi[2, 2]

    def to_mm(self, pts_px: np.ndarray) -> np.ndarray:
        """Image px (N, 2) -> board mm (N, 2)."""
        if self.H is None:
            raise ValueError("board not found")
        p = cv2.perspectiveTransform(np.asarray(pts_px, np.float64).reshape(-1, 1, 2), self.H)
        return p.reshape(-1, 2)

    def to_px(self, pts_mm: np.ndarray) -> np.ndarray:
        """Board mm (N, 2) -> image px (N, 2)."""
        p = cv2.perspectiveTransform(np.asarray(pts_mm, np.float64).reshape(-1, 1, 2),
                                     self.H_inv)
        return p.reshape(-1, 2)

    def px_per_mm(self, at_mm: tuple[float, float]) -> float:
        """Local scale of the view (image px per board mm) at a point of the board."""
        x, y = at_mm
        p = self.to_px(np.array([[x, y], [x + 1, y], [x, y + 1]], float))
        return float(max(np.linalg.norm(p[1] - p[0]), np.linalg.norm(p[2] - p[0])))


def _passes(gray: np.ndarray, wanted: set[int]) -> Iterator[tuple[list[Detection], list[Detection]]]:
    """Corner markers (refined at full size) and every marker seen, pass after pass.

    Passes, cheapest first: a quarter-size frame (one threshold window), a
    half-size frame (one window, then three), the full frame. A pass is
    yielded when it sees more corner markers than the passes before it, or all
    of them (the caller stops at the first good fit).
    """
    h, w = gray.shape
    best_n = 1
    passes: list[tuple[int, bool]] = []
    if min(h, w) >= 960:
        passes.append((4, True))
    if min(h, w) >= 480:
        passes += [(2, True), (2, False)]
    passes.append((1, False))
    smalls: dict[int, np.ndarray] = {}
    last: list[Detection] = []
    for factor, fast in passes:
        if factor == 1:
            seen = detect(gray, small=True)
        else:
            if factor not in smalls:
                smalls[factor] = cv2.resize(gray, (w // factor, h // factor),
                                            interpolation=cv2.INTER_AREA)
            sx, sy = w / (w // factor), h / (h // factor)
            seen = [Detection(d.id, ((d.corners + 0.5) * (sx, sy) - 0.5).astype(np.float32))
                    for d in detect(smalls[factor], small=False, fast=fast)]
        last = seen
        n = len({d.id for d in seen if d.id in wanted})
        if n >= len(wanted) or n > best_n:
            best_n = max(best_n, n)
            yield refine(gray, _best_per_id([d for d in seen if d.id in wanted])), seen
    yield [], last  # nothing (more) to fit: the caller reports what was seen


def _best_per_id(dets: list[Detection]) -> list[Detection]:
    """One detection per id: the largest (a duplicate id is usually a false detection)."""
    best: dict[int, Detection] = {}
    for d in dets:
        if d.id not in best or d.side_px > best[d.id].side_px:
            best[d.id] = d
    return list(best.values())


def locate_board(image: np.ndarray, board: Board, *, max_error_mm: float = MAX_ERROR_MM,
                 gray: np.ndarray | None = None) -> BoardPose:
    """Find the board in a frame (BGR or grey). Never raises on a bad frame: ``found=False``."""
    if not board.markers:
        return BoardPose(False, f"board file {board.name!r} has no corner markers")
    try:
        g = gray if gray is not None else to_gray(image)
    except ValueError as exc:
        return BoardPose(False, f"bad frame: {exc}")
    if float(g[::8, ::8].std()) < 1.0:
        return BoardPose(False, "blank frame (no contrast): is the camera covered?")
    wanted = set(board.markers)
    fallback: BoardPose | None = None
    for corners, seen in _passes(g, wanted):
        if not corners:
            break
        pose = _fit(board, corners, seen, max_error_mm)
        if pose.found:
            return pose
        if fallback is None or len(pose.markers_seen) > len(fallback.markers_seen):
            fallback = pose
    if fallback is not None:
        return fallback
    ids = sorted({d.id for d in seen if d.id in wanted})
    what = "no corner marker" if not ids else f"only corner marker {ids[0]}"
    return BoardPose(False, f"board not found: {what} seen (need at least 2 of "
                     f"{sorted(wanted)})", markers_seen=ids, detections=seen)


def _fit(board: Board, corners: list[Detection], seen: list[Detection],
         max_error_mm: float) -> BoardPose:
    """The homography from the corner markers' corners, and whether it fits the board."""
    ids = sorted(d.id for d in corners)
    src = np.concatenate([d.corners for d in corners]).astype(np.float64)
    dst = np.concatenate([np.asarray(board.markers[d.id].corners_mm(), float) for d in corners])
    H, mask = cv2.findHomography(src, dst, cv2.RANSAC, RANSAC_MM, maxIters=500,
                                 confidence=0.999)
    if H is None or not np.all(np.isfinite(H)) or abs(np.linalg.det(H)) < 1e-12:
        return BoardPose(False, "board not found: the corner markers give no consistent view",
                         markers_seen=ids, detections=seen, points=len(src))
    inl = mask.ravel().astype(bool)
    proj = cv2.perspectiveTransform(src.reshape(-1, 1, 2), H).reshape(-1, 2)
    err = np.linalg.norm(proj - dst, axis=1)
    Hi = np.linalg.inv(H)
    back = cv2.perspectiveTransform(dst.reshape(-1, 1, 2), Hi).reshape(-1, 2)
    err_px = np.linalg.norm(back - src, axis=1)
    rms_mm = float(np.sqrt(np.mean(err[inl] ** 2))) if inl.any() else float("inf")
    rms_px = float(np.sqrt(np.mean(err_px[inl] ** 2))) if inl.any() else float("inf")
    pose = BoardPose(True, "", H / H[2, 2], ids, int(inl.sum()), len(src), rms_mm, rms_px, seen)
    if inl.sum() < max(8, 0.7 * len(src)) or rms_mm > max_error_mm:
        pose.found = False
        pose.reason = (f"the corner markers {ids} do not fit board {board.name!r} "
                       f"(error {rms_mm:.1f} mm, {int(inl.sum())}/{len(src)} corners agree): "
                       "wrong board file?")
    return pose
    return pose


def camera_centre(pose: BoardPose, image_size: tuple[int, int]) -> tuple[float, float, float] | None:
    """Where the camera is, in board mm: (x, y, height above the board), or None.

    From the board homography alone, assuming square pixels and the principal
    point at the frame's centre (true enough for the Pi cameras): the focal
    length comes from the two orthogonality constraints of the rotation, then
    the pose. ``image_size`` is (width, height). Seen nearly straight down the
    focal length cannot be told from the board; a usual lens
    (``DEFAULT_FOCAL_RATE`` frame widths) is assumed then. None without a board.
    """
    if not pose.found or pose.H is None:
        return None
    w, h = image_size
    T = np.array([[1.0, 0, -(w - 1) / 2], [0, 1.0, -(h - 1) / 2], [0, 0, 1.0]])
    G = T @ pose.H_inv  # board mm -> image px centred on the principal point
    g1, g2 = G[:, 0], G[:, 1]
    # h1' W h2 = 0 and h1' W h1 = h2' W h2 with W = diag(1/f^2, 1/f^2, 1).
    a = np.array([g1[0] * g2[0] + g1[1] * g2[1], g1[0] ** 2 + g1[1] ** 2 - g2[0] ** 2 - g2[1] ** 2])
    b = -np.array([g1[2] * g2[2], g1[2] ** 2 - g2[2] ** 2])
    denom = float(a @ a)
    inv_f2 = float(a @ b) / denom if denom > 0 else -1.0  # least squares for 1/f^2
    f = 1.0 / np.sqrt(inv_f2) if np.isfinite(inv_f2) and inv_f2 > 0 else 0.0
    if not 0.3 * w < f < 5 * w:
        # Seen (nearly) straight down, the focal length cannot be told from the board:
        # take a usual lens (about 65 degrees across).
        f = DEFAULT_FOCAL_RATE * w
    Kinv = np.diag([1 / f, 1 / f, 1.0])
    r1, r2, t = Kinv @ g1, Kinv @ g2, Kinv @ G[:, 2]
    lam = 2.0 / (np.linalg.norm(r1) + np.linalg.norm(r2))
    r1, r2, t = r1 * lam, r2 * lam, t * lam
    if t[2] < 0:  # the board must lie in front of the camera
        r1, r2, t = -r1, -r2, -t
    R = np.column_stack([r1, r2, np.cross(r1, r2)])
    U, _, Vt = np.linalg.svd(R)
    R = U @ Vt
    C = -R.T @ t
    return float(C[0]), float(C[1]), float(abs(C[2]))
