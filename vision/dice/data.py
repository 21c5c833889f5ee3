"""The labelled dice photographs: where they are, how they are split, how labels read.

Layout of a data directory (as ``../shared/data/dice``): ``SET/images/NAME.jpg``
with ``SET/labels/NAME.txt`` beside it, one YOLO line per die: ``class cx cy w h``
normalised to the image size, class k meaning face value k+1.

The split is fixed by a hash of ``SET/NAME``: about a quarter of the images are
*held out* and never used for training or tuning; the rest are *dev*.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

#: ``val`` is the part of dev that ``is_val`` picks: tuned on, not trained on with ``--val``.
SPLITS = ("heldout", "dev", "val", "all")


@dataclass(frozen=True)
class LabelledDie:
    """One labelled die: its value 1..6 and its box (x0, y0, x1, y1) in pixels."""

    value: int
    box: tuple[float, float, float, float]

    def contains(self, x: float, y: float) -> bool:
        """True if the point (x, y) lies inside the box (edges included)."""
        x0, y0, x1, y1 = self.box
        return x0 <= x <= x1 and y0 <= y <= y1

    @property
    def center(self) -> tuple[float, float]:
        """Centre of the box."""
        x0, y0, x1, y1 = self.box
        return ((x0 + x1) / 2, (y0 + y1) / 2)


def default_data_dir() -> Path:
    """``$PELOTON_DICE_DATA`` or ``<repo>/../shared/data/dice``."""
    env = os.environ.get("PELOTON_DICE_DATA")
    if env:
        return Path(env)
    repo = Path(__file__).resolve().parents[2]
    return repo.parent / "shared" / "data" / "dice"


def split_of(set_name: str, image_name: str) -> str:
    """``"heldout"`` for about 25% of the images (by hash of SET/STEM), else ``"dev"``."""
    key = f"{set_name}/{Path(image_name).stem}".encode()
    return "heldout" if hashlib.sha1(key).digest()[0] % 4 == 0 else "dev"


def is_val(set_name: str, image_name: str) -> bool:
    """True for about 1 in 6 *dev* images: the tuning part of dev, kept out of training
    when the trainer is run with ``--val``. Never true for held-out images."""
    key = f"{set_name}/{Path(image_name).stem}".encode()
    digest = hashlib.sha1(key).digest()
    return digest[0] % 4 != 0 and digest[1] % 6 == 0


def list_sets(data_dir: Path) -> list[Path]:
    """The set directories under ``data_dir`` (those with an ``images`` folder), sorted."""
    if not data_dir.is_dir():
        return []
    return sorted(p for p in data_dir.iterdir() if (p / "images").is_dir())


def list_images(set_dir: Path, split: str = "all") -> list[Path]:
    """The images of one set in ``split`` (``heldout``, ``dev``, its ``val`` part, or
    ``all``), sorted."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
    exts = {".jpg", ".jpeg", ".png", ".bmp"}
    imgs = sorted(p for p in (set_dir / "images").iterdir() if p.suffix.lower() in exts)
    if split == "all":
        return imgs
    if split == "val":
        return [p for p in imgs if is_val(set_dir.name, p.name)]
    return [p for p in imgs if split_of(set_dir.name, p.name) == split]


class LabelError(ValueError):
    """A label file that is not YOLO dice labels; the message names the file and line."""


#: Coordinates may overshoot [0, 1] by this much (rounding in labelling tools).
_SLACK = 1e-3


def read_labels(label_path: Path, width: int, height: int) -> list[LabelledDie]:
    """Parse a YOLO label file into dice with pixel boxes; a missing file means no dice.

    Each non-blank line must be ``class cx cy w h``: a class 0..5 (face 1..6) and
    coordinates normalised to the image, inside it. Anything else raises
    :class:`LabelError` (a wrong label would silently skew every figure).
    """
    dice: list[LabelledDie] = []
    if not label_path.exists():
        return dice
    try:
        text = label_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LabelError(f"{label_path}: not a readable text file ({exc})") from exc
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        where = f"{label_path}:{n}"
        if len(parts) != 5:
            raise LabelError(f"{where}: want 'class cx cy w h' (5 fields), got {line.strip()!r}")
        try:
            cls_f, cx, cy, w, h = (float(v) for v in parts)
        except ValueError as exc:
            raise LabelError(f"{where}: not numbers: {line.strip()!r}") from exc
        if not (cls_f.is_integer() and 0 <= cls_f <= 5):
            raise LabelError(f"{where}: class must be 0..5 (face 1..6), got {parts[0]!r}")
        if not all(math.isfinite(v) and -_SLACK <= v <= 1 + _SLACK for v in (cx, cy, w, h)) \
                or w <= 0 or h <= 0:
            raise LabelError(f"{where}: coordinates must be fractions of the image in 0..1 "
                             f"with w, h > 0, got {' '.join(parts[1:])}")
        box = ((cx - w / 2) * width, (cy - h / 2) * height,
               (cx + w / 2) * width, (cy + h / 2) * height)
        dice.append(LabelledDie(int(cls_f) + 1, box))
    return dice


def labelled_die_px(truth: list[LabelledDie]) -> float | None:
    """The die size a caller that knows it would pass (``die_px``): the median
    labelled box's longer side, or None when no die is labelled."""
    if not truth:
        return None
    return float(np.median([max(d.box[2] - d.box[0], d.box[3] - d.box[1]) for d in truth]))


def label_path_for(image_path: Path) -> Path:
    """``SET/labels/NAME.txt`` for ``SET/images/NAME.jpg``."""
    return image_path.parent.parent / "labels" / (image_path.stem + ".txt")


def closest_first(candidates: list[tuple[float, int, int]]) -> list[tuple[int, int]]:
    """Pair true dice with readings: ``candidates`` are (distance, die, reading)
    triples of the pairs that may match; the closest are taken first and each die
    and each reading is used once. The (die, reading) pairs, closest first."""
    used_t: set[int] = set()
    used_s: set[int] = set()
    pairs = []
    for _, i, j in sorted(candidates):
        if i not in used_t and j not in used_s:
            used_t.add(i)
            used_s.add(j)
            pairs.append((i, j))
    return pairs


def closest_pairs(truth: list[tuple[float, float]], seen: list[tuple[float, float]],
                  within: float) -> list[tuple[int, int]]:
    """Match readings to true dice by their centres, closest pairs first, each used
    once, no farther apart than ``within`` pixels: (truth index, reading index)
    pairs. Two dice touching lie closer than ``within``; taking them die by die
    would match a die the reader missed to its neighbour's reading and count a
    wrong value."""
    return closest_first([(math.dist(t, r), i, k) for i, t in enumerate(truth)
                          for k, r in enumerate(seen) if math.dist(t, r) < within])
