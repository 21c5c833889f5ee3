"""Looking round the dice at a known die size: the table's second chances.

With two dice face to face the detector often proposes only one of them, one
die between the two (a "domino" the classifier calls unreadable), a die with
part of its neighbour, or one pip of a "2" as a small die read "1". Where the
caller knows how large a die is (``die_px``: the table does, from the board),
the reader looks again round what it found (:meth:`LookRound._look_round`):

1. a lone large ``null`` (or weak) proposal is split into the two dice either
   side of it (:meth:`LookRound._split_pairs`) or read again as one die and
   its neighbour (:meth:`LookRound._reread_dominoes`); at the table, failing
   both, as one die seen obliquely, its sides showing, and so is a ``null``
   reading proposed small (:meth:`LookRound._read_off_size_nulls`);
2. beside each lone die read with a value, the die touching it is looked for
   (:meth:`LookRound._neighbours`, ``vision.dice.neighbours``);
3. at the table, what is still a lone domino is searched on a grid for its two
   dice (:meth:`LookRound._search_dominoes`), and beside a lone die where
   something stands out, a grid for the die touching it
   (:meth:`LookRound._search_beside`);
4. at the table, when told how many dice were rolled (``expected``) and fewer
   are reported, each spot of the dice area that stands out is searched on a
   grid for the rest (:meth:`LookRound._search_short`);
5. at the table (``one_size``), a lone large "2" is looked at as two dice;
6. a "1" that may be one pip of a "2" is checked (:meth:`LookRound._check_ones`);
7. a reading proposed far from the die's size is read again at that size
   (:meth:`LookRound._check_off_size`).

A die found by looking is reported only when read clearly in every view
(:meth:`LookRound._read_beside`). Every setting below was chosen on synthetic
table scenes and is recorded with its measurements in docs/dice-history.md;
``DiceReader`` inherits them (set them on a reader instance to change them).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from vision.blur import edge_width
from vision.dice.neighbours import busyness, grid_points, points_around, probe_points
from vision.dice.reading import (
    NOT_DIE,
    UNREADABLE,
    VIEWS,
    Candidate,
    DieReading,
    outcome_probs,
    taken,
)
from vision.dice.spots import spot_grid, stand_out_mask
from vision.noise import noise_sigma


class LookRound:
    """The looking round a die at a known size, mixed into ``DiceReader``.

    It reads crops with the reader's classifier and judges them with the
    reader's rules (:meth:`keeps`, :meth:`decide`); those, and the attributes
    declared here without a value, are the reader's.
    """

    views: int
    cls_size: int
    crop_factor: float
    not_die_threshold: float
    weak_not_die: float

    #: With ``die_px``: look for a die face to face with a lone die read with a
    #: value (no other die within ``neighbour_lonely`` dice of it), at
    #: ``neighbour_distance`` dice from its centre in ``neighbour_directions``
    #: directions, at the ``neighbour_busiest`` where most stands out (a share
    #: ``neighbour_busy`` at least; ``vision.dice.neighbours``), and round the
    #: surest of those when it reads below ``neighbour_refine_below``. The
    #: detector often sees such a pair as one die. What is found there is
    #: reported when read clearly (:meth:`_read_beside`: a value at
    #: ``found_value_threshold``, "not a die" at ``weak_not_die`` or less, not
    #: degraded). Chosen on synthetic table scenes (docs/dice.md); False: off.
    neighbour_probe = True
    neighbour_distance = 1.07
    neighbour_directions = 24
    neighbour_lonely = 1.6
    neighbour_busiest = 4
    neighbour_busy = 0.1
    neighbour_refine_below = 0.99
    #: With ``die_px`` (and ``neighbour_probe``): a die read ``null`` proposed
    #: ``split_oversize`` die sizes or larger, alone, may be two dice face to
    #: face seen as one between them (:meth:`_split_pairs`); above ~2: off.
    split_oversize = 1.25
    #: ... and, where all dice are one size (``read(one_size=True)``, the
    #: table), so may a lone "2" proposed that large: two "1"s (or a "1" and a
    #: "2") face to face, a pip of each in its crop. False: off. Unless
    #: (``split_twos_whole``) a crop of one die's size at its centre reads "2"
    #: clearly: then it is one die seen large (side faces showing, nearer the
    #: camera), whose pips alone would read "1" each (rule 29).
    split_twos = True
    split_twos_whole = True
    #: ... and a lone "2" that large, neither read "2" clearly at one die's size
    #: nor split, gets no value where one side of the split was read clearly:
    #: a "2" and a "1" face to face read as one "2" between them (rule 35).
    withhold_unsplit_twos = True
    #: ... or, from ``reread_oversize`` die sizes, one die of such a pair seen
    #: with part of its neighbour (:meth:`_reread_dominoes`); above ~2: off.
    reread_oversize = 1.15
    #: Whether a weak proposal left unreported is looked at as such a pair too
    #: (:meth:`_domino`).
    domino_weak = True
    #: Where the re-read at such a proposal's centre finds no pair, the die is
    #: looked for this many dice round it (12 points) and the pair from there;
    #: 0: off.
    domino_search = 0.5
    #: ... and as many points this many dice round it too (0: not).
    domino_search_inner = 0.25
    #: The value a die found by looking (no proposal there, or not at its
    #: size) needs in all views together (:meth:`_read_beside`).
    found_value_threshold = 0.9
    #: ... or ``found_readable_floor`` where no other value reads above
    #: ``found_rival_max``: its doubt is "unreadable" (a neighbour's edge in the
    #: crop's margin), not another value (rule 38). A floor at or above
    #: ``found_value_threshold``: off.
    found_readable_floor = 0.85
    found_rival_max = 0.03
    #: With ``die_px``: a reading proposed outside ``off_size_range`` times the
    #: die size must read the same most likely outcome in a crop of the die
    #: size too (:meth:`_check_off_size`): always if ``check_off_size``, else
    #: where the caller says all dice are one size (``read(one_size=True)``, as
    #: the table does); not on photos mixing dice sizes (dice-history.md).
    check_off_size = False
    off_size_range = (0.9, math.inf)
    #: ... and (in the same cases) a reading reported ``null`` proposed outside
    #: ``null_size_range`` times the die size, or a lone weak proposal of
    #: ``reread_oversize`` die sizes or more, is read again at the die size
    #: (:meth:`_read_off_size_nulls`, rule 50), its value taken at
    #: ``reread_value_threshold`` in all views together (a cocked die's larger
    #: face reads 0.88-0.90 there). False: off.
    read_off_size_nulls = True
    null_size_range = (0.85, 1.15)
    reread_value_threshold = 0.95
    #: With ``die_px`` and ``one_size`` (the table), after looking beside: a search
    #: on a grid of points ``grid_step`` dice apart, read in one view (rule 51).
    #: Round a lone domino still there (:meth:`_domino`, ``reread_oversize``),
    #: within ``grid_pair_reach`` dice of its centre, the surest value and the
    #: surest ``grid_pair_gap`` dice from it replace it when both are read clearly
    #: (:meth:`_search_dominoes`). Beside a lone die read with a value, where one
    #: of the probe points of :meth:`_neighbours` is ``grid_beside_busy`` busy or
    #: more, the ``grid_beside_points`` busiest points ``grid_beside_reach`` dice
    #: from it are read and the surest, read clearly, is reported
    #: (:meth:`_search_beside`). The fixed probes miss a pair whose proposal lies
    #: off its middle, or dice 1.2 dice apart (the table's tilt). False: off.
    grid_search = True
    grid_step = 0.2
    grid_pair_reach = 0.9
    grid_pair_gap = (0.8, 1.35)
    grid_beside_reach = (0.85, 1.35)
    grid_beside_busy = 0.5
    grid_beside_points = 8
    #: With ``die_px``, ``one_size`` and ``expected`` (the table, which knows how
    #: many dice the game rolls), when fewer dice are reported after that: every
    #: spot that stands out from the plain surface (``vision.dice.spots``) is
    #: searched on a grid ``short_step`` dice apart, points ``short_gap`` dice or
    #: more from every reported die, thickest spots first, at most
    #: ``short_points`` points in one classifier view; the ``short_tries`` surest
    #: in turn, each moved to the surest of the 8 points ``short_move`` dice
    #: round it, is reported when read clearly in all views and its value at
    #: ``short_value_threshold`` (no floor: the surest of many points reads a
    #: value more easily by chance; a cocked die the detector missed has a face
    #: read at 0.89-0.93, as for ``reread_value_threshold``), until as many
    #: dice are reported as were rolled; none within ``short_centre`` dice of
    #: the centre of a candidate not reported that was proposed ``short_large``
    #: dice across or more (a rider token; a pair's dice lie half a die either
    #: side of its centre), and no "1" unless ``short_ones`` (a crop centred on
    #: any single pip of a die it has not found reads "1"). Rule 52c of
    #: docs/dice-history.md: fresh touching seeds 1.6 points more dice right,
    #: wrong and false equal. False: off.
    short_search = True
    short_step = 0.35
    short_gap = 0.8
    short_points = 64
    short_tries = 6
    short_move = 0.15
    short_value_threshold = 0.95
    short_large = 1.5
    short_centre = 0.25
    short_ones = False
    #: With ``die_px``: a "1" may be one pip of a "2" proposed as a small die;
    #: unless it reads "1" clearly at the die's size, the 12 points this many
    #: dice round it are read, and a "2" read clearly there replaces it
    #: (:meth:`_check_ones`); 0: off.
    one_check_reach = 0.35
    #: With ``die_px`` and ``one_size`` (the table): a "1" that reads "1" clearly
    #: at the die's size still gets no value where a point this many dice round
    #: it (12 directions each) reads "2" more surely, all views: a pip of a "2"
    #: face to face with another die (:meth:`_check_ones`); empty: off.
    one_rival_reaches: tuple[float, ...] = (0.25, 0.35, 0.45)

    # The reader's own (DiceReader), declared here for the type checker.
    def keeps(self, c: Candidate) -> bool:
        raise NotImplementedError

    def decide(self, c: Candidate) -> DieReading:
        raise NotImplementedError

    def degraded(self, c: Candidate) -> bool:
        raise NotImplementedError

    def _classify(self, crops: list[np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def _crop(self, img: np.ndarray, x: float, y: float, size: float, angle: float = 0.0,
              flip: bool = False) -> np.ndarray:
        raise NotImplementedError

    def _lowest_peak(self, sized: bool) -> float:
        raise NotImplementedError

    def _look_round(self, img: np.ndarray, judged: list[Candidate], die_px: float,
                    one_size: bool, expected: int | None = None,
                    plain: np.ndarray | None = None) -> list[Candidate]:
        """``judged`` (candidates in ``img``'s pixels, dice ``die_px`` across) after
        every look round them that is on, in the order of the module's docstring
        (``expected`` dice rolled, if known; ``plain``: the plain surface, a polygon
        in ``img``'s pixels)."""
        if self.neighbour_probe:
            judged = self._split_pairs(img, judged, die_px)
            judged = self._reread_dominoes(img, judged, die_px)
            if self.read_off_size_nulls and (one_size or self.check_off_size):
                judged = self._read_off_size_nulls(img, judged, die_px)
            judged += self._neighbours(img, judged, die_px)
            if one_size and self.grid_search:
                judged = self._search_dominoes(img, judged, die_px)
                judged += self._search_beside(img, judged, die_px)
                if expected and self.short_search:
                    judged += self._search_short(img, judged, die_px, expected, plain)
            if one_size and self.split_twos:
                judged = self._split_pairs(img, judged, die_px, value=2)
        if self.one_check_reach > 0:
            judged = self._check_ones(img, judged, die_px, one_size)
        if self.check_off_size or one_size:
            judged = self._check_off_size(img, judged, die_px)
        return judged

    def _neighbours(self, img: np.ndarray, found: list[Candidate],
                    die_px: float) -> list[Candidate]:
        """Dice face to face with a lone die of ``found`` (candidates in ``img``'s
        pixels, dice ``die_px`` across) that the detector did not propose.

        Round each lone die read with a value, the ``neighbour_busiest`` points
        ``neighbour_distance`` dice away where most stands out
        (:func:`~vision.dice.neighbours.busyness`) are read in one view. Where the
        one read most surely as a value reads below ``neighbour_refine_below``, the
        points just round it (:func:`~vision.dice.neighbours.points_around`) are
        read too, and the surest of all taken. It is kept when it is read clearly
        in all views (:meth:`_read_beside`) and no other die lies within half a
        die of it. Its ``score`` is the lowest a proposal may have at a known
        size."""
        kept = [c for c in found if self.keeps(c)]
        looks: list[tuple[tuple[float, float], list[tuple[float, float]]]] = []
        for a in kept:
            if not self._lone(a, kept, die_px) or self.decide(a).value is None:
                continue
            points = probe_points(a.cx, a.cy, die_px, self.neighbour_distance,
                                  self.neighbour_directions)
            busy = busyness(img, (a.cx, a.cy), points, die_px)
            order = sorted(range(len(points)), key=lambda i: -busy[i])[:self.neighbour_busiest]
            points = [points[i] for i in order if busy[i] >= self.neighbour_busy]
            if points:
                looks.append(((a.cx, a.cy), points))
        if not looks:
            return []
        crops, probs = self._one_view(img, [p for _, points in looks for p in points], die_px)
        picks: list[tuple[float, float, np.ndarray, np.ndarray]] = []  # x, y, crop, probs
        n = 0
        for (ax, ay), points in looks:
            surest = self._surest(probs[n:n + len(points)])
            if surest is not None:
                i, p = surest
                x, y = points[i]
                crop, pc = crops[n + i], probs[n + i]
                if p < self.neighbour_refine_below:
                    near = points_around(ax, ay, x, y, die_px,
                                         math.pi / self.neighbour_directions)
                    x, y, crop, pc = self._move_to_surest(img, (x, y), crop, pc, near, die_px)
                picks.append((x, y, crop, pc))
            n += len(points)
        extra: list[Candidate] = []
        for x, y, crop, first in picks:
            if taken(x, y, kept + extra, die_px):
                continue
            c = self._read_beside(img, x, y, die_px, crop, first)
            if c is not None:
                extra.append(c)
        return extra

    def _lone(self, c: Candidate, kept: list[Candidate], die_px: float) -> bool:
        """Whether no die of ``kept`` but ``c`` lies within ``neighbour_lonely`` dice
        of ``c``."""
        lonely = self.neighbour_lonely * die_px
        return not any(o is not c and math.hypot(o.cx - c.cx, o.cy - c.cy) < lonely
                       for o in kept)

    def _one_view(self, img: np.ndarray, points: list[tuple[float, float]],
                  die_px: float) -> tuple[list[np.ndarray], np.ndarray]:
        """Crops of dice ``die_px`` across centred on ``points``, as they are (the
        first view), and the classifier's rows for them."""
        crops = [self._crop(img, x, y, die_px) for x, y in points]
        return crops, self._classify(crops)

    def _sureness(self, pc: np.ndarray) -> float:
        """How surely a classifier row reads a value: the probability of the most
        likely outcome if it is a value and "not a die" is below
        ``not_die_threshold``, else 0."""
        pv = outcome_probs(pc)
        k = int(np.argmax(pv))
        return 0.0 if k == UNREADABLE or pc[NOT_DIE] >= self.not_die_threshold else float(pv[k])

    def _surest(self, probs: np.ndarray, above: float = 0.0,
                value: int | None = None) -> tuple[int, float] | None:
        """The row of classifier ``probs`` read most surely as a value (as ``value``
        if given; :meth:`_sureness`), with that sureness, if it is above ``above``."""
        best: tuple[int, float] | None = None
        for i, pc in enumerate(probs):
            if value is not None and int(np.argmax(outcome_probs(pc))) != value - 1:
                continue
            s = self._sureness(pc)
            if s > (above if best is None else max(above, best[1])):
                best = (i, s)
        return best

    def _check_off_size(self, img: np.ndarray, found: list[Candidate],
                        die_px: float) -> list[Candidate]:
        """``found`` (candidates in ``img``'s pixels), with the value withheld
        (``doubted``) of each reported reading proposed outside ``off_size_range``
        times ``die_px`` whose crop of the die size at its centre, all views
        together, reads another most likely outcome (another value, "unreadable").

        With dice face to face the detector sometimes proposes one pip of a die
        (a "2" read "1") or one die between two (two "1"s read "2"); a crop of the
        die's true size there shows what it is."""
        lo, hi = (r * die_px for r in self.off_size_range)
        doubt = [i for i, c in enumerate(found) if not (lo <= c.size <= hi) and not c.beside
                 and self.keeps(c) and self.decide(c).value is not None]
        if not doubt:
            return found
        views = VIEWS[: max(1, self.views)]
        crops = [self._crop(img, found[i].cx, found[i].cy, die_px, angle, flip)
                 for i in doubt for angle, flip in views]
        rows = self._classify(crops).reshape(len(doubt), len(views), -1).mean(axis=1)
        out = list(found)
        for i, pc in zip(doubt, rows, strict=True):
            if int(np.argmax(outcome_probs(pc))) != int(np.argmax(found[i].probs)):
                out[i] = replace(found[i], doubted=True)
        return out

    def _check_ones(self, img: np.ndarray, found: list[Candidate],
                    die_px: float, one_size: bool = False) -> list[Candidate]:
        """``found`` (candidates in ``img``'s pixels), with each reported "1" that is
        a pip of a "2" replaced by that "2".

        A "2"'s pips lie about a third of a die either side of its centre; the
        detector sometimes proposes one of them as a small die, and a crop
        centred there shows one pip: a "1". A "1"
        that reads "1" clearly (:meth:`_read_beside`) in a crop of the die's size
        at its centre stands (one found by looking was read so already), unless
        (with ``one_size``, the table) a point round it reads "2" more surely
        (:meth:`_two_surer_round`): then it is withheld (``doubted``), the "2" not
        taken, as a crop centred on a "2"'s pip with another die face to face can
        read "1" clearly. Round
        any other, the ``neighbour_directions`` / 2 points ``one_check_reach``
        dice away are read in one view; the surest "2" there, if read clearly and
        not within half a die of another reported die, takes its place. Only a
        "2": a true "1" face to face with another die may read "2" off its centre
        (its pip and one of the neighbour's)."""
        out = list(found)
        for c in found:
            # A die found by looking was read clearly at the die's size already.
            if c.beside or not self.keeps(c) or self.decide(c).value != 1:
                continue
            own = self._read_at_die_size(img, c, die_px, 1)
            if own is not None:  # a "1", unless in doubt
                if one_size and self._two_surer_round(img, c, die_px, own.probs[0]):
                    out = [replace(c, doubted=True) if o is c else o for o in out]
                continue
            points = probe_points(c.cx, c.cy, die_px, self.one_check_reach,
                                  self.neighbour_directions // 2)
            crops, probs = self._one_view(img, points, die_px)
            best = self._surest(probs, value=2)
            if best is None:
                continue
            x, y = points[best[0]]
            if taken(x, y, [o for o in out if o is not c and self.keeps(o)], die_px):
                continue
            die = self._read_beside(img, x, y, die_px, crops[best[0]], probs[best[0]])
            if die is not None and self.decide(die).value == 2:
                out = [die if o is c else o for o in out]
        return out

    def _two_surer_round(self, img: np.ndarray, c: Candidate, die_px: float,
                         one: float) -> bool:
        """Whether a point ``one_rival_reaches`` dice round ``c`` reads "2" more surely
        than ``one``, all views together (a die-size crop there, not "not a die")."""
        points = [p for r in self.one_rival_reaches
                  for p in probe_points(c.cx, c.cy, die_px, r, self.neighbour_directions // 2)]
        if not points:
            return False
        views = VIEWS[: max(1, self.views)]
        _, first = self._one_view(img, points, die_px)
        # The views' mean reads "2" above ``one`` only where the first view's "2"
        # exceeds this (each other view adds at most 1 - one): the others are read
        # only there, with the same outcome as reading all of them everywhere.
        slack = (len(views) - 1) * (1.0 - one) + 1e-6
        near = [i for i, pc in enumerate(first) if pc[1] > one * pc[:NOT_DIE].sum() - slack]
        if not near:
            return False
        rows = first[near]
        if len(views) > 1:
            rest = self._classify([self._crop(img, *points[i], die_px, angle, flip)
                                   for i in near for angle, flip in views[1:]])
            rows = (rows + rest.reshape(len(near), len(views) - 1, -1).sum(axis=1)) / len(views)
        return self._surest(rows, above=one, value=2) is not None

    def _domino(self, c: Candidate, found: list[Candidate], die_px: float,
                oversize: float, value: int | None = None) -> bool:
        """Whether ``c`` of ``found`` may be two dice face to face seen as one: proposed
        ``oversize`` die sizes or larger, not degraded, no other reported die within
        ``neighbour_lonely`` dice, and either reported as ``null`` or (with
        ``domino_weak``) a weak proposal not reported; with ``value``, a proposal
        (not weak) reported as that value instead."""
        if (c.size < oversize * die_px or self.degraded(c)
                or c.not_die >= self.not_die_threshold):
            return False
        if value is not None:
            if not self.keeps(c) or c.weak or self.decide(c).value != value:
                return False
        elif self.keeps(c):
            if c.weak or self.decide(c).value is not None:
                return False
        elif not (c.weak and self.domino_weak):
            return False
        return self._lone(c, [o for o in found if self.keeps(o)], die_px)

    def _split_pairs(self, img: np.ndarray, found: list[Candidate],
                     die_px: float, value: int | None = None) -> list[Candidate]:
        """``found`` (candidates in ``img``'s pixels), with each that may be a pair
        seen as one (:meth:`_domino`, ``split_oversize`` die sizes or larger)
        replaced by two dice face to face, where the classifier reads both surely.

        The detector sometimes proposes a pair of touching dice as one die between
        them (a domino), which the classifier calls unreadable. For each of
        ``neighbour_directions`` / 2 axes through it, the two points half of
        ``neighbour_distance`` dice either side are read in one view; on the axis
        whose less sure side is surest, both are read in the other ``views``, and
        both must be read clearly (:meth:`_read_beside`). With ``value`` (a lone
        "2" at the table), not where a crop of one die's size at its centre reads
        that value clearly (``split_twos_whole``): one die seen large; and where it
        is neither that nor split but one side was read clearly, its value is
        withheld (``withhold_unsplit_twos``): two dice read as one "2" between them."""
        half = self.neighbour_distance / 2 * die_px
        axes = [math.pi * k / (self.neighbour_directions // 2)
                for k in range(self.neighbour_directions // 2)]
        out = list(found)
        for c in found:
            if not self._domino(c, out, die_px, self.split_oversize, value):
                continue
            if (value is not None and self.split_twos_whole
                    and self._read_at_die_size(img, c, die_px, value) is not None):
                continue  # one die seen large
            pair, one_side = self._split(img, c, die_px, half, axes)
            if pair is not None:
                out = [o for o in out if o is not c] + pair
            elif value is not None and self.withhold_unsplit_twos and one_side:
                # neither one die nor split, but a die read clearly half a die off
                out = [replace(c, doubted=True) if o is c else o for o in out]
        return out

    def _split(self, img: np.ndarray, c: Candidate, die_px: float, half: float,
               axes: list[float]) -> tuple[list[Candidate] | None, bool]:
        """Two dice face to face where ``c`` was proposed: on the axis (of ``axes``,
        radians) whose less sure side, ``half`` pixels from its centre, reads surest
        in one view, both sides read clearly (:meth:`_read_beside`); else None. And
        whether at least one side was read clearly."""
        sides = [((c.cx + half * math.cos(a), c.cy + half * math.sin(a)),
                  (c.cx - half * math.cos(a), c.cy - half * math.sin(a))) for a in axes]
        crops, probs = self._one_view(img, [p for pair in sides for p in pair], die_px)
        sure = [self._sureness(pc) for pc in probs]
        best = max(range(len(axes)), key=lambda j: min(sure[2 * j], sure[2 * j + 1]))
        if min(sure[2 * best], sure[2 * best + 1]) <= 0.0:
            return None, False
        pair = [self._read_beside(img, x, y, die_px, crops[2 * best + m], probs[2 * best + m])
                for m, (x, y) in enumerate(sides[best])]
        read = [d for d in pair if d is not None]
        return (read if len(read) == 2 else None), bool(read)

    def _reread_dominoes(self, img: np.ndarray, found: list[Candidate],
                         die_px: float) -> list[Candidate]:
        """``found`` (candidates in ``img``'s pixels), with each that may be a pair
        seen as one (:meth:`_domino`, ``reread_oversize`` die sizes or larger)
        replaced by two dice face to face, where both are read surely.

        The detector sometimes centres such a proposal on one die of a touching
        pair but sizes it to take in part of the other, or off both, and the crop
        reads unclearly. The die and one beside it are looked for from its centre
        (:meth:`_pair_from`) and, failing that, from the surest of 12 points
        ``domino_search`` dice round it; only if both are read clearly, the size
        explained, are the two reported instead of the proposal."""
        out = list(found)
        for c in found:
            if not self._domino(c, out, die_px, self.reread_oversize):
                continue
            others = [o for o in out if o is not c and self.keeps(o)]
            pair = self._pair_from(img, (c.cx, c.cy), die_px, others)
            if pair is None and self.domino_search > 0:
                around = [p for r in (self.domino_search_inner, self.domino_search) if r > 0
                          for p in probe_points(c.cx, c.cy, die_px, r,
                                                self.neighbour_directions // 2)]
                crops, probs = self._one_view(img, around, die_px)
                surest = self._surest(probs)
                if surest is not None:
                    pair = self._pair_from(img, around[surest[0]], die_px, others,
                                           crops[surest[0]], probs[surest[0]])
            if pair is not None:
                out = [o for o in out if o is not c] + pair
        return out

    def _search_dominoes(self, img: np.ndarray, found: list[Candidate],
                         die_px: float) -> list[Candidate]:
        """``found`` (candidates in ``img``'s pixels), with each lone domino still
        there (:meth:`_domino`, ``reread_oversize``) replaced by two dice face to
        face found on a grid round it, where both are read clearly.

        The points ``grid_step`` dice apart within ``grid_pair_reach`` dice of its
        centre are read in one view; the surest value is one die, the surest
        ``grid_pair_gap`` dice from it the other; both must be read clearly in all
        views (:meth:`_read_beside`) and lie half a die or more from every other
        die. The split and the re-read look only at fixed points round the
        proposal, which a pair proposed off its middle does not have."""
        out = list(found)
        for c in found:
            if not self._domino(c, out, die_px, self.reread_oversize):
                continue
            points = grid_points(c.cx, c.cy, die_px, self.grid_step, (0.0, self.grid_pair_reach))
            crops, probs = self._one_view(img, points, die_px)
            surest = self._surest(probs)
            if surest is None:
                continue
            first = surest[0]
            ax, ay = points[first]
            gap = [k for k, (x, y) in enumerate(points)
                   if self.grid_pair_gap[0] <= math.hypot(x - ax, y - ay) / die_px
                   <= self.grid_pair_gap[1]]
            beside = self._surest(probs[gap]) if gap else None
            if beside is None:
                continue
            second = gap[beside[0]]
            pair = [self._read_beside(img, points[k][0], points[k][1], die_px, crops[k],
                                      probs[k]) for k in (first, second)]
            others = [o for o in out if o is not c and self.keeps(o)]
            read = [d for d in pair if d is not None and not taken(d.cx, d.cy, others, die_px)]
            if len(read) == 2:
                out = [o for o in out if o is not c] + read
        return out

    def _search_beside(self, img: np.ndarray, found: list[Candidate],
                       die_px: float) -> list[Candidate]:
        """Dice face to face with a lone die of ``found`` (candidates in ``img``'s
        pixels) that neither the detector nor :meth:`_neighbours` found, searched on
        a grid: round each lone die read with a value where one of the probe points
        is ``grid_beside_busy`` busy or more, the ``grid_beside_points`` busiest
        points ``grid_beside_reach`` dice away are read in one view (all dice in one
        batch), and the surest, read clearly in all views (:meth:`_read_beside`), is
        kept if no other die lies within half a die of it."""
        kept = [c for c in found if self.keeps(c)]
        looks: list[list[tuple[float, float]]] = []
        for a in kept:
            if not self._lone(a, kept, die_px) or self.decide(a).value is None:
                continue
            probes = probe_points(a.cx, a.cy, die_px, self.neighbour_distance,
                                  self.neighbour_directions)
            if max(busyness(img, (a.cx, a.cy), probes, die_px)) < self.grid_beside_busy:
                continue
            points = grid_points(a.cx, a.cy, die_px, self.grid_step, self.grid_beside_reach)
            busy = busyness(img, (a.cx, a.cy), points, die_px)
            order = sorted(range(len(points)), key=lambda i: -busy[i])[:self.grid_beside_points]
            points = [points[i] for i in order if busy[i] >= self.neighbour_busy]
            if points:
                looks.append(points)
        if not looks:
            return []
        every = [p for points in looks for p in points]
        crops, probs = self._one_view(img, every, die_px)
        extra: list[Candidate] = []
        n = 0
        for points in looks:
            surest = self._surest(probs[n:n + len(points)])
            if surest is not None:
                k = n + surest[0]
                x, y = every[k]
                c = self._read_beside(img, x, y, die_px, crops[k], probs[k])
                if c is not None and not taken(x, y, kept + extra, die_px):
                    extra.append(c)
            n += len(points)
        return extra

    def _search_short(self, img: np.ndarray, found: list[Candidate], die_px: float,
                      expected: int, plain: np.ndarray | None) -> list[Candidate]:
        """Dice found where ``found`` (candidates in ``img``'s pixels) keeps fewer
        than ``expected``: each spot standing out from the plain surface ``plain``
        searched on a grid (``short_search``); at most as many as are missing."""
        kept = [c for c in found if self.keeps(c)]
        if len(kept) >= expected:
            return []
        gap = self.short_gap * die_px
        # Something proposed far larger than a die and not reported (a rider token,
        # 1.5 dice across, is proposed 2 dice wide) holds no die at its centre: the
        # dice of a pair proposed as one lie half a die either side of it.
        large = [c for c in found if c.size >= self.short_large * die_px and not self.keeps(c)]
        hole = self.short_centre * die_px
        points = [(x, y) for x, y in spot_grid(stand_out_mask(img, die_px, plain), die_px,
                                               self.short_step)
                  if all(math.hypot(o.cx - x, o.cy - y) >= gap for o in kept)]
        points = points[:self.short_points]
        if not points:
            return []
        crops, probs = self._one_view(img, points, die_px)
        sure = [self._sureness(pc) for pc in probs]
        order = sorted((i for i in range(len(points)) if sure[i] > 0), key=lambda i: -sure[i])
        extra: list[Candidate] = []
        for i in order[:self.short_tries]:
            if len(kept) + len(extra) >= expected:
                break
            if any(math.hypot(o.cx - points[i][0], o.cy - points[i][1]) < gap for o in extra):
                continue
            near = (probe_points(*points[i], die_px, self.short_move, 8)
                    if self.short_move > 0 else [])
            x, y, crop, first = self._move_to_surest(img, points[i], crops[i], probs[i], near,
                                                     die_px)
            if any(math.hypot(o.cx - x, o.cy - y) < gap for o in kept + extra):
                continue
            if any(math.hypot(o.cx - x, o.cy - y) < hole for o in large):
                continue
            c = self._read_beside(img, x, y, die_px, crop, first)
            if c is None or max(c.probs[:UNREADABLE]) < self.short_value_threshold:
                continue
            if not self.short_ones and int(np.argmax(c.probs[:UNREADABLE])) == 0:
                continue
            extra.append(c)
        return extra

    def _move_to_surest(self, img: np.ndarray, at: tuple[float, float], crop: np.ndarray,
                        first: np.ndarray, near: list[tuple[float, float]], die_px: float
                        ) -> tuple[float, float, np.ndarray, np.ndarray]:
        """The surest (:meth:`_sureness`) of point ``at`` (its crop ``crop`` and
        classifier row ``first``) and the points ``near`` it, read in one view: that
        point, its crop and its row."""
        if not near:
            return at[0], at[1], crop, first
        near_crops, near_probs = self._one_view(img, near, die_px)
        better = self._surest(near_probs, above=self._sureness(first))
        if better is None:
            return at[0], at[1], crop, first
        k = better[0]
        return near[k][0], near[k][1], near_crops[k], near_probs[k]

    def _read_off_size_nulls(self, img: np.ndarray, found: list[Candidate],
                             die_px: float) -> list[Candidate]:
        """``found`` (candidates in ``img``'s pixels), with each reading reported
        ``null`` but proposed outside ``null_size_range`` times ``die_px``, and each
        lone weak proposal of ``reread_oversize`` die sizes or more (:meth:`_domino`),
        replaced by a crop of one die's size at its centre where that reads a value
        at ``reread_value_threshold`` in all views together (:meth:`_read_at`). The
        reading counts as the detector's (not ``beside``): a "1" is checked.

        The other half of :meth:`_check_off_size`: a die seen obliquely (near the
        frame's edge, or by a tilted camera) is proposed with its side faces, up to
        twice its top face's size, and in a crop of that size the face is small and
        the sides round it look like a cocked die's; a die proposed small is read
        with half of it cut off. Run after the pair re-reads: a proposal that two
        dice face to face explain is no longer here."""
        lo, hi = (r * die_px for r in self.null_size_range)
        out = list(found)
        for c in found:
            if self.keeps(c):
                if (c.weak or c.beside or lo <= c.size <= hi or self.degraded(c)
                        or self.decide(c).value is not None):
                    continue
            elif not self._domino(c, out, die_px, self.reread_oversize):
                continue
            own = self._read_at(img, c.cx, c.cy, die_px)
            if own is not None and max(own.probs[:UNREADABLE]) >= self.reread_value_threshold:
                # a proposal's reading (not found by looking): the "1" check looks at it
                out = [replace(own, beside=False) if o is c else o for o in out]
        return out

    def _pair_from(self, img: np.ndarray, at: tuple[float, float], die_px: float,
                   others: list[Candidate], crop: np.ndarray | None = None,
                   first: np.ndarray | None = None) -> list[Candidate] | None:
        """A die read at ``at`` and one face to face with it, both read clearly
        (:meth:`_read_beside`) and the second not within half a die of ``others``;
        None if either is not found. ``crop`` and ``first``: its first view, if read."""
        again = (self._read_at(img, at[0], at[1], die_px) if crop is None or first is None
                 else self._read_beside(img, at[0], at[1], die_px, crop, first))
        if again is None:
            return None
        beside = [b for b in self._neighbours(img, [again], die_px)
                  if not taken(b.cx, b.cy, others, die_px)]
        return [again, *beside] if beside else None

    def read_at(self, img: np.ndarray, x: float, y: float, die_px: float) -> DieReading | None:
        """A die ``die_px`` across at (x, y) of ``img``, reported only where it is read
        clearly as a value (as a die found by looking is: :meth:`_read_beside`), else
        None."""
        c = self._read_at(img, x, y, die_px)
        if c is None:
            return None
        reading = self.decide(c)
        return reading if reading.value is not None else None

    def surest_at(self, img: np.ndarray, points: list[tuple[float, float]], die_px: float,
                  n: int, above: float) -> list[int]:
        """The indices of the (at most) ``n`` of ``points`` of ``img`` whose crops, one die
        ``die_px`` across as they are, the classifier reads most surely as a value, at
        ``above`` or more (:meth:`_sureness`); surest first. One batch: cheap enough to
        screen many points before reading the best as :meth:`read_at` does."""
        if not points:
            return []
        _, probs = self._one_view(img, points, die_px)
        sure = sorted(((self._sureness(pc), i) for i, pc in enumerate(probs)), reverse=True)
        return [i for s, i in sure[:n] if s >= above]

    def _read_at(self, img: np.ndarray, x: float, y: float, die_px: float) -> Candidate | None:
        """:meth:`_read_beside` at (x, y), its first view read here."""
        crops, probs = self._one_view(img, [(x, y)], die_px)
        return self._read_beside(img, x, y, die_px, crops[0], probs[0])

    def _read_at_die_size(self, img: np.ndarray, c: Candidate, die_px: float,
                          value: int) -> Candidate | None:
        """A crop of one die's size at ``c``'s centre read clearly as ``value``
        (:meth:`_read_at`), or None."""
        own = self._read_at(img, c.cx, c.cy, die_px)
        return own if own is not None and self.decide(own).value == value else None

    def _read_beside(self, img: np.ndarray, x: float, y: float, die_px: float,
                     crop: np.ndarray, first: np.ndarray) -> Candidate | None:
        """A die at (x, y) that no proposal gave, read in ``crop`` (the first view,
        probabilities ``first``) and the other ``views``: a candidate when all
        views together read a value clearly (:meth:`_found_clearly`), "not a die" at
        ``weak_not_die`` or less, and the crop is neither too noisy nor blurred."""
        views = VIEWS[1: max(1, self.views)]
        rows = [first]
        if views:
            rows += list(self._classify([self._crop(img, x, y, die_px, angle, flip)
                                         for angle, flip in views]))
        pc = np.mean(rows, axis=0)
        pv = outcome_probs(pc)
        k = int(np.argmax(pv))
        if k == UNREADABLE or pc[NOT_DIE] > self.weak_not_die or not self._found_clearly(pv, k):
            return None
        zoom = self.cls_size / (die_px * self.crop_factor)
        c = Candidate(x, y, die_px, self._lowest_peak(sized=True), tuple(float(v) for v in pv),
                      float(pc[NOT_DIE]), weak=True, die_sized=True,
                      noise=round(noise_sigma(img) * min(1.0, zoom), 2),
                      blur=round(edge_width(crop) / max(1.0, zoom), 3), beside=True)
        return None if self.degraded(c) else c

    def _found_clearly(self, pv: np.ndarray, k: int) -> bool:
        """Whether outcome probabilities ``pv`` read value ``k`` (an index) clearly
        enough for a die found by looking: at ``found_value_threshold``, or at
        ``found_readable_floor`` with every other value at ``found_rival_max`` or
        less."""
        if pv[k] >= self.found_value_threshold:
            return True
        rival = max(float(p) for i, p in enumerate(pv[:UNREADABLE]) if i != k)
        return pv[k] >= self.found_readable_floor and rival <= self.found_rival_max
