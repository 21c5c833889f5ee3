"""The work behind ``companion dice`` and ``companion bench dice``.

``companion dice [--json] IMAGE...`` reads each image (EXIF orientation applied, a
JPEG cut short refused: :mod:`vision.image_file`) and prints one line per image, in
order. With ``--json`` the line is ``{"image": path, "dice": [{"value": 1-6 or null,
"center": [x, y], "confidence": c}], "ms": t}``; an image that cannot be read
gets ``{"image": path, "error": "...", "dice": [], "ms": t}`` and the command
exits non-zero at the end, after all other images.

With ``--settle N`` the images are taken as consecutive camera frames and a last
line says where the dice first lay still with the same values for N frames in a
row (:mod:`vision.dice.settle`; a die that stays unclear is given ``null`` a few
frames later): ``{"settled": {"image": path, "frames": N,
"dice": [...], "problem": null or "why to roll again"}}``, or ``{"settled": null}``.

``companion bench dice --data DIR [--split heldout|dev|val|all]`` scores the reader
on every labelled set under DIR (see :mod:`vision.dice.data`).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import cv2
import numpy as np

from vision.dice.annotate import annotate
from vision.dice.data import (
    LabelError,
    LabelledDie,
    closest_first,
    label_path_for,
    labelled_die_px,
    list_images,
    list_sets,
    read_labels,
)
from vision.dice.label_fixes import Fixes, inside, load_fixes, photo_labels
from vision.dice.reader import DiceReader, DieReading, default_reader
from vision.dice.settle import Roll, RollSettler
from vision.image_file import read_image


def reading_dict(d: DieReading) -> dict[str, object]:
    """A die as the JSON contract wants it."""
    return {"value": d.value, "center": [round(d.center[0], 1), round(d.center[1], 1)],
            "confidence": round(min(1.0, max(0.0, d.confidence)), 3)}


def _human(path: str, dice: list[DieReading], ms: float) -> str:
    if not dice:
        return f"{path}: no dice ({ms:.1f} ms)"
    parts = [f"{d.value if d.value is not None else '?'} at ({d.center[0]:.0f}, "
             f"{d.center[1]:.0f})" for d in dice]
    unclear = sum(1 for d in dice if d.value is None)
    note = f"; {unclear} unclear, roll again" if unclear else ""
    return f"{path}: {len(dice)} dice: " + ", ".join(parts) + f"{note} ({ms:.1f} ms)"


def dice_command(paths: Sequence[str], out: TextIO, *, as_json: bool = True,
                 reader: DiceReader | None = None,
                 roi: tuple[int, int, int, int] | None = None,
                 die_px: float | None = None,
                 annotate_dir: Path | None = None,
                 settle: int | None = None, expected: int | None = None) -> int:
    """Read each image and print one line per image; returns the exit status (1 if any failed).

    ``roi`` (x, y, w, h px) and ``die_px`` (the dice's top-face side in px) are
    passed to :meth:`DiceReader.read` for every image. With ``annotate_dir``
    (an existing folder) each image read is also written there with its
    readings drawn, as ``NAME.dice.jpg`` (``NAME-2.dice.jpg``... when two
    images share a name). With ``settle`` (frames) the images are consecutive
    frames and a last line gives the first settled roll (``expected``: the
    number of dice rolled, where known); a frame that cannot be read counts as
    one with no dice.
    """
    rd = reader or default_reader()
    status = 0
    taken: set[str] = set()
    settler = RollSettler(settle, expected=expected) if settle is not None else None
    settled: tuple[str, Roll] | None = None
    for path in paths:
        t0 = time.perf_counter()
        img = None
        try:
            img = read_image(path)
            dice = rd.read(img, roi, die_px=die_px)
            error = None
        except (ValueError, cv2.error) as exc:
            dice, error = [], str(exc)
            status = 1
        ms = round((time.perf_counter() - t0) * 1000, 1)
        if annotate_dir is not None and img is not None and error is None:
            target = annotate_dir / _unique_name(Path(path).stem, taken)
            if not cv2.imwrite(str(target), annotate(img, dice, roi=roi)):
                error, status = f"read, but could not write {target}", 1
        if as_json:
            rec: dict[str, object] = {"image": path}
            if error is not None:
                rec["error"] = error
            rec["dice"] = [reading_dict(d) for d in dice]
            rec["ms"] = ms
            out.write(json.dumps(rec) + "\n")
        elif error is not None:
            out.write(f"{path}: error: {error}\n")
        else:
            out.write(_human(path, dice, ms) + "\n")
        out.flush()
        if settler is not None and settled is None:
            roll = settler.feed(dice)
            if roll is not None:
                settled = (path, roll)
    if settler is not None:
        out.write(_settled_line(settled, settler.frames, as_json) + "\n")
    return status


def _settled_line(settled: tuple[str, Roll] | None, frames: int, as_json: bool) -> str:
    """The last line of ``companion dice --settle``: the first settled roll, or none."""
    if settled is None:
        if as_json:
            return json.dumps({"settled": None})
        return f"not settled: the dice never lay still with the same values for {frames} frames"
    path, roll = settled
    if as_json:
        return json.dumps({"settled": {"image": path, "frames": roll.frames,
                                       "dice": [reading_dict(d) for d in roll.dice],
                                       "problem": roll.problem}})
    values = ", ".join("?" if v is None else str(v) for v in roll.values)
    verdict = f": {roll.problem}" if roll.problem else ""
    return f"settled at {path} (still for {roll.frames} frames): {values}{verdict}"


def _unique_name(stem: str, taken: set[str]) -> str:
    """``STEM.dice.jpg``, or ``STEM-2.dice.jpg`` and on when that name is taken."""
    name, k = f"{stem}.dice.jpg", 1
    while name in taken:
        k += 1
        name = f"{stem}-{k}.dice.jpg"
    taken.add(name)
    return name


# --- benchmark -----------------------------------------------------------------


@dataclass
class SetScore:
    """Counts for one labelled set."""

    name: str
    images: int = 0
    dice: int = 0
    found: int = 0
    right: int = 0
    wrong: int = 0
    unread: int = 0
    missed: int = 0
    false: int = 0
    exact: int = 0
    ms: list[float] = field(default_factory=list)
    #: The detector's main pass on a fixed frame, timed after each image when asked
    #: (``bench_set(time_host=True)``): how fast the host was meanwhile.
    host_ms: list[float] = field(default_factory=list)
    #: Images left out of the counts, each with why (unreadable image, bad labels).
    skipped: list[str] = field(default_factory=list)
    #: Label fixes applied (``bench_set(fixes=...)``, :mod:`vision.dice.label_fixes`);
    #: None when scored against the labels as they are.
    fixed: int | None = None

    def add(self, other: SetScore) -> None:
        """Add another set's counts to this one."""
        for k in ("images", "dice", "found", "right", "wrong", "unread", "missed", "false",
                  "exact"):
            setattr(self, k, getattr(self, k) + getattr(other, k))
        self.ms.extend(other.ms)
        self.host_ms.extend(other.host_ms)
        self.skipped.extend(other.skipped)
        if other.fixed is not None:
            self.fixed = (self.fixed or 0) + other.fixed

    def line(self) -> str:
        """One human-readable summary line."""
        def pct(a: int, b: int) -> str:
            return f"{100.0 * a / b:.1f}%" if b else "-"
        med = statistics.median(self.ms) if self.ms else 0.0
        return (f"{self.name}: images {self.images}, dice {self.dice}, found {self.found}, "
                f"right {self.right} ({pct(self.right, self.dice)}), "
                f"wrong {self.wrong} ({pct(self.wrong, self.dice)}), "
                f"unread {self.unread}, missed {self.missed}, false {self.false}, "
                f"images exactly right {self.exact} ({pct(self.exact, self.images)}), "
                f"median {med:.1f} ms/image"
                + (f" (host main pass {statistics.median(self.host_ms):.1f} ms)"
                   if self.host_ms else "")
                + (f", label fixes {self.fixed}" if self.fixed is not None else "")
                + (f", skipped {len(self.skipped)} (unreadable image or labels)"
                   if self.skipped else ""))

    def as_dict(self) -> dict[str, object]:
        """The counts and rates as a JSON-able dict."""
        d = {k: getattr(self, k) for k in ("name", "images", "dice", "found", "right", "wrong",
                                           "unread", "missed", "false", "exact")}
        d["ms_median"] = round(statistics.median(self.ms), 2) if self.ms else 0.0
        if self.host_ms:
            d["host_main_pass_ms"] = round(statistics.median(self.host_ms), 2)
        d["skipped"] = len(self.skipped)
        if self.fixed is not None:
            d["label_fixes"] = self.fixed
        return d


def die_outcomes(truth: list[LabelledDie], seen: list[DieReading]) -> tuple[list[str], int]:
    """Each labelled die's outcome ("right", "wrong", "unread" or "missed") and the
    number of false dice (readings matching no labelled die).

    A reading matches a labelled die when its centre lies inside the die's box;
    each die and each reading is used at most once (closest centres first).
    """
    pairs = []
    for i, t in enumerate(truth):
        tcx, tcy = t.center
        for j, s in enumerate(seen):
            if t.contains(*s.center):
                pairs.append(((s.center[0] - tcx) ** 2 + (s.center[1] - tcy) ** 2, i, j))
    matched = closest_first(pairs)
    outcomes = ["missed"] * len(truth)
    for i, j in matched:
        v = seen[j].value
        outcomes[i] = "unread" if v is None else "right" if v == truth[i].value else "wrong"
    return outcomes, len(seen) - len(matched)


def match(truth: list[LabelledDie], seen: list[DieReading]) -> tuple[int, int, int, int, int]:
    """Match readings to labelled dice (``die_outcomes``): (right, wrong, unread, missed, false)."""
    outcomes, false = die_outcomes(truth, seen)
    return (outcomes.count("right"), outcomes.count("wrong"), outcomes.count("unread"),
            outcomes.count("missed"), false)


def fit_frame(img: np.ndarray, size: tuple[int, int]) -> tuple[np.ndarray, float, int, int]:
    """``img`` scaled (the same in x and y: dice stay square) to fit a ``size`` = (w, h)
    frame, centred on a plain border of its median colour; returns the frame, the
    scale and the offset (x, y) of the image in it."""
    fw, fh = size
    h, w = img.shape[:2]
    k = min(fw / w, fh / h)
    sw, sh = max(1, min(fw, round(w * k))), max(1, min(fh, round(h * k)))
    scaled = cv2.resize(img, (sw, sh), interpolation=cv2.INTER_CUBIC if k > 1 else cv2.INTER_AREA)
    ox, oy = (fw - sw) // 2, (fh - sh) // 2
    if (sw, sh) == (fw, fh):
        return scaled, k, 0, 0
    colour = [float(v) for v in np.median(scaled.reshape(-1, 3), axis=0)]
    frame = cv2.copyMakeBorder(scaled, oy, fh - sh - oy, ox, fw - sw - ox,
                               cv2.BORDER_CONSTANT, value=colour)
    return frame, k, ox, oy


def shrink_to_die(img: np.ndarray, truth: list[LabelledDie],
                  die_to: float) -> tuple[np.ndarray, float]:
    """``img`` shrunk (by pixel area, the same in x and y) so that its median labelled
    die (:func:`labelled_die_px`) is ``die_to`` px, as a camera farther away would
    see it; never enlarged. Returns the image and the scale."""
    die_px = labelled_die_px(truth)
    if die_px is None or die_px <= die_to:
        return img, 1.0
    h, w = img.shape[:2]
    k = die_to / die_px
    size = (max(1, round(w * k)), max(1, round(h * k)))
    return cv2.resize(img, size, interpolation=cv2.INTER_AREA), k


def bench_set(set_dir: Path, split: str, reader: DiceReader,
              resize: tuple[int, int] | None = None,
              errors_dir: Path | None = None, known_size: bool = False,
              die_to: float | None = None, time_host: bool = False,
              fixes: Fixes | None = None) -> SetScore:
    """Score ``reader`` on the images of one set in ``split``.

    With ``resize`` = (w, h) every image is first made a frame of that size (to
    time and check the reader on camera-size frames, :func:`fit_frame`); labels
    follow it. With
    ``errors_dir``, every image not read exactly right is written there (as
    ``NAME.jpg``) with the readings and the labelled boxes drawn (not timed).
    An image that does not decode or whose labels are malformed is not scored;
    it is listed in ``SetScore.skipped`` with the reason. With ``known_size``
    the reader is told the die size (``die_px``: the median labelled box's
    longer side), as the table knows it from the board. With ``die_to`` each image
    is first shrunk (never enlarged) so that die is ``die_to`` px, and read as the
    table reads its dice area: told the size, all dice one set (``one_size``).
    With ``time_host`` the detector's main pass on a fixed frame is timed after
    each image (:meth:`DiceReader.main_pass_ms`, ``SetScore.host_ms``): the host's
    speed over the same minutes, by which times of different days compare.
    With ``fixes`` (:func:`vision.dice.label_fixes.load_fixes`) each image's labels
    are corrected first, and readings inside its ``ignore`` boxes are not scored.
    """
    if resize is not None and die_to is not None:
        raise ValueError("resize a frame or shrink its dice, not both")
    score = SetScore(set_dir.name)
    for p in list_images(set_dir, split):
        try:
            img = read_image(p)
        except ValueError as exc:
            score.skipped.append(f"{p}: {exc}")
            continue
        h, w = img.shape[:2]
        k, ox, oy = 1.0, 0, 0
        if resize is not None:
            img, k, ox, oy = fit_frame(img, resize)
        try:
            if die_to is not None:
                img, k = shrink_to_die(img, read_labels(label_path_for(p), w, h), die_to)
            fixed = photo_labels(set_dir.name, p, round(w * k), round(h * k), fixes, scale=k,
                                 offset=(ox, oy))
            truth, ignore = fixed.dice, fixed.ignore
            if fixes is not None:
                score.fixed = (score.fixed or 0) + fixed.applied
        except LabelError as exc:
            score.skipped.append(str(exc))
            continue
        die_px = labelled_die_px(truth) if known_size or die_to is not None else None
        t0 = time.perf_counter()
        seen = reader.read(img, die_px=die_px, one_size=die_to is not None)
        score.ms.append((time.perf_counter() - t0) * 1000)
        if time_host:
            score.host_ms.append(reader.main_pass_ms())
        seen = [s for s in seen if not any(inside(b, *s.center) for b in ignore)]
        right, wrong, unread, missed, false = match(truth, seen)
        score.images += 1
        score.dice += len(truth)
        score.found += right + wrong + unread
        score.right += right
        score.wrong += wrong
        score.unread += unread
        score.missed += missed
        score.false += false
        exact = right == len(truth) and false == 0 and len(seen) == len(truth)
        score.exact += int(exact)
        if errors_dir is not None and not exact:
            target = errors_dir / f"{p.stem}.jpg"
            if not cv2.imwrite(str(target), annotate(img, seen, truth=truth)):
                raise ValueError(f"could not write {target}")
    return score


def bench_command(data_dir: Path, split: str, out: TextIO, *, as_json: bool = False,
                  err: TextIO | None = None,
                  reader: DiceReader | None = None,
                  resize: tuple[int, int] | None = None,
                  errors_dir: Path | None = None, known_size: bool = False,
                  die_to: float | None = None, threads: int = 1,
                  label_fixes: Path | None = None) -> int:
    """Print one line per set (and a total) of the reader's scores on ``data_dir``,
    read with ``threads`` OpenCV threads (1: the speed targets are for one core),
    each with the median time per image and the host's speed meanwhile (the
    detector's main pass on a fixed frame, timed after each image);
    with ``errors_dir``, also draw the images not read exactly right into
    ``errors_dir/SET/`` (see :func:`bench_set`); with ``label_fixes``, a fix file
    (:mod:`vision.dice.label_fixes`), score against the labels it corrects. Images
    that could not be scored are named on ``err`` (stderr by default); the status
    is then 1, else 0."""
    err = sys.stderr if err is None else err
    cv2.setNumThreads(threads)
    sets = list_sets(data_dir)
    if not sets:
        raise ValueError(f"no dice sets (SET/images/*.jpg) under {data_dir}")
    fixes = load_fixes(label_fixes) if label_fixes is not None else None
    rd = reader or default_reader()
    # Warm up (first inference allocates).
    rd.read(np.zeros((480, 640, 3), np.uint8))
    total = SetScore(f"total ({split})")
    for s in sets:
        set_errors = None
        if errors_dir is not None:
            set_errors = errors_dir / s.name
            set_errors.mkdir(parents=True, exist_ok=True)
        sc = bench_set(s, split, rd, resize, set_errors, known_size, die_to, time_host=True,
                       fixes=fixes)
        sc.name = (f"{s.name} ({split}" + (f", {resize[0]}x{resize[1]}" if resize else "")
                   + (f", dice shrunk to {die_to:g} px, read as the table"
                      if die_to is not None else "")
                   + (", known die size" if known_size and die_to is None else "")
                   + (", labels fixed)" if fixes is not None else ")"))
        total.add(sc)
        out.write((json.dumps(sc.as_dict()) if as_json else sc.line()) + "\n")
    out.write((json.dumps(total.as_dict()) if as_json else total.line()) + "\n")
    for why in total.skipped:
        err.write(f"skipped {why}\n")
    return 1 if total.skipped else 0
