"""Dice on a plain background: the detector looks only at windows round what stands out."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.boards import Board, load_board
from vision.board import locate_board
from vision.dice import default_reader
from vision.dice.spots import WINDOW_DICE, busy_windows, spot_grid
from vision.dice.synth import draw_die
from vision.synth import random_riders, table_scene
from vision.table_dice import dice_region

FELT = (60, 120, 40)  # BGR, a green tray
DIE = 40.0  # die side (px) as the reader scales a known-size region


def _tray(h: int = 480, w: int = 640, noise: float = 4.0, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    xx = np.mgrid[0:h, 0:w][1].astype(np.float32)
    light = 0.85 + 0.3 * xx / w  # uneven light across the tray
    img = np.array(FELT, np.float32) * light[..., None] + rng.normal(0, noise, (h, w, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


def _covered(windows: list[tuple[int, int, int, int]], x: float, y: float, margin: float) -> bool:
    return any(wx + margin <= x <= wx + ww - margin and wy + margin <= y <= wy + wh - margin
               for wx, wy, ww, wh in windows)


@pytest.mark.parametrize("seed", range(6))
def test_every_die_is_well_inside_a_window(seed: int) -> None:
    rng = np.random.default_rng(seed)
    img = _tray(seed=seed)
    centres = [(120.0 + 150 * k + rng.uniform(-20, 20), rng.uniform(80, 400)) for k in range(3)]
    for x, y in centres:  # every colour the renderer has, yellow on green among them
        draw_die(img, rng, x, y, DIE, int(rng.integers(1, 7)))
    windows = busy_windows(img, DIE)
    assert windows is not None
    assert 1 <= len(windows) <= 6
    for x, y in centres:
        assert _covered(windows, x, y, 0.9 * DIE), (x, y, windows)


def test_windows_are_aligned_equal_squares_inside_the_padded_region() -> None:
    rng = np.random.default_rng(1)
    img = _tray(470, 630)  # not a multiple of 32: windows may reach into the padding
    for x, y in ((25.0, 25.0), (610.0, 455.0), (300.0, 240.0)):  # corners and middle
        draw_die(img, rng, x, y, DIE, 5)
    windows = busy_windows(img, DIE)
    assert windows
    side = windows[0][2]
    assert side % 32 == 0 and side >= WINDOW_DICE * DIE
    for wx, wy, ww, wh in windows:
        assert (ww, wh) == (side, side)
        assert wx % 32 == 0 and wy % 32 == 0
        assert 0 <= wx and wx + ww <= 640 and 0 <= wy and wy + wh <= 480
    for x, y in ((25.0, 25.0), (610.0, 455.0), (300.0, 240.0)):
        assert _covered(windows, x, y, 0.0)


def test_a_plain_tray_with_a_printed_outline_has_no_spots() -> None:
    img = _tray(noise=6.0)
    for k in range(0, 560, 24):  # a dashed outline, as the board prints round its dice area
        cv2.line(img, (40 + k, 40), (52 + k, 40), (70, 90, 60), 3)
        cv2.line(img, (40 + k, 440), (52 + k, 440), (70, 90, 60), 3)
    assert busy_windows(img, DIE) == []


def test_spots_outside_the_plain_polygon_are_not_looked_at() -> None:
    rng = np.random.default_rng(2)
    img = _tray()
    draw_die(img, rng, 100, 100, DIE, 3)
    draw_die(img, rng, 500, 380, DIE, 4)
    left = np.array([[0, 0], [320, 0], [320, 480], [0, 480]], float)
    windows = busy_windows(img, DIE, within=left)
    assert windows is not None and _covered(windows, 100, 100, 0.9 * DIE)
    assert not _covered(windows, 500, 380, 0.0)


def test_a_busy_background_is_read_whole() -> None:
    rng = np.random.default_rng(3)
    img = rng.integers(0, 255, (480, 640, 3), dtype=np.uint8)  # texture everywhere
    assert busy_windows(img, DIE) is None
    assert busy_windows(_tray(100, 100), DIE) is None  # smaller than a window


@pytest.fixture(scope="module")
def board() -> Board:
    return load_board("standard")


@pytest.mark.parametrize("seed", range(8))
def test_the_table_reads_the_same_dice_in_windows_as_in_the_whole_area(board: Board,
                                                                        seed: int) -> None:
    rng = np.random.default_rng([11, seed])
    sc = table_scene(board, random_riders(board, rng, 16), rng=rng, n_dice=3)
    pose = locate_board(sc.image, board)
    region = dice_region(board, pose, (sc.image.shape[1], sc.image.shape[0]))
    assert region is not None
    reader = default_reader()
    whole = reader.read(sc.image, region.roi, die_px=region.die_px)
    windowed = reader.read(sc.image, region.roi, die_px=region.die_px, plain=region.area_px)
    for d in sc.dice:
        a = [r.value for r in whole if np.hypot(*np.subtract(r.center, d.center)) < 0.6 * region.die_px]
        b = [r.value for r in windowed if np.hypot(*np.subtract(r.center, d.center)) < 0.6 * region.die_px]
        assert a == b, (d.value, a, b)


def test_the_spot_grid_covers_die_sized_spots_thickest_first() -> None:
    """:func:`spot_grid` lays its points over die-sized spots only (not specks nor
    spots larger than a few dice), the thick ones (a die) before the thin ones (the
    dashes of a printed outline), within a quarter die of each."""
    die = 20.0  # px in the region; 10 px in the half-size mask
    mask = np.zeros((100, 150), np.uint8)
    mask[20:30, 20:30] = 255      # a die: 1 die in area
    mask[60:62, 20:55] = 255      # a dashed line: 0.7 dice in area, 0.1 thick
    mask[5:7, 100:103] = 255      # a speck
    mask[40:100, 90:150] = 255    # a hand: 36 dice in area
    points = spot_grid(mask, die, 0.25)
    in_die = [40 - 5 <= x <= 60 + 5 and 40 - 5 <= y <= 60 + 5 for x, y in points]
    on_line = [35 <= x <= 115 and 115 <= y <= 129 for x, y in points]
    assert all(a or b for a, b in zip(in_die, on_line, strict=True)), points
    assert sum(in_die) >= 9 and sum(on_line) >= 4, points
    first_line = in_die.index(False)
    assert all(in_die[:first_line]) and not any(in_die[first_line:]), points
    with pytest.raises(ValueError, match="positive"):
        spot_grid(mask, 0.0, 0.25)
