"""A frame redrawn as seen straight down onto a plane parallel to the board.

A camera tilted over the table sees a die's top face squashed and its side
faces beside it. With the board's pose and the camera's place
(:func:`vision.board.camera_centre`), a patch of the frame can be redrawn as
a camera straight above would see the plane ``height_mm`` over the board:
there a flat die's top face, which lies in the plane ``die_mm`` up, is a
square of the die's size whatever the tilt, and its side faces fall on the
camera's side of it. Planes parallel to the board are all seen alike from one
camera (one is the other scaled about the camera's foot), so a point of the
plane maps to the board through a scaling, then to the frame through the pose.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.board import BoardPose


@dataclass(frozen=True)
class TopView:
    """A redrawn patch: ``image`` (size x size, BGR), ``to_frame`` (3x3, view px to
    frame px) and ``away``, the unit vector in view px pointing away from the
    camera's foot (toward the far side of what stands on the plane; (0, 0) right
    at the foot)."""

    image: np.ndarray
    to_frame: np.ndarray
    away: tuple[float, float]

    @property
    def centre(self) -> tuple[float, float]:
        """The view's centre, in view px."""
        c = (self.image.shape[1] - 1) / 2
        return c, c

    def frame_point(self, x: float, y: float) -> tuple[float, float]:
        """The frame px of view px (x, y)."""
        q = self.to_frame @ np.array([x, y, 1.0])
        return float(q[0] / q[2]), float(q[1] / q[2])


def top_view(frame: np.ndarray, pose: BoardPose, camera: tuple[float, float, float],
             at_px: tuple[float, float], height_mm: float, px_per_mm: float,
             size: int) -> TopView | None:
    """The plane ``height_mm`` above the board seen straight down, ``size`` px square at
    ``px_per_mm``, centred where the ray through frame px ``at_px`` meets the plane.

    ``camera`` is the camera's place in board mm (x, y, height above the board).
    None where the geometry fails: the camera not above the plane, no board pose,
    or a non-finite map.
    """
    fx, fy, cam_h = camera
    if not cam_h > height_mm or pose.H is None or size < 1 or not px_per_mm > 0:
        return None
    b = pose.to_mm(np.array([at_px], float))[0]
    if not np.all(np.isfinite(b)):
        return None
    foot = np.array([fx, fy])
    away = b - foot
    dist = float(np.hypot(*away))
    k = cam_h / (cam_h - height_mm)  # a point of the plane, seen on the board: k times as far out
    p0 = foot + away / k  # the view's centre, on the plane (board mm)
    c = (size - 1) / 2
    view_to_plane = np.array([[1 / px_per_mm, 0, p0[0] - c / px_per_mm],
                              [0, 1 / px_per_mm, p0[1] - c / px_per_mm], [0, 0, 1]])
    plane_to_board = np.array([[k, 0, fx * (1 - k)], [0, k, fy * (1 - k)], [0, 0, 1]])
    m = pose.H_inv @ plane_to_board @ view_to_plane
    if not np.all(np.isfinite(m)):
        return None
    image = cv2.warpPerspective(frame, m, (size, size),
                                flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                borderMode=cv2.BORDER_REPLICATE)
    unit = (float(away[0] / dist), float(away[1] / dist)) if dist > 0 else (0.0, 0.0)
    return TopView(image, m, unit)
