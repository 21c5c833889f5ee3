"""Corrections to the labels of the shared photo sets, found by looking at the photos.

The labels of ``../shared/data/dice`` are the sets' authors' own, and a few are
wrong: a "5" boxed as a "6", a die left without a box. ``bench dice`` scores
against the labels as they are; with ``--label-fixes`` it also applies a fix file,
so that a reading the photo shows right is not counted wrong (docs/dice.md,
"The labels, audited"). The photos and their label files are never changed.

A fix file is JSON: ``{"fixes": [FIX, ...]}``, each FIX naming its ``set``,
``image`` (the file's stem), a ``why`` in plain words, and one of:

- ``"die": N, "was": V, "value": W``: the N-th labelled die of the image (1-based,
  in the label file's order) is a W, not the V its label says;
- ``"add": [x0, y0, x1, y1], "value": W``: a die the labels leave out, its box in
  pixels of the image as it is stored;
- ``"ignore": [x0, y0, x1, y1]``: a die that is no part of a roll (held in a hand,
  half hidden), left without a box: a reading there is neither scored nor false.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from .data import LabelError, LabelledDie, label_path_for, list_images, read_labels

#: The fixes found for ``../shared/data/dice`` (docs/dice.md, "The labels, audited").
DEFAULT_FIXES = Path(__file__).with_name("label_fixes.json")

Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class LabelFix:
    """One correction to one image's labels (see the module docstring)."""

    set_name: str
    image: str
    why: str
    die: int | None = None
    was: int | None = None
    value: int | None = None
    add: Box | None = None
    ignore: Box | None = None


#: The fixes of a fix file by (set, image stem), as :func:`load_fixes` returns them.
Fixes = dict[tuple[str, str], list[LabelFix]]


@dataclass(frozen=True)
class FixedLabels:
    """An image's dice after its fixes, and the boxes whose readings are not scored."""

    dice: list[LabelledDie]
    ignore: list[Box]
    applied: int


def _box(raw: object, where: str) -> Box:
    if not (isinstance(raw, list) and len(raw) == 4
            and all(isinstance(v, int | float) and math.isfinite(v) for v in raw)):
        raise LabelError(f"{where}: a box is [x0, y0, x1, y1] in pixels, got {raw!r}")
    x0, y0, x1, y1 = (float(v) for v in raw)
    if not (x1 > x0 and y1 > y0):
        raise LabelError(f"{where}: a box needs x1 > x0 and y1 > y0, got {raw!r}")
    return (x0, y0, x1, y1)


def _face(raw: object, where: str, key: str) -> int:
    if not (isinstance(raw, int) and not isinstance(raw, bool) and 1 <= raw <= 6):
        raise LabelError(f"{where}: {key!r} must be a face value 1..6, got {raw!r}")
    return raw


def _fix(raw: object, where: str) -> LabelFix:
    if not isinstance(raw, dict):
        raise LabelError(f"{where}: a fix is an object, got {type(raw).__name__}")
    for key in ("set", "image", "why"):
        if not (isinstance(raw.get(key), str) and raw[key].strip()):
            raise LabelError(f"{where}: {key!r} must be a non-empty string")
    kinds = [k for k in ("die", "add", "ignore") if k in raw]
    if len(kinds) != 1:
        raise LabelError(f"{where}: a fix has exactly one of 'die', 'add', 'ignore', got {kinds or 'none'}")
    known = {"set", "image", "why", "die", "was", "value", "add", "ignore"}
    if set(raw) - known:
        raise LabelError(f"{where}: unknown keys {sorted(set(raw) - known)}")
    base = {"set_name": raw["set"], "image": raw["image"], "why": raw["why"]}
    if kinds == ["die"]:
        n = raw["die"]
        if not (isinstance(n, int) and not isinstance(n, bool) and n >= 1):
            raise LabelError(f"{where}: 'die' is the 1-based number of a labelled die, got {n!r}")
        return LabelFix(**base, die=n, was=_face(raw.get("was"), where, "was"),
                        value=_face(raw.get("value"), where, "value"))
    if kinds == ["add"]:
        return LabelFix(**base, add=_box(raw["add"], where), value=_face(raw.get("value"), where, "value"))
    if "value" in raw or "was" in raw:
        raise LabelError(f"{where}: an 'ignore' fix has no value")
    return LabelFix(**base, ignore=_box(raw["ignore"], where))


def load_fixes(path: Path) -> Fixes:
    """The fixes of a fix file by (set, image stem); a file that is not one raises
    :class:`~vision.dice.data.LabelError` naming the file and the fix."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LabelError(f"{path}: not a readable JSON fix file ({exc})") from exc
    fixes = doc.get("fixes") if isinstance(doc, dict) else None
    if not isinstance(fixes, list):
        raise LabelError(f"{path}: want {{\"fixes\": [...]}}")
    out: Fixes = {}
    for n, raw in enumerate(fixes, 1):
        fix = _fix(raw, f"{path}: fix {n}")
        out.setdefault((fix.set_name, fix.image), []).append(fix)
    return out


def apply_fixes(dice: list[LabelledDie], fixes: list[LabelFix], *, scale: float = 1.0,
                offset: tuple[float, float] = (0.0, 0.0), where: str = "") -> FixedLabels:
    """``dice`` (one image's labels, in file order) with ``fixes`` applied. Boxes of
    the fixes are in pixels of the stored image; ``scale`` and ``offset`` map them as
    the labels were mapped (a resized frame). A fix whose ``was`` does not match the
    label, or that names a die the file does not have, raises
    :class:`~vision.dice.data.LabelError`: the labels changed since the fix was made."""
    out = list(dice)
    ignore: list[Box] = []

    def moved(b: Box) -> Box:
        return (b[0] * scale + offset[0], b[1] * scale + offset[1],
                b[2] * scale + offset[0], b[3] * scale + offset[1])

    for f in fixes:
        if f.die is not None and f.value is not None:
            if f.die > len(dice) or dice[f.die - 1].value != f.was:
                have = dice[f.die - 1].value if f.die <= len(dice) else "no such die"
                raise LabelError(f"{where}: fix of die {f.die} expects a labelled {f.was}, "
                                 f"the labels have {have}")
            out[f.die - 1] = LabelledDie(f.value, dice[f.die - 1].box)
        elif f.add is not None and f.value is not None:
            out.append(LabelledDie(f.value, moved(f.add)))
        elif f.ignore is not None:
            ignore.append(moved(f.ignore))
    return FixedLabels(out, ignore, len(fixes))


def photo_labels(set_name: str, image: Path, width: int, height: int, fixes: Fixes | None,
                 *, scale: float = 1.0, offset: tuple[float, float] = (0.0, 0.0)) -> FixedLabels:
    """The labelled dice of one photo of a set: its label file read for a ``width`` x
    ``height`` image (:func:`~vision.dice.data.read_labels`), moved by ``offset``, with
    the image's fixes from ``fixes`` applied (none when ``fixes`` is None: the labels as
    they are). ``scale`` and ``offset`` map the stored image's pixels to the frame's,
    as in :func:`apply_fixes`. A label file or a fix that does not fit raises
    :class:`~vision.dice.data.LabelError` naming the file."""
    label_path = label_path_for(image)
    ox, oy = offset
    dice = [LabelledDie(d.value, (d.box[0] + ox, d.box[1] + oy, d.box[2] + ox, d.box[3] + oy))
            for d in read_labels(label_path, width, height)]
    if fixes is None:
        return FixedLabels(dice, [], 0)
    return apply_fixes(dice, fixes.get((set_name, image.stem), []), scale=scale, offset=offset,
                       where=str(label_path))


def labelled_photos(set_dir: Path, split: str,
                    fixes: Fixes | None) -> Iterator[tuple[Path, np.ndarray, FixedLabels]]:
    """Each image of one set in ``split`` (:func:`~vision.dice.data.list_images`) as
    OpenCV loads it, with its labels and ``fixes`` (:func:`photo_labels`); images
    OpenCV cannot decode are skipped. Readings inside a ``FixedLabels.ignore`` box
    are neither right nor false."""
    for path in list_images(set_dir, split):
        img = cv2.imread(str(path))
        if img is None:
            continue
        h, w = img.shape[:2]
        yield path, img, photo_labels(set_dir.name, path, w, h, fixes)


def training_labels(set_name: str, image: Path, width: int, height: int,
                    fixes: Fixes | None) -> list[LabelledDie] | None:
    """The dice a trainer learns one photo by: :func:`photo_labels` with ``fixes``, or
    None for a photo to leave out, one with a die that a fix says to ignore (a die
    held in a hand): the trainers have no "learn nothing here" mask, and without one
    they would teach that die as background or as "not a die"."""
    fixed = photo_labels(set_name, image, width, height, fixes)
    return None if fixed.ignore else fixed.dice


def inside(box: Box, x: float, y: float) -> bool:
    """Whether (x, y) lies in ``box`` (edges included)."""
    return box[0] <= x <= box[2] and box[1] <= y <= box[3]


def add_label_fix_args(parser: argparse.ArgumentParser, *, learn: bool) -> None:
    """Add ``--label-fixes FILE`` and ``--raw-labels`` to a tool's ``parser``: the fix
    file to apply (default :data:`DEFAULT_FIXES`), or none. ``learn`` says whether the
    tool learns the labels (a trainer) or scores against them (a tuning tool)."""
    if learn:
        fixes_help = ("corrections to the photos' labels (default: the project's own, "
                      "vision/dice/label_fixes.json; docs/dice.md, 'The labels, audited')")
        raw_help = ("learn the labels as they are, without --label-fixes (as every "
                    "model trained before 2026-12-07 was)")
    else:
        fixes_help = ("score against the labels this fix file corrects (default: the project's "
                      "own, vision/dice/label_fixes.json, as bench dice --label-fixes)")
        raw_help = "score against the labels as they are (the figures before 2026-12-07)"
    parser.add_argument("--label-fixes", type=Path, default=DEFAULT_FIXES, metavar="FILE",
                        help=fixes_help)
    parser.add_argument("--raw-labels", action="store_true", help=raw_help)


def fixes_from_args(args: argparse.Namespace) -> Fixes | None:
    """The fixes the arguments of :func:`add_label_fix_args` ask for: None with
    ``--raw-labels``, else those of ``--label-fixes`` (:func:`load_fixes`)."""
    return None if args.raw_labels else load_fixes(args.label_fixes)
