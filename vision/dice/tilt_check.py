"""Is a die read at the table lying flat? A check for cocked dice that knows the tilt.

From the camera alone, a die lying flat seen from 30 degrees looks much like a
die tipped 30 degrees (cocked against another die or the tray's wall) seen
from straight above: the face classifier cannot tell them apart, and taught
to try it loses flat dice (rules 53 and 55 of docs/dice-history.md). At the
table the board's pose tells where the camera is
(:func:`vision.board.camera_centre`), so a die's neighbourhood can be redrawn
as seen straight down onto the plane of the flat dice's top faces
(:mod:`vision.top_view`): there a flat die's top is a square of the die's size
whatever the camera's tilt, while a cocked die shows a squashed face and a
second one beside it. A small network (``vision/models/dice_tilt.onnx``,
trained by ``tools/train_dice_tilt.py`` on the synthetic table only) gives
the probability that the die in such a view is cocked.

A flat die's side faces show in the top view too, with their pips, always on
the camera's side of its top; a cocked die's second face lies wherever it
leans. The view is therefore turned so that the camera's foot lies straight
below (``die_top_view(aligned=True)``), and the network is taught views so
turned (rule 63; the network before it saw them at any turn and took flat
dice for cocked ones from ~24 degrees off straight down on, rule 56). A
numbered reading it takes for cocked at :attr:`TiltCheck.threshold` is
reported unreadable where the die is seen within :attr:`TiltCheck.max_view_deg`
of straight down, and at :attr:`TiltCheck.far_threshold` from
:attr:`TiltCheck.far_view_deg` on (``vision.table_dice.read_table_dice``);
a band between would not be asked. Since rule 64 (the network trained
longer, on twice the scenes) the two meet at 40 degrees, both at 0.98:
every numbered die is asked (rule 63's network took too many flat dice for
cocked at 32-40 degrees to be asked there); rule 65's is rule 64's trained
on, on twice the scenes; rule 69's is rule 65's trained on, on more scenes
and on views centred on flat dice's side faces toward the camera, taught as
ones to withhold (a reading proposed there reads a side face's pips). From
far off it also catches flat "1"s read "4" or "5" with their side faces'
pips (rule 62b).

The network also reads a flat die's value in the top view (its first six
outputs), where the top face is a square and the side faces lie below it: a
second opinion. A numbered die to which it gives the reader's value under
:attr:`TiltCheck.value_bar` of its flat dice's probability is reported
unreadable too (rule 70): mostly flat dice seen obliquely whose side face's
pips the reader counted with the top's.
"""

from __future__ import annotations

import math
import threading
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from vision.board import BoardPose, camera_centre
from vision.dice.reading import DieReading
from vision.top_view import top_view

TILT_MODEL_PATH = Path(__file__).resolve().parents[1] / "models" / "dice_tilt.onnx"
#: The top view's side in pixels, and a die's side in it.
VIEW_SIZE = 48
VIEW_PX_PER_DIE = 24.0
#: The network's outputs: a flat die's value 1..6 at 0..5, then "cocked".
COCKED = 6
#: Views the network reads at once (the two dice of a roll).
BATCH = 2
#: The check's defaults (rules 61b, 61c, 63, 64): P(cocked) at which a value is withheld, and
#: how far off straight down (degrees) a die may be seen and still be checked.
THRESHOLD = 0.98
MAX_VIEW_DEG = 40.0
#: ... and for dice seen from far off (rules 62b, 63): from this angle on, at this P(cocked).
FAR_VIEW_DEG = 40.0
FAR_THRESHOLD = 0.98
#: Rule 70: a value is withheld too where the network, reading the die's top face in the
#: top view, gives the reader's value less than this share of its flat dice's probability.
VALUE_BAR = 0.1


def die_top_view(frame: np.ndarray, pose: BoardPose, camera: tuple[float, float, float],
                 at_px: tuple[float, float], die_mm: float,
                 aligned: bool = False) -> np.ndarray | None:
    """The network's input for a die reported at frame px ``at_px``: the plane of the
    flat dice's tops (``die_mm`` up) seen straight down, :data:`VIEW_SIZE` px square,
    :data:`VIEW_PX_PER_DIE` px a die, centred where the ray through ``at_px`` meets
    it; None where the geometry fails. ``aligned``: turned so that the camera's foot
    lies straight below (a flat die's side faces then show at its bottom)."""
    view = top_view(frame, pose, camera, at_px, die_mm, VIEW_PX_PER_DIE / die_mm, VIEW_SIZE)
    if view is None:
        return None
    ux, uy = view.away
    if not aligned or ux == uy == 0:
        return view.image
    c = (VIEW_SIZE - 1) / 2
    rot = np.array([[-uy, ux], [-ux, -uy]])  # away -> (0, -1): straight up
    m = np.hstack([rot, (np.array([c, c]) - rot @ np.array([c, c]))[:, None]])
    return cv2.warpAffine(view.image, m, (VIEW_SIZE, VIEW_SIZE), flags=cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_REPLICATE)


def view_angle_deg(pose: BoardPose, camera: tuple[float, float, float],
                   at_px: tuple[float, float]) -> float:
    """How far off straight down (degrees) the camera sees frame px ``at_px``: the
    angle of its ray from the board's normal; NaN where the geometry fails."""
    b = pose.to_mm(np.array([at_px], float))[0]
    fx, fy, height = camera
    if not np.all(np.isfinite(b)) or not height > 0:
        return math.nan
    return math.degrees(math.atan2(math.hypot(b[0] - fx, b[1] - fy), height))


class TiltCheck:
    """The cocked-or-flat check of numbered readings at the table.

    ``threshold``: the probability of "cocked" at which a reading's value is
    withheld for a die seen within ``max_view_deg`` of straight down;
    ``far_threshold``: the same for a die seen from ``far_view_deg`` or more
    off straight down. Dice seen between are not checked. ``value_bar``: a
    checked die's value is withheld too where the network reads its top face
    otherwise, giving the reader's value less than this share of its flat
    probability (rule 70; 0 turns that off). The model is loaded on first use;
    a missing file raises ``FileNotFoundError`` then.
    """

    def __init__(self, path: Path = TILT_MODEL_PATH, threshold: float = THRESHOLD,
                 max_view_deg: float = MAX_VIEW_DEG, far_view_deg: float = FAR_VIEW_DEG,
                 far_threshold: float = FAR_THRESHOLD, value_bar: float = VALUE_BAR) -> None:
        self.path = Path(path)
        self.threshold = threshold
        self.max_view_deg = max_view_deg
        self.far_view_deg = far_view_deg
        self.far_threshold = far_threshold
        self.value_bar = value_bar
        self._net: cv2.dnn.Net | None = None
        self._lock = threading.Lock()

    def cocked_probability(self, views: np.ndarray) -> np.ndarray:
        """P(cocked) of each top view (N x VIEW_SIZE x VIEW_SIZE x 3, BGR uint8). (The
        mean over the view's four quarter turns separates flat and cocked dice no
        better at the table and takes four times as long: rule 61.)"""
        return self.probabilities(views)[:, COCKED]

    def probabilities(self, views: np.ndarray) -> np.ndarray:
        """The network's outputs for each top view (N x VIEW_SIZE x VIEW_SIZE x 3, BGR
        uint8): N x 7, P(a flat die showing 1..6) then P(cocked)."""
        if len(views) == 0:
            return np.zeros((0, COCKED + 1))
        batch = list(views)
        n = len(batch)
        # Always whole batches of BATCH: OpenCV plans the net again for every new
        # batch size (~10 ms).
        batch += [batch[0]] * (-n % BATCH)
        probs = []
        with self._lock:
            if self._net is None:
                if not self.path.is_file():
                    raise FileNotFoundError(f"dice tilt model not found: {self.path}")
                self._net = cv2.dnn.readNetFromONNX(str(self.path))
            for k in range(0, len(batch), BATCH):
                self._net.setInput(cv2.dnn.blobFromImages(batch[k:k + BATCH], 1 / 255.0))
                probs.append(np.asarray(self._net.forward(), np.float64).reshape(BATCH, -1))
        return np.concatenate(probs)[:n]

    def check(self, frame: np.ndarray, pose: BoardPose, readings: list[DieReading],
              die_mm: float) -> list[DieReading]:
        """``readings`` with the value withheld (``None``) from each numbered die seen
        within :attr:`max_view_deg` of straight down, or from :attr:`far_view_deg` or
        more, that the network takes for cocked (at that band's bar) or reads as
        another value (:attr:`value_bar`); unchanged where the camera's place is
        unknown."""
        h, w = frame.shape[:2]
        camera = camera_centre(pose, (w, h))
        if camera is None:
            return readings
        at: list[int] = []
        bars: list[float] = []
        views: list[np.ndarray] = []
        for i, d in enumerate(readings):
            if d.value is None:
                continue
            angle = view_angle_deg(pose, camera, d.center)  # NaN: neither band
            bar = (self.threshold if angle < self.max_view_deg else
                   self.far_threshold if angle >= self.far_view_deg else None)
            if bar is None:
                continue
            view = die_top_view(frame, pose, camera, d.center, die_mm, aligned=True)
            if view is not None:
                at.append(i)
                bars.append(bar)
                views.append(view)
        if not views:
            return readings
        probs = self.probabilities(np.stack(views))
        out = list(readings)
        for i, bar, p in zip(at, bars, probs, strict=True):
            value = out[i].value
            assert value is not None
            flat = float(p[:COCKED].sum())
            if p[COCKED] >= bar or p[value - 1] < self.value_bar * flat:
                out[i] = replace(out[i], value=None)
        return out


_default: TiltCheck | None = None
_default_lock = threading.Lock()


def default_tilt_check() -> TiltCheck:
    """The shared check with the committed model."""
    global _default
    with _default_lock:
        if _default is None:
            _default = TiltCheck()
        return _default
