"""Board localisation: the corner markers and the homography image px -> board mm.

The four corner markers (ids 0-3, placed as the board file says) are found in
the frame, and the homography is fitted with RANSAC on *all* their visible
corners, so one marker hidden by a hand still leaves 12 points. The result
says clearly when the board is not found and why, and gives the reprojection
error and how far the fit may be off at any point (``fit_sigma_mm``). For
speed the markers are searched in a quarter-size copy of the frame, then a
half-size one, then the full frame, stopping as soon as all corner markers
are seen (a marker still missing is first looked for where the fit puts
it); each marker is found again in a crop of the full-size frame and its
corners refined there.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np

from companion.boards import Board
from vision.markers import Detection, detect, dictionary, refine, to_gray

MAX_ERROR_MM = 3.0  # RMS reprojection error above which the markers do not fit the board file
RANSAC_MM = 2.5
CORNER_SIGMA_PX = 0.35  # scatter of refined marker corners on good frames (synthetic: 0.3-0.6)
MAX_SUBPIX_SHIFT_PX = 1.5  # cornerSubPix moving a contour corner farther is not trusted
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
    # Covariance of the fit's board mm -> image px homography (its first 8 entries,
    # the last one being 1), from the corners' scatter: how far the fit may be off.
    cov: np.ndarray | None = None
    # H_inv of the H it was computed from (the tokens reader asks for it per token).
    _inv: tuple[bytes, np.ndarray] | None = field(default=None, init=False, repr=False,
                                                  compare=False)
    # camera_centre's answer for the H and frame size it was computed from (the table
    # asks for it several times a frame: the dice area, the look beside, the tilt check).
    _camera: tuple[bytes, tuple[int, int], tuple[float, float, float]] | None = field(
        default=None, init=False, repr=False, compare=False)

    @property
    def H_inv(self) -> np.ndarray:
        """Board mm -> image px."""
        if self.H is None:
            raise ValueError("board not found")
        key = self.H.tobytes()
        if self._inv is None or self._inv[0] != key:
            Hi = np.linalg.inv(self.H)
            self._inv = (key, Hi / Hi[2, 2])
        return self._inv[1].copy()

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

    def fit_sigma_mm(self, pts_mm: np.ndarray) -> np.ndarray:
        """How far the fit may put points of the board off (N,): one sigma, in mm.

        The corners' scatter about the fit, carried through the homography's
        covariance to each point (the larger axis of its error ellipse). Small
        (0.1-0.3 mm) with the four corner markers seen; with one hidden, the
        fit extrapolates to where it should be and this grows there (a few mm).
        """
        pts = np.asarray(pts_mm, np.float64).reshape(-1, 2)
        if self.cov is None or self.H is None:
            return np.full(len(pts), np.inf if not self.found else 0.0)
        G = self.H_inv
        x, y = pts[:, 0], pts[:, 1]
        w = G[2, 0] * x + G[2, 1] * y + 1.0
        u = (G[0, 0] * x + G[0, 1] * y + G[0, 2]) / w
        v = (G[1, 0] * x + G[1, 1] * y + G[1, 2]) / w
        J = _jacobian(x, y, u, v, w)  # (N, 2, 8): d(u, v)/d(params)
        # d(u, v)/d(x, y): a small error in image px is this much error in board mm.
        A = np.empty((len(pts), 2, 2))
        A[:, 0, 0] = (G[0, 0] - u * G[2, 0]) / w
        A[:, 0, 1] = (G[0, 1] - u * G[2, 1]) / w
        A[:, 1, 0] = (G[1, 0] - v * G[2, 0]) / w
        A[:, 1, 1] = (G[1, 1] - v * G[2, 1]) / w
        M = np.linalg.solve(A, J)  # (N, 2, 8)
        C = M @ self.cov @ M.transpose(0, 2, 1)  # (N, 2, 2)
        tr, det = C[:, 0, 0] + C[:, 1, 1], C[:, 0, 0] * C[:, 1, 1] - C[:, 0, 1] ** 2
        big = tr / 2 + np.sqrt(np.maximum(tr * tr / 4 - det, 0.0))
        return np.sqrt(np.maximum(big, 0.0))

    def px_per_mm(self, at_mm: tuple[float, float]) -> float:
        """Local scale of the view (image px per board mm) at a point of the board."""
        G = self.H_inv
        x, y = at_mm
        q = G @ np.array([[x, x + 1, x], [y, y, y + 1], [1.0, 1.0, 1.0]])
        p = q[:2] / q[2]
        return float(max(math.hypot(p[0, 1] - p[0, 0], p[1, 1] - p[1, 0]),
                         math.hypot(p[0, 2] - p[0, 0], p[1, 2] - p[1, 0])))


def _jacobian(x: np.ndarray, y: np.ndarray, u: np.ndarray, v: np.ndarray,
              w: np.ndarray) -> np.ndarray:
    """d(u, v)/d(g0..g7) of the homography (g, 1) board mm -> image px at (x, y): (N, 2, 8)."""
    J = np.zeros((len(x), 2, 8))
    J[:, 0, 0], J[:, 0, 1], J[:, 0, 2] = x / w, y / w, 1 / w
    J[:, 1, 3], J[:, 1, 4], J[:, 1, 5] = x / w, y / w, 1 / w
    J[:, 0, 6], J[:, 0, 7] = -u * x / w, -u * y / w
    J[:, 1, 6], J[:, 1, 7] = -v * x / w, -v * y / w
    return J


def _fit_cov(H: np.ndarray, src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
    """Covariance of the fit's mm -> px homography from its inlier corners (px, mm).

    The corners' error is taken as their residual's scatter (degrees of freedom
    counted), and never below ``CORNER_SIGMA_PX``, what refined corners
    achieve on good frames.
    """
    G = np.linalg.inv(H)
    G = G / G[2, 2]
    x, y = dst[:, 0], dst[:, 1]
    w = G[2, 0] * x + G[2, 1] * y + 1.0
    u = (G[0, 0] * x + G[0, 1] * y + G[0, 2]) / w
    v = (G[1, 0] * x + G[1, 1] * y + G[1, 2]) / w
    J = _jacobian(x, y, u, v, w).reshape(-1, 8)
    dof = 2 * len(src) - 8
    if dof <= 0:
        return None
    r2 = float(np.sum((u - src[:, 0]) ** 2 + (v - src[:, 1]) ** 2))
    sigma2 = max(CORNER_SIGMA_PX ** 2, r2 / dof)
    try:
        return sigma2 * np.linalg.inv(J.T @ J)
    except np.linalg.LinAlgError:
        return None


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
            yield _refine_full(gray, _best_per_id([d for d in seen if d.id in wanted])), seen
    yield [], last  # nothing (more) to fit: the caller reports what was seen


@lru_cache(maxsize=1)
def _crop_detector() -> cv2.aruco.ArucoDetector:
    """ArUco for one marker filling a small crop of the full frame, corners on its contour."""
    p = cv2.aruco.DetectorParameters()
    p.adaptiveThreshWinSizeMin = 13
    p.adaptiveThreshWinSizeMax = 33
    p.adaptiveThreshWinSizeStep = 10
    p.minMarkerPerimeterRate = 0.1
    p.polygonalApproxAccuracyRate = 0.05
    p.errorCorrectionRate = 0.5
    p.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_CONTOUR
    return cv2.aruco.ArucoDetector(dictionary(), p)


def _in_crop(gray: np.ndarray, marker_id: int, box: tuple[float, float, float, float]
             ) -> Detection | None:
    """The marker ``marker_id`` found in a crop (x0, y0, x1, y1) of the full frame, or None.

    Corners on the fitted contour, then ``cornerSubPix``; cornerSubPix can be
    drawn to another corner nearby (the board's edge, a shadow), so a corner it
    moves farther than ``MAX_SUBPIX_SHIFT_PX`` keeps the contour's.
    """
    h, w = gray.shape
    x0, y0 = int(max(0, box[0])), int(max(0, box[1]))
    x1, y1 = int(min(w, box[2] + 1)), int(min(h, box[3] + 1))
    if x1 - x0 < 12 or y1 - y0 < 12:
        return None
    cs, ids, _ = _crop_detector().detectMarkers(gray[y0:y1, x0:x1])
    if ids is None:
        return None
    for cc, i in zip(cs, ids.ravel(), strict=True):
        if int(i) == marker_id:
            found = Detection(marker_id, (cc.reshape(4, 2) + (x0, y0)).astype(np.float32))
            sub = refine(gray, [found])[0].corners
            moved = np.linalg.norm(sub - found.corners, axis=1) > MAX_SUBPIX_SHIFT_PX
            return Detection(marker_id, np.where(moved[:, None], found.corners, sub))
    return None


def _refine_full(gray: np.ndarray, detections: list[Detection]) -> list[Detection]:
    """The corners of markers found in a reduced frame, found again in the full frame.

    A corner found at quarter size can be 4-10 px off at full size, too far for
    ``cornerSubPix`` alone to pull it in (it then settles on a wrong point and
    the board fit follows it: a board 20-40 mm off at the far side). So each
    marker is detected again in a crop of the full frame around it
    (``_in_crop``); a marker not found again keeps the plain refinement.
    """
    out = []
    for d in detections:
        c = d.corners
        m = max(10.0, 0.4 * d.side_px)
        box = (c[:, 0].min() - m, c[:, 1].min() - m, c[:, 0].max() + m, c[:, 1].max() + m)
        again = _in_crop(gray, d.id, box)
        out += [again] if again is not None else refine(gray, [d])
    return out


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
    best: BoardPose | None = None
    fallback: BoardPose | None = None
    seen: list[Detection] = []
    for corners, seen in _passes(g, wanted):
        if not corners:
            break
        pose = _fit(board, corners, seen, max_error_mm)
        if pose.found and len(pose.markers_seen) < len(wanted):
            # A fit on fewer markers is weak where the missing one should be: look
            # for it at full size where this fit puts it, then (if it is still
            # missing and the fit rests on two markers only) in the next passes.
            more = _look_where_missing(g, board, pose, wanted)
            if more:
                again = _fit(board, corners + more, seen, max_error_mm)
                if again.found:
                    pose = again
            if len(pose.markers_seen) >= len(wanted) - 1:
                return pose
        if pose.found:
            if len(pose.markers_seen) == len(wanted):
                return pose
            if best is None or len(pose.markers_seen) > len(best.markers_seen):
                best = pose
        elif fallback is None or len(pose.markers_seen) > len(fallback.markers_seen):
            fallback = pose
    if best is not None:
        return best
    if fallback is not None:
        return fallback
    ids = sorted({d.id for d in seen if d.id in wanted})
    what = "no corner marker" if not ids else f"only corner marker {ids[0]}"
    return BoardPose(False, f"board not found: {what} seen (need at least 2 of "
                     f"{sorted(wanted)})", markers_seen=ids, detections=seen)


def _look_where_missing(gray: np.ndarray, board: Board, pose: BoardPose,
                        wanted: set[int]) -> list[Detection]:
    """The corner markers a fit lacks, searched at full size where the fit puts them."""
    out = []
    for mid in sorted(wanted - set(pose.markers_seen)):
        px = pose.to_px(np.asarray(board.markers[mid].corners_mm(), float))
        if not np.all(np.isfinite(px)):
            continue
        side = float(np.linalg.norm(px - np.roll(px, 1, axis=0), axis=1).mean())
        m = max(20.0, 0.8 * side)
        box = (px[:, 0].min() - m, px[:, 1].min() - m, px[:, 0].max() + m, px[:, 1].max() + m)
        if box[2] - box[0] > 0.5 * gray.shape[1] or box[3] - box[1] > 0.5 * gray.shape[0]:
            continue  # the fit is too loose to say where: the full-size pass will look
        d = _in_crop(gray, mid, box)
        if d is not None:
            out.append(d)
    return out


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
    pose = BoardPose(True, "", H / H[2, 2], ids, int(inl.sum()), len(src), rms_mm, rms_px, seen,
                     _fit_cov(H, src[inl], dst[inl]))
    if inl.sum() < max(8, 0.7 * len(src)) or rms_mm > max_error_mm:
        pose.found = False
        pose.reason = (f"the corner markers {ids} do not fit board {board.name!r} "
                       f"(error {rms_mm:.1f} mm, {int(inl.sum())}/{len(src)} corners agree): "
                       "wrong board file?")
    return pose


def camera_centre(pose: BoardPose, image_size: tuple[int, int]) -> tuple[float, float, float] | None:
    """Where the camera is, in board mm: (x, y, height above the board), or None.

    From the board homography alone, assuming square pixels and the principal
    point at the frame's centre (true enough for the Pi cameras): the focal
    length comes from the two orthogonality constraints of the rotation, then
    the pose. ``image_size`` is (width, height). Seen nearly straight down the
    focal length cannot be told from the board; a usual lens
    (``DEFAULT_FOCAL_RATE`` frame widths) is assumed then. None without a board.
    Remembered on ``pose`` for its ``H`` and this frame size.
    """
    if not pose.found or pose.H is None:
        return None
    key = pose.H.tobytes()
    size = (int(image_size[0]), int(image_size[1]))
    if pose._camera is not None and pose._camera[:2] == (key, size):
        return pose._camera[2]
    centre = _camera_centre(pose, size)
    pose._camera = (key, size, centre)
    return centre


def _camera_centre(pose: BoardPose, image_size: tuple[int, int]) -> tuple[float, float, float]:
    """:func:`camera_centre` computed (``pose`` found, with its ``H``)."""
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
