"""The synthetic table: deterministic, and its ground truth matches what it draws."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from companion.boards import parse_board
from vision.markers import detect, to_gray
from vision.synth import _draw_cocked_die, look_at, random_riders, table_scene

BOARD, _ = parse_board("""
.o  .o  .   c3  c3  .   .   u2 |A .
.o  .o  .   c3  .   .   .   u2 |A .
.o  .o  .   c3  c3  .   .   d1 |A .
""", name="synth board")
SIZE = (800, 600)


def test_same_seed_same_scene_and_truth() -> None:
    a = table_scene(BOARD, {21: "a3", 31: "b5"}, rng=np.random.default_rng(42), size=SIZE)
    b = table_scene(BOARD, {21: "a3", 31: "b5"}, rng=np.random.default_rng(42), size=SIZE)
    c = table_scene(BOARD, {21: "a3", 31: "b5"}, rng=np.random.default_rng(43), size=SIZE)
    assert np.array_equal(a.image, b.image)
    assert a.dice == b.dice and a.token_mm == b.token_mm and a.params == b.params
    assert not np.array_equal(a.image, c.image)


def test_default_frame_size_and_truth() -> None:
    rng = np.random.default_rng(0)
    riders = random_riders(BOARD, rng, 16)
    assert len(riders) == 16 and len(set(riders.values())) == 16
    sc = table_scene(BOARD, riders, rng=rng)
    assert sc.image.shape == (1520, 2028, 3) and sc.image.dtype == np.uint8
    assert sc.riders == riders
    assert 0.0 <= sc.params["tilt_deg"] <= 35.0
    assert 0.3 <= sc.params["blur_sigma"] <= 1.5
    # Two dice by default, values 1-6, their centres inside the frame.
    assert len(sc.dice) == 2
    for d in sc.dice:
        assert 1 <= d.value <= 6
        assert 0 <= d.center[0] < 2028 and 0 <= d.center[1] < 1520
    # Every token centre is inside its space's polygon.
    for rider, space in riders.items():
        x, y = sc.token_mm[rider]
        poly = np.array(BOARD.spaces[space].polygon_mm)
        assert poly[:, 0].min() < x < poly[:, 0].max() and poly[:, 1].min() < y < poly[:, 1].max()


def test_given_dice_values_and_no_dice() -> None:
    sc = table_scene(BOARD, {}, rng=np.random.default_rng(1), size=SIZE, dice_values=[6, 1, 3])
    assert [d.value for d in sc.dice] == [6, 1, 3]
    assert table_scene(BOARD, {}, rng=np.random.default_rng(1), size=SIZE, n_dice=0).dice == []


def test_markers_drawn_where_the_truth_says() -> None:
    sc = table_scene(BOARD, {}, rng=np.random.default_rng(2), size=SIZE, tilt_deg=20.0,
                     blur_sigma=0.5, noise_sigma=1.0)
    H = sc.board_to_image
    seen = {d.id: d for d in detect(to_gray(sc.image))}
    assert {0, 1, 2, 3} <= set(seen)
    for mid, m in BOARD.markers.items():
        corners = np.array(m.corners_mm(), float)
        px = (H @ np.c_[corners, np.ones(4)].T).T
        px = px[:, :2] / px[:, 2:]
        assert np.max(np.linalg.norm(seen[mid].corners - px, axis=1)) < 1.5


def test_camera_homography_matches_projection() -> None:
    cam = look_at(np.array([200.0, 100.0, 0.0]), 30.0, 45.0, 10.0, 900.0, 1500.0, (2028, 1520))
    pts = np.array([[0.0, 0.0], [400.0, 0.0], [123.0, 321.0]])
    H = cam.homography(0.0)
    a = (H @ np.c_[pts, np.ones(3)].T).T
    a = a[:, :2] / a[:, 2:]
    b = cam.project(np.c_[pts, np.zeros(3)])
    assert np.allclose(a, b, atol=1e-6)
    # The plane 10 mm above the table (negative z) too.
    H10 = cam.homography(-10.0)
    c = (H10 @ np.c_[pts, np.ones(3)].T).T
    assert np.allclose(c[:, :2] / c[:, 2:], cam.project(np.c_[pts, np.full(3, -10.0)]), atol=1e-6)


def test_die_side_px_is_the_top_face_seen_by_the_camera() -> None:
    """The side of a die's top face in px: through the plane of the top face
    (``homography(-size)``), larger than the same square on the table, and growing
    with the die."""
    sc = table_scene(BOARD, {}, rng=np.random.default_rng(5), size=SIZE, n_dice=2, die_mm=16.0)
    for d in sc.dice:
        x, y = d.center_mm
        sq = np.array([[x - 8, y - 8, 1], [x + 8, y - 8, 1], [x + 8, y + 8, 1], [x - 8, y + 8, 1]])
        top = (sc.camera.homography(-16.0) @ sq.T).T
        top = top[:, :2] / top[:, 2:]
        side = np.linalg.norm(top - np.roll(top, 1, axis=0), axis=1).mean()
        assert sc.die_side_px(d) == pytest.approx(side, rel=1e-9)
        flat = (sc.camera.homography(0.0) @ sq.T).T
        flat = flat[:, :2] / flat[:, 2:]
        assert sc.die_side_px(d) > np.linalg.norm(flat - np.roll(flat, 1, axis=0), axis=1).mean()
        assert sc.die_side_px(replace(d, size_mm=24.0)) > sc.die_side_px(d)


def test_dice_look_like_dice() -> None:
    """A die's top face: a bright square with dark pips (or the reverse) at its centre."""
    sc = table_scene(BOARD, {}, rng=np.random.default_rng(5), size=SIZE, dice_values=[5],
                     blur_sigma=0.3, noise_sigma=0.5, tilt_deg=0.0)
    (d,) = sc.dice
    g = to_gray(sc.image).astype(float)
    x, y = int(round(d.center[0])), int(round(d.center[1]))
    patch = g[y - 6:y + 7, x - 6:x + 7]
    assert patch.max() - patch.min() > 60  # the centre pip of a five on the face


def test_hidden_corner_is_really_hidden() -> None:
    sc = table_scene(BOARD, {}, rng=np.random.default_rng(3), size=SIZE, hide_corners=(2,))
    ids = {d.id for d in detect(to_gray(sc.image))}
    assert 2 not in ids and {0, 1, 3} <= ids


def test_touching_dice_lie_face_to_face() -> None:
    """``dice_touching``: the second die beside the first, a die's side apart (2-12 %
    gap), both in the frame; without it the frames are those of earlier code."""
    for seed in range(6):
        sc = table_scene(BOARD, {}, rng=np.random.default_rng(seed), size=SIZE,
                         dice_touching=True)
        a, b = sc.dice
        gap = float(np.hypot(a.center_mm[0] - b.center_mm[0], a.center_mm[1] - b.center_mm[1]))
        assert 1.02 * a.size_mm - 1e-6 <= gap <= 1.12 * a.size_mm + 1e-6
        for d in sc.dice:
            assert 0 <= d.center[0] < SIZE[0] and 0 <= d.center[1] < SIZE[1]
    plain = table_scene(BOARD, {}, rng=np.random.default_rng(0), size=SIZE)
    again = table_scene(BOARD, {}, rng=np.random.default_rng(0), size=SIZE, dice_touching=False)
    assert np.array_equal(plain.image, again.image)
    far = plain.dice
    assert np.hypot(far[0].center_mm[0] - far[1].center_mm[0],
                    far[0].center_mm[1] - far[1].center_mm[1]) >= 2.2 * far[0].size_mm


@pytest.mark.parametrize("lean_deg", [25.0, 45.0, 65.0])
def test_a_cocked_die_rests_on_an_edge(lean_deg: float) -> None:
    """Seen straight down, a die tipped by ``lean`` about a bottom edge covers a die
    by die x (cos + sin of the lean) rectangle (the top and a side face, both with
    pips), not a die's square."""
    # Far away with a long lens: the top, 100 mm up, is seen at nearly the scale of the base.
    cam = look_at(np.array([0.0, 0.0, 0.0]), 0.0, 0.0, 0.0, 30000.0, 15000.0, (400, 400))
    img = np.full((400, 400, 3), 128, np.uint8)
    lean = np.radians(lean_deg)
    # Light straight down: the shadow is the die's own outline.
    _draw_cocked_die(img, cam, (0.0, 0.0), 100.0, 0.3, float(lean), (5, 3, 1),
                     (235, 235, 235), (20, 20, 20), np.zeros(2))
    painted = np.argwhere(np.any(img != 128, axis=2))[:, ::-1].astype(np.float32)
    (_, _), (w, h), _ = cv2.minAreaRect(painted)
    die_px = 100.0 * 15000.0 / 30000.0  # 50 px; the outline adds ~3 px of antialiasing
    long_side = die_px * (np.cos(lean) + np.sin(lean))
    assert sorted((w, h)) == pytest.approx(sorted((die_px, long_side)), abs=4.0)
    # Two faces of different brightness show, each with dark pips.
    body = img[np.all(img > 60, axis=2)].mean(axis=1)
    assert body.max() - body.min() > 15
    assert np.count_nonzero(np.all(img < 60, axis=2)) > 20


def test_cocked_dice_in_a_scene() -> None:
    """``dice_cocked``: those dice rest on an edge, their truth unreadable (0), the
    lean in ``params``; without it the frames are those of earlier code."""
    sc = table_scene(BOARD, {}, rng=np.random.default_rng(7), size=SIZE, dice_values=[4, 2],
                     dice_cocked=(1,))
    assert [d.value for d in sc.dice] == [4, 0]
    assert 20.0 <= sc.params["cocked_lean_deg"] <= 70.0
    plain = table_scene(BOARD, {}, rng=np.random.default_rng(7), size=SIZE)
    again = table_scene(BOARD, {}, rng=np.random.default_rng(7), size=SIZE, dice_cocked=())
    assert np.array_equal(plain.image, again.image) and "cocked_lean_deg" not in plain.params


def test_flat_dice_show_their_side_faces_pips() -> None:
    """A tilted camera sees a flat die's side faces, and on them pips (drawn unless
    ``side_pips=False``, the render before 2026-11-29); nothing else in the frame
    changes, nor the truth."""
    kw = dict(size=SIZE, dice_values=[6, 5], tilt_deg=30.0, blur_sigma=0.3, noise_sigma=0.0)
    pips = table_scene(BOARD, {}, rng=np.random.default_rng(3), **kw)  # type: ignore[arg-type]
    plain = table_scene(BOARD, {}, rng=np.random.default_rng(3), side_pips=False,
                        **kw)  # type: ignore[arg-type]
    assert pips.dice == plain.dice and pips.params == plain.params
    changed = np.argwhere(np.any(pips.image != plain.image, axis=2))[:, ::-1]
    assert len(changed) > 20
    near = np.zeros(len(changed), bool)
    for d in pips.dice:
        side = pips.die_side_px(d)
        near |= np.hypot(*(changed - np.array(d.center)).T) < 1.5 * side
    assert near.all()
