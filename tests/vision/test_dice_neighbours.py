"""Dice face to face at a known size: looking beside a lone die for one touching it
(``vision.dice.neighbours``, ``DiceReader._neighbours``), splitting and re-reading a
pair the detector proposed as one die, and the (optional) off-size check."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from vision.dice.neighbours import busyness, grid_points, points_around, probe_points
from vision.dice.reader import Candidate, DiceReader
from vision.dice.synth import draw_die

DIE = 40.0  # die_px: the reader's die_target, so detector pixels are frame pixels


def _table() -> np.ndarray:
    rng = np.random.default_rng(0)
    img = np.full((480, 640, 3), (150, 160, 120), np.float32)
    img += rng.normal(0, 3, img.shape)
    return np.clip(img, 0, 255).astype(np.uint8)


def _pair(first: int, second: int, angle: float, seed: int = 0,
          distance: float = 1.07) -> tuple[np.ndarray, tuple[float, float], tuple[float, float]]:
    """Two white dice face to face (the second ``distance`` dice from the first along
    the first's axis turned by ``angle``), and their centres."""
    img = _table()
    rng = np.random.default_rng(seed)
    a = (300.0, 240.0)
    b = (a[0] + distance * DIE * math.cos(math.radians(angle)),
         a[1] + distance * DIE * math.sin(math.radians(angle)))
    for (x, y), v in ((a, first), (b, second)):
        draw_die(img, rng, x, y, DIE, v, angle=angle, body=(235, 235, 235), pip=(20, 20, 20),
                 shadow=False)
    return img, a, b


def test_probe_points_lie_round_the_die() -> None:
    pts = probe_points(100.0, 50.0, 20.0, 1.07, 24)
    assert len(pts) == 24
    assert pts[0] == pytest.approx((100.0 + 21.4, 50.0))
    assert all(math.dist(p, (100.0, 50.0)) == pytest.approx(21.4) for p in pts)


def test_grid_points_lie_in_their_ring() -> None:
    """A square grid 0.2 dice apart: within 0.9 dice of the centre (the centre too),
    and the ring 0.85-1.35 dice from it; every point is a whole step from the centre."""
    disc = grid_points(100.0, 50.0, 20.0, 0.2, (0.0, 0.9))
    assert (100.0, 50.0) in disc
    assert len(disc) == 69  # (i, j) with i*i + j*j <= 4.5**2
    ring = grid_points(100.0, 50.0, 20.0, 0.2, (0.85, 1.35))
    dists = [math.dist(p, (100.0, 50.0)) / 20.0 for p in ring]
    assert min(dists) >= 0.85 - 1e-9 and max(dists) <= 1.35 + 1e-9
    assert (100.0 + 20.0, 50.0) in ring  # one die to the right
    for x, y in disc + ring:
        assert ((x - 100.0) / 4.0) == pytest.approx(round((x - 100.0) / 4.0))
        assert ((y - 50.0) / 4.0) == pytest.approx(round((y - 50.0) / 4.0))


def test_busyness_plain_die_and_border() -> None:
    """Plain surface: nothing stands out; a die: its pips and outline do; a point
    too near the border: 0."""
    img = _table()
    assert busyness(img, (0.0, 0.0), [(200.0, 200.0), (400.0, 300.0)], DIE) == [0.0, 0.0]
    draw_die(img, np.random.default_rng(1), 200, 200, DIE, 5, angle=10.0,
             body=(235, 235, 235), pip=(20, 20, 20), shadow=False)
    on_die, plain, border = busyness(img, (160.0, 180.0), [(200.0, 200.0), (400.0, 300.0), (3.0, 200.0)], DIE)
    assert on_die >= 0.3, on_die
    assert plain == 0.0
    assert border == 0.0


def _read_first_only(monkeypatch: pytest.MonkeyPatch, reader: DiceReader, img: np.ndarray,
                     first: tuple[float, float]) -> list[tuple[float, float, int | None]]:
    """Read ``img`` at the known size with the detector scripted to propose only the
    die at ``first`` (as it does when it sees a touching pair as one die)."""
    probs = np.full(7, 1 / 7)
    monkeypatch.setattr(reader, "_proposals",
                        lambda out, w, h, threshold=None: [(*first, DIE, 0.8, probs)])
    return [(d.center[0], d.center[1], d.value) for d in reader.read(img, die_px=DIE)]


@pytest.mark.parametrize(("first", "second", "angle"), [(3, 5, 0.0), (6, 2, 30.0),
                                                        (1, 4, 75.0), (5, 6, 195.0)])
def test_die_face_to_face_with_a_lone_one_is_found(monkeypatch: pytest.MonkeyPatch, first: int,
                                                   second: int, angle: float) -> None:
    """The detector proposes one of two touching dice: the other is found beside it,
    with its value and its centre within a fifth of a die; with the probe off, not."""
    img, a, b = _pair(first, second, angle)
    reader = DiceReader()
    seen = _read_first_only(monkeypatch, reader, img, a)
    assert len(seen) == 2, seen
    near_b = min(seen, key=lambda s: math.dist(s[:2], b))
    assert near_b[2] == second
    assert math.dist(near_b[:2], b) <= 0.2 * DIE
    reader.neighbour_probe = False
    assert [s[2] for s in _read_first_only(monkeypatch, reader, img, a)] == [first]


def test_nothing_is_found_beside_a_die_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lone die, with a rider-like block and a pencil line beyond a die's side of it:
    no die is made up there."""
    img = _table()
    rng = np.random.default_rng(2)
    draw_die(img, rng, 300, 240, DIE, 4, angle=20.0, body=(235, 235, 235),
             pip=(20, 20, 20), shadow=True)
    img[225:255, 336:356] = (40, 40, 200)  # a red token's side, face to face
    img[200:202, 250:350] = (60, 60, 60)
    seen = _read_first_only(monkeypatch, DiceReader(), img, (300.0, 240.0))
    assert [s[2] for s in seen] == [4]


def test_no_probe_beside_a_die_read_as_unclear(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a die read with a value is looked beside: a null reading may be a cocked
    die, whose other face lies where a neighbour would."""
    img, a, _ = _pair(3, 5, 0.0)
    reader = DiceReader()
    reader.value_threshold = 1.01  # nothing is read surely: every die is null
    reader.weak_value_threshold = 1.01
    reader.confirm_threshold = 1.01  # no second look
    seen = _read_first_only(monkeypatch, reader, img, a)
    assert [s[2] for s in seen] == [None]


def test_points_around_a_probe_point() -> None:
    pts = points_around(0.0, 0.0, 20.0, 0.0, 20.0, math.radians(10))
    assert len(pts) == 8
    assert (20.0, 0.0) not in pts
    dists = sorted({round(math.hypot(x, y), 6) for x, y in pts})
    assert dists == [18.0, 20.0, 22.0]


def test_one_view_reader_looks_beside_too(monkeypatch: pytest.MonkeyPatch) -> None:
    img, a, b = _pair(3, 5, 0.0)
    reader = DiceReader()
    reader.views = 1
    seen = _read_first_only(monkeypatch, reader, img, a)
    assert sorted(s[2] for s in seen) == [3, 5]


@pytest.mark.parametrize(("angle", "distance"), [(7.5, 1.17), (52.0, 0.95)])
def test_a_die_between_the_probed_points_is_found(monkeypatch: pytest.MonkeyPatch, angle: float,
                                                  distance: float) -> None:
    """The second die lies between two probed directions and nearer or farther than
    ``neighbour_distance`` (a tilted camera): the points round the surest are read."""
    img, a, b = _pair(2, 6, angle, distance=distance)
    seen = _read_first_only(monkeypatch, DiceReader(), img, a)
    assert sorted(s[2] for s in seen) == [2, 6], seen


def _read_proposed(monkeypatch: pytest.MonkeyPatch, img: np.ndarray, at: tuple[float, float],
                   size: float, score: float = 0.8, reader: DiceReader | None = None
                   ) -> list[tuple[float, float, int | None]]:
    """Read ``img`` at the known size with the detector of ``reader`` (a default one if
    None) scripted to propose one die at ``at``, ``size`` dice across, with heatmap
    ``score`` (below 0.4: weak)."""
    reader = reader or DiceReader()
    probs = np.full(7, 1 / 7)
    monkeypatch.setattr(reader, "_proposals",
                        lambda out, w, h, threshold=None: [(*at, size * DIE, score, probs)])
    return [(d.center[0], d.center[1], d.value) for d in reader.read(img, die_px=DIE)]


def _both_read(seen: list[tuple[float, float, int | None]],
               *dice: tuple[tuple[float, float], int]) -> None:
    """Exactly the given dice (centre, value) were read: one reading each, with its
    value and within a fifth of a die of its centre."""
    assert len(seen) == len(dice), seen
    for (x, y), value in dice:
        near = min(seen, key=lambda s: math.dist(s[:2], (x, y)))
        assert near[2] == value and math.dist(near[:2], (x, y)) <= 0.2 * DIE, seen


@pytest.mark.parametrize(("first", "second", "angle"), [(3, 5, 0.0), (6, 2, 40.0), (4, 1, 100.0)])
def test_a_pair_proposed_as_one_die_is_split(monkeypatch: pytest.MonkeyPatch, first: int,
                                             second: int, angle: float) -> None:
    """The detector proposes two dice face to face as one large die between them (a
    domino, read "unreadable"): the reader finds the two dice either side."""
    img, a, b = _pair(first, second, angle)
    mid = ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    seen = _read_proposed(monkeypatch, img, mid, 1.6)
    _both_read(seen, (a, first), (b, second))


@pytest.mark.parametrize("score", [0.8, 0.35])
def test_a_cocked_die_proposed_large_is_not_split(monkeypatch: pytest.MonkeyPatch,
                                                  score: float) -> None:
    """A cocked die also shows two faces side by side: proposed large at its centre,
    surely or weakly, it stays one die or none, never two numbers (seeds of the
    cocked-dice test, six colours)."""
    numbered = 0
    for i in range(12):
        img = _table()
        rng = np.random.default_rng(30 + i)
        draw_die(img, rng, 300, 240, DIE, 1 + i % 6, cocked=True,
                 angle=float(rng.uniform(0, 90)))
        seen = _read_proposed(monkeypatch, img, (300.0, 240.0), 1.4, score)
        numbered += len(seen) > 1 or any(s[2] is not None for s in seen)
    assert numbered <= 1, numbered


@pytest.mark.parametrize(("first", "second", "angle", "size"),
                         [(3, 5, 0.0, 1.45), (6, 2, 40.0, 1.6), (2, 6, 20.0, 1.45)])
def test_a_die_proposed_with_part_of_its_neighbour_is_read_again(
        monkeypatch: pytest.MonkeyPatch, first: int, second: int, angle: float,
        size: float) -> None:
    """The detector centres its proposal on one of two dice face to face but sizes it
    to take in part of the other, and the crop reads unclearly: read again at the
    known size and looked beside, both dice are found; without the re-read, one
    ``null`` die."""
    img, a, b = _pair(first, second, angle)
    seen = _read_proposed(monkeypatch, img, a, size)
    _both_read(seen, (a, first), (b, second))
    reader = DiceReader()
    reader.reread_oversize = 9.0
    assert [s[2] for s in _read_proposed(monkeypatch, img, a, size, reader=reader)] == [None]


@pytest.mark.parametrize("value", range(1, 7))
def test_a_die_read_again_stays_null_with_no_neighbour(monkeypatch: pytest.MonkeyPatch,
                                                       value: int) -> None:
    """A lone die proposed large and read unclearly, whose re-read at the known size
    alone would give a value: with no die beside it to explain the size, it stays
    ``null`` (a cocked die's crop may read a number at the known size)."""
    img = _table()
    draw_die(img, np.random.default_rng(value), 300, 240, DIE, value, angle=15.0 * value,
             body=(235, 235, 235), pip=(20, 20, 20), shadow=True)
    reader = DiceReader()
    reader.value_threshold = 0.9999  # the proposal's own crop reads unclearly
    reader.confirm_threshold = 1.01  # and no second look
    crops, probs = reader._one_view(img, [(300.0, 240.0)], DIE)
    assert reader._read_beside(img, 300.0, 240.0, DIE, crops[0], probs[0]) is not None
    seen = _read_proposed(monkeypatch, img, (300.0, 240.0), 1.45, reader=reader)
    assert [s[2] for s in seen] == [None]


@pytest.mark.parametrize(("first", "second", "angle", "at_first"),
                         [(3, 5, 0.0, True), (2, 6, 20.0, True), (6, 2, 40.0, False),
                          (4, 1, 100.0, False)])
def test_a_pair_proposed_weakly_as_one_die_is_found(monkeypatch: pytest.MonkeyPatch,
                                                    first: int, second: int, angle: float,
                                                    at_first: bool) -> None:
    """The detector's only peak at a touching pair is weak (heatmap 0.35) and 1.6 dice
    across, on one die or between them, and its crop reads unclearly, so it is not
    reported: the reader still finds both dice (``domino_weak``); without it, none."""
    img, a, b = _pair(first, second, angle)
    at = a if at_first else ((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)
    seen = _read_proposed(monkeypatch, img, at, 1.6, score=0.35)
    _both_read(seen, (a, first), (b, second))
    reader = DiceReader()
    reader.domino_weak = False
    assert _read_proposed(monkeypatch, img, at, 1.6, score=0.35, reader=reader) == []


@pytest.mark.parametrize(("first", "second", "angle", "off"),
                         [(3, 5, 0.0, 0.4), (6, 2, 40.0, 0.4), (4, 1, 100.0, 0.4),
                          (3, 5, 0.0, 0.3), (6, 2, 40.0, 0.3), (2, 6, 20.0, 0.3)])
@pytest.mark.parametrize("score", [0.8, 0.35])
def test_a_pair_proposed_off_both_dice_is_found(monkeypatch: pytest.MonkeyPatch, first: int,
                                                second: int, angle: float, off: float,
                                                score: float) -> None:
    """The detector's one proposal at a touching pair sits 0.3-0.4 die off the first
    die, away from the second, 1.6 dice across: neither its crop nor one of the die
    size there reads surely. The reader looks a quarter and half a die round it
    (``domino_search_inner``, ``domino_search``), finds the first die and the second
    beside it; without the search, no value."""
    img, a, b = _pair(first, second, angle)
    away = math.radians(angle + 90)
    at = (a[0] + off * DIE * math.cos(away), a[1] + off * DIE * math.sin(away))
    seen = _read_proposed(monkeypatch, img, at, 1.6, score)
    _both_read(seen, (a, first), (b, second))
    reader = DiceReader()
    reader.domino_search = 0.0
    assert all(s[2] is None for s in _read_proposed(monkeypatch, img, at, 1.6, score, reader))
    if off < 0.35:  # a quarter of a die round it finds these, half a die does not
        reader.domino_search = 0.5
        reader.domino_search_inner = 0.0
        assert all(s[2] is None for s in _read_proposed(monkeypatch, img, at, 1.6, score, reader))


@pytest.mark.parametrize("value", range(2, 7))
def test_off_size_check_withholds_a_pip_read_as_a_one(value: int) -> None:
    """The off-size check (at the table, ``read(one_size=True)``; everywhere with
    ``check_off_size``, off by default, docs/dice-history.md): a reading proposed
    far smaller than the known die, on one of its corner pips and read "1", is read
    again in a crop of the die's size; that crop does not read "1", so the value is
    withheld. A slightly small proposal at the die's centre keeps its value, and a
    die-sized one is not checked."""
    img = _table()
    draw_die(img, np.random.default_rng(value), 300, 240, DIE, value, angle=0.0,
             body=(235, 235, 235), pip=(20, 20, 20), shadow=False)
    one = tuple(0.97 if k == 0 else 0.005 for k in range(7))
    right = tuple(0.97 if k == value - 1 else 0.005 for k in range(7))
    found = [Candidate(300 + 0.28 * DIE, 240 + 0.28 * DIE, 0.5 * DIE, 0.6, one),
             Candidate(300.0, 240.0, 0.8 * DIE, 0.6, right),
             Candidate(300.0, 240.0, DIE, 0.6, one)]
    reader = DiceReader()
    reader.check_off_size = True
    checked = reader._check_off_size(img, found, DIE)
    assert [c.doubted for c in checked] == [True, False, False]
    assert [reader.decide(c).value for c in checked] == [None, value, 1]


def _pip_centres(img: np.ndarray, x: float, y: float) -> list[tuple[float, float]]:
    """Centres of the dark pips on the white die at (x, y)."""
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    x0, y0 = int(x - DIE / 2), int(y - DIE / 2)
    dark = (grey[y0:y0 + int(DIE), x0:x0 + int(DIE)] < 80).astype(np.uint8)
    centres = cv2.connectedComponentsWithStats(dark)[3][1:]
    return [(x0 + float(cx), y0 + float(cy)) for cx, cy in centres]


@pytest.mark.parametrize("angle", [0.0, 20.0, 35.0, 60.0])
def test_a_two_proposed_on_one_pip_is_read_as_a_two(monkeypatch: pytest.MonkeyPatch,
                                                    angle: float) -> None:
    """The detector proposes one pip of a "2" as a small die (0.6 die across): its
    crop shows one pip in the middle and reads "1". Looking round the "1"
    (``one_check_reach``) finds the "2" and reports it at the die's centre instead;
    without the check, the wrong "1"."""
    img = _table()
    draw_die(img, np.random.default_rng(0), 300, 240, DIE, 2, angle=angle,
             body=(235, 235, 235), pip=(20, 20, 20), shadow=False)
    pip = _pip_centres(img, 300.0, 240.0)[0]
    reader = DiceReader()
    reader.one_check_reach = 0.0
    assert [s[2] for s in _read_proposed(monkeypatch, img, pip, 0.6, reader=reader)] == [1]
    _both_read(_read_proposed(monkeypatch, img, pip, 0.6), ((300.0, 240.0), 2))


def test_surest_at_screens_points_for_a_die() -> None:
    """Of points round a die, those on it read surely as its value come first; points
    on the plain table are not read as a value at all."""
    img, a, b = _pair(5, 3, 0.0)
    reader = DiceReader()
    points = [(a[0] + 0.05 * DIE, a[1]), (b[0], b[1] + 0.05 * DIE), (100.0, 100.0),
              (550.0, 400.0)]
    surest = reader.surest_at(img, points, DIE, 4, 0.9)
    assert set(surest) == {0, 1}
    assert reader.surest_at(img, points, DIE, 1, 0.9) == surest[:1]
    assert reader.surest_at(img, points[2:], DIE, 4, 0.5) == []
    assert reader.surest_at(img, [], DIE, 4, 0.9) == []
