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


def _bench_scene(seed: int, i: int, **kw: object):  # type: ignore[no-untyped-def]
    """Scene i of ``companion bench vision --seed SEED`` (the standard board, 2028x1520)."""
    from vision.bench import bench_board_image, bench_scene
    from vision.synth import demo_board

    board = demo_board()
    sc = bench_scene(board, bench_board_image(board), seed, i, **kw)
    return board, sc.riders, sc


def _space_errors(board, scene, pose) -> tuple[np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    """The fit's true error at every space centre (mm), and the error it owns up to there."""
    pts = np.array([s.center_mm for s in board.spaces.values()], float)
    H = scene.board_to_image
    px = (H @ np.c_[pts, np.ones(len(pts))].T).T
    est = pose.to_mm(px[:, :2] / px[:, 2:])
    return np.linalg.norm(est - pts, axis=1), pose.fit_sigma_mm(est)


def test_corner_marker_missed_at_quarter_size() -> None:
    # Bench run --seed 1000, scene 36 (34 degrees): marker 0 is not found in the
    # quarter-size frame and the corners found there were up to 7 px off; the fit
    # on markers 1-3 was taken as it was, 20-40 mm off at the board's left edge,
    # and put two riders on a wrong space.
    board, _, scene = _bench_scene(1000, 36)
    pose = locate_board(scene.image, board)
    assert pose.found and pose.markers_seen == [0, 1, 2, 3]
    err, sigma = _space_errors(board, scene, pose)
    assert err.max() < 1.0
    assert sigma.max() < 0.5


@pytest.mark.parametrize("seed,corner", [(0, 1), (0, 2), (4, 1), (5, 3)])
def test_hidden_corner_at_high_tilt_owns_up_to_its_error(seed: int, corner: int) -> None:
    # A hand over one corner marker at 34 degrees: the three others are all used
    # (before, one of them was often missed at quarter size and the board fitted
    # on two), and where the fit extrapolates toward the hidden corner it says how
    # far off it may be, so the tokens there get a wider margin (unclear, not wrong).
    from vision.synth import demo_board, random_riders
    from vision.tokens import FIT_SIGMA_OK, FIT_SIGMAS, MARGIN_MM

    board = demo_board()
    rng = np.random.default_rng(seed)
    riders = random_riders(board, rng, 16)
    scene = table_scene(board, riders, rng=rng, hide_corners=(corner,), tilt_deg=34.0,
                        blur_sigma=1.0)
    pose = locate_board(scene.image, board)
    assert pose.found and corner not in pose.markers_seen
    err, sigma = _space_errors(board, scene, pose)
    margin = MARGIN_MM + FIT_SIGMAS * np.maximum(0.0, sigma - FIT_SIGMA_OK)
    if len(pose.markers_seen) == 3:
        assert err.max() < 7.0
    assert np.all(err < margin - 0.5)  # room left for the token's own error
    # The doubt is where the missing marker is.
    m = board.markers[corner]
    near = np.array([s.center_mm for s in board.spaces.values()], float)
    d = np.linalg.norm(near - (m.x_mm, m.y_mm), axis=1)
    assert sigma[d < 300].mean() > sigma[d > 700].mean()


def test_camera_centre_is_remembered_for_its_homography_and_frame_size() -> None:
    """The table asks for the camera's place several times a frame: the answer is kept
    on the pose, and a new homography (the board moved) or frame size gives a new one."""
    from vision.board import BoardPose, camera_centre

    H = np.array([[0.5, 0.05, -300.0], [0.02, 0.6, -200.0], [1e-5, 2e-4, 1.0]])
    pose = BoardPose(found=True, H=H.copy())
    first = camera_centre(pose, (2028, 1520))
    assert first is not None and pose._camera is not None
    assert camera_centre(pose, (2028, 1520)) is first  # kept, not computed again
    other_size = camera_centre(pose, (1014, 760))
    assert other_size is not None and other_size != first
    pose.H = H + np.array([[0, 0, 5.0], [0, 0, 0], [0, 0, 0]])
    moved = camera_centre(pose, (2028, 1520))
    assert moved is not None and moved != first
    assert camera_centre(BoardPose(found=True, H=H.copy()), (2028, 1520)) == first
    assert camera_centre(BoardPose(found=False), (2028, 1520)) is None
