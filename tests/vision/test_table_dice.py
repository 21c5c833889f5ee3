"""Dice read where they are rolled: the board's dice area, through the board pose."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter

import numpy as np
import pytest

import vision.bench as bench
import vision.table_dice as table_dice
from companion.boards import Board, load_board
from vision.board import BoardPose, locate_board
from vision.dice import read_dice
from vision.dice.data import closest_pairs
from vision.dice.reader import Candidate, DiceReader
from vision.dice.tilt_check import TiltCheck
from vision.render import DICE_AREA_BGR, render_board
from vision.synth import random_riders, table_scene
from vision.table_dice import AREA_MARGIN_DICE, dice_region, read_dice_area, read_table_dice


@pytest.fixture(scope="module")
def board() -> Board:
    return load_board("standard")


# Most scenes these tests pin (and the figures they measured) were found before the
# flat dice's side faces had pips (2026-11-29): they are drawn so still
# (``side_pips=False``). The table as drawn now is measured by `companion bench vision`
# and test_the_table_reads_dice_whose_sides_show_pips; each rule that still decides
# dice on it has a known answer there (_RULES_AT_THE_TABLE), and the rules of the
# table itself (57b, 58, 60b, the tilt check) are pinned on it.
def _scene(board: Board, seed: int, side_pips: bool = False,  # type: ignore[no-untyped-def]
           **kw: object):
    rng = np.random.default_rng([7, seed])
    return table_scene(board, random_riders(board, rng, 16), rng=rng,  # type: ignore[arg-type]
                       side_pips=side_pips, **kw)


def test_the_standard_board_has_a_dice_area_and_the_print_shows_it(board: Board) -> None:
    assert board.dice_area_mm is not None
    x, y, w, h = board.dice_area_mm
    img = render_board(board, 2.0)
    edge = img[int(y * 2), int(x * 2):int((x + w) * 2)]  # the box's top line: dashes
    dashes = np.all(np.abs(edge.astype(int) - DICE_AREA_BGR) < 30, axis=1).mean()
    assert 0.3 < dashes < 0.7
    inside = img[int((y + 20) * 2):int((y + h - 20) * 2), int((x + 20) * 2):int((x + w - 20) * 2)]
    assert inside.reshape(-1, 3).std(axis=0).max() < 1.0  # nothing printed inside the box


def test_dice_in_the_area_are_read_and_nothing_else(board: Board) -> None:
    right = total = 0
    for seed in range(6):
        sc = _scene(board, seed)
        assert sc.params["dice_in_area"]
        pose = locate_board(sc.image, board)
        region = dice_region(board, pose, (sc.image.shape[1], sc.image.shape[0]))
        assert region is not None and 8 < region.die_px < 60
        found = read_table_dice(sc.image, board, pose)
        assert len(found) <= len(sc.dice), found  # no false dice
        for d in sc.dice:
            total += 1
            near = [r for r in found if math.dist(r.center, d.center) < 20]
            assert all(r.value in (None, d.value) for r in near), (seed, d, near)
            right += bool(near) and near[0].value == d.value
    assert right >= total - 2, (right, total)  # measured 12 of 12


def _side_pips_verdicts(board: Board, seeds: range) -> Counter[str]:
    """The table as drawn since 2026-11-29 (side faces with pips), dice apart, the
    reader told how many were rolled: :func:`_verdicts`."""
    return _verdicts(board, seeds, told=True, side_pips=True)


def test_the_table_reads_dice_whose_sides_show_pips(board: Board) -> None:
    """A tilted camera sees the flat dice's side faces with their pips. The reader
    reads most of them (docs/dice.md, Known weaknesses: this render costs it ~13
    points against plain sides, mostly as unreadable)."""
    c = _side_pips_verdicts(board, range(12))
    # measured 22 of 24 right, 2 null, no wrong value; one false die (below)
    assert c["right"] >= 20 and c["wrong"] == 0 and c["false"] <= 1, c


@pytest.mark.xfail(strict=True, reason="known gap: a side face's pips read as a die")
def test_a_side_face_is_never_read_as_a_die(board: Board) -> None:
    """Scene 1 of the test above, seen from 34 degrees: beside the "1" it reads, the
    reader also reports a "2" (0.29) where that die's side face shows two pips.
    Dropping such a reading when more dice are seen than rolled (rule 59 of
    dice-history.md) was not adopted: the extra reading makes the roll "roll again",
    which guards against cocked dice."""
    assert _side_pips_verdicts(board, range(1, 2))["false"] == 0


def test_dice_outside_the_area_are_not_part_of_the_roll(board: Board) -> None:
    """A die off the dice area (knocked onto the table) is not read as part of the roll."""
    assert board.dice_area_mm is not None
    x, y, w, h = board.dice_area_mm
    m = AREA_MARGIN_DICE * 16.0
    for seed in range(3):
        sc = _scene(board, 100 + seed, dice_in_area=False)
        assert not sc.params["dice_in_area"]
        pose = locate_board(sc.image, board)
        for r in read_table_dice(sc.image, board, pose):
            u, v = pose.to_mm(np.array([r.center]))[0]
            assert x - m <= u <= x + w + m and y - m <= v <= y + h + m


def test_without_area_or_board_the_whole_frame_is_read(board: Board) -> None:
    sc = _scene(board, 3)
    no_area = dataclasses.replace(board, dice_area_mm=None)
    pose = locate_board(sc.image, board)
    lost = BoardPose(False, "no corner marker found")
    assert dice_region(no_area, pose, (2028, 1520)) is None
    assert dice_region(board, lost, (2028, 1520)) is None
    whole = read_dice(sc.image)
    assert read_table_dice(sc.image, no_area, pose) == whole
    assert read_table_dice(sc.image, board, lost) == whole


def test_an_area_out_of_the_frame_falls_back_to_the_whole_frame(board: Board) -> None:
    sc = _scene(board, 4)
    pose = locate_board(sc.image, board)
    far = dataclasses.replace(board, dice_area_mm=(5000.0, 5000.0, 100.0, 100.0))
    assert dice_region(far, pose, (2028, 1520)) is None


def _verdicts(board: Board, seeds: range, reader: DiceReader | None = None,
              told: bool = False, **scene_kw: object) -> Counter[str]:
    """Right, wrong, null, missed and false readings of the dice of ``_scene(seed,
    **scene_kw)`` for each seed (readings paired with dice closest first, within
    20 px); ``told``: the reader is told how many dice were rolled."""
    c: Counter[str] = Counter()
    for seed in seeds:
        sc = _scene(board, seed, **scene_kw)
        found = read_table_dice(sc.image, board, locate_board(sc.image, board), reader=reader,
                                expected=len(sc.dice) if told else None)
        pairs = closest_pairs([d.center for d in sc.dice], [r.center for r in found], 20)
        c["false"] += len(found) - len(pairs)
        c["missed"] += len(sc.dice) - len(pairs)
        for i, k in pairs:
            got = found[k].value
            c["right" if got == sc.dice[i].value else "null" if got is None else "wrong"] += 1
    return c


def _touching_verdicts(board: Board, reader: DiceReader, scenes: int) -> Counter[str]:
    """The table's two dice face to face, ``scenes`` scenes: :func:`_verdicts`."""
    return _verdicts(board, range(scenes), reader, dice_touching=True)


def test_a_die_face_to_face_with_another_is_looked_for(board: Board) -> None:
    """Two dice thrown together often rest face to face, and the detector then often
    proposes one of them only: the reader looks beside a lone die it read
    (``DiceReader._neighbours``) and finds most of the others, never wrongly."""
    reader = DiceReader()
    reader.neighbour_probe = False
    without = _touching_verdicts(board, reader, 30)
    reader.neighbour_probe = True
    with_probe = _touching_verdicts(board, reader, 30)
    # measured 42 right, 11 missed without; 51 right, 4 missed with (dice found by
    # looking at a value of 0.95); 57 right, 1 missed at 0.9 (found_value_threshold,
    # 2026-11-27 fifth session); none wrong or false
    assert with_probe["wrong"] == 0 and with_probe["false"] == 0, with_probe
    assert with_probe["right"] >= without["right"] + 6, (without, with_probe)
    assert with_probe["right"] >= 55, with_probe


@pytest.fixture(scope="module")
def bench_board_image(board: Board) -> np.ndarray:
    return bench.bench_board_image(board)


def _bench_scene(board: Board, board_image: np.ndarray, seed: int, scene: int,
                 touching: bool, cocked: bool = False):  # type: ignore[no-untyped-def]
    """Scene ``scene`` of `companion bench vision --seed SEED --plain-sides`
    (``--dice-cocked``: the second die cocked) and the board's pose in it."""
    sc = bench.bench_scene(board, board_image, seed, scene, dice_touching=touching,
                           dice_cocked=(1,) if cocked else (), side_pips=False)
    return sc, locate_board(sc.image, board)


def _values_by_die(board: Board, sc, pose, reader: DiceReader,  # type: ignore[no-untyped-def]
                   expected: int | None = None, tilt_check: bool = True
                   ) -> list[list[int | None]]:
    """For each die of scene ``sc``, the values of the table's readings within half a
    die of its centre (``None``: read unclear)."""
    found = read_table_dice(sc.image, board, pose, reader=reader, expected=expected,
                            tilt_check=tilt_check)
    return [[r.value for r in found if math.dist(r.center, d.center) < 0.5 * sc.die_side_px(d)]
            for d in sc.dice]


# Scenes of `companion bench vision` (seed, scene, dice touching), the die, its value.
_TWOS_READ_ON_A_PIP = [(3, 46, True, 1), (4, 97, False, 1), (5, 190, True, 0)]
_ONES_BESIDE_A_DIE = [(2, 95, True, 0), (2, 156, True, 0), (4, 104, True, 1), (4, 136, True, 1)]


@pytest.mark.parametrize(("seed", "scene", "touching", "die"),
                         _TWOS_READ_ON_A_PIP + _ONES_BESIDE_A_DIE)
def test_a_one_is_looked_round_at_the_table(board: Board, bench_board_image: np.ndarray,
                                            seed: int, scene: int, touching: bool,
                                            die: int) -> None:
    """Bench scenes where the detector proposed one pip of a "2" as a small die,
    read "1" (``DiceReader._check_ones`` finds the "2" round it: without the check
    the "1" stands, or the off-size check withholds it), and scenes where a true
    "1" lies face to face with another die and a point round it reads "2" (its own
    pip and the neighbour's): the "1" reads clearly at the die's size, so it stays
    (rules 25 and 26, docs/dice-history.md)."""
    sc, pose = _bench_scene(board, bench_board_image, seed, scene, touching)
    truth = sc.dice[die]

    def value_read(reader: DiceReader) -> int | None:
        found = read_table_dice(sc.image, board, pose, reader=reader)
        near = [r for r in found if math.dist(r.center, truth.center) < 0.5 * sc.die_side_px(truth)]
        assert len(near) == 1, found
        return near[0].value

    assert value_read(DiceReader()) == truth.value
    unchecked = DiceReader()
    unchecked.one_check_reach = 0.0
    assert value_read(unchecked) in ((1, None) if truth.value == 2 else (truth.value,))


@pytest.mark.parametrize(("seed", "scene", "die"), [(9, 86, 1), (6, 11, 1), (6, 134, 1), (7, 176, 0)])
def test_a_two_read_one_on_its_pip_is_not_given_a_one(board: Board, bench_board_image: np.ndarray,
                                                       seed: int, scene: int, die: int) -> None:
    """Touching bench scenes where a crop of the die's size centred on one pip of a
    "2" reads "1" clearly, so the "1" check let it stand: a point round it reads "2"
    more surely (``DiceReader._two_surer_round``, rule 33 of docs/dice-history.md),
    so it is no "1" now (``null``, or dropped where the proposal was weak). Without
    rule 33 the "1" is read without the check for cocked dice (since rule 64 that
    check withholds scene 86's "1" too)."""
    sc, pose = _bench_scene(board, bench_board_image, seed, scene, True)
    truth = sc.dice[die]
    assert truth.value == 2

    def values_read(reader: DiceReader, tilt_check: bool = True) -> list[int | None]:
        return _values_by_die(board, sc, pose, reader, tilt_check=tilt_check)[die]

    assert values_read(DiceReader()) in ([], [None])
    unchecked = DiceReader()
    unchecked.one_rival_reaches = ()
    assert values_read(unchecked, tilt_check=False) == [1]


@pytest.mark.parametrize(("seed", "scene"), [(1, 48), (13, 84)])
def test_two_dice_read_as_one_two_are_not_given_a_two(board: Board, bench_board_image: np.ndarray,
                                                      seed: int, scene: int,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Touching bench scenes where a "2" and a "1" face to face were proposed as one
    die between them, 1.3-1.5 dice across, read "2": neither read "2" clearly in a
    crop of one die's size there nor split into two dice read clearly, but one side
    of the split is, so its value is withheld (``withhold_unsplit_twos``, rule 35
    of docs/dice-history.md). The table's later re-reads of a `null` seen from the
    side (rules 57b and 58) may then read the "2" on its own top face: only there."""
    sc, pose = _bench_scene(board, bench_board_image, seed, scene, True)
    assert sorted(d.value for d in sc.dice) == [1, 2]
    mid = np.mean([d.center for d in sc.dice], axis=0)
    two = next(d for d in sc.dice if d.value == 2)

    def read(reader: DiceReader) -> list[tuple[int | None, float]]:
        found = read_table_dice(sc.image, board, pose, reader=reader)
        return [(r.value, math.dist(r.center, two.center)) for r in found
                if math.dist(r.center, mid) < sc.die_side_px(sc.dice[0])]

    for value, off in read(DiceReader()):
        assert value is None or (value == 2 and off < 0.3 * sc.die_side_px(two))
    monkeypatch.setattr(table_dice, "TOP_REREAD_MIN_VIEW_DEG", 90.0)  # the reader's rule alone
    assert [v for v, _ in read(DiceReader())] == [None]
    unchecked = DiceReader()
    unchecked.withhold_unsplit_twos = False
    assert [v for v, _ in read(unchecked)] == [2]


@pytest.mark.parametrize(("seed", "scene"), [(0, 71), (8, 197)])
def test_dice_found_by_looking_unsure_only_whether_readable_are_reported(
        board: Board, bench_board_image: np.ndarray, seed: int, scene: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Touching bench scenes read as one die (``null``) between two dice face to
    face: either side of the split reads its value at 0.85-0.9 in all views, the
    rest "unreadable" (the neighbour's edge in the crop's margin), no other value
    above 0.03, so both dice are reported, each at its place (rule 38 of
    docs/dice-history.md: ``found_readable_floor``); at the 0.9 bar alone, not."""
    sc, pose = _bench_scene(board, bench_board_image, seed, scene, True)

    def dice_read(reader: DiceReader) -> list[tuple[int | None, int | None]]:
        """Each reading near the pair: its value and the true die it lies on."""
        found = read_table_dice(sc.image, board, pose, reader=reader)
        mid = np.mean([d.center for d in sc.dice], axis=0)
        near = [r for r in found if math.dist(r.center, mid) < sc.die_side_px(sc.dice[0])]
        on = [next((i for i, d in enumerate(sc.dice)
                    if math.dist(r.center, d.center) < 0.3 * sc.die_side_px(d)), None)
              for r in near]
        return sorted(((r.value, i) for r, i in zip(near, on, strict=True)), key=str)

    truth = sorted(((d.value, i) for i, d in enumerate(sc.dice)), key=str)
    assert dice_read(DiceReader()) == truth
    strict = DiceReader()
    strict.found_readable_floor = 1.0
    # The table's re-reads of a `null` seen from the side (rules 57b and 58) may read
    # one of the two on its own top face; the reader's rule alone is checked without.
    for value, i in dice_read(strict):
        assert value is None or (i is not None and value == sc.dice[i].value)
    monkeypatch.setattr(table_dice, "TOP_REREAD_MIN_VIEW_DEG", 90.0)
    assert [v for v, _ in dice_read(strict)] == [None]


def test_the_table_says_its_dice_are_one_size(board: Board,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The dice of a roll are one set: ``read_table_dice`` tells the reader so
    (``one_size``), which checks readings proposed far smaller than a die; reading
    the frame without it (photos mixing dice sizes) does not check them."""
    sc = _scene(board, 0)
    pose = locate_board(sc.image, board)
    reader = DiceReader()
    checked: list[int] = []
    check = reader._check_off_size

    def counted(img: np.ndarray, found: list[Candidate], die_px: float) -> list[Candidate]:
        checked.append(len(found))
        return check(img, found, die_px)

    monkeypatch.setattr(reader, "_check_off_size", counted)
    region = dice_region(board, pose, (sc.image.shape[1], sc.image.shape[0]))
    assert region is not None
    reader.read(sc.image, region.roi, die_px=region.die_px)
    assert checked == []
    read_table_dice(sc.image, board, pose, reader=reader)
    assert len(checked) == 1


@pytest.mark.parametrize(("seed", "scene"), [(1, 38), (6, 71), (6, 167), (8, 74)])
def test_two_dice_read_as_one_two_between_them_are_split(board: Board,
                                                         bench_board_image: np.ndarray,
                                                         seed: int, scene: int) -> None:
    """Bench scenes where a "1" face to face with another "1" or a "2" was proposed
    as one die 1.3-1.6 dice across between them and read "2" (a pip of each in its
    crop): at the table (all dice one size) such a lone "2" is looked at as two dice
    (``split_twos``), and both are read; without it, the wrong "2" (read without the
    check for cocked dice, which since rule 65 also withholds seed 1 scene 38's)."""
    sc, pose = _bench_scene(board, bench_board_image, seed, scene, True)

    def values_read(reader: DiceReader, tilt_check: bool = True) -> list[int | None]:
        found = read_table_dice(sc.image, board, pose, reader=reader, tilt_check=tilt_check)
        pairs = dict(closest_pairs([d.center for d in sc.dice], [r.center for r in found],
                                   0.5 * sc.die_side_px(sc.dice[0])))
        return [found[pairs[i]].value if i in pairs else None for i in range(len(sc.dice))]

    assert 1 in [d.value for d in sc.dice]
    assert values_read(DiceReader()) == [d.value for d in sc.dice]
    unsplit = DiceReader()
    unsplit.split_twos = False
    wrong = values_read(unsplit, tilt_check=False)
    assert 2 in wrong and wrong != [d.value for d in sc.dice]


# Dev photos (oblique webcam, ../shared/data/dice/matteop65) of a "2" seen with its side
# faces, proposed 1.25+ dice across when read told the median labelled die: (photo,
# shrunk so that die is this many px or 0 for as taken, the "2"'s label line).
_TWOS_SEEN_LARGE = [("two_24", 0, 2), ("two_42", 32, 0), ("two_9", 16, 0)]


@pytest.mark.parametrize(("name", "die_to", "line"), _TWOS_SEEN_LARGE)
def test_a_real_two_seen_large_is_not_split(name: str, die_to: int, line: int) -> None:
    """Read as the table reads (the size told, one set), a real "2" whose side faces
    show is proposed larger than the die it is told; ``split_twos`` split it at its
    two pips into two "1"s until a die-size crop at its centre that reads "2"
    clearly kept it whole (rule 29, docs/dice-history.md)."""
    from vision.dice.data import default_data_dir, labelled_die_px, read_labels
    from vision.dice.run import shrink_to_die
    from vision.image_file import read_image

    photo = default_data_dir() / "matteop65" / "images" / f"{name}.jpg"
    if not photo.exists():
        pytest.skip(f"dice photographs not found at {photo} (set PELOTON_DICE_DATA)")
    img = read_image(photo)
    truth = read_labels(photo.parent.parent / "labels" / f"{name}.txt",
                        img.shape[1], img.shape[0])
    die_px = labelled_die_px(truth)
    assert die_px is not None
    img, k = shrink_to_die(img, truth, die_to) if die_to else (img, 1.0)
    two = truth[line]
    assert two.value == 2
    x0, y0, x1, y1 = (v * k for v in two.box)

    def values_on_it(reader: DiceReader) -> list[int | None]:
        return [d.value for d in reader.read(img, die_px=die_px * k, one_size=True)
                if x0 <= d.center[0] <= x1 and y0 <= d.center[1] <= y1]

    assert values_on_it(DiceReader()) == [2]
    unguarded = DiceReader()
    unguarded.split_twos_whole = False
    assert values_on_it(unguarded) == [1, 1]


# Bench scenes (seed, scene, dice apart) with a die reported `null`, proposed off its
# size: a "1" seen obliquely with its side faces, 1.33 dice across (scene 16), and a
# "6" proposed small, 0.84 of a die (scene 170). (seed, scene, the die.)
_NULLS_PROPOSED_OFF_SIZE = [(0, 16, 1), (0, 170, 1)]


@pytest.mark.parametrize(("seed", "scene", "die"), _NULLS_PROPOSED_OFF_SIZE)
def test_a_null_proposed_off_the_die_size_is_read_at_it(board: Board,
                                                        bench_board_image: np.ndarray,
                                                        seed: int, scene: int, die: int,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """At the table a die read ``null`` whose proposal is far from the die's size is
    read again in a crop of the die's size at its centre, and its value taken where
    read clearly (``read_off_size_nulls``, rule 50 of docs/dice-history.md);
    without it (and without the later re-read at the top face), ``null``."""
    sc, pose = _bench_scene(board, bench_board_image, seed, scene, False)
    d = sc.dice[die]
    assert _values_by_die(board, sc, pose, DiceReader())[die] == [d.value]
    off = DiceReader()
    off.read_off_size_nulls = False
    monkeypatch.setattr(table_dice, "TOP_REREAD_MIN_VIEW_DEG", 90.0)
    assert _values_by_die(board, sc, pose, off)[die] == [None]


# Bench scenes (seed, scene, dice face to face) whose pair the fixed probes of the
# split and the re-read missed: "2" and "2" read as one `null` and nothing (scene
# 76), two "2"s read as nothing at all, their proposal a third of a die off the
# pair's middle (scene 141).
_DOMINOES_FOUND_ON_A_GRID = [(0, 76), (0, 141)]


@pytest.mark.parametrize(("seed", "scene"), _DOMINOES_FOUND_ON_A_GRID)
def test_a_lone_domino_is_searched_on_a_grid(board: Board, bench_board_image: np.ndarray,
                                             seed: int, scene: int) -> None:
    """At the table, two dice face to face still seen as one proposal after the split
    and the re-read are searched for on a grid round it (``grid_search``,
    :meth:`DiceReader._search_dominoes`, rule 51 of docs/dice-history.md): both are
    read right; without it, not."""
    sc, pose = _bench_scene(board, bench_board_image, seed, scene, True)
    assert _values_by_die(board, sc, pose, DiceReader()) == [[d.value] for d in sc.dice]
    off = DiceReader()
    off.grid_search = False
    assert _values_by_die(board, sc, pose, off) != [[d.value] for d in sc.dice]


# Bench scenes (seed, scene, the die) where a die face to face with a lone die read
# right was not found by the probes of `_neighbours`: a "6" 1.23 dice from its "5"
# (scene 6), a "3" beside a "4" (61), a "2" beside a "2" (180).
_DICE_FOUND_BESIDE_ON_A_GRID = [(0, 6, 0), (0, 61, 0), (0, 180, 1)]


@pytest.mark.parametrize(("seed", "scene", "die"), _DICE_FOUND_BESIDE_ON_A_GRID)
def test_a_die_beside_a_lone_die_is_searched_on_a_grid(board: Board,
                                                       bench_board_image: np.ndarray,
                                                       seed: int, scene: int, die: int) -> None:
    """At the table, beside a lone die where something stands out, the die touching it
    is searched for on a grid too (:meth:`DiceReader._search_beside`, rule 51): read
    right; without that search, missed."""
    sc, pose = _bench_scene(board, bench_board_image, seed, scene, True)
    d = sc.dice[die]
    assert _values_by_die(board, sc, pose, DiceReader())[die] == [d.value]
    off = DiceReader()
    off.grid_beside_busy = math.inf
    assert _values_by_die(board, sc, pose, off)[die] == []


def _not_searching() -> DiceReader:
    """A reader that does not search a roll short of dice (``short_search`` off)."""
    reader = DiceReader()
    reader.short_search = False
    return reader


# Bench scenes (seed, scene) of touching dice where fewer dice were reported than
# rolled, and a search of what stands out in the dice area finds the rest: a "4"
# and a "2" both missed (1, 2), a "3" and a "2" (1, 45), a pair of "2"s the
# detector proposed nothing for (2, 125), a "2" and a "3" (2, 61).
_ROLLS_SHORT_OF_DICE = [(1, 2), (1, 45), (2, 125), (2, 61)]


@pytest.mark.parametrize(("seed", "scene"), _ROLLS_SHORT_OF_DICE)
def test_a_roll_short_of_dice_is_searched(board: Board, bench_board_image: np.ndarray,
                                          seed: int, scene: int) -> None:
    """Told how many dice were rolled, the table searches the dice area's spots that
    stand out when it sees fewer (:meth:`DiceReader._search_short`, rule 52c of
    docs/dice-history.md): every die read right; not told, or with the search off,
    not."""
    sc, pose = _bench_scene(board, bench_board_image, seed, scene, True)
    truth = [[d.value] for d in sc.dice]
    assert _values_by_die(board, sc, pose, DiceReader(), expected=len(sc.dice)) == truth
    assert _values_by_die(board, sc, pose, DiceReader()) != truth
    assert _values_by_die(board, sc, pose, _not_searching(), expected=len(sc.dice)) != truth


def test_the_search_stops_at_the_number_rolled(board: Board,
                                               bench_board_image: np.ndarray) -> None:
    """The search never reports more dice than were rolled: with one die expected
    and one seen (the "4" of a pair, read unclear), nothing is searched; with none
    expected, none; with two, the "2" beside it is found."""
    sc, pose = _bench_scene(board, bench_board_image, 0, 113, True)
    plain = read_table_dice(sc.image, board, pose)
    assert [d.value for d in plain] == [None]
    for expected in (0, 1):
        assert read_table_dice(sc.image, board, pose, expected=expected) == plain
    assert sorted(d.value or 0 for d in read_table_dice(sc.image, board, pose, expected=2)) == [0, 2]


@pytest.mark.parametrize("expected", [-1, 1.5, True, "2"])
def test_a_count_of_dice_that_is_no_count_is_refused(board: Board,
                                                     bench_board_image: np.ndarray,
                                                     expected: object) -> None:
    sc, pose = _bench_scene(board, bench_board_image, 1, 114, True)
    with pytest.raises(ValueError, match="expected must be a number of dice"):
        read_table_dice(sc.image, board, pose, expected=expected)  # type: ignore[arg-type]


def _no_dice_scene(board: Board, board_image: np.ndarray, seed: int, scene: int):  # type: ignore[no-untyped-def]
    """A table scene with no dice; the first rider's token dropped in the dice area,
    under a hand when ``scene % 3 == 2``, nothing there when ``scene % 3 == 0``."""
    rng = np.random.default_rng([seed, scene])
    riders = random_riders(board, rng, 16)
    assert board.dice_area_mm is not None
    x, y, w, h = board.dice_area_mm
    kw: dict[str, object] = {}
    if scene % 3:
        rid = next(iter(riders))
        kw["token_at_mm"] = {rid: (x + rng.uniform(0.2, 0.8) * w, y + rng.uniform(0.2, 0.8) * h)}
        if scene % 3 == 2:
            kw["hide_tokens"] = (rid,)
    return table_scene(board, riders, rng=rng, token_side_mm=10.0, board_image=board_image,
                       board_px_per_mm=2.5, n_dice=0, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("scene", [1, 2, 4, 5])
def test_no_die_is_made_up_when_the_roll_is_not_there(board: Board,
                                                      bench_board_image: np.ndarray,
                                                      scene: int) -> None:
    """Two dice expected and none in the dice area, but a rider token dropped there
    or a hand reaching over it: the search reads no value there."""
    sc = _no_dice_scene(board, bench_board_image, 0, scene)
    found = read_table_dice(sc.image, board, locate_board(sc.image, board), expected=2)
    assert [d.value for d in found if d.value is not None] == [], found


def test_no_die_is_taken_at_the_centre_of_a_token(board: Board,
                                                   bench_board_image: np.ndarray) -> None:
    """A rider token dropped in the dice area, no die there, two expected: it is
    proposed 2.09 dice across, read unreadable and not reported; the search reads its
    marker "4" at 0.955 at its very centre, so no die is taken there within
    ``short_centre`` of a candidate proposed ``short_large`` dice across or more
    (seed 91, scene 85 of the no-dice frames; rule 52b of docs/dice-history.md)."""
    sc = _no_dice_scene(board, bench_board_image, 91, 85)
    pose = locate_board(sc.image, board)
    reader = DiceReader()
    assert read_table_dice(sc.image, board, pose, reader=reader, expected=2) == []
    reader.short_large = math.inf
    assert [d.value for d in read_table_dice(sc.image, board, pose, reader=reader, expected=2,
                                             tilt_check=False)] == [4]
    # (Rule 63's check for cocked dice also took that "4" for no flat die; rule 64's
    # does not: the guard alone keeps it out of the cocked check. Rule 70's second
    # opinion, the network reading the token's top as another value, withholds it.)
    assert [d.value for d in read_table_dice(sc.image, board, pose, reader=reader, expected=2,
                                             tilt_check=TiltCheck(value_bar=0.0))] == [4]
    assert [d.value for d in read_table_dice(sc.image, board, pose, reader=reader,
                                             expected=2)] == [None]


def test_the_search_reports_no_one(board: Board, bench_board_image: np.ndarray) -> None:
    """Touching bench seed 107, scene 58, a black "2" face to face with a "3": a
    search that took "1"s would report a "1" at 0.974 on a pip of the "2"
    (``_check_ones`` skips dice found by looking, and its test for a table "1"
    lets this one stand too), so the reader's search of a roll short of dice
    reports no "1" (rule 52c). The reader alone, as the table asks it: with
    OpenCV 5.0 it reports neither die, with 5.1 the "3"; the table's look
    beside a lone die (rule 60b) then reads the "2" as "1" in the top view
    (docs/dice.md, Known weaknesses)."""
    sc, pose = _bench_scene(board, bench_board_image, 107, 58, True)
    truth = {d.value for d in sc.dice}
    region = dice_region(board, pose, (sc.image.shape[1], sc.image.shape[0]))
    assert region is not None

    def search(reader: DiceReader) -> list[int | None]:
        return [d.value for d in read_dice_area(sc.image, region, reader, expected=2)]

    values = search(DiceReader())
    assert all(v is None or v in truth for v in values), values
    reader = DiceReader()
    reader.short_ones = True
    assert 1 in search(reader)


@pytest.mark.xfail(reason="known gap: a cocked die at the table is often given a number "
                          "(docs/dice.md, Known weaknesses)", strict=True)
def test_a_cocked_die_at_the_table_is_never_given_a_number(
        board: Board, bench_board_image: np.ndarray) -> None:
    """Scenes 0, 4 and 6 of `companion bench vision --seed 900 --dice-cocked`, the roll
    told (two dice): the cocked die is read "1" and "4" (scene 6's "3" is withheld
    since rule 63; 13.5 % of the cocked dice of fresh seeds 70/71 are given a number
    since rule 65, 19.25 % of seeds 68/69 since rule 64, 32.5 % of seeds 66/67 with
    rule 63, 55-57 % before it; on the render with plain sides, scenes 1, 3, 4 of
    seed 300 were read "4", "5" and "3")."""
    numbered = []
    for scene in (0, 4, 6):
        sc = bench.bench_scene(board, bench_board_image, 900, scene, dice_cocked=(1,))
        pose = locate_board(sc.image, board)
        cocked = sc.dice[1]
        assert cocked.value == 0
        found = read_table_dice(sc.image, board, pose, expected=2)
        numbered += [(scene, r.value) for r in found
                     if r.value is not None and math.dist(r.center, cocked.center) < 25]
    assert numbered == []


# Known answers on the table as drawn now (side faces with pips): for each of the
# reader's rules that still decides dice there, a scene of `companion bench vision`
# where it does. (setting, its value when off, seed, scene, dice touching, the die,
# its verdict with the rule, without it). Found by turning each rule off in turn
# over 2,400 scenes (seeds 900/901; dice-history.md, twenty-second session).
_RULES_AT_THE_TABLE = [
    # looking beside a lone die
    ("neighbour_probe", False, 900, 9, True, 1, "right", "missed"),
    # a die read with part of its neighbour
    ("reread_oversize", 3.0, 900, 40, True, 0, "right", "missed"),
    # a weak proposal at a pair
    ("domino_weak", False, 900, 160, True, 0, "right", "missed"),
    # looking round a proposal at a pair
    ("domino_search", 0.0, 900, 248, True, 1, "right", "missed"),
    # rule 38: a die found by looking, unsure only whether it can be read
    ("found_readable_floor", 1.0, 900, 177, True, 1, "right", "null"),
    # rule 50: a `null` proposed off the die's size read at it
    ("read_off_size_nulls", False, 900, 131, True, 0, "right", "null"),
    # rule 51: the die beside a lone die searched on a grid
    ("grid_search", False, 900, 166, True, 0, "right", "missed"),
    # rule 52c: a roll short of dice searched (the dice apart)
    ("short_search", False, 900, 32, False, 0, "right", "missed"),
    # rule 33: a surer "2" round a "1"
    ("one_rival_reaches", (), 900, 236, True, 1, "missed", "wrong"),
    # rules 25-26: a "1" looked round
    ("one_check_reach", 0.0, 900, 236, True, 1, "missed", "wrong"),
]


def _die_verdict(sc, found: list, die: int) -> str:  # type: ignore[no-untyped-def]
    """How die ``die`` of scene ``sc`` fared among the readings ``found``, as
    `companion bench vision` counts it: right, wrong, null or missed."""
    return bench.die_verdicts([(d.value, d.center) for d in sc.dice], found)[0][die]


@pytest.mark.parametrize(("setting", "off", "seed", "scene", "touching", "die", "with_it",
                          "without"), _RULES_AT_THE_TABLE,
                         ids=[f"{c[0]}-{c[2]}-{c[3]}" for c in _RULES_AT_THE_TABLE])
def test_each_rule_decides_a_die_at_the_table_as_drawn_now(
        board: Board, bench_board_image: np.ndarray, setting: str, off: object, seed: int,
        scene: int, touching: bool, die: int, with_it: str, without: str) -> None:
    """The reader's rules were each found and judged on scenes of their day, most
    before the side faces showed pips (the tests above pin those scenes, drawn as
    then). Each rule listed still decides a die on the table as drawn now, told two
    dice were rolled: with it the die fares ``with_it``, with ``setting`` off
    ``without``. (Rules 57b, 58, 60b and the tilt check are pinned on this render
    by their own tests below.)"""
    sc = bench.bench_scene(board, bench_board_image, seed, scene, dice_touching=touching)
    pose = locate_board(sc.image, board)

    def verdict(reader: DiceReader) -> str:
        return _die_verdict(sc, read_table_dice(sc.image, board, pose, reader=reader,
                                                expected=len(sc.dice)), die)

    assert verdict(DiceReader()) == with_it
    reader = DiceReader()
    assert hasattr(reader, setting)
    setattr(reader, setting, off)
    assert verdict(reader) == without


def _read_with_and_without(board: Board, bench_board_image: np.ndarray, scene: int, die: int,
                           monkeypatch: pytest.MonkeyPatch, setting: str, off: object) -> None:
    """Die ``die`` of scene ``scene`` of `companion bench vision` (seed 0) is read right
    at the table, and `null` with ``vision.table_dice``'s ``setting`` set to ``off``;
    read right, its centre lies nearer its top face's."""
    sc = bench.bench_scene(board, bench_board_image, 0, scene)
    pose = locate_board(sc.image, board)
    d = sc.dice[die]

    def near() -> list[tuple[int | None, float]]:
        found = read_table_dice(sc.image, board, pose, expected=len(sc.dice))
        return [(r.value, math.dist(r.center, d.center)) for r in found
                if math.dist(r.center, d.center) < 20]

    [(value, at)] = near()
    monkeypatch.setattr(table_dice, setting, off)
    [(before, at_before)] = near()
    assert (value, before) == (d.value, None)
    assert at < at_before


@pytest.mark.parametrize("scene, die", [(3, 0), (36, 0)])
def test_a_null_seen_from_the_side_is_read_at_its_top(
        board: Board, bench_board_image: np.ndarray, scene: int, die: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Scenes 3 and 36 of `companion bench vision` (seed 0; a "4" and a "3", the
    camera tilted 27 and 20 degrees): the die is proposed between its top and a side
    face with pips and read `null` there; read again toward its top face, away from
    the camera's foot (``read_nulls_at_their_tops``, rule 57b of dice-history.md),
    it gets its value, and its centre moves onto the top face."""
    _read_with_and_without(board, bench_board_image, scene, die, monkeypatch,
                           "TOP_REREAD_MIN_VIEW_DEG", 90.0)


@pytest.mark.parametrize("scene, die", [(2, 1), (21, 0)])
def test_a_null_still_unread_is_read_in_the_top_view(
        board: Board, bench_board_image: np.ndarray, scene: int, die: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Scenes 2 and 21 of `companion bench vision` (seed 0; a "3" and a "1", the camera
    tilted 23 and 18 degrees): read toward the top face in the frame (rule 57b), the
    die stays `null`; redrawn as seen straight down onto the plane of the dice's tops
    (``vision.top_view``, rule 58 of dice-history.md), it is read, and its centre
    moves onto the top face."""
    _read_with_and_without(board, bench_board_image, scene, die, monkeypatch,
                           "TOP_VIEW_STEPS", ())


@pytest.mark.parametrize("scene", [64, 79, 88])
def test_a_die_missed_beside_a_lone_die_is_found_in_the_top_view(
        board: Board, bench_board_image: np.ndarray, scene: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Scenes 64, 79 and 88 of `companion bench vision --dice-touching` (seed 0; the
    camera tilted 23-29 degrees): of two dice face to face the reader finds one. Told
    two were rolled, it looks round the lone die in the top view and finds the other
    with its value (``find_beside_in_top_view``, rule 60b of dice-history.md); not
    told, or with the look turned off, it reports the one."""
    sc = bench.bench_scene(board, bench_board_image, 0, scene, dice_touching=True)
    pose = locate_board(sc.image, board)

    def read(expected: int | None) -> list[int | None]:
        found = read_table_dice(sc.image, board, pose, expected=expected)
        pairs = closest_pairs([d.center for d in sc.dice], [r.center for r in found], 5)
        assert len(pairs) == len(found), found  # each reading within 5 px of its die
        return sorted(r.value or 0 for r in found)

    assert read(2) == sorted(d.value for d in sc.dice)
    assert len(read(None)) == 1
    monkeypatch.setattr(table_dice, "BESIDE_SUREST", 0)
    assert len(read(2)) == 1


@pytest.mark.parametrize("seed, scene", [(52, 137), (53, 102)])
def test_the_look_beside_a_lone_die_does_not_read_its_own_side_face(
        board: Board, bench_board_image: np.ndarray, seed: int, scene: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Scene 137 of seed 52 and 102 of seed 53, `--dice-cocked` (camera 26 and 31
    degrees): the cocked die is not seen, the flat "1" is. Looking round the "1" for
    the die touching it, the top view's points on the camera's side of it, in line,
    are left out: its own side face shows there, and reads "2" or "3" (rule 60b of
    dice-history.md). The roll stays one die short ("roll again")."""
    sc = bench.bench_scene(board, bench_board_image, seed, scene, dice_cocked=(1,))
    pose = locate_board(sc.image, board)
    found = read_table_dice(sc.image, board, pose, expected=2)
    assert [r.value for r in found] == [1]
    monkeypatch.setattr(table_dice, "BESIDE_SIDE_ACROSS", -1.0)  # every grid point
    seen = [r.value for r in read_table_dice(sc.image, board, pose, expected=2)]
    assert seen[0] == 1 and len(seen) == 2  # the side face read as a second die
