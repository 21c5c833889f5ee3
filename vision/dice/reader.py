"""Read the top faces of six-sided pip dice in a camera frame.

Two small networks run with OpenCV's dnn module. The detector
(``vision/models/dice.onnx``, fully convolutional) proposes dice: on a grid of
8x8-pixel cells a die-centre heatmap, each centre's sub-cell offset and the
die's size (:meth:`DiceReader._propose`; close-up dice at half and quarter
scale too). The face classifier (``vision/models/dice_cls.onnx``) then reads a
crop of each proposal at full resolution as "1".."6", "unreadable" (cocked,
blurred, a logo face) or "not a die" (:meth:`DiceReader._judge`). A die whose
value is not clearly the most likely outcome, or whose crop is too noisy or
blurred, is reported with ``value=None`` ("seen, roll again") rather than a
guess (:meth:`DiceReader.decide`). At a known die size it also looks round
what it found for dice face to face that the detector missed or proposed as
one (``vision.dice.look_round``, mixed in). See docs/dice.md.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import cv2
import numpy as np

from vision.area_shrink import shrink_by_area
from vision.blur import edge_width
from vision.dice.contrast_view import contrast_view
from vision.dice.look_round import LookRound
from vision.dice.reading import NOT_DIE, UNREADABLE, VIEWS, Candidate, DieReading, outcome_probs
from vision.dice.space_to_depth import check_twin, detector_blob, input_block, space_to_depth_twin
from vision.dice.spots import busy_windows
from vision.exposure import dim_gain
from vision.noise import noise_sigma

MODEL_PATH = Path(__file__).resolve().parents[1] / "models" / "dice.onnx"
CLS_MODEL_PATH = Path(__file__).resolve().parents[1] / "models" / "dice_cls.onnx"

_STRIDE = 8
_ALIGN = 32
_BUCKET = 128  # with die_px, regions are padded to multiples of this (see _forward_sized)
_SIZED_NETS = 4
#: A crop that shrinks the frame below this scale (bilinear sampling would skip
#: pixels) is area-resampled first (face_crop). Above it, crops are sampled as the
#: classifier was trained; 0.75 read the same on dev (docs/dice-history.md).
_AREA_BELOW = 0.5
_CLS_BATCH = 4  # classifier batches are padded to multiples of this (see _classify)
_CLS_NETS = 8
_MANY = 8  # with more dice than this, at most 2 classifier views each (time)
#: Die size (detector-input px) from which the half-scale pass is trusted (the
#: quarter-scale one from twice that): 100 until rule 45 (docs/dice-history.md).
_LARGE = 80.0
_Proposal = tuple[float, float, float, float, np.ndarray]  # cx, cy, size, score, probs
#: OpenCV 5's dnn engine, which runs the space-to-depth detector faster.
_NEW_ENGINE = int(cv2.__version__.split(".")[0]) >= 5
_K = TypeVar("_K")  # a network cache's key: an input shape

#: Face crops for the classifier: CLS_SIZE pixels square, covering CLS_FACTOR
#: times the die's size around its centre.
CLS_SIZE = 48
CLS_FACTOR = 1.25


class DiceReader(LookRound):
    """The dice reader: load the networks once, then call :meth:`read` per frame.

    ``work_side`` caps the longer side of the image the detector sees: larger
    frames (or regions) are downscaled to it; frames under ``min_work_side`` are
    enlarged towards that, others are used as they are.
    ``det_threshold`` is the heatmap score a die needs to be reported at all;
    ``value_threshold`` the probability its value needs to be reported rather
    than ``None``; ``not_die_threshold`` the classifier's "not a die"
    probability above which a proposal is dropped.
    """

    def __init__(self, model_path: Path | str | None = None,
                 cls_model_path: Path | str | None = None, *, work_side: int = 1024,
                 det_threshold: float = 0.5, value_threshold: float = 0.8,
                 not_die_threshold: float = 0.7, views: int = 2,
                 min_side: int = 32, cls_size: int = CLS_SIZE,
                 space_to_depth: bool | None = None) -> None:
        path = Path(model_path) if model_path is not None else MODEL_PATH
        if not path.is_file():
            raise FileNotFoundError(f"dice model not found: {path}")
        block = input_block(path)
        twin = space_to_depth_twin(path)
        if space_to_depth is None:
            space_to_depth = _NEW_ENGINE and block == 1 and twin.is_file()
        if space_to_depth:
            if block != 1:
                raise ValueError(f"{path} reads the frame's {block}x{block} pixel blocks "
                                 "itself: it has no space-to-depth twin")
            if not twin.is_file():
                raise FileNotFoundError(f"dice model's space-to-depth twin not found: {twin}")
            check_twin(path, twin)
            path, block = twin, 2
        #: The detector file read is the space-to-depth twin (see
        #: :func:`space_to_depth_twin`).
        self.space_to_depth = space_to_depth
        #: The detector file read takes the frame's ``input_block`` x ``input_block``
        #: pixel blocks stacked as channels (1: the image itself; 2: the twin; 4: a
        #: detector with the "fast" stem), filled by ``detector_blob``.
        self.input_block = block
        cls_path = Path(cls_model_path) if cls_model_path is not None else CLS_MODEL_PATH
        if not cls_path.is_file():
            raise FileNotFoundError(f"dice classifier model not found: {cls_path}")
        # One detector instance per pyramid level: OpenCV re-plans a network
        # whenever its input size changes, which costs more than the pass itself.
        self._nets = [cv2.dnn.readNetFromONNX(str(path)) for _ in range(3)]
        self._det_path = path
        self._sized_nets: dict[tuple[int, int], cv2.dnn.Net] = {}  # see _forward_sized
        self._cls_path = cls_path
        # Classifier instances by batch size (multiples of _CLS_BATCH, the last
        # _CLS_NETS used kept): a fixed input shape per instance spares OpenCV
        # re-planning the network every call.
        self._cls_nets: dict[int, cv2.dnn.Net] = {
            _CLS_BATCH: cv2.dnn.readNetFromONNX(str(cls_path))}
        self._lock = threading.Lock()
        self._probe: tuple[cv2.dnn.Net, np.ndarray] | None = None  # see main_pass_ms
        self.work_side = work_side
        #: Read freely (no ``die_px``), a frame whose longer side is under
        #: ``min_work_side`` is enlarged (bilinear, at most ``max_enlarge`` times;
        #: with ``roi``, the region by the frame's factor) for the detector as if
        #: that side were ``min_work_side``: its dice are then about as large as
        #: in the photos it was trained on, not too small to be proposed (a
        #: 320x240 webcam frame; rule 41 of docs/dice-history.md). Classifier
        #: crops still come from the frame itself. 0: off.
        self.min_work_side = 640
        self.max_enlarge = 4.0
        #: A frame whose bright end (``vision.exposure.bright_level``) is under this
        #: grey level is dim: the region read is brightened by one gain for all
        #: channels first (``vision.exposure.dim_gain``, at most 4x), as a longer
        #: exposure would have; a dim frame's pips lose contrast and some read wrong.
        #: Judged on the whole frame: a region of coloured dice need not hold
        #: anything white (rules 42-43 of docs/dice-history.md). 0: off.
        self.dim_below = 170.0
        self.det_threshold = det_threshold
        self.value_threshold = value_threshold
        self.not_die_threshold = not_die_threshold
        self.min_side = min_side
        self.cls_size = cls_size
        #: How much of the frame round a die the classifier sees, in die sizes: a
        #: property of the classifier model (it was trained on such crops).
        self.crop_factor = CLS_FACTOR
        #: How the detector's and the classifier's outcome probabilities are joined:
        #: "geo" (geometric mean), "cls" or "det" (one of them only). "cls" was
        #: best on the val split: the detector's own value head is weak on small pips.
        self.combine = "cls"
        #: Rotated/mirrored crops per die shown to the classifier (1..4), averaged;
        #: at most 2 when there are more than 8 dice. 2 by default: as good as 4 on
        #: out-of-fold and val predictions, at half the classifier's time (docs/dice.md).
        self.views = views
        #: Also look for close-up dice at half scale (about +25 % time); not
        #: done when the caller gives the dice's size (``die_px``).
        self.large_pass = True
        #: Shrink a frame to the working size by :func:`vision.area_shrink.shrink_by_area`
        #: (the same pixel-area average as OpenCV's ``INTER_AREA`` within a few grey
        #: levels; 2028x1520 -> 1024x768 in ~8 ms instead of ~20 ms) rather than by
        #: ``INTER_AREA`` itself (rule 36, docs/dice-history.md). False: ``INTER_AREA``.
        self.fast_area_shrink = True
        #: With ``die_px``: the die size the region is scaled to for the detector,
        #: the longest side the scaled region may have (time), and the heatmap
        #: score a die needs (lower than ``det_threshold``: at a known scale, in a
        #: dice area, weak peaks are dice; the classifier still drops what is not).
        #: Chosen on synthetic table scenes (docs/dice.md).
        self.die_target = 40.0
        self.max_side = 1024
        self.sized_det_threshold = 0.4
        #: Weak proposals, reported only when the classifier reads a value at
        #: ``weak_value_threshold`` or more and "not a die" at ``weak_not_die`` or
        #: less, never as ``null`` (:meth:`keeps`): main-pass peaks from
        #: ``weak_det_threshold`` up to ``det_threshold`` (a die touching another
        #: often scores there); with ``die_px``, peaks from
        #: ``sized_weak_det_threshold`` up to ``sized_det_threshold`` and those
        #: whose size is outside ``sized_size_range`` times ``die_px`` (the detector
        #: sometimes centres on one pip of a die touching another, whose crop then
        #: shows a "1"; a proposal smaller than the die is therefore cropped at
        #: ``sized_min_crop``, so the classifier sees the die round the pip). A weak
        #: peak of the known size needs only
        #: ``sized_weak_value_threshold``. Chosen on the val split and synthetic
        #: dice (docs/dice.md).
        self.weak_det_threshold = 0.35
        self.weak_value_threshold = 0.95
        self.weak_not_die = 0.02
        self.sized_weak_det_threshold = 0.3
        self.sized_size_range = (0.55, 1.8)
        self.sized_weak_value_threshold = 0.85
        #: With ``die_px``: the smallest crop the classifier is shown, in die sizes.
        #: A proposal smaller than that (the detector centred on one pip of a die
        #: touching another) is seen at this size round that point: a crop of the
        #: pip alone reads "1". 0.55, the lower end of ``sized_size_range``; 1.0
        #: was tried on touching dice (docs/dice-history.md).
        self.sized_min_crop = 0.55
        #: Image noise (grey levels) in a die's crop above which its value is
        #: withheld (``None``) and a weak proposal is not reported: a camera in dim
        #: light fills the frame with noise, where pips appear and vanish. Chosen on
        #: the val split with noise added (docs/dice.md).
        self.noise_threshold = 8.0
        #: Edge width in pixels (``Candidate.blur``) above which a die's value is
        #: withheld and a weak proposal dropped: a die out of focus or moving loses
        #: its pips' edges first. Chosen on the val split blurred in code
        #: (docs/dice.md).
        self.blur_threshold = 4.5
        #: A second look for a die in doubt between values (its most likely
        #: outcome a value at ``confirm_floor`` or more but below
        #: ``value_threshold``, "unreadable" at ``confirm_unreadable`` or less): the
        #: classifier reads its crop redrawn as a light die with dark pips
        #: (``contrast_view``), and the value is reported when that look gives the
        #: same value at ``confirm_threshold`` or more. It settles which value, not
        #: whether the die can be read: a cocked die's side face looks as clear as
        #: any in it, so a die the classifier may call unreadable gets no second
        #: look. Coloured pips on coloured dice are what it helps. Chosen on the dev
        #: photos and synthetic dice (docs/dice.md); ``confirm_threshold`` above 1: off.
        self.confirm_floor = 0.5
        self.confirm_unreadable = 0.1
        self.confirm_threshold = 0.8
        #: A third look for a die still in doubt after the second (the same dice:
        #: a value at ``confirm_floor`` up to ``value_threshold``, "unreadable" at
        #: ``confirm_unreadable`` or less): the classifier reads it in crops of
        #: these die sizes, each in all four views of ``VIEWS``, averaged; the
        #: value is reported when that gives the same value at ``value_threshold``
        #: or more. The crop's size is the detector's estimate of the die's, and a
        #: doubtful marbled or translucent die is often read surely a little
        #: nearer or farther (rule 72, docs/dice-history.md). Empty: off (and off
        #: with the second look, ``confirm_threshold`` over 1).
        self.zoom_look_sizes: tuple[float, ...] = (0.9, 1.0, 1.1)

    def read(self, frame: np.ndarray, roi: tuple[int, int, int, int] | None = None, *,
             die_px: float | None = None, plain: np.ndarray | None = None,
             one_size: bool = False, expected: int | None = None) -> list[DieReading]:
        """The dice in ``frame`` (BGR, grey or BGRA ``uint8``), optionally within ``roi``.

        ``roi`` is ``(x, y, w, h)`` in frame pixels; it is clipped to the frame.
        ``die_px``, when the caller knows it (the table camera does, from the
        board), is the side of a die's top face in frame pixels: the region is
        then scaled so dice are ``die_target`` pixels for the detector (small
        dice enlarged, large ones shrunk) instead of capping it at
        ``work_side``. With ``die_px``, ``plain`` (a polygon, N x 2 frame pixels)
        is where the dice lie on a plain surface (a dice tray, the board's dice
        area): the detector then looks only round the spots that stand out from
        it (``vision.dice.spots``), or at the whole region when too much does.
        ``one_size`` says that every die there is ``die_px`` across (one set of
        dice, as at the table; not so on photos mixing dice): a reading proposed
        far smaller is then checked at that size (:meth:`_check_off_size`), and a
        lone "2" proposed far larger is looked at as two dice (``split_twos``).
        ``expected``, with ``die_px`` and ``one_size``, is how many dice were
        rolled (the game knows): while fewer are reported, what stands out is
        searched for the rest (``short_search``,
        :meth:`_search_short`); it never adds a die past that number, nor drops
        one. Centres are always in full-frame pixels, sorted top to bottom. An
        empty frame or region gives an empty list; anything that is not an image
        array raises ``ValueError``.
        """
        return [self.decide(c) for c in self.candidates(frame, roi, die_px=die_px, plain=plain,
                                                        one_size=one_size, expected=expected)
                if self.keeps(c)]

    def main_pass_ms(self) -> float:
        """Milliseconds of one detector main pass on a fixed 640x480 frame (seeded
        noise), with the calling thread's OpenCV threads: the reader's largest step
        timed alone, to tell how fast this host is at the moment (``bench dice`` times
        one after each image). It runs in a network instance of its own, planned
        once, so the reader's own are not disturbed."""
        with self._lock:
            if self._probe is None:
                frame = np.random.default_rng(0).integers(0, 256, (480, 640, 3), np.uint8)
                net = cv2.dnn.readNetFromONNX(str(self._det_path))
                self._probe = (net, self._detector_blob(frame))
                net.setInput(self._probe[1])
                net.forward()  # the first pass plans the network
            net, blob = self._probe
            t0 = time.perf_counter()
            net.setInput(blob)
            net.forward()
            return 1000.0 * (time.perf_counter() - t0)

    def keeps(self, c: Candidate) -> bool:
        """Whether a candidate is reported: not "not a die"; a weak one only when read
        clearly (a value at ``weak_value_threshold``, or ``sized_weak_value_threshold``
        when it has the known die size, "not a die" at most ``weak_not_die``, and not
        :meth:`degraded`)."""
        if c.not_die >= self.not_die_threshold:
            return False
        if not c.weak:
            return True
        if self.degraded(c) or c.doubted:
            return False
        best = int(np.argmax(c.probs))
        needed = self.sized_weak_value_threshold if c.die_sized else self.weak_value_threshold
        return (best != UNREADABLE and c.probs[best] >= needed
                and c.not_die <= self.weak_not_die)

    def decide(self, c: Candidate) -> DieReading:
        """Turn a candidate into a reading: its value, or ``None`` when in doubt."""
        best = int(np.argmax(c.probs))
        p = float(c.probs[best])
        value: int | None = best + 1
        sure = p >= self.value_threshold or (c.confirmed and p >= self.confirm_floor)
        if best == UNREADABLE or not sure or self.degraded(c) or c.doubted:
            value = None
        return DieReading(value, (c.cx, c.cy), round(c.score * p, 4), round(c.size, 1))

    def degraded(self, c: Candidate) -> bool:
        """Whether the die's crop is too noisy or too blurred for any value to be safe
        (``noise_threshold``, ``blur_threshold``)."""
        return c.noise > self.noise_threshold or c.blur > self.blur_threshold

    def candidates(self, frame: np.ndarray, roi: tuple[int, int, int, int] | None = None, *,
                   die_px: float | None = None,
                   plain: np.ndarray | None = None, one_size: bool = False,
                   expected: int | None = None) -> list[Candidate]:
        """All die proposals with their outcome probabilities: above ``det_threshold``,
        and weak ones from ``weak_det_threshold`` (see :meth:`keeps`)."""
        if die_px is not None and not (math.isfinite(die_px) and die_px > 0):
            raise ValueError(f"die_px must be a positive number of pixels, not {die_px!r}")
        if expected is not None and (isinstance(expected, bool) or not isinstance(expected, int)
                                     or expected < 0):
            raise ValueError(f"expected must be a number of dice (0 or more), not {expected!r}")
        full = as_bgr(frame)
        region = _region(full, roi)
        if region is None:
            return []
        img, (ox, oy) = region
        h, w = img.shape[:2]
        if h < self.min_side or w < self.min_side:
            return []
        gain = dim_gain(full, self.dim_below) if self.dim_below > 0 else 1.0
        if gain > 1.0:  # a dim frame, brightened as a longer exposure would have
            img = cv2.convertScaleAbs(img, alpha=gain)
        if die_px is None:
            scale = min(1.0, self.work_side / max(h, w))
            frame_side = max(full.shape[:2])
            if frame_side < self.min_work_side:  # a small frame: its dice are small
                scale = min(self.max_enlarge, self.min_work_side / frame_side)
        else:
            scale = min(self.die_target / die_px, self.max_side / max(h, w))
        small = img
        if scale != 1.0:
            size = (max(1, round(w * scale)), max(1, round(h * scale)))
            if scale < 1.0 and self.fast_area_shrink:
                small = shrink_by_area(img, size)
            else:
                small = cv2.resize(img, size, interpolation=cv2.INTER_AREA if scale < 1.0
                                   else cv2.INTER_LINEAR)
            if min(small.shape[:2]) < self.min_side:
                return []
        within = None
        if die_px is not None and plain is not None:
            within = (np.asarray(plain, float).reshape(-1, 2) - (ox, oy)) * scale
        props, covers = self._propose(small, None if die_px is None else die_px * scale, within)
        if not props and not (expected and self.short_search):
            return []
        judged = self._judge(img, props, scale, die_px, covers) if props else []
        if die_px is not None:
            plain_img = None if within is None else within / scale
            judged = self._look_round(img, judged, die_px, one_size, expected, plain_img)
        found = [replace(c, cx=c.cx + ox, cy=c.cy + oy) for c in judged]
        found.sort(key=lambda c: (c.cy, c.cx))
        return found

    def _propose(self, small: np.ndarray, die: float | None, within: np.ndarray | None
                 ) -> tuple[list[_Proposal], dict[int, list[int]]]:
        """First stage: the detector's proposals in the scaled region ``small`` (its
        pixels), and which of them lie inside the face of a close-up die found by the
        coarser passes (:meth:`_with_large_dice`). ``die`` is the die size there when
        known; ``within`` the plain surface's polygon there, where only the spots that
        stand out are looked at."""
        windows = (busy_windows(small, die, within=within)
                   if die is not None and within is not None else None)
        if windows is not None:
            props = self._proposals_in(small, windows)
        else:
            out = self._forward(small) if die is None else self._forward_sized(small)
            props = self._proposals(out, small.shape[1], small.shape[0],
                                    self._lowest_peak(sized=die is not None))
        if self.large_pass and die is None and min(small.shape[:2]) >= 128:
            return self._with_large_dice(small, props)
        return props, {}

    def _judge(self, img: np.ndarray, props: list[_Proposal], scale: float,
               die_px: float | None, covers: dict[int, list[int]] | None = None
               ) -> list[Candidate]:
        """Second stage: classify a crop of each proposal, taken from the region ``img``
        at full resolution (proposals are in its pixels times ``scale``), and measure
        the crop's noise and blur. Candidates in ``img``'s pixels.

        Each die is seen in ``views`` rotated/mirrored crops; their probabilities are
        averaged. ``covers`` maps a close-up proposal to the finer ones inside its
        face: those are dropped when the close-up one is a die (they are its pips),
        kept when the classifier calls it "not a die" (a cluster of touching dice
        the coarser pass took for one)."""
        n_views = self.views if len(props) <= _MANY else min(self.views, 2)
        views = VIEWS[: max(1, n_views)]
        min_crop = 0.0  # the smallest die size a crop is taken at
        if die_px is None:
            sized = [False] * len(props)
            weak = [score < self.det_threshold for _, _, _, score, _ in props]
        else:  # the size is known: a proposal far from it (one pip, two dice) is weak
            lo, hi = (r * die_px * scale for r in self.sized_size_range)
            sized = [lo <= size <= hi for _, _, size, _, _ in props]
            weak = [not ok or score < self.sized_det_threshold
                    for ok, (_, _, _, score, _) in zip(sized, props, strict=True)]
            min_crop = self.sized_min_crop * die_px * scale  # a pip alone is no die
        crops = [self._crop(img, cx / scale, cy / scale, max(size, min_crop) / scale, angle, flip)
                 for cx, cy, size, _, _ in props for angle, flip in views]
        cls_out = self._classify(crops).reshape(len(props), len(views), -1)
        cls_out = cls_out.mean(axis=1)
        # Crop pixels per frame pixel: a crop that shrinks a die shrinks its noise and
        # blur with it; one that enlarges a small die widens its edges, not its blur.
        zoom = [self.cls_size * scale / (max(size, min_crop) * self.crop_factor)
                for _, _, size, _, _ in props]
        sigma = noise_sigma(img)
        noise = [sigma * min(1.0, z) for z in zoom]
        blur = [edge_width(crops[i * len(views)]) / max(1.0, z) for i, z in enumerate(zoom)]
        found = []
        for (cx, cy, size, score, pdet), pc, is_weak, is_sized, die_noise, die_blur in zip(
                props, cls_out, weak, sized, noise, blur, strict=True):
            not_die = float(pc[NOT_DIE])
            pv = outcome_probs(pc)
            if self.combine == "cls":
                probs = pv
            elif self.combine == "det":
                probs = pdet
            else:
                probs = np.sqrt(pv * pdet)
            probs = probs / max(1e-9, float(probs.sum()))
            found.append(Candidate(cx / scale, cy / scale, size / scale, score,
                                   tuple(float(v) for v in probs), not_die,
                                   is_weak, is_sized, round(die_noise, 2),
                                   round(die_blur, 3)))
        if covers:  # before the second look: no look again at pips of a close-up die
            inside = {j for i, js in covers.items()
                      if found[i].not_die < self.not_die_threshold for j in js}
            kept = [j for j in range(len(found)) if j not in inside]
            found = [found[j] for j in kept]
            crops = [crops[j * len(views) + k] for j in kept for k in range(len(views))]
        return self._confirm(found, crops, len(views), img, min_crop / scale)

    def _confirm(self, found: list[Candidate], crops: list[np.ndarray],
                 n_views: int, img: np.ndarray, min_crop: float = 0.0) -> list[Candidate]:
        """The second look (``confirm_threshold``): each die in doubt between values
        that would be reported (not weak, not "not a die", not degraded) is read
        again in the contrast views of its crops (``n_views`` per die in ``crops``);
        one still in doubt gets the third, at other crop sizes
        (``zoom_look_sizes``), from ``img`` (no crop under ``min_crop`` pixels)."""
        if self.confirm_threshold > 1.0:
            return found
        doubtful = []
        for i, c in enumerate(found):
            best = int(np.argmax(c.probs))
            if (best != UNREADABLE and self.confirm_floor <= c.probs[best] < self.value_threshold
                    and c.probs[UNREADABLE] <= self.confirm_unreadable and not c.weak
                    and c.not_die < self.not_die_threshold and not self.degraded(c)):
                doubtful.append(i)
        if not doubtful:
            return found
        views = [contrast_view(crops[i * n_views + k]) for i in doubtful for k in range(n_views)]
        out = self._classify(views).reshape(len(doubtful), n_views, -1).mean(axis=1)
        _confirm_agreeing(found, doubtful, out, self.confirm_threshold)
        return self._zoom_look(found, [i for i in doubtful if not found[i].confirmed],
                               img, min_crop)

    def _zoom_look(self, found: list[Candidate], doubtful: list[int], img: np.ndarray,
                   min_crop: float) -> list[Candidate]:
        """The third look (``zoom_look_sizes``): the ``doubtful`` dice of ``found``
        read in crops of several sizes, all four views each; a die whose averaged
        probabilities give its most likely value at ``value_threshold`` is
        ``confirmed``. It never changes a value, only turns a ``null`` into one."""
        if not doubtful or not self.zoom_look_sizes:
            return found
        looks = [(k, angle, flip) for k in self.zoom_look_sizes for angle, flip in VIEWS]
        crops = [self._crop(img, found[i].cx, found[i].cy, max(found[i].size * k, min_crop),
                            angle, flip)
                 for i in doubtful for k, angle, flip in looks]
        out = self._classify(crops).reshape(len(doubtful), len(looks), -1).mean(axis=1)
        _confirm_agreeing(found, doubtful, out, self.value_threshold)
        return found

    def _crop(self, img: np.ndarray, x: float, y: float, size: float, angle: float = 0.0,
              flip: bool = False) -> np.ndarray:
        """:func:`face_crop` of a die ``size`` across at (x, y) as this reader's
        classifier sees it (``cls_size``, ``crop_factor``)."""
        return face_crop(img, x, y, size, angle, flip, self.cls_size, self.crop_factor)

    def _with_large_dice(self, small: np.ndarray, props: list[_Proposal]
                         ) -> tuple[list[_Proposal], dict[int, list[int]]]:
        """Add dice too large for the main pass, found at half and quarter scale, and
        say which proposals lie inside each one's face (index -> indices).

        Close-up dice (faces over ~80 px) are beyond what the detector saw in
        training; at a coarser scale they are ordinary. What the finer passes
        proposed inside such a die's face is mostly its pips, and is dropped if the
        classifier takes the large one for a die (:meth:`_judge`); but a tight
        cluster of touching dice can look like one large die at the coarser scale,
        and then the dice inside are what is kept.
        """
        props = list(props)
        covers: dict[int, list[int]] = {}
        level = small
        for k in (2, 4):
            if min(level.shape[:2]) < 2 * 64:
                break
            level = cv2.resize(level, (level.shape[1] // 2, level.shape[0] // 2),
                               interpolation=cv2.INTER_AREA)
            large = [(cx * k, cy * k, size * k, score, probs)
                     for cx, cy, size, score, probs in
                     self._proposals(self._forward(level, k // 2), level.shape[1],
                                     level.shape[0])
                     if size * k >= _LARGE * k / 2]
            finer = len(props)
            for q in large:
                covers[len(props)] = [j for j in range(finer) if math.hypot(
                    props[j][0] - q[0], props[j][1] - q[1]) <= 0.6 * q[2]]
                props.append(q)
        return props, covers

    def _proposals_in(self, small: np.ndarray,
                      windows: list[tuple[int, int, int, int]]) -> list[_Proposal]:
        """The detector's proposals in windows of a region scaled by ``die_px``, in the
        region's pixels; a die seen in two overlapping windows is kept once."""
        props: list[_Proposal] = []
        ph, pw = (-small.shape[0]) % _ALIGN, (-small.shape[1]) % _ALIGN
        if ph or pw:  # the windows lie in the region padded to the detector's stride
            small = cv2.copyMakeBorder(small, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
        for x, y, w, h in windows:
            out = self._forward_sized(small[y:y + h, x:x + w], _ALIGN)
            props += [(cx + x, cy + y, size, score, probs) for cx, cy, size, score, probs in
                      self._proposals(out, w, h, self._lowest_peak(sized=True))]
        return _one_per_die(props)

    def _lowest_peak(self, sized: bool) -> float:
        """The heatmap score a proposal needs at all (weak ones included), free or at a
        known die size."""
        if sized:
            return min(self.sized_weak_det_threshold, self.sized_det_threshold)
        return min(self.weak_det_threshold, self.det_threshold)

    def _classify(self, crops: list[np.ndarray]) -> np.ndarray:
        """Classifier probabilities, one row per crop."""
        n = len(crops)
        batch = max(1, math.ceil(n / _CLS_BATCH)) * _CLS_BATCH
        crops = crops + [crops[0]] * (batch - n)
        blob = cv2.dnn.blobFromImages(crops, 1.0 / 255.0)
        with self._lock:
            net = _recent_net(self._cls_nets, batch, self._cls_path, _CLS_NETS)
            net.setInput(blob)
            out = np.asarray(net.forward()).reshape(batch, -1)
        return out[:n]

    def _forward(self, img: np.ndarray, level: int = 0) -> np.ndarray:
        h, w = img.shape[:2]
        ph = (-h) % _ALIGN
        pw = (-w) % _ALIGN
        if ph or pw:
            img = cv2.copyMakeBorder(img, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
        blob = self._detector_blob(img)
        with self._lock:
            self._nets[level].setInput(blob)
            out = self._nets[level].forward()
        return np.asarray(out)[0]

    def _detector_blob(self, img: np.ndarray) -> np.ndarray:
        """The detector's input for the padded region ``img``: the image or its pixel
        blocks, as the file read takes them (``input_block``)."""
        return detector_blob(img, self.input_block)

    def _forward_sized(self, img: np.ndarray, bucket: int = _BUCKET) -> np.ndarray:
        """The detector on a region scaled by ``die_px``: padded up to a multiple of
        ``bucket`` pixels, with one network instance per padded shape (the last
        few kept), so a camera that keeps its pose never makes OpenCV re-plan."""
        h, w = img.shape[:2]
        ph, pw = (-h) % bucket, (-w) % bucket
        if ph or pw:
            img = cv2.copyMakeBorder(img, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
        key = img.shape[:2]
        blob = self._detector_blob(img)
        with self._lock:
            net = _recent_net(self._sized_nets, key, self._det_path, _SIZED_NETS)
            net.setInput(blob)
            out = net.forward()
        return np.asarray(out)[0]

    def _proposals(self, out: np.ndarray, w: int, h: int,
                   threshold: float | None = None) -> list[_Proposal]:
        """Heatmap peaks: (cx, cy, size, score, class probs) in detector-input pixels."""
        threshold = self.det_threshold if threshold is None else threshold
        heat = np.ascontiguousarray(out[0], dtype=np.float32)
        gh = min(heat.shape[0], math.ceil(h / _STRIDE))
        gw = min(heat.shape[1], math.ceil(w / _STRIDE))
        heat = heat[:gh, :gw]
        peaks = (heat >= threshold) & (heat >= cv2.dilate(heat, np.ones((3, 3))))
        props = []
        for iy, ix in zip(*np.nonzero(peaks), strict=True):
            cx = (ix + 0.5 + float(out[1, iy, ix])) * _STRIDE
            cy = (iy + 0.5 + float(out[2, iy, ix])) * _STRIDE
            size = math.exp(min(4.0, float(out[3, iy, ix]))) * _STRIDE
            probs = out[4:, iy, ix].astype(np.float64)
            probs = probs / max(1e-9, float(probs.sum()))
            cx = min(max(cx, 0.0), w - 1.0)
            cy = min(max(cy, 0.0), h - 1.0)
            props.append((float(cx), float(cy), size, float(heat[iy, ix]), probs))
        return _one_per_die(props)


def _region(full: np.ndarray, roi: tuple[int, int, int, int] | None
            ) -> tuple[np.ndarray, tuple[int, int]] | None:
    """The part of ``full`` inside ``roi`` (x, y, w, h; clipped to the frame) and its
    top-left corner; the whole frame without ``roi``; None when nothing is left."""
    if roi is None:
        return full, (0, 0)
    x, y, w, h = (int(v) for v in roi)
    x0, y0 = max(0, x), max(0, y)
    x1, y1 = min(full.shape[1], x + w), min(full.shape[0], y + h)
    if x1 <= x0 or y1 <= y0:
        return None
    return full[y0:y1, x0:x1], (x0, y0)


def _recent_net(nets: dict[_K, cv2.dnn.Net], key: _K, path: Path, keep: int) -> cv2.dnn.Net:
    """The network instance for one input shape ``key`` from ``nets`` (most recently
    used last), loaded from ``path`` when missing; at most ``keep`` instances stay."""
    net = nets.pop(key, None)
    if net is None:
        net = cv2.dnn.readNetFromONNX(str(path))
        if len(nets) >= keep:
            nets.pop(next(iter(nets)))
    nets[key] = net
    return net


def _confirm_agreeing(found: list[Candidate], doubtful: list[int], probs: np.ndarray,
                      threshold: float) -> None:
    """Mark ``confirmed`` each die ``doubtful[j]`` of ``found`` whose look's classifier
    output ``probs[j]`` gives the die's own most likely value at ``threshold`` or
    more (a look confirms a value, never changes it)."""
    for i, pc in zip(doubtful, probs, strict=True):
        pv = outcome_probs(pc)
        best = int(np.argmax(found[i].probs))
        if int(np.argmax(pv)) == best and pv[best] >= threshold:
            found[i] = replace(found[i], confirmed=True)


def _one_per_die(props: list[_Proposal]) -> list[_Proposal]:
    """Two peaks on one die: the stronger one is kept when the weaker one's centre lies
    within half a die of it. Strongest first."""
    props = sorted(props, key=lambda p: -p[3])
    kept: list[_Proposal] = []
    for p in props:
        if all(math.hypot(p[0] - k[0], p[1] - k[1]) > 0.5 * max(p[2], k[2]) for k in kept):
            kept.append(p)
    return kept


def face_crop(img: np.ndarray, cx: float, cy: float, size: float, angle: float = 0.0,
              flip: bool = False, out_size: int = CLS_SIZE,
              factor: float = CLS_FACTOR) -> np.ndarray:
    """The classifier's view of one die: an ``out_size`` square crop around (cx, cy).

    It covers ``factor * size`` source pixels, rotated by ``angle`` degrees
    (training only) and mirrored if ``flip``; borders are replicated. A die more
    than twice the crop's size (scale below ``_AREA_BELOW``) is first shrunk by
    pixel area (``INTER_AREA``) round its centre: sampled straight from the
    full-size frame, fine pips would alias away.
    """
    side = max(4.0, size * factor)
    scale = out_size / side
    if scale < _AREA_BELOW:
        # The square rotated by any angle lies within side / sqrt(2) of the centre.
        r = side * 0.71 + 2.0
        x0, y0 = math.floor(cx - r), math.floor(cy - r)
        n = math.ceil(2 * r)
        patch = _patch(img, x0, y0, n)
        shrunk = max(1, round(n * scale))
        img = cv2.resize(patch, (shrunk, shrunk), interpolation=cv2.INTER_AREA)
        k = shrunk / n
        # pixel centres: x in the patch lands on (x + 0.5) * k - 0.5 in the shrunk one
        cx, cy, side = (cx - x0 + 0.5) * k - 0.5, (cy - y0 + 0.5) * k - 0.5, side * k
        scale = out_size / side
    m = cv2.getRotationMatrix2D((cx, cy), angle, scale)
    m[0, 2] += out_size / 2 - cx
    m[1, 2] += out_size / 2 - cy
    if flip:
        m[0] = -m[0]
        m[0, 2] += out_size
    return cv2.warpAffine(img, m, (out_size, out_size), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REPLICATE)


def _patch(img: np.ndarray, x0: int, y0: int, n: int) -> np.ndarray:
    """The ``n`` x ``n`` square of ``img`` from (x0, y0), borders replicated where it
    leaves the image."""
    h, w = img.shape[:2]
    xa, ya, xb, yb = max(0, x0), max(0, y0), min(w, x0 + n), min(h, y0 + n)
    if xa >= xb or ya >= yb:  # wholly outside: the nearest edge pixel, replicated
        px = img[min(max(y0, 0), h - 1), min(max(x0, 0), w - 1)]
        return np.broadcast_to(px, (n, n) + img.shape[2:]).copy()
    part = img[ya:yb, xa:xb]
    pads = (ya - y0, y0 + n - yb, xa - x0, x0 + n - xb)
    if any(pads):
        part = cv2.copyMakeBorder(part, *pads, cv2.BORDER_REPLICATE)
    return part


def as_bgr(frame: np.ndarray) -> np.ndarray:
    """A 3-channel ``uint8`` view or copy of ``frame``; ``ValueError`` if it is no image."""
    if not isinstance(frame, np.ndarray):
        raise ValueError(f"frame must be a numpy array, not {type(frame).__name__}")
    if frame.ndim == 2:
        frame = frame[:, :, None]
    if frame.ndim != 3 or frame.shape[2] not in (1, 3, 4):
        raise ValueError(f"frame must be HxW, HxWx3 or HxWx4, not shape {frame.shape}")
    if frame.size == 0:
        return np.zeros((0, 0, 3), np.uint8)
    if frame.dtype != np.uint8:
        if np.issubdtype(frame.dtype, np.floating):
            hi = 1.0 if float(np.nanmax(frame)) <= 1.0 else 255.0
            frame = np.clip(np.nan_to_num(frame) * (255.0 / hi), 0, 255).astype(np.uint8)
        elif frame.dtype == np.uint16:
            frame = (frame >> 8).astype(np.uint8)
        else:
            frame = np.clip(frame, 0, 255).astype(np.uint8)
    if frame.shape[2] == 1:
        return cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    if frame.shape[2] == 4:
        return cv2.cvtColor(frame, cv2.COLOR_BGRA2BGR)
    return frame


_default: DiceReader | None = None
_default_lock = threading.Lock()


def default_reader() -> DiceReader:
    """The shared reader with the committed model (loaded on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = DiceReader()
        return _default


def read_dice(frame: np.ndarray, roi: tuple[int, int, int, int] | None = None, *,
              die_px: float | None = None) -> list[DieReading]:
    """The dice in a BGR ``frame`` (optionally within ``roi`` = x, y, w, h; ``die_px``
    the dice's top-face side in pixels where known, see :meth:`DiceReader.read`).

    Uses the shared :func:`default_reader`. Each :class:`DieReading` has the
    value 1..6 or ``None`` (seen but unreadable), the top-face centre in frame
    pixels and a confidence 0..1.
    """
    return default_reader().read(frame, roi, die_px=die_px)
