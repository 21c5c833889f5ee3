"""The frame redrawn as seen straight down onto a plane parallel to the board."""

from __future__ import annotations

import math

import numpy as np
import pytest

from companion.boards import Board, load_board
from vision.board import BoardPose, camera_centre, locate_board
from vision.synth import Scene, table_scene
from vision.top_view import top_view

SIZE = (1280, 960)
DIE_MM = 16.0


@pytest.fixture(scope="module")
def board() -> Board:
    return load_board("standard")


def _scene(board: Board, tilt: float) -> tuple[Scene, BoardPose, tuple[float, float, float]]:
    sc = table_scene(board, {}, rng=np.random.default_rng(3), size=SIZE, tilt_deg=tilt)
    pose = locate_board(sc.image, board)
    camera = camera_centre(pose, SIZE)
    assert camera is not None
    return sc, pose, camera


@pytest.mark.parametrize("tilt", [20.0, 35.0])
def test_points_of_the_plane_land_where_the_camera_sees_them(board: Board, tilt: float) -> None:
    """Known answer from the synthetic camera: the view's pixel (x, y) is the point of the
    plane ``DIE_MM`` up that the camera sees at ``frame_point(x, y)`` (within a pixel,
    the pose and the camera's place being measured from the markers)."""
    sc, pose, camera = _scene(board, tilt)
    assert board.dice_area_mm is not None
    ax, ay, aw, ah = board.dice_area_mm
    top = np.array([ax + aw / 2, ay + ah / 2, -DIE_MM])  # world z is negative above the table
    at = sc.camera.project(top[None])[0]
    ppm = 2.0
    view = top_view(sc.image, pose, camera, (float(at[0]), float(at[1])), DIE_MM, ppm, 96)
    assert view is not None and view.image.shape == (96, 96, 3)
    cx, cy = view.centre
    for dx, dy in [(0.0, 0.0), (12.0, 0.0), (0.0, -12.0), (-9.0, 7.0)]:
        want = sc.camera.project((top + [dx, dy, 0.0])[None])[0]
        got = view.frame_point(cx + dx * ppm, cy + dy * ppm)
        assert math.dist(got, want) < 1.0, (dx, dy, got, want)
    # ``away`` points from the camera's foot through the point.
    out = top[:2] - sc.camera.C[:2]
    assert float(np.dot(view.away, out / np.linalg.norm(out))) > 0.99


def test_the_view_shows_the_frame_there(board: Board) -> None:
    """The view's pixels are the frame's at the points they map to."""
    sc, pose, camera = _scene(board, 30.0)
    assert board.dice_area_mm is not None
    ax, ay, aw, ah = board.dice_area_mm
    at = pose.to_px(np.array([[ax + 30.0, ay + 25.0]]))[0]
    view = top_view(sc.image, pose, camera, (float(at[0]), float(at[1])), 0.0, 1.0, 120)
    assert view is not None
    grey_view = view.image.astype(float).mean(axis=2)
    grey = sc.image.astype(float).mean(axis=2)
    diffs = []
    for y in range(10, 110, 20):
        for x in range(10, 110, 20):
            fx, fy = view.frame_point(x, y)
            diffs.append(abs(grey_view[y, x] - grey[int(round(fy)), int(round(fx))]))
    assert np.median(diffs) < 12


def test_no_view_where_the_geometry_fails(board: Board) -> None:
    sc, pose, camera = _scene(board, 25.0)
    at = (SIZE[0] / 2, SIZE[1] / 2)
    assert top_view(sc.image, pose, camera, at, camera[2] + 1.0, 1.0, 32) is None  # above the camera
    assert top_view(sc.image, BoardPose(found=False, reason="no markers"), camera, at,
                    DIE_MM, 1.0, 32) is None
    assert top_view(sc.image, pose, camera, at, DIE_MM, 0.0, 32) is None
    assert top_view(sc.image, pose, camera, at, DIE_MM, 1.0, 0) is None
    nowhere = BoardPose(found=True, H=np.full((3, 3), np.nan))
    assert top_view(sc.image, nowhere, camera, at, DIE_MM, 1.0, 32) is None
