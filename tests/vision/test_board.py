"""Board localisation: the homography from the corner markers, under every distortion."""

from __future__ import annotations

import numpy as np
import pytest

from companion.boards import parse_board
from vision.board import locate_board
from vision.synth import table_scene

BOARD_TEXT = """
.o  .o  .   c3  c3  .   .   u2  u2  . |A .
.o  .o  .   c3  .   .   .   u2  u2  . |A .
=   =   _   _   _   _   _   _   _   _    _
.o  .o  .   c3  c3  .   .   u2  u2  . |A .
.o  .o  .   c3  c3  .   .   d1  d1  . |A .
"""
BOARD, _ = parse_board(BOARD_TEXT, name="test board")
SIZE = (1014, 760)


def _scene(seed: int = 0, **kw: object):  # type: ignore[no-untyped-def]
    kw.setdefault("size", SIZE)
    return table_scene(BOARD, {}, rng=np.random.default_rng(seed), **kw)  # type: ignore[arg-type]


def _true_error_mm(scene, pose) -> float:  # type: ignore[no-untyped-def]
    """Largest error of the fitted homography at the space centres, in mm."""
    pts = np.array([s.center_mm for s in BOARD.spaces.values()], float)
    H = scene.board_to_image
    px = (H @ np.c_[pts, np.ones(len(pts))].T).T
    px = px[:, :2] / px[:, 2:]
    return float(np.max(np.linalg.norm(pose.to_mm(px) - pts, axis=1)))


@pytest.mark.parametrize("kw", [
    {"tilt_deg": 35.0, "blur_sigma": 0.5, "noise_sigma": 2.0},
    {"tilt_deg": 10.0, "rotation_deg": 90.0},
    {"tilt_deg": 10.0, "rotation_deg": 180.0 + 37.0},
    {"tilt_deg": 20.0, "blur_sigma": 1.5},
    {"tilt_deg": 20.0, "noise_sigma": 10.0},
    {"tilt_deg": 25.0, "uneven_light": True, "shadows": True, "blur_sigma": 1.0},
], ids=["tilt35", "rot90", "rot217", "blur1.5", "noise10", "light"])
def test_board_found_under_distortion(kw: dict[str, float]) -> None:
    scene = _scene(3, **kw)
    pose = locate_board(scene.image, BOARD)
    assert pose.found, pose.reason
    assert pose.markers_seen == [0, 1, 2, 3]
    assert pose.error_mm < 1.0 and pose.error_px < 2.0
    assert _true_error_mm(scene, pose) < 1.5


def test_one_corner_hidden_by_a_hand() -> None:
    for corner in (0, 2):
        scene = _scene(5, tilt_deg=30.0, hide_corners=(corner,))
        pose = locate_board(scene.image, BOARD)
        assert pose.found, pose.reason
        assert corner not in pose.markers_seen and len(pose.markers_seen) == 3
        assert pose.points == 12
        assert _true_error_mm(scene, pose) < 2.5


def test_only_one_corner_visible_is_not_the_board() -> None:
    scene = _scene(6, tilt_deg=5.0, hide_corners=(1, 2, 3))
    pose = locate_board(scene.image, BOARD)
    assert not pose.found
    assert "need at least 2" in pose.reason


def test_no_board_in_the_frame() -> None:
    rng = np.random.default_rng(1)
    img = rng.integers(0, 255, (760, 1014, 3), dtype=np.uint8)
    pose = locate_board(img, BOARD)
    assert not pose.found and "no corner marker" in pose.reason
    assert pose.H is None


def test_wrong_board_file() -> None:
    other, _ = parse_board("\n".join([". " * 20] * 3), name="other board")
    scene = _scene(2, tilt_deg=15.0)
    pose = locate_board(scene.image, other)
    assert not pose.found
    assert "wrong board file" in pose.reason


def test_board_file_without_markers() -> None:
    from dataclasses import replace

    bare = replace(BOARD, markers={})
    pose = locate_board(_scene(1).image, bare)
    assert not pose.found and "no corner markers" in pose.reason


@pytest.mark.parametrize("frame", [
    np.zeros((0, 0, 3), np.uint8),
    np.zeros((0, 640), np.uint8),
    np.full((480, 640, 3), 128, np.uint8),
    np.zeros((4, 4, 3), np.uint8),
    np.zeros((480, 640, 5), np.uint8),
    np.zeros((10,), np.uint8),
], ids=["empty", "zero-width", "grey", "tiny", "5-channel", "1-d"])
def test_broken_frames_never_crash(frame: np.ndarray) -> None:
    pose = locate_board(frame, BOARD)
    assert not pose.found and pose.reason


def test_other_frame_formats() -> None:
    scene = _scene(4, tilt_deg=10.0)
    grey = scene.image.mean(axis=2).astype(np.uint8)
    assert locate_board(grey, BOARD).found
    assert locate_board(scene.image.astype(np.float32) / 255.0, BOARD).found
    bgra = np.dstack([scene.image, np.full(grey.shape, 255, np.uint8)])
    assert locate_board(bgra, BOARD).found


def test_pose_helpers_round_trip() -> None:
    pose = locate_board(_scene(7, tilt_deg=20.0).image, BOARD)
    pts = np.array([[60.0, 70.0], [300.0, 150.0]])
    assert np.allclose(pose.to_mm(pose.to_px(pts)), pts, atol=1e-6)
    assert 1.0 < pose.px_per_mm((200.0, 100.0)) < 4.0
