"""A die as the reader sees it: the detector's proposal with the classifier's
outcome probabilities (:class:`Candidate`), and what is reported
(:class:`DieReading`).

Shared by the reader (``vision.dice.reader``) and its looking round a die at a
known size (``vision.dice.look_round``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: The classifier's outputs: "1".."6" at 0..5, then these two.
UNREADABLE = 6
NOT_DIE = 7
#: The classifier's views of a die, (angle in degrees, mirrored): the first
#: ``DiceReader.views`` of them are averaged.
VIEWS = [(0.0, False), (90.0, True), (180.0, False), (270.0, True)]


@dataclass(frozen=True)
class DieReading:
    """One die seen in a frame.

    ``value`` is the top face 1..6, or ``None`` when the die was seen but could
    not be read safely (cocked, blurred, a logo face, or simply doubtful).
    ``center`` is the top face's centre in pixels of the full frame.
    ``confidence`` (0..1) is the detection score times the probability of the
    most likely outcome. ``size`` is the side of its top face in frame pixels
    as the detector estimates it (0 where unknown); not part of the JSON
    contract, used to draw the reading.
    """

    value: int | None
    center: tuple[float, float]
    confidence: float
    size: float = 0.0


@dataclass(frozen=True)
class Candidate:
    """A die proposed by the detector, before its value is decided (full-frame pixels).

    ``probs`` holds the probabilities of "1".."6", "unreadable" (7 entries);
    ``not_die`` the classifier's probability that this is no die at all.
    ``weak``: a proposal the detector is unsure of (a score below its threshold
    or, at a known die size, a size far from it): reported only when read
    clearly (``DiceReader.keeps``). ``die_sized``: the die size was given and
    the proposal's size matches it. ``noise``: the image noise in the
    classifier's crop of it (grey levels, ``vision.noise``). ``blur``: how many
    pixels its sharpest edges take to rise (``vision.blur.edge_width``), in the
    crop or, where the crop enlarges the die, in the frame. ``confirmed``: its most likely
    value was doubtful but the classifier read the same value surely in the
    crop's :func:`~vision.dice.contrast_view.contrast_view` (``DiceReader.decide``).
    ``beside``: read where no proposal of the detector was, or not at its size:
    found by looking beside a lone die (:meth:`DiceReader._neighbours`), either
    side of a split pair (:meth:`DiceReader._split_pairs`), or read again at the
    known size (:meth:`DiceReader._reread_dominoes`). ``doubted``: proposed far from
    the known die size, a crop of that size reads another outcome
    (:meth:`DiceReader._check_off_size`, at the table), a "1" with a surer "2"
    round it (:meth:`DiceReader._check_ones`), or a large "2" neither whole nor
    split with a die read beside its centre (:meth:`DiceReader._split_pairs`): its
    value is withheld.
    """

    cx: float
    cy: float
    size: float
    score: float
    probs: tuple[float, ...]
    not_die: float = 0.0
    weak: bool = False
    die_sized: bool = False
    noise: float = 0.0
    blur: float = 0.0
    confirmed: bool = False
    beside: bool = False
    doubted: bool = False


def outcome_probs(pc: np.ndarray) -> np.ndarray:
    """A classifier row's outcome probabilities ("1".."6", "unreadable"), "not a die"
    left out and the rest scaled to sum to 1."""
    pv = pc[:NOT_DIE].astype(np.float64)
    return pv / max(1e-9, float(pv.sum()))


def taken(x: float, y: float, dice: list[Candidate], die_px: float) -> bool:
    """Whether a die of ``dice`` lies within half a die of (x, y): a die found by
    looking there would be one already reported."""
    return any(math.hypot(d.cx - x, d.cy - y) < 0.5 * die_px for d in dice)
