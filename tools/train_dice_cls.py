"""Train the dice reader's face classifier and export it to ``vision/models/dice_cls.onnx``.

Second stage of the reader (see tools/train_dice.py for the detector and for
the environment): a small CNN that looks at a ``CLS_SIZE`` square crop around a
detected die (``vision.dice.reader.face_crop``) and says 1..6, "unreadable" or
"not a die". Trained on crops of the dev photographs and of synthetic scenes::

    nice /tmp/trainvenv/bin/python tools/train_dice_cls.py --val --minutes 40

Real crops are taken where the committed detector (``--detector``) proposes
each labelled die, as the reader will see it, or round the label's box with
a jitter like the detector's; "not a die" crops are background, the
detector's close-up proposals that are no die, and zoomed-out views of a die
or a group of dice. The weights are averaged (EMA) and the average exported.

Folds: ``--fold K/N`` trains on all dev images but fold K of N (by a hash
of the name) and, with ``--oof FILE``, saves the probabilities of fold K's
dice in 8 views (``tools/eval_dice_oof.py`` reads them to choose the
thresholds on out-of-fold predictions). ``--drop-fold J`` leaves fold J out
of training too, so that fold K is read by a model that learnt less of dev
(a learning curve: how much more real photos buy).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import math
import random
import sys
import time
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F  # noqa: N812

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))

from eval_dice_oof import read_counts, value_probs  # noqa: E402
from train_dice import conv_bn, dws, init_from_onnx, train_mode  # noqa: E402

from vision.dice import synth  # noqa: E402
from vision.dice.contrast_view import contrast_view  # noqa: E402
from vision.dice.data import (  # noqa: E402
    default_data_dir,
    is_val,
    list_images,
    list_sets,
)
from vision.dice.label_fixes import Fixes, add_label_fix_args, fixes_from_args, training_labels  # noqa: E402
from vision.dice.pip_twins import Twin, pip_twin  # noqa: E402
from vision.dice.reader import CLS_FACTOR, CLS_SIZE, DiceReader, face_crop  # noqa: E402
from vision.dice.reading import VIEWS  # noqa: E402
from vision.dice.restyle import restyled_twin  # noqa: E402

NCLS = 8  # values 1..6 -> 0..5, unreadable -> 6, not a die -> 7
UNREADABLE = 6
NOT_DIE = 7


class ClsNet(nn.Module):
    """The classifier: ``small`` (~78k weights, ~0.27 ms a crop on one core),
    ``medium`` (~136k, ~0.46 ms) or ``wide`` (~160k, a full 3x3 layer more at
    full size, ~3.5x the small one's time). The head is a convolution over the
    whole feature map (6x6 for 48-px crops; a fully connected layer that keeps where
    pips are)."""

    def __init__(self, arch: str = "small", size: int = CLS_SIZE) -> None:
        super().__init__()
        if arch == "small":
            self.body = nn.Sequential(
                conv_bn(3, 24), dws(24, 48, 2), dws(48, 48), dws(48, 64, 2), dws(64, 64),
                dws(64, 128, 2), dws(128, 128))
            out = 128
        elif arch == "medium":
            self.body = nn.Sequential(
                conv_bn(3, 32), dws(32, 64, 2), dws(64, 64), dws(64, 96, 2), dws(96, 96),
                dws(96, 96), dws(96, 192, 2), dws(192, 192), dws(192, 192))
            out = 192
        elif arch == "wide":
            self.body = nn.Sequential(
                conv_bn(3, 32), conv_bn(32, 32), dws(32, 64, 2), dws(64, 64), dws(64, 96, 2),
                dws(96, 96), dws(96, 96), dws(96, 192, 2), dws(192, 192))
            out = 192
        else:
            raise ValueError(f"unknown classifier arch {arch!r}")
        self.head = nn.Conv2d(out, NCLS, size // 8)  # = flatten + fully connected

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


#: A crop to make: image, centre x, y, size, class, and the detector's proposal
#: (cx, cy, size) for a labelled die where it made one.
Item = tuple[np.ndarray, float, float, float, int, "tuple[float, float, float] | None"]
#: A labelled photo: set, name, image, dice (cx, cy, class, size, proposal),
#: and the detector's proposals that are no die (cx, cy, size): close-ups and
#: weak ones away from every labelled die.
Photo = tuple[str, str, np.ndarray, list, list]

#: Detector proposals from this heatmap score are mined for "not a die" crops.
MINE_THRESHOLD = 0.25


def fold_of(set_name: str, image_name: str, folds: int) -> int:
    """The fold (0..folds-1) of a dev image, by a hash of SET/STEM."""
    key = f"{set_name}/{Path(image_name).stem}".encode()
    return hashlib.sha1(key).digest()[2] % folds


def load_photos(data_dir: Path, keep: str, fold: tuple[int, int] | None,
                detector: Path | None, fixes: Fixes | None = None,
                drop: frozenset[int] = frozenset()) -> list[Photo]:
    """The dev photos with their labels and the detector's proposals.

    ``keep`` is "train" (dev without the val part, or without fold K with
    ``fold`` = (K, N), and then without the folds in ``drop`` too: a training
    set of a chosen share of dev), "val" (that part only) or "all" (every dev photo).
    The labels are read with ``fixes`` applied (``vision.dice.label_fixes.
    training_labels``: a photo with an ignored die is left out). The held-out
    split is never read.
    """
    reader = DiceReader(detector) if detector is not None else DiceReader()
    reader.det_threshold = MINE_THRESHOLD
    reader.large_pass = False
    out: list[Photo] = []
    for set_dir in list_sets(data_dir):
        for p in list_images(set_dir, "dev"):
            in_fold = fold_of(set_dir.name, p.name, fold[1]) if fold else None
            held = in_fold == fold[0] if fold else is_val(set_dir.name, p.name)
            if keep != "all" and (keep == "val") != held:
                continue
            if keep == "train" and in_fold in drop:
                continue
            img = cv2.imread(str(p))
            if img is None:
                continue
            h, w = img.shape[:2]
            labels = training_labels(set_dir.name, p, w, h, fixes)
            if labels is None:
                continue
            cands = reader.candidates(img)
            props = [(c.cx, c.cy, c.size) for c in cands if c.score >= 0.4]
            # The close-up passes' proposals: what the reader proposes with them and not without.
            reader.large_pass = True
            large = [(c.cx, c.cy, c.size) for c in reader.candidates(img)
                     if all(math.hypot(c.cx - q[0], c.cy - q[1]) > 0.3 * c.size for q in props)]
            reader.large_pass = False
            dice = []
            for d in labels:
                x0, y0, x1, y1 = d.box
                cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
                inside = sorted((q for q in props if d.contains(q[0], q[1])),
                                key=lambda q: (q[0] - cx) ** 2 + (q[1] - cy) ** 2)
                dice.append((cx, cy, d.value - 1, max(x1 - x0, y1 - y0),
                             inside[0] if inside else None))
            # No die: close-ups not inside a labelled die of a like size, and weak
            # proposals far from every labelled die (a side face, a key, a printed label).
            nodie = [q for q in large
                     if not any(abs(q[0] - d[0]) <= d[3] / 2 and abs(q[1] - d[1]) <= d[3] / 2
                                and d[3] > 0.55 * q[2] for d in dice)]
            nodie += [(c.cx, c.cy, c.size) for c in cands
                      if all(math.hypot(c.cx - d[0], c.cy - d[1]) > max(0.6 * c.size, d[3])
                             for d in dice)]
            out.append((set_dir.name, p.name, img, dice, nodie))
    return out


def photo_items(photos: list[Photo], background: int, zoom: int, rng: random.Random) -> list[Item]:
    """The crops of labelled photos: each die, ``background`` "not a die" crops per
    image away from the dice, ``zoom`` zoomed-out views (a die or a group of dice
    as if one die were 2.5-5x its size) and the detector's proposals that are no
    die (see :func:`load_photos`)."""
    items: list[Item] = []
    for _, _, img, dice, nodie in photos:
        h, w = img.shape[:2]
        sizes = [d[3] for d in dice] or [40.0]
        for cx, cy, c, size, det in dice:
            items.append((img, cx, cy, size, c, det))
        for _ in range(zoom if dice else 0):
            cx, cy, _, size, _ = rng.choice(dice)
            s = size * rng.uniform(2.5, 5.0)
            items.append((img, cx + rng.uniform(-0.3, 0.3) * s, cy + rng.uniform(-0.3, 0.3) * s,
                          s, NOT_DIE, None))
        for qx, qy, qs in nodie:
            items.append((img, qx, qy, qs, NOT_DIE, (qx, qy, qs)))
        for _ in range(background):
            for _try in range(20):
                x, y = rng.uniform(0, w), rng.uniform(0, h)
                s = rng.choice(sizes) * rng.uniform(0.7, 1.4)
                if all(math.hypot(x - d[0], y - d[1]) > 0.9 * max(s, d[3]) for d in dice):
                    items.append((img, x, y, s, NOT_DIE, None))
                    break
    return items


def rendered_photos(dirs: list[Path]) -> list[Photo]:
    """Scenes drawn by ``tools/render_dice_pbr.py`` (``scene_N.png`` with ``scene_N.json``
    beside it) as labelled photos: each die's size is its silhouette's box, as a
    photo's labels box a die."""
    import json

    out: list[Photo] = []
    for d in dirs:
        for js in sorted(d.glob("scene_*.json")):
            img = cv2.imread(str(js.with_suffix(".png")))
            if img is None:
                continue
            dice = []
            for die in json.loads(js.read_text()):
                x0, y0, x1, y1 = die["box"]
                dice.append((die["center"][0], die["center"][1], int(die["value"]) - 1,
                             max(x1 - x0, y1 - y0), None))
            out.append(("rendered", js.stem, img, dice, []))
    return out


def twin_items(photos: list[Photo], rng: random.Random) -> list[Item]:
    """Each photographed die that the detector proposes and whose pips are found cleanly,
    once more with its centre pip taken away or added (``vision.dice.pip_twins``: 3 -> 2,
    5 -> 4, 2 -> 3, 4 -> 5), as a patch of the photo round it."""
    items: list[Item] = []
    for _, _, img, dice, _ in photos:
        for cx, cy, c, size, det in dice:
            twin = pip_twin(img, det[0], det[1], det[2], c + 1, rng) if det else None
            if twin is not None:
                items.append(_twin_item(twin, cx, cy, size, det))
    return items


def _twin_item(twin: Twin, cx: float, cy: float, size: float,
               det: tuple[float, float, float]) -> Item:
    """The crop to make of a twin's patch: the labelled die (centre ``cx``, ``cy`` and
    ``size`` in the photo) and the detector's proposal ``det``, moved into the patch."""
    ox, oy = twin.origin
    return (twin.image, cx - ox, cy - oy, size, twin.value - 1, (det[0] - ox, det[1] - oy, det[2]))


def restyled_items(photos: list[Photo], copies: int, rng: random.Random) -> list[Item]:
    """Each photographed die that the detector proposes, whose face is told from the table
    and whose pips are found cleanly, ``copies`` times in other colours
    (``vision.dice.restyle``: plain or marbled bodies, coloured pips), as patches of the
    photo round it."""
    items: list[Item] = []
    for _, _, img, dice, _ in photos:
        for cx, cy, c, size, det in dice:
            for _ in range(copies if det and c < 6 else 0):
                twin = restyled_twin(img, det[0], det[1], det[2], c + 1, rng)
                if twin is None:
                    break
                items.append(_twin_item(twin, cx, cy, size, det))
    return items


def synth_items(n: int, seed: int, max_size: float, unreadable_rate: float,
                rng: random.Random, marbled_rate: float = 0.0, touching_rate: float = 0.3,
                tight_unreadable: bool = False, wide_colours_rate: float = 0.0,
                cocked_tight: bool = False) -> list[Item]:
    """Synthetic scenes' dice; a cocked die is there three times, "unreadable" centred on
    itself and on each face it shows (the detector often proposes one of them). With
    ``tight_unreadable`` an unreadable die is there once more at 0.55-0.8 of its size:
    the detector's proposal on a printed digit or a logo is often that small, and a
    tight crop of it must not look like a "1". A share ``wide_colours_rate`` of the dice
    takes any body and pip colours of ``vision.dice.palette``. With ``cocked_tight`` each
    face of a cocked die is there once more at 0.4-0.85 of the die's size: a detector
    that reads dice packed face to face proposes a cocked die's faces that small, and
    a foreshortened face running out of the crop must not look like a die's top."""
    np_rng = np.random.default_rng(seed)
    items: list[Item] = []
    for _ in range(n):
        img, dice = synth.scene(np_rng, 400, 400, size_range=(14.0, max_size),
                                unreadable_rate=unreadable_rate, marbled_rate=marbled_rate,
                                touching_rate=touching_rate, wide_colours_rate=wide_colours_rate)
        for d in dice:
            items.append((img, d.cx, d.cy, d.size, (d.value - 1) if d.value else UNREADABLE, None))
            items.extend((img, fx, fy, d.size, UNREADABLE, None) for fx, fy in d.faces)
            if tight_unreadable and not d.value:
                items.append((img, d.cx, d.cy, d.size * rng.uniform(0.55, 0.8), UNREADABLE, None))
            if cocked_tight:
                items.extend((img, fx, fy, d.size * rng.uniform(0.4, 0.85), UNREADABLE, None)
                             for fx, fy in d.faces)
        for _ in range(2):
            for _try in range(20):
                x, y = rng.uniform(0, 400), rng.uniform(0, 400)
                s = (rng.choice(dice).size if dice else 40.0) * rng.uniform(0.7, 1.4)
                if all(math.hypot(x - d.cx, y - d.cy) > 0.9 * max(s, d.size) for d in dice):
                    items.append((img, x, y, s, NOT_DIE, None))
                    break
    return items


def packed_items(n: int, seed: int, offcentre: bool = False) -> list[Item]:
    """The dice of ``n`` frames of dice packed face to face (``synth.packed_scene``):
    each a readable die beside another of its set, which must not look unreadable
    (a cocked die also shows two faces side by side, but foreshortened). With
    ``offcentre``, each die with a neighbour is there once more as "not a die",
    centred 0.3-0.55 of a die towards that neighbour at 0.6-1.0 of its size: the
    detector's proposal on one pip of a die in a pack, or between two dice, where
    the face of the same colour beyond the edge makes a lone pip look like a "1"."""
    np_rng = np.random.default_rng(seed)
    items: list[Item] = []
    for _ in range(n):
        img, dice = synth.packed_scene(np_rng)
        items.extend((img, d.cx, d.cy, d.size, d.value - 1, None) for d in dice)
        if not offcentre:
            continue
        for d in dice:
            others = [o for o in dice if o is not d]
            o = min(others, key=lambda o: math.hypot(o.cx - d.cx, o.cy - d.cy))
            dist = math.hypot(o.cx - d.cx, o.cy - d.cy)
            if dist > 1.2 * d.size:
                continue
            r = float(np_rng.uniform(0.3, 0.55)) * d.size / dist
            items.append((img, d.cx + r * (o.cx - d.cx), d.cy + r * (o.cy - d.cy),
                          d.size * float(np_rng.uniform(0.6, 1.0)), NOT_DIE, None))
    return items


def table_items(n: int, seed: int, negatives: int = 6, touching: float = 0.0,
                cocked: float = 0.0) -> list[Item]:
    """Crops of the table renderer's dice (``vision.synth.table_scene``: the demo board
    under a random camera, 6 dice of one style in or near the dice area) and of what
    is around them on that board ("not a die": the dice area's dashed line, the
    track's start dots, numbers, riders). Only a patch around each crop is kept.

    A die's size is the side of its top face in pixels as the camera sees it
    (``Scene.die_side_px``), times 1.2: what the detector proposes for these dice on
    average (1.0-1.6x). A share ``touching`` of the scenes has its first two dice
    face to face; a share ``cocked`` has its third and fourth dice cocked, on an edge
    ("unreadable"), each cropped at its centre and twice 0.1-0.35 of a die off it (the
    reader proposes a cocked die on one of the faces it shows)."""
    from vision.render import render_board
    from vision.synth import demo_board, random_riders, table_scene

    board = demo_board()
    ppm = 2.5
    board_img = render_board(board, ppm)
    rng = np.random.default_rng(seed)
    spaces = np.array([s.center_mm for s in board.spaces.values()], float)
    bw, bh = board.size_mm
    out: list[Item] = []

    def patch(img: np.ndarray, x: float, y: float, size: float, c: int) -> None:
        h, w = img.shape[:2]
        r = int(2.5 * size) + 2
        x0, y0 = max(0, int(x) - r), max(0, int(y) - r)
        x1, y1 = min(w, int(x) + r), min(h, int(y) + r)
        if x1 - x0 > size and y1 - y0 > size:
            out.append((np.ascontiguousarray(img[y0:y1, x0:x1]), x - x0, y - y0, size, c, None))

    for _ in range(n):
        die_mm = float(rng.uniform(14.0, 18.0))
        sc = table_scene(board, random_riders(board, rng, int(rng.integers(0, 17))), rng=rng,
                         n_dice=6, die_mm=die_mm, dice_in_area=bool(rng.random() < 0.8),
                         board_image=board_img, board_px_per_mm=ppm,
                         dice_touching=bool(touching > 0 and rng.random() < touching),
                         dice_cocked=(2, 3) if cocked > 0 and rng.random() < cocked else ())
        sizes = []
        for d in sc.dice:
            size = 1.2 * sc.die_side_px(d)
            if d.value == 0:  # cocked
                for off in (0.0, *rng.uniform(0.1, 0.35, 2)):
                    a = float(rng.uniform(0, 2 * math.pi))
                    patch(sc.image, d.center[0] + off * size * math.cos(a),
                          d.center[1] + off * size * math.sin(a),
                          size * float(rng.uniform(0.9, 1.3)), UNREADABLE)
                continue
            sizes.append(size)
            patch(sc.image, d.center[0], d.center[1], size, d.value - 1)
        size0 = float(np.mean(sizes)) if sizes else 1.2 * die_mm * sc.params["px_per_mm"]
        # "Not a die": half on the board anywhere in the frame, half near the dice or a
        # space (start dots and numbers are printed there).
        flat = sc.camera.homography(0.0)
        h, w = sc.image.shape[:2]
        for k in range(negatives):
            for _try in range(20):
                if k % 2:
                    u, v = rng.uniform(0, bw), rng.uniform(0, bh)
                elif k % 4 == 0 and sc.dice:
                    d = sc.dice[int(rng.integers(0, len(sc.dice)))]
                    u, v = d.center_mm[0] + rng.normal(0, 30), d.center_mm[1] + rng.normal(0, 30)
                else:
                    u, v = spaces[int(rng.integers(0, len(spaces)))] + rng.normal(0, 8, 2)
                p = flat @ np.array([u, v, 1.0])
                px, py = p[0] / p[2], p[1] / p[2]
                s = size0 * float(rng.uniform(0.7, 1.4))
                if not (s < px < w - s and s < py < h - s):
                    continue
                if all(math.hypot(px - d.center[0], py - d.center[1]) > 0.9 * max(s, size0)
                       for d in sc.dice):
                    patch(sc.image, px, py, s, NOT_DIE)
                    break
    return out


#: Augmentation settings (set from the command line): shares of crops at the
#: detector's proposal, with the hue turned, channels shuffled, grey, inverted,
#: JPEG-compressed; the log-normal spread of size and centre round a label's box;
#: the crop's side in die sizes (``--crop-factor``; the reader must use the same).
AUG = {"det": 0.5, "hue": 0.2, "shuffle": 0.2, "grey": 0.1, "invert": 0.05, "jpeg": 0.2,
       "motion": 0.0, "contrast": 0.0, "lowres": 0.0, "size_sigma": 0.13, "offset_sigma": 0.05,
       "crop_factor": CLS_FACTOR, "cls_size": CLS_SIZE}
#: ``--lowres``: a crop is seen as if its die were this many px wide in the frame (the
#: table camera's 15-30 px dice), where it is larger.
LOWRES_DIE = (14.0, 28.0)
#: A motion smear (``--motion``) up to this many die sizes keeps the die's value...
MILD_SMEAR = (0.04, 0.12)
#: ...and one in this range makes a die "unreadable" (a "4" smeared reads "6").
STRONG_SMEAR = (0.2, 0.6)
STRONG_SHARE = 0.4  # of the smeared crops


def crop_geometry(item: Item, rng: random.Random) -> tuple[float, float, float]:
    """Where to crop: near the detector's proposal, or round the label's box with a
    jitter like the detector's (sizes 0.7-1.6x, centres off by 5-15 % of a die)."""
    _, cx, cy, size, _, det = item
    if det is not None and rng.random() < AUG["det"]:
        cx, cy, size = det
        size *= math.exp(rng.gauss(0, 0.06))
        return cx + rng.gauss(0, 0.025) * size, cy + rng.gauss(0, 0.025) * size, size
    if rng.random() < 0.8:
        size *= math.exp(min(0.45, max(-0.35, rng.gauss(0.02, AUG["size_sigma"]))))
        return (cx + rng.gauss(0, AUG["offset_sigma"]) * size,
                cy + rng.gauss(0, AUG["offset_sigma"]) * size, size)
    size *= math.exp(rng.uniform(-0.35, 0.4))
    return cx + rng.uniform(-0.15, 0.15) * size, cy + rng.uniform(-0.15, 0.15) * size, size


def at_lower_resolution(crop: np.ndarray, die_px: float, size: float,
                        die_to: float) -> np.ndarray:
    """``crop`` (of a die ``die_px`` wide in its frame, cropped at ``size``) as the
    reader would crop it from a frame where the die is only ``die_to`` px: its
    pixels averaged down to that resolution, then enlarged back bilinearly."""
    side = crop.shape[0]
    if die_to >= die_px:
        return crop
    small = round(AUG["crop_factor"] * size * die_to / die_px)
    if small >= side or small < 4:
        return crop
    low = cv2.resize(crop, (small, small), interpolation=cv2.INTER_AREA)
    return cv2.resize(low, (side, side), interpolation=cv2.INTER_LINEAR)


def crop_aug(item: Item, rng: random.Random) -> tuple[np.ndarray, int]:
    """One augmented training crop (3 x CLS_SIZE x CLS_SIZE, 0..1) and its class.

    With ``AUG["motion"]`` a crop is smeared in one direction (a die still moving,
    a hand-held shot): by ``MILD_SMEAR`` die sizes it keeps its class, by
    ``STRONG_SMEAR`` a die becomes "unreadable". With ``AUG["lowres"]`` it is seen as
    from a frame where the die is ``LOWRES_DIE`` px (:func:`at_lower_resolution`).
    With ``AUG["contrast"]`` a crop is
    shown as the reader's second look shows it (``vision.dice.contrast_view``), its
    class kept, without the colour changes (it has no colour)."""
    cx, cy, size = crop_geometry(item, rng)
    crop = face_crop(item[0], cx, cy, size, rng.uniform(0, 360), rng.random() < 0.5,
                     out_size=int(AUG["cls_size"]), factor=AUG["crop_factor"])
    label = item[4]
    if rng.random() < AUG["lowres"]:
        crop = at_lower_resolution(crop, item[3], size, rng.uniform(*LOWRES_DIE))
    if rng.random() < AUG["motion"]:
        strong = rng.random() < STRONG_SHARE
        smear = rng.uniform(*(STRONG_SMEAR if strong else MILD_SMEAR))
        die_in_crop = AUG["cls_size"] * item[3] / (AUG["crop_factor"] * size)
        crop = cv2.filter2D(crop, -1, synth.motion_kernel(smear * die_in_crop, rng.uniform(0, 180)),
                            borderType=cv2.BORDER_REPLICATE)
        if strong and label < UNREADABLE:
            label = UNREADABLE
    contrast = rng.random() < AUG["contrast"]
    if contrast:
        crop = contrast_view(crop)
    f = crop.astype(np.float32)
    if not contrast and rng.random() < AUG["hue"]:
        hsv = cv2.cvtColor(crop, cv2.COLOR_BGR2HSV)
        hsv[..., 0] = (hsv[..., 0].astype(np.int32) + rng.randint(0, 179)) % 180
        f = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR).astype(np.float32)
    if not contrast and rng.random() < AUG["shuffle"]:
        f = f[:, :, rng.sample(range(3), 3)]
    if not contrast and rng.random() < AUG["grey"]:
        f = np.repeat(f.mean(2, keepdims=True), 3, 2)
    if not contrast and rng.random() < AUG["invert"]:
        f = 255 - f  # light pips on dark dice and the reverse
    f = f * rng.uniform(0.6, 1.4) + rng.uniform(-40, 40)
    f = f * np.array([rng.uniform(0.85, 1.15) for _ in range(3)], np.float32)
    if rng.random() < 0.25:
        f = np.asarray(cv2.GaussianBlur(f, (0, 0), rng.uniform(0.3, 0.9)), np.float32)
    f = np.clip(f + np.random.normal(0, rng.uniform(0, 6), f.shape).astype(np.float32), 0, 255)
    if rng.random() < AUG["jpeg"]:
        _, enc = cv2.imencode(".jpg", f.astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, rng.randint(50, 95)])
        f = np.asarray(cv2.imdecode(enc, cv2.IMREAD_COLOR), np.float32)
    return f.transpose(2, 0, 1) / 255.0, label


def view_crops(img: np.ndarray, geo: tuple[float, float, float]) -> np.ndarray:
    """The reader's 8 views of a die as a float batch (8 x 3 x side x side, side AUG["cls_size"])."""
    crops = [face_crop(img, *geo, angle, flip, out_size=int(AUG["cls_size"]), factor=AUG["crop_factor"])
             for angle, flip in VIEWS]
    return np.stack(crops).astype(np.float32).transpose(0, 3, 1, 2) / 255.0


def probabilities(net: nn.Module, photos: list[Photo]) -> tuple[np.ndarray, list[tuple]]:
    """The net's probabilities (n x 8 views x 8 classes) for every labelled die of
    ``photos`` at the detector's proposal (the label's box where it made none), and
    for each die (set, image name, index, class, found by the detector)."""
    net.eval()
    probs, rows = [], []
    with torch.no_grad():
        for set_name, name, img, dice, _ in photos:
            for i, (cx, cy, c, size, det) in enumerate(dice):
                x = torch.from_numpy(view_crops(img, det if det is not None else (cx, cy, size)))
                probs.append(torch.softmax(net(x).flatten(1), 1).numpy())
                rows.append((set_name, name, i, c, det is not None))
    return np.array(probs), rows


def report(probs: np.ndarray, rows: list[tuple], views: int = 4, threshold: float = 0.8) -> str:
    """Per set: dice the detector found, read right / wrong at ``threshold`` with
    ``views`` views, right top pick, mean log-loss."""
    parts = []
    for set_name in sorted({r[0] for r in rows}):
        idx = [i for i, r in enumerate(rows) if r[0] == set_name and r[4]]
        if not idx:
            continue
        pv = value_probs(probs[idx, :views].mean(1))
        y = np.array([rows[i][3] for i in idx])
        right, wrong = read_counts(pv, y, threshold)
        nll = float(-np.log(np.maximum(1e-6, pv[np.arange(len(y)), y])).mean())
        parts.append(f"{set_name} {len(y)}: right {right} wrong {wrong} "
                     f"top {int((pv.argmax(1) == y).sum())} nll {nll:.4f}")
    return "; ".join(parts)


def init_classifier_from_onnx(net: ClsNet, path: Path) -> None:
    """:func:`train_dice.init_from_onnx`, also from a classifier of another crop size: its
    head (a convolution over the whole feature map) is resampled to this net's map,
    scaled so that the same features give the same outputs."""
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    head = [n for n in model.graph.node if n.op_type == "Conv"][-1]
    w = inits[head.input[1]]
    if tuple(w.shape) == tuple(net.head.weight.shape):
        init_from_onnx(net, path)
        return
    init_from_onnx(net, path, first=sum(1 for m in net.modules() if isinstance(m, nn.Conv2d)) - 1)
    k = net.head.weight.shape[-1]
    with torch.no_grad():
        resized = F.interpolate(torch.from_numpy(w), size=(k, k), mode="bilinear", align_corners=True)
        net.head.weight.copy_(resized * (w.shape[-1] / k) ** 2)
        net.head.bias.copy_(torch.from_numpy(inits[head.input[2]]))


class Export(nn.Module):
    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.net(x), 1)


def export(net: nn.Module, path: Path) -> None:
    net.eval()
    side = int(AUG["cls_size"])
    torch.onnx.export(Export(net), (torch.zeros(1, 3, side, side),), str(path),
                      input_names=["crops"], output_names=["probs"], opset_version=13,
                      dynamo=False, dynamic_axes={"crops": {0: "n"}, "probs": {0: "n"}})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=default_data_dir())
    ap.add_argument("--out", type=Path, default=REPO / "vision" / "models" / "dice_cls.onnx")
    ap.add_argument("--detector", type=Path, default=None,
                    help="the detector whose proposals the real crops follow (default: committed)")
    ap.add_argument("--minutes", type=float, default=40.0)
    ap.add_argument("--steps", type=int, default=0,
                    help="train this many steps instead of --minutes (runs on a shared machine compare)")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--synth", type=int, default=700)
    ap.add_argument("--marbled", type=float, default=0.0,
                    help="share of the synthetic dice with marbled bodies")
    ap.add_argument("--packed", type=int, default=0, metavar="N",
                    help="N synthetic frames of dice packed face to face whose dice join the "
                         "synthetic crops")
    ap.add_argument("--packed-offcentre", action="store_true",
                    help="also each packed die's crop moved towards its neighbour, as 'not a die'")
    ap.add_argument("--table-touching", type=float, default=0.0, metavar="R",
                    help="share of the table scenes whose first two dice lie face to face")
    ap.add_argument("--table-cocked", type=float, default=0.0, metavar="R",
                    help="share of the table scenes with two dice cocked, on an edge (unreadable)")
    ap.add_argument("--synth-unreadable", type=float, default=0.3,
                    help="share of the synthetic dice that are cocked, a logo or blurred")
    ap.add_argument("--synth-touching", type=float, default=0.3,
                    help="share of the synthetic scenes whose dice touch")
    ap.add_argument("--wide-colours", type=float, default=0.0, metavar="R",
                    help="share of synthetic dice in any body and pip colours of "
                         "vision.dice.palette (0: the committed recipe)")
    ap.add_argument("--tight-unreadable", action="store_true",
                    help="add each unreadable synthetic die at a tight crop too (see synth_items)")
    ap.add_argument("--cocked-tight", action="store_true",
                    help="each face of a cocked die also cropped at 0.4-0.85 of the die's size, "
                         "'unreadable' (what a detector taught packed dice proposes)")
    ap.add_argument("--pip-twins", action="store_true",
                    help="add each real die's twin with its centre pip taken away or added")
    ap.add_argument("--restyle", type=int, default=0, metavar="K",
                    help="add K restyled copies of each real die (new body and pip colours)")
    ap.add_argument("--pbr", type=Path, action="append", default=[], metavar="DIR",
                    help="scenes drawn by tools/render_dice_pbr.py (repeatable)")
    ap.add_argument("--pbr-weight", type=float, default=0.15,
                    help="share of each batch from the --pbr scenes (taken from the real photos' share)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    split = ap.add_mutually_exclusive_group()
    split.add_argument("--val", action="store_true", help="keep the val part of dev out")
    split.add_argument("--fold", type=str, default=None, metavar="K/N",
                       help="keep fold K of N of dev out (see --oof)")
    ap.add_argument("--drop-fold", type=int, action="append", default=[], metavar="J",
                    help="with --fold K/N, train without fold J too (repeatable): the same "
                    "fold K read by a model that learnt a smaller share of dev (a learning curve)")
    ap.add_argument("--oof", type=Path, default=None,
                    help="save the held-back part's probabilities (8 views) to this .npz")
    ap.add_argument("--init", type=Path, default=None, help="warm start from a .pt")
    ap.add_argument("--init-onnx", type=Path, default=None,
                    help="warm start from an exported .onnx (batch norms then stay frozen)")
    ap.add_argument("--hard", type=float, default=0.0,
                    help="share of the real crops drawn by their running loss (hard ones more often)")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--wd", type=float, default=5e-4)
    ap.add_argument("--smooth", type=float, default=0.02, help="label smoothing")
    ap.add_argument("--ema", type=float, default=0.999, help="weight average decay")
    ap.add_argument("--arch", choices=["small", "medium", "wide"], default="small",
                    help="small is the committed classifier's")
    ap.add_argument("--real-weight", type=float, default=0.75,
                    help="share of each batch taken from the real photographs")
    ap.add_argument("--table", type=int, default=300,
                    help="table renderer scenes (vision.synth) whose dice and board join the synthetic crops")
    ap.add_argument("--table-weight", type=float, default=0.1,
                    help="share of each batch taken from the table scenes' crops (with --table)")
    ap.add_argument("--zoom", type=int, default=1, help="zoomed-out 'not a die' crops per photo")
    for key in ("det", "hue", "shuffle", "grey", "invert", "jpeg", "motion", "contrast",
                "lowres"):
        ap.add_argument(f"--{key}", type=float, default=AUG[key], help=f"share of crops: {key}")
    ap.add_argument("--eval-every", type=int, default=2000)
    ap.add_argument("--crop-factor", type=float, default=CLS_FACTOR,
                    help="crop side in die sizes (default vision.dice.reader.CLS_FACTOR); a model "
                    "trained so needs the same DiceReader.crop_factor")
    ap.add_argument("--cls-size", type=int, default=CLS_SIZE,
                    help="crop side in pixels, a multiple of 8 (default vision.dice.reader.CLS_SIZE); "
                    "a model trained so needs the same DiceReader(cls_size=...)")
    add_label_fix_args(ap, learn=True)
    args = ap.parse_args()
    if args.cls_size < 16 or args.cls_size % 8:
        ap.error("--cls-size must be a multiple of 8, at least 16")
    for key in ("det", "hue", "shuffle", "grey", "invert", "jpeg", "motion", "contrast", "lowres",
                "crop_factor", "cls_size"):
        AUG[key] = getattr(args, key)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    rng = random.Random(args.seed)
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    t0 = time.time()
    fold = tuple(int(v) for v in args.fold.split("/")) if args.fold else None
    if args.drop_fold and (fold is None or any(j == fold[0] or not 0 <= j < fold[1]
                                               for j in args.drop_fold)):
        ap.error("--drop-fold J needs --fold K/N, with J another fold of the N")
    held_out = args.val or fold is not None
    fixes = fixes_from_args(args)
    photos = load_photos(args.data, "train" if held_out else "all", fold, args.detector,  # type: ignore[arg-type]
                         fixes, frozenset(args.drop_fold))
    if not photos:
        ap.error(f"no labelled dev photographs under {args.data} (see --data, PELOTON_DICE_DATA)")
    val = load_photos(args.data, "val", fold, args.detector, fixes) if held_out else []  # type: ignore[arg-type]
    real = photo_items(photos, 3, args.zoom, rng)
    if args.pip_twins:
        twins = twin_items(photos, rng)
        print(f"pip twins: {len(twins)}", flush=True)
        real += twins
    if args.restyle:
        restyled = restyled_items(photos, args.restyle, rng)
        print(f"restyled dice: {len(restyled)}", flush=True)
        real += restyled
    syn = synth_items(args.synth, args.seed + 7, 150.0, args.synth_unreadable, rng, args.marbled,
                      args.synth_touching, args.tight_unreadable, args.wide_colours,
                      args.cocked_tight)
    if args.packed:
        syn += packed_items(args.packed, args.seed + 13, args.packed_offcentre)
    table = (table_items(args.table, args.seed + 11, touching=args.table_touching,
                         cocked=args.table_cocked)
             if args.table else [])
    pbr = photo_items(rendered_photos(args.pbr), 2, 1, rng) if args.pbr else []
    if args.pbr:
        print(f"rendered crops: {len(pbr)}", flush=True)
    print(f"mined 'not a die' proposals: {sum(len(ph[4]) for ph in photos)}", flush=True)
    print(f"real crops {len(real)}, synthetic {len(syn)}, table {len(table)}, val photos {len(val)} "
          f"({time.time() - t0:.0f}s)", flush=True)
    net = ClsNet(args.arch, args.cls_size)
    if args.init:
        net.load_state_dict(torch.load(args.init))
    if args.init_onnx:
        init_classifier_from_onnx(net, args.init_onnx)
    ema = copy.deepcopy(net)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=args.wd)
    hardness = np.ones(len(real))  # see --hard
    np_rng = np.random.default_rng(args.seed)
    budget = args.minutes * 60
    t0 = time.time()
    step = 0
    losses: list[float] = []
    accs: list[float] = []
    while (step < args.steps) if args.steps else (time.time() - t0 < budget):
        frac = step / args.steps if args.steps else (time.time() - t0) / budget
        lr = args.lr * min(1.0, step / 300) * 0.5 * (1 + math.cos(math.pi * frac))
        for g in opt.param_groups:
            g["lr"] = max(lr, 1e-5)
        nsyn = round(args.batch * (1.0 - args.real_weight))
        ntab = min(nsyn, round(args.batch * args.table_weight)) if table else 0
        npbr = round(args.batch * args.pbr_weight) if pbr else 0
        nreal = args.batch - nsyn - npbr
        nhard = round(nreal * args.hard)
        ridx = [rng.randrange(len(real)) for _ in range(nreal - nhard)]
        if nhard:
            ridx += [int(i) for i in np_rng.choice(len(real), nhard, p=hardness / hardness.sum())]
        picks = [real[i] for i in ridx] + \
            [rng.choice(syn) for _ in range(nsyn - ntab)] + \
            [rng.choice(table) for _ in range(ntab)] + [rng.choice(pbr) for _ in range(npbr)]
        crops, labels = zip(*(crop_aug(it, rng) for it in picks), strict=True)
        x = torch.from_numpy(np.stack(crops).astype(np.float32))
        y = torch.tensor(labels)
        train_mode(net, args.init_onnx is not None)
        out = net(x).flatten(1)
        each = F.cross_entropy(out, y, label_smoothing=args.smooth, reduction="none")
        loss = each.mean()
        if nhard:  # running loss of each real crop: the hard ones are drawn more often
            got = each.detach().numpy()[:nreal]
            for i, v in zip(ridx, got, strict=True):
                hardness[i] = 0.7 * hardness[i] + 0.3 * (min(float(v), 3.0) + 0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():  # the exported model is the running average of the weights
            decay = min(args.ema, (1 + step) / (10 + step))
            for pe, pn in zip(ema.parameters(), net.parameters(), strict=True):
                pe.mul_(decay).add_(pn.detach(), alpha=1 - decay)
            for be, bn in zip(ema.buffers(), net.buffers(), strict=True):
                be.copy_(bn)
        losses.append(float(loss.detach()))
        accs.append(float((out.argmax(1) == y).float().mean()))
        step += 1
        if step % 200 == 0:
            print(f"step {step} t={time.time() - t0:.0f}s lr={lr:.5f} loss={np.mean(losses):.4f} "
                  f"acc={np.mean(accs):.3f}", flush=True)
            losses.clear()
            accs.clear()
        if val and step % args.eval_every == 0:
            print("  val:", report(*probabilities(ema, val)), flush=True)
    export(ema, args.out)
    torch.save(ema.state_dict(), args.out.with_suffix(".pt"))
    print(f"exported {args.out} after {step} steps", flush=True)
    if val:
        probs, rows = probabilities(ema, val)
        print("final val:", report(probs, rows), flush=True)
        if args.oof:
            np.savez(args.oof, probs=probs, sets=np.array([r[0] for r in rows]),
                     names=np.array([r[1] for r in rows]), idx=np.array([r[2] for r in rows]),
                     labels=np.array([r[3] for r in rows]), found=np.array([r[4] for r in rows]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
