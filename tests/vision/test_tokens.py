"""Tokens: markers mapped to spaces; packed riders, borders, hands, jerseys, colour fallback."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from companion.boards import Board, parse_board
from vision.bench import bench_board_image, bench_scene
from vision.board import locate_board
from vision.colour import assign_by_colour, read_by_colour, space_teams
from vision.synth import demo_board, table_scene
from vision.tokens import TokenReading, TrackIndex, read_tokens

BOARD_TEXT = """
.o  .o  .   c3  c3  .   .   u2  u2  . |A .
.o  .o  .   c3  .   .   .   u2  u2  . |A .
=   =   _   _   _   _   _   _   _   _    _
.o  .o  .   c3  c3  .   .   u2  u2  . |A .
.o  .o  .   c3  c3  .   .   d1  d1  . |A .
"""
BOARD, _ = parse_board(BOARD_TEXT, name="test board")
SIZE = (1014, 760)
# Riders packed side by side and nose to tail.
PACKED = {21: "a2", 31: "b2", 41: "c2", 51: "d2", 22: "a3", 32: "b3", 42: "c3", 52: "d3",
          23: "a4", 33: "b4", 43: "c4", 53: "d4", 24: "b5", 34: "c5", 44: "b7", 54: "d8"}


def _read(riders: dict[int, str], seed: int = 0, expected: list[int] | None = None,
          **kw: object):  # type: ignore[no-untyped-def]
    kw.setdefault("size", SIZE)
    scene = table_scene(BOARD, riders, rng=np.random.default_rng(seed), **kw)  # type: ignore[arg-type]
    pose = locate_board(scene.image, BOARD)
    assert pose.found, pose.reason
    return scene, read_tokens(scene.image, BOARD, pose, expected=expected)


@pytest.mark.parametrize("kw", [
    {"tilt_deg": 35.0, "blur_sigma": 0.8},
    {"tilt_deg": 15.0, "blur_sigma": 1.5, "noise_sigma": 3.0},
    {"tilt_deg": 20.0, "rotation_deg": 180.0, "noise_sigma": 8.0},
], ids=["tilt35", "blur1.5", "rot180-noise"])
def test_packed_riders_all_on_their_spaces(kw: dict[str, float]) -> None:
    _, r = _read(PACKED, 1, expected=list(PACKED), **kw)
    assert r.tokens == PACKED
    assert r.missing == [] and r.unclear == {} and r.unplaced == []


def test_hand_over_tokens_reports_them_missing() -> None:
    _, r = _read(PACKED, 2, expected=list(PACKED), tilt_deg=10.0, hide_tokens=(22, 43))
    assert set(r.missing) >= {22, 43}
    for rider, space in r.tokens.items():
        assert PACKED[rider] == space  # never a wrong space
    assert set(r.tokens) | set(r.missing) | set(r.unclear) == set(PACKED)
    assert len(r.tokens) >= 8  # the arm covers a few more


def test_token_off_the_track_is_unplaced() -> None:
    _, r = _read({21: "a5", 33: "b6"}, 3, tilt_deg=10.0,
                 token_at_mm={33: (200.0, 20.0)})  # in the board's margin, above the road
    assert r.tokens == {21: "a5"}
    assert r.unplaced == [33]


def test_jersey_piece_is_reported_as_jersey() -> None:
    _, r = _read({21: "a5", 41: "c5"}, 4, tilt_deg=10.0, jerseys={40: "c6"})
    assert r.tokens == {21: "a5", 41: "c5"}
    assert r.jerseys == {40: "c6"}


@pytest.mark.parametrize("offset", [-6.0, -3.0, -1.5, 0.0, 1.5, 3.0, 6.0])
def test_token_across_a_border_is_right_or_unclear(offset: float) -> None:
    # The border between a5 and a6 lies at x = 50 + 6 * 36 = 266 mm; the rider stands
    # on a5 when his centre is left of it.
    x = 266.0 + offset
    y = BOARD.spaces["a5"].center_mm[1]
    truth = "a5" if offset < 0 else "a6"
    _, r = _read({21: truth}, 5, tilt_deg=25.0, token_at_mm={21: (x, y)})
    got = r.tokens.get(21)
    assert got in (truth, None), f"rider at {x} mm read on {got}"
    if got is None:
        assert 21 in r.unclear and set(r.unclear[21]) <= {"a5", "a6"}
    if abs(offset) >= 6.0:
        assert got == truth


def test_track_index() -> None:
    idx = TrackIndex(BOARD)
    cx, cy = BOARD.spaces["b3"].center_mm
    assert idx.locate((cx, cy)) == ("placed", "b3", ())
    status, space, cands = idx.locate((cx + 18.0, cy))  # on the border with b4
    assert status == "unclear" and set(cands) == {"b3", "b4"}
    assert idx.locate((cx + 18.0 - 4.0, cy))[1] == "b3"
    assert idx.locate((5.0, 5.0))[0] == "unplaced"
    # A board without polygons: nearest centre within a tolerance.
    from dataclasses import replace

    bare = replace(BOARD, spaces={k: replace(s, polygon_mm=None) for k, s in BOARD.spaces.items()})
    idx2 = TrackIndex(bare)
    assert idx2.locate((cx + 3.0, cy))[1] == "b3"
    assert idx2.locate((cx + 18.0, cy))[0] == "unclear"
    assert idx2.locate((cx, cy - 300.0))[0] == "unplaced"


def test_no_board_means_every_expected_token_missing() -> None:
    pose = locate_board(np.zeros((760, 1014, 3), np.uint8), BOARD)
    r = read_tokens(np.zeros((760, 1014, 3), np.uint8), BOARD, pose, expected=[21, 31])
    assert r.tokens == {} and r.missing == [21, 31]


# --- colour fallback -------------------------------------------------------------


def test_colour_fallback_keeps_identity_after_a_move() -> None:
    before = {21: "a2", 22: "b2", 31: "c2", 41: "d2", 51: "a4", 52: "b4"}
    after = {**before, 22: "b3"}  # 22 moved; 21 stays on a2
    scene = table_scene(BOARD, after, rng=np.random.default_rng(8), size=SIZE, tilt_deg=20.0,
                        stickers=False)
    pose = locate_board(scene.image, BOARD)
    holds = space_teams(scene.image, BOARD, pose)
    assert holds == {s: r // 10 for r, s in after.items()}
    r = read_by_colour(scene.image, BOARD, pose, before, moving=22)
    assert r.tokens == after and not r.missing and not r.unclear


def test_colour_fallback_move_beside_a_teammate() -> None:
    before = {51: "a2", 52: "b5", 41: "c5"}
    after = {51: "a5", 52: "b5", 41: "c5"}  # 51 moves up beside his teammate 52
    scene = table_scene(BOARD, after, rng=np.random.default_rng(9), size=SIZE, tilt_deg=30.0,
                        stickers=False, blur_sigma=1.2)
    pose = locate_board(scene.image, BOARD)
    r = read_by_colour(scene.image, BOARD, pose, before, moving=51)
    assert r.tokens == after


def test_colour_assignment_rules() -> None:
    prev = {21: "a1", 22: "a2", 31: "b1"}
    # 22 moved to a5; 21 still on a1.
    assert assign_by_colour({"a1": 2, "a5": 2, "b1": 3}, prev, 22).tokens == {
        21: "a1", 22: "a5", 31: "b1"}
    # Two new red spaces: which one is 22? Unclear, not a guess.
    r = assign_by_colour({"a1": 2, "a5": 2, "a6": 2, "b1": 3}, prev, 22)
    assert r.unclear == {22: ["a5", "a6"]} and 22 not in r.tokens
    # A hand over the moving rider's new space: missing.
    r = assign_by_colour({"a1": 2, "b1": 3}, prev, 22)
    assert r.missing == [22]
    # A stationary rider gone and a stray rider of his team elsewhere: unclear.
    r = assign_by_colour({"a1": 2, "a2": 2, "b4": 3}, prev, None)
    assert r.unclear == {31: ["b4"]} and r.tokens == {21: "a1", 22: "a2"}


def test_raised_riders_under_tilt_need_their_height() -> None:
    """Stickers on top of 15 mm riders seen at 35 degrees: right once the height is known."""
    riders = dict(PACKED)
    scene = table_scene(BOARD, riders, rng=np.random.default_rng(12), size=SIZE, tilt_deg=35.0,
                        blur_sigma=0.6, token_height_mm=15.0)
    pose = locate_board(scene.image, BOARD)
    r = read_tokens(scene.image, BOARD, pose, expected=list(riders), height_mm=15.0)
    assert r.tokens == riders
    flat = read_tokens(scene.image, BOARD, pose, expected=list(riders), height_mm=0.0)
    assert flat.tokens != riders  # without the height some are off their spaces


def test_camera_centre_from_the_board() -> None:
    from vision.board import camera_centre

    for tilt in (0.0, 20.0, 35.0):
        scene = table_scene(BOARD, {}, rng=np.random.default_rng(int(tilt)), size=SIZE,
                            tilt_deg=tilt)
        pose = locate_board(scene.image, BOARD)
        got = camera_centre(pose, SIZE)
        assert got is not None
        C = scene.camera.C
        if tilt > 0:  # seen straight down the focal length is assumed, not measured
            assert abs(got[0] - C[0]) < 15 and abs(got[1] - C[1]) < 15
            assert abs(got[2] - abs(C[2])) < 0.03 * abs(C[2])


@lru_cache(maxsize=1)
def _bench_board() -> tuple[Board, np.ndarray]:
    board = demo_board()
    return board, bench_board_image(board)


def _bench_read(seed: int, i: int, *, height_mm: float = 0.0, **scene_kw: object,
                ) -> tuple[dict[int, str], TokenReading]:
    """Scene i of ``companion bench vision --seed SEED`` (``scene_kw``: its options, e.g.
    ``hide_corners``) and its tokens read as the bench reads them: the riders, the reading."""
    board, image = _bench_board()
    scene = bench_scene(board, image, seed, i, token_height_mm=height_mm, **scene_kw)
    pose = locate_board(scene.image, board)
    return scene.riders, read_tokens(scene.image, board, pose, expected=list(scene.riders),
                                     height_mm=height_mm)


def _scores(**by_id: float) -> np.ndarray:
    """Per-id correlations in TOKEN_IDS order (0.3 for the ids not given)."""
    from vision.markers import TOKEN_IDS
    return np.array([by_id.get(f"t{t}", 0.3) for t in TOKEN_IDS])


def test_weak_reads_are_named_among_the_open_ids_only() -> None:
    from vision.tokens import _settle
    found = {21: [((100.0, 100.0), 0.99)]}
    expected = [21, 22, 31]
    # Best overall is 21 (read clearly elsewhere), then 22 close behind: among the
    # open ids (22, 31) 22 is clear.
    weak = [(_scores(t21=0.97, t22=0.95, t31=0.80), (300.0, 100.0))]
    assert _settle(weak, found, expected, 10.0) == [(22, (300.0, 100.0), 0.95)]
    # Two open ids about as good: not named.
    weak = [(_scores(t21=0.97, t22=0.95, t31=0.90), (300.0, 100.0))]
    assert _settle(weak, found, expected, 10.0) == []
    # The open id far below the best id: not named.
    weak = [(_scores(t21=0.99, t22=0.90, t31=0.60), (300.0, 100.0))]
    assert _settle(weak, found, expected, 10.0) == []
    # An id not in the game does not count, an open id below MIN_SCORE is not named.
    weak = [(_scores(t23=0.97, t22=0.80), (300.0, 100.0))]
    assert _settle(weak, found, expected, 10.0) == []
    # Next to the clear read of 21: the same token, dropped.
    weak = [(_scores(t21=0.97, t22=0.95, t31=0.80), (104.0, 100.0))]
    assert _settle(weak, found, expected, 10.0) == []


def test_weak_reads_take_each_open_id_once_clearest_first() -> None:
    from vision.tokens import _settle
    expected = [21, 22, 31]
    a = (_scores(t22=0.96, t21=0.93, t31=0.70), (300.0, 100.0))  # margin 0.03 among all
    b = (_scores(t22=0.95, t21=0.60, t31=0.60), (500.0, 100.0))  # clearer among the open
    got = _settle([a, b], {}, expected, 10.0)
    # b takes 22; a is then between 21 and 31 with 21 clear and 0.03 below its best.
    assert got == [(22, (500.0, 100.0), 0.95), (21, (300.0, 100.0), 0.93)]


def test_a_weak_read_the_fit_refutes_is_not_named() -> None:
    from vision.tokens import _settle
    expected = [21, 22, 31]
    a = (_scores(t22=0.90, t31=0.60), (300.0, 100.0))  # refuted: really 31's token
    b = (_scores(t22=0.88, t21=0.60), (500.0, 100.0))
    asked: list[tuple[int, tuple[float, float]]] = []

    def refuted(tid: int, c: tuple[float, float]) -> bool:
        asked.append((tid, c))
        return c == (300.0, 100.0)

    # a is clearer among the open ids and would take 22; refuted, it leaves 22 open for b.
    assert _settle([a, b], {}, expected, 10.0) == [(22, (300.0, 100.0), 0.90)]
    assert _settle([a, b], {}, expected, 10.0, refuted) == [(22, (500.0, 100.0), 0.88)]
    assert asked == [(22, (300.0, 100.0)), (22, (500.0, 100.0))]
    # A read from CLEAR_SCORE up is not asked about.
    asked.clear()
    c = (_scores(t22=0.95, t21=0.80), (300.0, 100.0))
    assert _settle([c], {}, expected, 10.0, refuted) == [(22, (300.0, 100.0), 0.95)]
    assert asked == []


def test_half_covered_token_is_not_read_as_another() -> None:
    # Bench scene 74 (seed 0) with a hand over corner marker 2: the hand's fingers
    # cover half of rider 41's sticker; what is left of its code read as 32 (0.95,
    # 31 and 44 close behind, both placed elsewhere), so 32 was named among the
    # open ids and put on 41's space. The white ring round the marker is now
    # checked all round: a covered token is missing, never another rider.
    riders, r = _bench_read(0, 74, hide_corners=(2,))
    assert all(riders[t] == s for t, s in r.tokens.items())
    assert 32 not in r.tokens or r.tokens[32] == riders[32]
    assert len(r.tokens) >= 11


def test_tokens_with_a_pale_rim_are_candidates() -> None:
    # Bench scene 122 (seed 0: 30 degrees, blur 1.4 px): at about 1 px/mm the
    # 2 mm rim round riders 21, 43 and 52 blurs into the white (rim contrast
    # 0.06-0.08, under the 0.12 a candidate needed): they gave no candidate at
    # all. A pale rim round a darker centre is now a candidate too.
    riders, r = _bench_read(0, 122)
    assert all(riders[t] == s for t, s in r.tokens.items())
    assert {21, 43, 52} <= set(r.tokens)


def test_a_read_below_clear_score_waits_for_the_clear_ones() -> None:
    # Bench scene 17 (seed 1000, 32 degrees): rider 41's token reads as 51 (0.91,
    # 0.16 ahead of any other id) while rider 51 is read clearly (0.96)
    # elsewhere. Both used to count as clear: 51 seen twice, unclear. Below
    # CLEAR_SCORE a read now waits and is named among the open ids only.
    riders, r = _bench_read(1000, 17)
    assert all(riders[t] == s for t, s in r.tokens.items())
    assert r.tokens.get(51) == riders[51] and 51 not in r.unclear


def test_raised_riders_seen_plainly_are_all_read() -> None:
    # Bench seed 0, scene 1 with 15 mm riders (17 degrees, 0.3 px of blur): rider 42's
    # marker is plainly legible, but the synthetic table used to alias the raised tops
    # (a point-sampled warp from 8 px/mm to 1.5), and the steps on its edges threw the
    # reader's angle off: he was read nowhere. The texture is smoothed before the warp.
    riders, r = _bench_read(0, 1, height_mm=15.0)
    assert r.tokens == riders


def test_a_token_half_under_fingers_is_not_a_hidden_rider() -> None:
    # A hand over riders 32 and 33 (seed 7000, scene 173); its fingers cover half of rider
    # 41's token, which read 32 at 0.91 and, 32 being unread, was named 32 on 41's space.
    # The codes fitted there leave a residual of 39 grey levels (contrast 218): no clean
    # token, so the weak read is not named.
    riders, r = _bench_read(7000, 173, hide_tokens=(32, 33))
    assert all(riders[t] == s for t, s in r.tokens.items()), r.tokens
    assert 32 in r.missing and 33 in r.missing


def test_a_read_on_a_token_edge_is_not_a_hidden_rider() -> None:
    # Bench scene 78 (seed 0) with a hand over corner marker 2 and over rider 44: a spot
    # on the edge of rider 24's sticker (14 mm from its centre) read as 44 at 0.90, and
    # with 44 hidden (open) it was named 44 and put on 24's neighbouring space. Stickers
    # cannot overlap: a read that near a token read already is not another token.
    riders, r = _bench_read(0, 78, hide_corners=(2,))
    assert all(riders[t] == s for t, s in r.tokens.items())
    assert 44 in r.missing
