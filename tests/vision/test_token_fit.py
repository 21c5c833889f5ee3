"""The second look at a token: every code fitted to the pixels (``vision.token_fit``).

Known answers are bench scenes (seed 0) where the fast cell reader could not
name a token at a steep tilt under blur: the fit must name the right id with
clear evidence and find its centre to a fraction of a millimetre; spots that
are no token must never pass the acceptance thresholds.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

from vision.bench import bench_board_image, bench_scene
from vision.board import BoardPose, locate_board
from vision.markers import to_gray
from vision.synth import Scene, demo_board, random_riders, table_scene
from vision.token_fit import fit_token
from vision.tokens import FIT_EVIDENCE, FIT_QUALITY, _candidates, _read_scores, read_tokens

BOARD = demo_board()


@lru_cache(maxsize=8)
def _bench_scene(i: int, seed: int = 0, dice_touching: bool = False,
                 ) -> tuple[Scene, BoardPose, np.ndarray]:
    """Scene i of ``companion bench vision --seed SEED [--dice-touching]``."""
    scene = bench_scene(BOARD, _board_image(), seed, i, dice_touching=dice_touching)
    gray = to_gray(scene.image)
    pose = locate_board(scene.image, BOARD, gray=gray)
    assert pose.found
    return scene, pose, gray


@lru_cache(maxsize=1)
def _board_image() -> np.ndarray:
    return bench_board_image(BOARD)


def _fit_at(i: int, rider: int):  # type: ignore[no-untyped-def]
    scene, pose, gray = _bench_scene(i)
    truth = scene.token_mm[rider]
    got = _read_scores(gray, pose, truth, 10.0)
    assert got is not None
    _, centre, turn = got
    return scene, fit_token(gray, pose.H, pose.H_inv, centre, turn, 10.0)


# (scene, rider): the cell reader read 34, 24, 22, 41 and 31 best here (0.75-0.96),
# the true id 0.62-0.94: one cell's blur from another code.
@pytest.mark.parametrize(("scene", "rider"), [(27, 43), (27, 41), (46, 41), (63, 51),
                                              (112, 44), (170, 41)])
def test_fit_names_the_right_token_where_the_cells_did_not(scene: int, rider: int) -> None:
    sc, fit = _fit_at(scene, rider)
    assert fit is not None
    assert fit.id == rider, fit
    assert fit.evidence >= FIT_EVIDENCE and fit.quality >= FIT_QUALITY, fit
    assert math.dist(fit.center_mm, sc.token_mm[rider]) < 0.6
    assert 0.4 <= fit.blur_px <= 2.6


def test_fit_on_every_token_of_a_frame_names_it_or_doubts() -> None:
    """All 16 tokens of a frame at 33 degrees: the best-fitting id is always the token's own."""
    scene, pose, gray = _bench_scene(27)
    for rider, at in scene.token_mm.items():
        got = _read_scores(gray, pose, at, 10.0)
        if got is None:
            continue
        fit = fit_token(gray, pose.H, pose.H_inv, got[1], got[2], 10.0)
        if fit is not None and fit.evidence >= FIT_EVIDENCE:
            assert fit.id == rider, fit


def test_spots_that_are_no_token_are_not_named() -> None:
    """Marker-like spots of the board's print (start dots, numbers, lines) in a few frames."""
    named = 0
    for i in (0, 4, 21, 31):
        scene, pose, gray = _bench_scene(i)
        spots = _candidates(gray, pose, BOARD, 30.0, 20.0).relaxed(
            40, list(scene.token_mm.values()), 16.0)
        for spot in spots:
            got = _read_scores(gray, pose, spot, 10.0)
            if got is None:
                continue
            fit = fit_token(gray, pose.H, pose.H_inv, got[1], got[2], 10.0)
            if fit is not None and fit.evidence >= FIT_EVIDENCE and fit.quality >= FIT_QUALITY:
                named += 1
    assert named == 0


def test_no_fit_at_the_frame_edge_or_for_a_large_token() -> None:
    scene, pose, gray = _bench_scene(27)
    corner = pose.to_mm(np.array([[2.0, 2.0]]))[0]
    assert fit_token(gray, pose.H, pose.H_inv, (float(corner[0]), float(corner[1])), 0.0,
                     10.0) is None
    # A 60 mm marker is more than MAX_SIDE_PX pixels across: the cell reader's business.
    at = scene.token_mm[next(iter(scene.token_mm))]
    assert fit_token(gray, pose.H, pose.H_inv, at, 0.0, 60.0) is None


def test_read_tokens_second_look_finds_what_the_cells_missed() -> None:
    """Bench scenes 27, 112 and 142: riders unread before the second look (no candidate at
    all for 53 in 142, misread codes in the others) are all on their spaces, by fit."""
    for i in (27, 112, 142):
        scene, pose, gray = _bench_scene(i)
        r = read_tokens(scene.image, BOARD, pose, expected=list(scene.riders), gray=gray)
        assert r.tokens == scene.riders, (i, r.missing, r.unclear)
        fits = [s for s in r.sightings if s.method == "fit"]
        assert fits and all(s.evidence is not None and s.evidence >= FIT_EVIDENCE for s in fits)


@pytest.mark.parametrize(("seed", "i", "touching", "rider", "misread_as"), [
    (1, 129, True, 52, 34),  # 52's token read 34 at 0.89 (52 at 0.67), 34 unread: settled 34
    # (seed 3, scene 47 did the same before the synthetic markers were smoothed; not since)
])
def test_a_weak_read_the_fit_names_otherwise_is_not_settled(
        seed: int, i: int, touching: bool, rider: int, misread_as: int) -> None:
    """Bench scenes at 32-34 degrees where a rider's token, too blurred for its cells, read
    best as another rider still unread and was named him (on the wrong space); the codes
    fitted to the pixels name the token's own id, so the weak read is left to the second
    look, which names it right."""
    scene, pose, gray = _bench_scene(i, seed, touching)
    r = read_tokens(scene.image, BOARD, pose, expected=list(scene.riders), gray=gray)
    assert all(scene.riders[t] == s for t, s in r.tokens.items()), r.tokens
    assert r.tokens.get(rider) == scene.riders[rider]
    assert r.tokens.get(misread_as) in (None, scene.riders[misread_as])


def test_a_fit_hardly_better_than_an_open_runner_up_names_nobody(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A fit whose next-best id is a rider still unread needs FIT_EVIDENCE_OPEN. Bench seed
    2, scene 109 of the touching-dice run, on the synthetic table before its markers were
    smoothed (2026-11-29): rider 51's token fitted 44 best and 51 next (evidence 33), both
    unread, and was named 44 on 51's space. Here scene 27's fits are made that close."""
    from dataclasses import replace

    import vision.tokens as tokens

    scene, pose, gray = _bench_scene(27)
    real = tokens.fit_token
    base = read_tokens(scene.image, BOARD, pose, expected=list(scene.riders), gray=gray)
    by_fit = sorted(s.id for s in base.sightings if s.method == "fit")
    assert len(by_fit) >= 2 and all(base.tokens[t] == scene.riders[t] for t in by_fit)

    def doubtful(runner_up: dict[int, int]):  # type: ignore[no-untyped-def]
        def fit(*args, **kw):  # type: ignore[no-untyped-def]
            got = real(*args, **kw)
            if got is None or got.id not in runner_up:
                return got
            return replace(got, evidence=33.0, runner_up=runner_up[got.id])
        return fit

    # The runner-up out of the game (a jersey piece's id): 33 is enough.
    monkeypatch.setattr(tokens, "fit_token", doubtful({t: 20 for t in by_fit}))
    r = read_tokens(scene.image, BOARD, pose, expected=list(scene.riders), gray=gray)
    assert sorted(s.id for s in r.sightings if s.method == "fit") == by_fit
    # Each one's runner-up another of them, all unread: none is named.
    monkeypatch.setattr(tokens, "fit_token",
                        doubtful(dict(zip(by_fit, by_fit[1:] + by_fit[:1], strict=True))))
    r = read_tokens(scene.image, BOARD, pose, expected=list(scene.riders), gray=gray)
    assert not [s for s in r.sightings if s.method == "fit"]
    assert all(t in r.missing for t in by_fit)
    assert FIT_EVIDENCE <= 33.0 < tokens.FIT_EVIDENCE_OPEN


def test_second_look_never_names_a_covered_token() -> None:
    """A hand over two riders: the fit may not name a spot of the hand or the board as them."""
    rng = np.random.default_rng([0, 27])
    riders = random_riders(BOARD, rng, 16)
    hidden = tuple(sorted(riders)[:2])
    scene = table_scene(BOARD, riders, rng=rng, token_side_mm=10.0, board_image=_board_image(),
                        board_px_per_mm=2.5, hide_tokens=hidden)
    pose = locate_board(scene.image, BOARD)
    r = read_tokens(scene.image, BOARD, pose, expected=list(riders))
    assert all(riders[t] == s for t, s in r.tokens.items())
    for t in hidden:
        assert t not in r.tokens

