"""The dice reader on synthetic dice drawn in code: every value, colours, sizes, views.

The networks were trained partly on scenes from the same renderer (other
seeds), so these are unit tests of behaviour, not an accuracy estimate: that
is the held-out photo test. The bounds are the measured counts (docs/dice.md)
with a small margin; "never a wrong value" is asserted exactly.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import cv2
import numpy as np
import pytest

import vision.dice.reader as reader_module
from vision.dice import DieReading, palette, read_dice, synth
from vision.dice.reader import DiceReader, face_crop
from vision.dice.reading import UNREADABLE
from vision.dice.synth import background, draw_die, motion_blur, motion_kernel, packed_scene, scene

WOOD = (150, 190, 225)
COLOURS = [  # body, pips (BGR)
    ((235, 240, 240), (20, 20, 20)),  # white, black pips
    ((25, 25, 25), (235, 235, 235)),  # black, white pips
    ((40, 40, 190), (240, 240, 240)),  # red, white pips
    ((40, 210, 230), (20, 20, 20)),  # yellow, black pips
    ((60, 150, 40), (240, 240, 240)),  # green, white pips
    ((235, 240, 240), (40, 40, 190)),  # white, red pips
]

#: Dice of any colour pair (test_dice_of_any_colour_pair), committed models, right /
#: wrong / null / missed of 436: 364 / 1 / 24 / 47 at an unknown size (the wrong one a
#: dark olive die on a dark table, proposed at half its size: two of its three pips);
#: 398 / 0 / 29 / 9 with the die size known. Bounds keep a margin.
BOUNDS_ANY_COLOUR = {False: {"right": 350, "wrong": 1, "missed": 55},
                     True: {"right": 385, "wrong": 0, "missed": 15}}

Scene = tuple[np.ndarray, list[tuple[float, float, int]]]  # image, (x, y, value; 0 = unreadable)


def _plain(h: int = 480, w: int = 640, colour: tuple[int, int, int] = WOOD) -> np.ndarray:
    img = np.full((h, w, 3), colour, np.uint8)
    noise = np.random.default_rng(1).normal(0, 2, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


def _nearest(dice: list[DieReading], x: float, y: float) -> DieReading | None:
    best = min(dice, key=lambda d: math.hypot(d.center[0] - x, d.center[1] - y), default=None)
    if best is None or math.hypot(best.center[0] - x, best.center[1] - y) > 20:
        return None
    return best


def _verdict(d: DieReading | None, value: int) -> str:
    """How the reading nearest a die of ``value`` counts: missed, null, right or wrong."""
    if d is None:
        return "missed"
    if d.value is None:
        return "null"
    return "right" if d.value == value else "wrong"


def _score(gen: Callable[[int], Scene], n: int) -> Counter[str]:
    """Counts of right / wrong / null / missed dice and extra readings over n scenes."""
    c: Counter[str] = Counter()
    for i in range(n):
        img, truths = gen(i)
        seen = read_dice(img)
        c["extra"] += max(0, len(seen) - len(truths))
        for x, y, v in truths:
            c[_verdict(_nearest(seen, x, y), v)] += 1
    return c


def test_every_value_every_colour() -> None:
    """Each value 1..6 on dice of six colours (with black, white, red pips), any angle."""
    rng = np.random.default_rng(0)

    def gen(i: int) -> Scene:
        value = 1 + i % 6
        body, pip = COLOURS[(i // 6) % 6]
        img = _plain()
        draw_die(img, rng, 320, 240, 44, value, angle=float(rng.uniform(0, 90)), body=body,
                 pip=pip)
        return img, [(320, 240, value)]

    c = _score(gen, 36)
    assert c["wrong"] == 0, c
    assert c["right"] >= 34, c  # measured 36 of 36


# measured right of 24: 22, 23, 23, 24, 24, 24 (the rest missed, one null at 50 px;
# none wrong) with the 1.25-crop classifier; 21, 22, 24, 24, 24, 24 before it, and 18,
# 21, 24, 24, 23, 24 before weak detector peaks were kept when read clearly
@pytest.mark.parametrize(("size", "min_right"), [(22, 18), (34, 20), (50, 22), (80, 22),
                                                 (120, 22), (180, 22)])
def test_sizes_and_rotations(size: int, min_right: int) -> None:
    """White dice of each value, any angle, on random tables (wood, boards, trays, cloth),
    face sizes from 22 px (pips ~3 px) to 180 px (close-up)."""
    rng = np.random.default_rng(size)

    def gen(i: int) -> Scene:
        value = 1 + i % 6
        img = background(np.random.default_rng(1000 + i), 480, 640)
        draw_die(img, rng, 320, 240, size, value, angle=float(rng.uniform(0, 90)),
                 body=(235, 240, 240), pip=(20, 20, 20))
        return img, [(320, 240, value)]

    c = _score(gen, 24)
    assert c["wrong"] == 0, c
    assert c["right"] >= min_right, c


def test_touching_dice() -> None:
    """Two dice side by side, touching: never a wrong value."""
    rng = np.random.default_rng(7)

    def gen(i: int) -> Scene:
        a, b = 1 + i % 6, 1 + (i * 5 + 2) % 6
        img = _plain()
        draw_die(img, rng, 290, 240, 56, a, angle=0, body=(235, 240, 240), pip=(20, 20, 20),
                 shadow=False)
        draw_die(img, rng, 350, 240, 56, b, angle=0, body=(25, 25, 25),
                 pip=(235, 235, 235), shadow=False)
        return img, [(290, 240, a), (350, 240, b)]

    c = _score(gen, 12)
    assert c["wrong"] == 0, c
    # Measured 22 of 24 right, 1 null, 1 missed (20 with the 1.4-crop classifier;
    # 13 before weak detector peaks were kept when read clearly: a die touching
    # another scores lower).
    assert c["right"] >= 18, c


TOUCHING_PAIRS = [  # (body, pips) of each die: white-black, white-white
    (((235, 240, 240), (20, 20, 20)), ((25, 25, 25), (235, 235, 235))),
    (((235, 240, 240), (20, 20, 20)), ((230, 235, 235), (30, 30, 30)))]


# Two dice touching at a known size (the table's case): the detector sometimes
# centres on one pip of a die, whose crop then shows a "1"; such a proposal is
# far smaller than the die and must be read clearly or not at all (the reader
# crops it at the known size, so the classifier sees the die round the pip).
# Measured right of 96 (a white-black and a white-white pair, 24 throws each):
# 86, 83 and 83 at 34, 56 and 80 px, none wrong (the 1.25-crop classifier; 81,
# 78 and 72 with the 1.4 one). The 1.25 classifier without the known-size crop
# read a "2" as "1" at 56 px from a crop round one pip, as the reader before weak
# proposals did. Since a lone die's neighbour is looked for (DiceReader._neighbours,
# 2026-11-27): 87, 86 and 93 (86, 83 and 84 without it), none wrong; with dice
# found by looking taken at a value of 0.9 (found_value_threshold): 89, 88, 94.
@pytest.mark.parametrize(("size", "min_right"), [(34, 86), (56, 85), (80, 91)])
def test_touching_dice_at_known_size(size: int, min_right: int) -> None:
    """``die_px`` given, two dice touching at any angle: never a wrong value."""
    c: Counter[str] = Counter()
    for first, second in TOUCHING_PAIRS:
        rng = np.random.default_rng(size + 11000)
        for i in range(24):
            a, b = 1 + i % 6, 1 + (i * 5 + 2) % 6
            gap = size * float(rng.uniform(1.0, 1.15))
            angle = float(rng.uniform(0, 90))
            img = _plain()
            xa, xb = 320 - gap / 2, 320 + gap / 2
            draw_die(img, rng, xa, 240, size, a, angle=angle, body=first[0], pip=first[1],
                     shadow=bool(i % 2))
            draw_die(img, rng, xb, 240, size, b, angle=angle + float(rng.uniform(-15, 15)),
                     body=second[0], pip=second[1], shadow=bool(i % 2))
            seen = read_dice(img, die_px=size)
            c["extra"] += max(0, len(seen) - 2)
            for x, value in ((xa, a), (xb, b)):  # a reading anywhere on the die counts
                d = min(seen, key=lambda r, x=x: math.hypot(r.center[0] - x, r.center[1] - 240),
                        default=None)
                if d is not None and max(abs(d.center[0] - x), abs(d.center[1] - 240)) > size / 2:
                    d = None
                c[_verdict(d, value)] += 1
    assert c["wrong"] == 0, c
    assert c["right"] >= min_right, c


def test_small_proposal_at_known_size_is_cropped_at_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``die_px``, a proposal far smaller than a die (one pip of it) is shown to
    the classifier at the lower end of ``sized_size_range``, not as a lone pip; one of
    the known size keeps its own crop."""
    reader = DiceReader()
    die_px = 56.0
    scale = reader.die_target / die_px
    probs = np.full(7, 1 / 7, np.float32)
    pip, die = 0.3 * die_px * scale, die_px * scale  # sizes in detector pixels

    def proposals(*args: object, **kwargs: object) -> list[tuple]:
        return [(100.0, 100.0, pip, 0.6, probs), (200.0, 100.0, die, 0.6, probs)]

    monkeypatch.setattr(reader, "_proposals", proposals)
    sizes: list[float] = []

    def recording_crop(img: np.ndarray, cx: float, cy: float, size: float,
                       *args: object) -> np.ndarray:
        sizes.append(size)
        return face_crop(img, cx, cy, size, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(reader_module, "face_crop", recording_crop)
    found = reader.candidates(_plain(), die_px=die_px)
    assert len(found) == 2
    lo = reader.sized_size_range[0] * die_px
    per_view = len(sizes) // 2
    assert all(s == pytest.approx(lo) for s in sizes[:per_view]), sizes
    assert all(s == pytest.approx(die_px) for s in sizes[per_view:]), sizes
    assert found[0].size == pytest.approx(0.3 * die_px)  # the reading keeps its own size


def test_oblique_view_reads_top_face() -> None:
    """Side faces showing (oblique camera): the value is the top face's."""
    rng = np.random.default_rng(11)

    def gen(i: int) -> Scene:
        value = 1 + i % 6
        img = _plain()
        draw_die(img, rng, 320, 240, 60, value, oblique=0.7, body=(230, 235, 235),
                 pip=(20, 20, 20), angle=float(rng.uniform(0, 90)))
        return img, [(320, 240, value)]

    c = _score(gen, 24)
    assert c["wrong"] == 0, c
    # Measured 18 of 24, 4 null, 2 missed (17 with the 1.4-crop classifier, 16
    # before weak proposals). The classifier of 2026-11-24 (more real and table
    # crops) picks the right value for the dice it sees but is less sure of this
    # renderer's oblique "4"s than the one before (21 right): null, not wrong.
    assert c["right"] >= 14, c


# Marbled dice (the body swirled with a second colour), six colours with their pips,
# every value, on random tables. A known weakness (docs/dice.md): measured 14 of
# 36 right at 34 px (12 null, 10 missed) and 12 at 56 px (12 null, 12 missed, 2
# extra readings), never a wrong value (10 and 10 with the 1.4-crop classifier).
# A classifier fine-tuned with marbled synthetic dice read 20 and 22 but lost two
# real val dice: not adopted.
@pytest.mark.parametrize("size", [34, 56])
def test_marbled_dice_never_wrong(size: int) -> None:
    """Marbled bodies: a die is read right, reported unclear or missed, never wrong."""
    rng = np.random.default_rng(40 + size)

    def gen(i: int) -> Scene:
        value = 1 + i % 6
        body, pip = COLOURS[(i // 6) % 6]
        img = background(np.random.default_rng(2000 + i), 480, 640)
        draw_die(img, rng, 320, 240, size, value, angle=float(rng.uniform(0, 90)), body=body,
                 pip=pip, marbled=True)
        return img, [(320, 240, value)]

    c = _score(gen, 36)
    assert c["wrong"] == 0, c
    assert c["right"] >= 10, c


# Every body with every pip colour of vision.dice.palette that stands out from it
# (109 pairs: teal with yellow pips, black with gold, purple with green, ...), four
# dice each, 24-60 px, top-down and oblique, on four plain tables. BOUNDS_ANY_COLOUR
# holds the measured counts (docs/dice.md).
def _any_colour_pairs() -> list[tuple[np.ndarray, int, float]]:
    tables = [(170, 175, 180), (90, 120, 150), (60, 60, 60), (200, 200, 190)]
    out = []
    for bi, body in enumerate(palette.BODIES):
        for pi, pip in enumerate(palette.PIPS):
            if palette.contrast(pip, body) < palette.MIN_CONTRAST:
                continue
            for k in range(4):
                rng = np.random.default_rng(1000 * bi + 10 * pi + k)
                table = tables[k] if palette.contrast(tables[k], body) >= 30 else tables[(k + 1) % 4]
                img = np.full((240, 320, 3), table, np.uint8)
                img = np.clip(img + rng.normal(0, 2, img.shape), 0, 255).astype(np.uint8)
                value, size = int(rng.integers(1, 7)), float(rng.uniform(24, 60))
                draw_die(img, rng, 160, 120, size, value, body=body, pip=pip,
                         oblique=float(rng.uniform(0, 0.6)) if k % 2 else 0.0)
                out.append((img, value, size))
    return out


@pytest.mark.parametrize("known_size", [False, True])
def test_dice_of_any_colour_pair(known_size: bool) -> None:
    """Dice in any body and pip colours: never a wrong value; most read, the rest unclear
    or missed (far fewer missed when the die's size is known, as at the table)."""
    c: Counter[str] = Counter()
    for img, value, size in _any_colour_pairs():
        seen = read_dice(img, die_px=size if known_size else None)
        d = _nearest(seen, 160, 120)
        c[_verdict(d, value)] += 1
    bounds = BOUNDS_ANY_COLOUR[known_size]
    assert sum(c.values()) == 436
    assert c["wrong"] <= bounds["wrong"], c
    assert c["right"] >= bounds["right"], c
    assert c["missed"] <= bounds["missed"], c


def test_second_look_reads_coloured_pips() -> None:
    """The contrast view (``DiceReader.confirm_threshold``) turns doubtful dice of
    unusual colour pairs into values, each of them right (measured 6 of 436 at the
    known size), and never gives a die the classifier may call unreadable a value."""
    reader = DiceReader()
    turned = Counter()
    for img, value, size in _any_colour_pairs():
        for c in reader.candidates(img, die_px=size):
            if not c.confirmed:
                continue
            assert c.probs[UNREADABLE] <= reader.confirm_unreadable
            plain = reader.decide(replace(c, confirmed=False))
            reading = reader.decide(c)
            if plain.value is None and reading.value is not None:
                near = math.hypot(c.cx - 160, c.cy - 120) < size / 2
                turned["right" if near and reading.value == value else "wrong"] += 1
    assert turned["wrong"] == 0, turned
    assert turned["right"] >= 4, turned


def _unreadable(kind: str, size: int = 64, die_px: float | None = None,
                seed: int | None = None) -> Counter[str]:
    """24 frames of one cocked, logo or motion-blurred die each: how many got a number
    anywhere in the frame ("numbered": a face the die shows sideways lies off its
    centre), how many only null readings, how many none."""
    rng = np.random.default_rng(seed if seed is not None else 3 if kind == "cocked" else 4)
    c: Counter[str] = Counter()
    for i in range(24):
        img = _plain()
        body, pip = COLOURS[i % 6]
        draw_die(img, rng, 320, 240, size, 1 + i % 6, cocked=kind == "cocked",
                 logo=kind == "logo", body=body, pip=pip, angle=float(rng.uniform(0, 90)))
        if kind == "blurred":
            motion_blur(img, rng, 320, 240, size)
        seen = read_dice(img, die_px=die_px)
        c["numbered" if any(d.value is not None for d in seen)
          else "null" if seen else "missed"] += 1
    return c


def test_logo_faces_never_given_a_number() -> None:
    """A die whose face is a logo (star, ring, printed digit) is null or not reported."""
    c = _unreadable("logo")
    assert c["numbered"] == 0, c  # measured 13 null, 11 not reported
    assert c["null"] >= 8, c


def test_cocked_dice_rarely_given_a_number() -> None:
    """A die resting on an edge: null or not reported, at most rarely a number."""
    c = _unreadable("cocked")
    # measured 1 of 24 numbered (a "1" read on a side face 23 px off the die's
    # centre), 10 null, 13 not reported; 4 of 144 over seeds 3-8 (5 with
    # the 1.4-crop classifier)
    assert c["numbered"] <= 2, c


# measured null / not reported of 24 (every value, six colours): 15 / 9 at 64 px
# read freely, 24 / 0 at 34 px with die_px (the table's case: a die still
# rolling is seen and called unclear); over three seeds of 24 none numbered either
@pytest.mark.parametrize(("size", "die_px", "min_null"), [(64, None, 10), (34, 34.0, 20)])
def test_blurred_dice_never_given_a_number(size: int, die_px: float | None,
                                          min_null: int) -> None:
    """A die smeared by motion (blur over 0.5-0.9 of its size): null or not reported."""
    c = _unreadable("blurred", size, die_px, seed=size)
    assert c["numbered"] == 0, c
    assert c["null"] >= min_null, c


# Cocked dice at 34 px (``_unreadable``'s seed and frame) the detector missed, with a
# face the table's search for a missing die read as a value: "1" at 0.894 (seed 13),
# "6" at 0.932 (seed 28, its large side face).
_COCKED_FOUND_BY_THE_SEARCH = [(13, 20, 1), (28, 6, 6)]


@pytest.mark.parametrize(("seed", "frame", "value"), _COCKED_FOUND_BY_THE_SEARCH)
def test_a_cocked_die_missed_is_not_numbered_by_the_search_for_it(seed: int, frame: int,
                                                                  value: int) -> None:
    """A cocked die not proposed, one die expected: the search of a roll short of dice
    (rule 52c) reads one of its faces as a value, its surest point; a die
    found by that search needs its value at 0.95 (``short_value_threshold``), so it
    stays unreported."""
    rng = np.random.default_rng(seed)
    for i in range(frame + 1):
        img = _plain()
        body, pip = COLOURS[i % 6]
        draw_die(img, rng, 320, 240, 34, 1 + i % 6, cocked=True, body=body, pip=pip,
                 angle=float(rng.uniform(0, 90)))
    reader = DiceReader()
    assert reader.read(img, die_px=34.0, one_size=True) == []
    assert reader.read(img, die_px=34.0, one_size=True, expected=1) == []
    reader.short_value_threshold = 0.0
    reader.short_ones = True
    found = reader.read(img, die_px=34.0, one_size=True, expected=1)
    assert [d.value for d in found] == [value]


@pytest.mark.xfail(reason="known gap: a cocked die can still get a number (docs/dice.md)",
                   strict=True)
def test_cocked_dice_never_given_a_number() -> None:
    c = _unreadable("cocked")
    assert c["numbered"] == 0, c


def test_frames_without_dice_rarely_show_one() -> None:
    """Tables, printed boards, cables, cards, hands and keyboards with no die at all
    (``scene(n_dice=0)``): what is reported is a false die, a valued one worst.

    Measured on seeds 5000-5299 (2026-11-28): 3 valued false dice in 3 of 300
    frames (a disc and a dot read "1", a thin printed ring read "2"), 12 null;
    here seeds 5000-5099: 1 valued (the disc), 7 null (docs/dice.md, Known
    weaknesses)."""
    valued = unread = 0
    for seed in range(5000, 5100):
        img, dice = scene(np.random.default_rng(seed), n_dice=0)
        assert dice == []
        seen = read_dice(img)
        valued += sum(d.value is not None for d in seen)
        unread += sum(d.value is None for d in seen)
    assert valued <= 2, (valued, unread)
    assert unread <= 10, (valued, unread)


# measured with the hint, right of 24: 23 (14 px), 21 (18 px), 24 (120 px); without
# it 8, 10 and 23 (1.4-crop classifier). Extra dice with the hint: 0, 0, 1, none with
# a value.
@pytest.mark.parametrize(("size", "min_right"), [(14, 19), (18, 20), (120, 22)])
def test_die_size_hint(size: int, min_right: int) -> None:
    """``die_px`` (the table knows the dice's size): tiny dice are enlarged for the
    detector, large ones shrunk; never a wrong value, no valued false dice."""
    rng = np.random.default_rng(size)
    c: Counter[str] = Counter()
    for i in range(24):
        value = 1 + i % 6
        img = background(np.random.default_rng(1000 + i), 480, 640)
        draw_die(img, rng, 320, 240, size, value, angle=float(rng.uniform(0, 90)),
                 body=(235, 240, 240), pip=(20, 20, 20))
        seen = read_dice(img, die_px=size)
        d = _nearest(seen, 320, 240)
        c["valued_extra"] += sum(1 for s in seen if s is not d and s.value is not None)
        c[_verdict(d, value)] += 1
    assert c["wrong"] == 0 and c["valued_extra"] == 0, c
    assert c["right"] >= min_right, c


# measured right of 24 (12 px white dice, every value, 320x240 frames): 20 enlarged,
# 14 not (the rest missed); none wrong, no valued false die either way
def test_small_frames_are_enlarged_for_the_detector() -> None:
    """A frame smaller than the photos the detector learnt from (a 320x240 webcam)
    is enlarged for it (``min_work_side``), so its small dice are proposed; the
    values still come from the frame itself, never wrong."""
    def read(reader: DiceReader) -> Counter[str]:
        rng = np.random.default_rng(12)
        c: Counter[str] = Counter()
        for i in range(24):
            value = 1 + i % 6
            img = background(np.random.default_rng(1000 + i), 240, 320)
            draw_die(img, rng, 160, 120, 12, value, angle=float(rng.uniform(0, 90)),
                     body=(235, 240, 240), pip=(20, 20, 20))
            seen = reader.read(img)
            d = _nearest(seen, 160, 120)
            c["valued_extra"] += sum(1 for s in seen if s is not d and s.value is not None)
            c[_verdict(d, value)] += 1
        return c

    enlarged = read(DiceReader())
    as_is = DiceReader()
    as_is.min_work_side = 0
    plain = read(as_is)
    assert enlarged["wrong"] == 0 and enlarged["valued_extra"] == 0, enlarged
    assert enlarged["right"] >= 18 and enlarged["right"] >= plain["right"] + 4, (enlarged, plain)


def test_die_size_hint_must_be_positive() -> None:
    img = _plain()
    for bad in (0.0, -3.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="die_px"):
            read_dice(img, die_px=bad)


def test_synthetic_labels_cocked_faces_and_touching() -> None:
    """The training renderer's labels: a cocked die names the centres of the two faces
    it shows (the classifier learns them as unreadable); touching scenes pack dice side
    by side (centres about a die apart, not overlapping)."""
    rng = np.random.default_rng(5)
    die = draw_die(_plain(), rng, 320, 240, 60, 4, cocked=True, angle=0)
    assert die.value == 0 and len(die.faces) == 2
    (x1, y1), (x2, y2) = die.faces
    assert abs(x1 - 320) < 1 and abs(x2 - 320) < 1 and y1 < 240 < y2  # along the die's y axis
    assert draw_die(_plain(), rng, 320, 240, 60, 4).faces == ()
    gaps = []
    for _ in range(20):
        _, dice = scene(rng, n_dice=3, touching=True, unreadable_rate=0.0)
        for i, a in enumerate(dice):
            for b in dice[i + 1:]:
                gaps.append(math.hypot(a.cx - b.cx, a.cy - b.cy) / max(a.size, b.size))
    assert min(gaps) >= 1.0  # never overlapping
    assert sum(g < 1.3 for g in gaps) >= 10  # and many right beside each other


def test_packed_renderer() -> None:
    """``packed_scene`` (the detector's packs of touching dice): 2-6 dice of one size,
    those of the pack each a die's side and a 4-12 % gap from a neighbour, none
    overlapping, all inside the frame; the same seed draws the same frame."""
    packs = 0
    for seed in range(20):
        img, dice = packed_scene(np.random.default_rng(seed))
        assert 2 <= len(dice) <= 6 and img.shape == (400, 400, 3)
        assert len({round(d.size, 6) for d in dice}) == 1
        near = [min(math.hypot(a.cx - b.cx, a.cy - b.cy) for b in dice if b is not a) / a.size
                for a in dice]
        assert min(near) >= 1.0
        packs += sum(1.03 <= g <= 1.13 for g in near) >= 2
        for d in dice:
            assert 0 <= d.cx < 400 and 0 <= d.cy < 400 and d.value in range(1, 7)
    assert packs == 20
    a, _ = packed_scene(np.random.default_rng(3))
    b, _ = packed_scene(np.random.default_rng(3))
    assert np.array_equal(a, b)
    # cocked=1: the lone die beside a pack (about every other frame) is cocked.
    lone = [d for seed in range(20) for d in packed_scene(np.random.default_rng(seed),
                                                         cocked=1.0)[1] if d.value == 0]
    assert len(lone) >= 5 and all(len(d.faces) == 2 for d in lone)


def test_marbled_renderer() -> None:
    """A marbled face mixes two colours (a plain one is one colour); ``marbled_rate=0``
    draws the same frames as before marbling existed (the tests' scenes stay put)."""
    plain = np.full((200, 200, 3), 128, np.uint8)
    draw_die(plain, np.random.default_rng(1), 100, 100, 80, 1, angle=0, body=(40, 40, 190),
             pip=(240, 240, 240), shadow=False)
    marbled = np.full((200, 200, 3), 128, np.uint8)
    draw_die(marbled, np.random.default_rng(1), 100, 100, 80, 1, angle=0, body=(40, 40, 190),
             pip=(240, 240, 240), shadow=False, marbled=True)
    ring = np.s_[70:80, 65:135]  # on the face, clear of the centre pip
    assert plain[ring].reshape(-1, 3).std(axis=0).max() < 2
    assert marbled[ring].reshape(-1, 3).std(axis=0).max() > 15
    a, _ = scene(np.random.default_rng(9), 240, 320)
    b, _ = scene(np.random.default_rng(9), 240, 320, marbled_rate=0.0)
    c, _ = scene(np.random.default_rng(9), 240, 320, marbled_rate=1.0)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_wide_colours_renderer() -> None:
    """``wide_colours_rate=1`` draws dice in the palette's body and pip colours;
    0 draws the same frames as before the palette existed."""
    a, _ = scene(np.random.default_rng(9), 240, 320)
    b, _ = scene(np.random.default_rng(9), 240, 320, wide_colours_rate=0.0)
    c, _ = scene(np.random.default_rng(9), 240, 320, wide_colours_rate=1.0)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    drawn: list[tuple[int, int, int]] = []
    real_draw = synth.draw_die

    def spy(*args: Any, **kw: Any) -> Any:
        drawn.append(kw["body"])
        return real_draw(*args, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(synth, "draw_die", spy)
        for seed in range(20):
            scene(np.random.default_rng(seed), 240, 320, wide_colours_rate=1.0)
    assert drawn and all(b in palette.BODIES for b in drawn)
    assert len(set(drawn)) > len(synth._BODIES)


@pytest.mark.parametrize("length", [3.0, 7.5, 15.0])
def test_motion_kernel_is_a_line_of_its_length(length: float) -> None:
    """The smear kernel sums to 1 and spreads ``length`` pixels along its direction
    only (measured as a uniform segment's standard deviation, L / sqrt(12); pixels add
    about one)."""
    for angle in (0.0, 30.0, 90.0, 135.0):
        k = motion_kernel(length, angle).astype(np.float64)
        assert abs(k.sum() - 1.0) < 1e-5
        n = k.shape[0]
        ys, xs = np.mgrid[:n, :n] - (n - 1) / 2
        t = math.radians(angle)
        along = xs * math.cos(t) + ys * math.sin(t)
        across = -xs * math.sin(t) + ys * math.cos(t)
        # a uniform segment of length L has a standard deviation of L / sqrt(12)
        assert abs(math.sqrt((k * along**2).sum()) * math.sqrt(12) - length) < 0.1 * length + 1.0
        assert math.sqrt((k * across**2).sum()) < 0.6


def _smeared(smear: float) -> Counter[str]:
    """White dice of 30, 38 and 50 px, every value, each smeared by ``smear`` of its
    size in six directions (108 frames): right, wrong, null, missed."""
    c: Counter[str] = Counter()
    for size in (30, 38, 50):
        for value in range(1, 7):
            for direction in range(0, 180, 30):
                img = np.full((240, 320, 3), (170, 200, 225), np.uint8)
                draw_die(img, np.random.default_rng(value), 160, 120, size, value, angle=15,
                         body=(235, 240, 240), pip=(20, 20, 20))
                img = np.asarray(cv2.filter2D(img, -1, motion_kernel(smear * size, direction),
                                              borderType=cv2.BORDER_REPLICATE))
                seen = read_dice(img)
                c["missed" if not seen else "null" if seen[0].value is None
                  else "right" if seen[0].value == value else "wrong"] += 1
    return c


# measured (right, wrong, null, missed of 108): 102 / 0 / 0 / 6 at 0.2 of a die,
# 19 / 6 / 31 / 52 at 0.3, 0 / 0 / 44 / 64 at 0.45
@pytest.mark.parametrize(("smear", "min_right"), [(0.2, 95), (0.45, 0)])
def test_smeared_dice_never_misread(smear: float, min_right: int) -> None:
    """A die smeared by a fifth of its size is still read; by nearly half, never given
    a number."""
    c = _smeared(smear)
    assert c["wrong"] == 0, c
    assert c["right"] >= min_right, c
    if smear > 0.4:
        assert c["right"] == 0, c


@pytest.mark.xfail(reason="known gap: a die smeared by ~0.3 of its size can read wrong, "
                   "a '4' as '6' (docs/dice.md, Blurred dice)", strict=True)
def test_smeared_by_a_third_never_misread() -> None:
    c = _smeared(0.3)
    assert c["wrong"] == 0, c
