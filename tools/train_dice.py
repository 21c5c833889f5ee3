"""Train the dice reader's network and export it to ``vision/models/dice.onnx``.

Needs torch (and onnx for the export) in a SEPARATE environment, never in the
project's venv; it is not a runtime dependency::

    python3 -m venv /tmp/trainvenv
    /tmp/trainvenv/bin/pip install torch onnx opencv-python-headless numpy
    cd <repo> && nice /tmp/trainvenv/bin/python tools/train_dice.py --minutes 25

Data: the *dev* split of ``../shared/data/dice`` (``$PELOTON_DICE_DATA``; the
held-out split is never read here) plus synthetic scenes from
``vision.dice.synth`` (which also teach the "unreadable" class: cocked,
blurred and logo dice). The network is a small CenterNet-style fully
convolutional net: at stride 8 it predicts a die-centre heatmap, a sub-cell
offset and 7 class logits (values 1..6 and "unreadable"). See docs/dice.md.
"""

from __future__ import annotations

import argparse
import copy
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

from space_to_depth_onnx import write_twin  # noqa: E402  (tools/, beside this script)

from vision.dice import synth  # noqa: E402
from vision.dice.data import (  # noqa: E402
    default_data_dir,
    is_val,
    list_images,
    list_sets,
)
from vision.dice.label_fixes import Fixes, add_label_fix_args, fixes_from_args, training_labels  # noqa: E402
from vision.dice.restyle import restyled_twin  # noqa: E402

STRIDE = 8
NCLS = 7  # values 1..6 -> 0..5, unreadable -> 6
CROP = 320


def conv_bn(cin: int, cout: int, k: int = 3, s: int = 1, d: int = 1, groups: int = 1) -> nn.Module:
    pad = d * (k // 2)
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, pad, dilation=d, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def dws(cin: int, cout: int, s: int = 1, d: int = 1) -> nn.Module:
    """Depthwise-separable 3x3 block."""
    return nn.Sequential(conv_bn(cin, cin, 3, s, d, groups=cin), conv_bn(cin, cout, 1))


BLOCK = 4  # the block-stem detectors' input: 4x4-pixel blocks stacked as 48 channels
#: The architectures whose stem reads the pixel blocks (:class:`PixelBlocks`), and
#: the number of blocks after the stem's 1x1 convolution in each.
FAST_STEM_BLOCKS = {"fast": 1, "fast2": 2}


class PixelBlocks(nn.Module):
    """A 3-channel image as its ``BLOCK`` x ``BLOCK`` pixel blocks stacked as channels,
    channel ``(BLOCK * dy + dx) * 3 + c``: the exported "fast" and "fast2" files' input, which the
    reader fills in numpy (``vision.dice.space_to_depth.blocks_blob``), having read
    from the file that it takes blocks (``input_block``)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        b = BLOCK
        x = x.reshape(n, c, h // b, b, w // b, b).permute(0, 3, 5, 1, 2, 4)
        return x.reshape(n, b * b * c, h // b, w // b)


class DiceNet(nn.Module):
    """The detector. ``arch`` "base": the stride-16 features upsampled and concatenated
    with the stride-8 ones, fused by a 1x1 convolution to 96 channels and two blocks;
    "lite" (about 0.6x the time): the stride-16 features brought to 64 channels at
    stride 16, upsampled and added to the stride-8 ones, then two 64-channel blocks;
    "fast": "base" whose stride-4 stem (a 3x3 stride-2 convolution over the full frame
    and two blocks) is a 1x1 convolution over the frame's 4x4-pixel blocks
    (:class:`PixelBlocks`) and one block (its main pass ~0.8x the time; the exported
    file reads the blocks, ``blocks_input``); "fast2": "fast" with two blocks after
    the 1x1 convolution (~0.87x). ``s8``, ``s16`` are the same in all."""

    def __init__(self, w: int = 1, arch: str = "base") -> None:
        super().__init__()
        c1, c2, c3, c4 = 16 * w, 32 * w, 64 * w, 128 * w
        self.arch = arch
        self.c8 = c3  # channels of the stride-8 features
        if arch in FAST_STEM_BLOCKS:
            self.s4 = nn.Sequential(PixelBlocks(), conv_bn(3 * BLOCK * BLOCK, c2, 1),
                                    *(dws(c2, c2) for _ in range(FAST_STEM_BLOCKS[arch])))
        else:
            self.s4 = nn.Sequential(conv_bn(3, c1, 3, 2), dws(c1, c2, 2), dws(c2, c2))
        #: Set for export of "fast" and "fast2": the input is already the pixel blocks.
        self.blocks_input = False
        self.s8 = nn.Sequential(dws(c2, c3, 2), dws(c3, c3), dws(c3, c3))
        self.s16 = nn.Sequential(dws(c3, c4, 2), dws(c4, c4, d=2), dws(c4, c4, d=2), dws(c4, c4))
        if arch == "base" or arch in FAST_STEM_BLOCKS:
            self.fuse = nn.Sequential(conv_bn(c3 + c4, 96, 1), dws(96, 96), dws(96, 96))
            width = 96
        elif arch == "lite":
            self.lateral = conv_bn(c4, c3, 1)
            self.fuse = nn.Sequential(dws(c3, c3), dws(c3, c3))
            width = c3
        else:
            raise ValueError(f"unknown detector arch {arch!r}")
        self.head = nn.Conv2d(width, 1 + 2 + 1 + NCLS, 1)  # heat, offset, log size, classes
        self.fuse_split: nn.ModuleList | None = None  # set by split_fuse for export
        with torch.no_grad():
            self.head.bias[0] = -4.0

    def backbone(self) -> list[nn.Module]:
        """The stages shared by "base" and "lite" ("fast" and "fast2" have their own ``s4``)."""
        return [self.s4, self.s8, self.s16]

    def stem(self, x: torch.Tensor) -> torch.Tensor:
        """The stride-4 features (``s4``), from the image or, with ``blocks_input``,
        from its pixel blocks."""
        if self.blocks_input:
            return self.s4[1:](x)
        return self.s4(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        f8 = self.s8(self.stem(x))
        f16 = self.s16(f8)
        if self.arch == "lite":
            up = F.interpolate(self.lateral(f16), scale_factor=2.0, mode="nearest")
            return self.head(self.fuse(f8 + up))
        if self.fuse_split is not None:  # the exported form, see split_fuse
            lo, hi = self.fuse_split
            up = F.interpolate(hi(f16), scale_factor=2.0, mode="nearest")
            act = self.fuse[0][2]  # the split convolution's own activation
            return self.head(self.fuse[1:](act(lo(f8) + up)))
        up = F.interpolate(f16, scale_factor=2.0, mode="nearest")
        return self.head(self.fuse(torch.cat([f8, up], 1)))

    def split_fuse(self) -> None:
        """Split the "base" fuse's first 1x1 convolution (over the stride-8 features
        and the upsampled stride-16 ones) into one over each, its batch norm folded in:
        ``W [f8, up(f16)] = W8 f8 + up(W16 f16)`` (a 1x1 convolution commutes with
        nearest upsampling), so the 128-channel half runs at stride 16, on a quarter of
        the cells, and no concatenation is needed. The same outputs up to float
        rounding for about 11 % fewer multiply-adds at any input size (docs/dice.md).
        For export (in eval mode): the split net is not trained."""
        if self.arch == "lite" or self.fuse_split is not None:
            return
        conv, bn = self.fuse[0][0], self.fuse[0][1]
        scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
        w = conv.weight * scale[:, None, None, None]
        c8 = self.c8  # the first c8 input channels are f8's (forward concatenates f8 first)
        lo = nn.Conv2d(c8, w.shape[0], 1, bias=True)
        hi = nn.Conv2d(w.shape[1] - c8, w.shape[0], 1, bias=False)
        with torch.no_grad():
            lo.weight.copy_(w[:, :c8])
            lo.bias.copy_(bn.bias - bn.running_mean * scale)
            hi.weight.copy_(w[:, c8:])
        self.fuse_split = nn.ModuleList([lo, hi])


BASE_STEM_CONVS = 5  # convolutions of the "base" stem (s4) in an exported file


def init_from_onnx(net: nn.Module, path: Path, first: int | None = None,
                   past_stem: bool = False) -> None:
    """Warm start from an exported ONNX model (the committed ones), in place.

    The export folds each batch norm into its convolution, so every convolution gets
    the folded weights and its batch norm becomes the identity plus the folded bias;
    train such a net with :func:`train_mode` (batch norms frozen). The convolutions of
    the ONNX graph are taken in the order of ``net``'s modules (the forward order of
    both nets here; an exported split fuse, :meth:`DiceNet.split_fuse`, is joined
    again). With ``first``, only the first so many convolutions are loaded
    (a backbone shared with another architecture). With ``past_stem``, everything
    after the stride-4 stem is loaded from a "base" file into a net whose stem differs
    ("fast", "fast2"); the net's own stem is left as it is.
    """
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(path))
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    convs: list[tuple[np.ndarray, np.ndarray | None]] = []
    split: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    for n in model.graph.node:
        if n.op_type != "Conv":
            continue
        w, b = inits[n.input[1]], inits[n.input[2]] if len(n.input) > 2 else None
        part = next((k for k in ("fuse_split.0", "fuse_split.1") if k in n.name), None)
        if part is None:
            convs.append((w, b))
            continue
        split[part] = (w, b)  # an exported split fuse (DiceNet.split_fuse): joined again
        if len(split) == 2:
            (w8, b8), (w16, _) = split["fuse_split.0"], split["fuse_split.1"]
            convs.append((np.concatenate([w8, w16], 1), b8))
    mods = list(net.modules())
    layers = [(m, mods[k + 1] if k + 1 < len(mods) and isinstance(mods[k + 1], nn.BatchNorm2d) else None)
              for k, m in enumerate(mods) if isinstance(m, nn.Conv2d)]
    if past_stem:
        stem = {id(m) for m in net.s4.modules()}
        convs = convs[BASE_STEM_CONVS:]
        layers = [(c, b) for c, b in layers if id(c) not in stem]
    if first is not None:
        convs, layers = convs[:first], layers[:first]
    elif len(layers) != len(convs):
        raise SystemExit(f"{path}: {len(convs)} convolutions, the net has {len(layers)}")
    with torch.no_grad():
        for (conv, bn), (w, b) in zip(layers, convs, strict=True):
            if tuple(conv.weight.shape) != w.shape:
                raise SystemExit(f"{path}: a convolution of shape {w.shape}, the net's is "
                                 f"{tuple(conv.weight.shape)}")
            conv.weight.copy_(torch.from_numpy(w))
            bias = torch.from_numpy(b) if b is not None else torch.zeros(w.shape[0])
            if bn is None:
                if conv.bias is not None:
                    conv.bias.copy_(bias)
                continue
            bn.weight.fill_(1.0)
            bn.bias.copy_(bias)
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)


def train_mode(net: nn.Module, frozen_bn: bool) -> None:
    """``net.train()``, with the batch norms left in eval mode when ``frozen_bn``."""
    net.train()
    if frozen_bn:
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.eval()


# --- data ----------------------------------------------------------------------


Sample = tuple[np.ndarray, list[tuple[float, float, int, float]]]  # img, (cx, cy, cls, size)


def load_real(data_dir: Path, keep_val: bool,
              weights: dict[str, int] | None = None, fixes: Fixes | None = None) -> list[Sample]:
    """The dev photos (without the val part when ``keep_val``) with their labels, the
    ``fixes`` applied (``vision.dice.label_fixes.training_labels``: a photo with an
    ignored die is left out); a set named in ``weights`` is in the list that many
    times (drawn that much more often)."""
    out: list[Sample] = []
    for set_dir in list_sets(data_dir):
        for p in list_images(set_dir, "dev"):
            if keep_val and is_val(set_dir.name, p.name):
                continue
            img = cv2.imread(str(p))
            if img is None:
                continue
            h, w = img.shape[:2]
            labels = training_labels(set_dir.name, p, w, h, fixes)
            if labels is None:
                continue
            dice = []
            for d in labels:
                x0, y0, x1, y1 = d.box
                dice.append(((x0 + x1) / 2, (y0 + y1) / 2, d.value - 1,
                             max(x1 - x0, y1 - y0)))
            out.extend([(img, dice)] * (weights or {}).get(set_dir.name, 1))
    return out


def restyled_photos(real: list[Sample], copies: int, rng: random.Random) -> list[Sample]:
    """Each photo ``copies`` times with every die whose face and pips are found cleanly
    restyled in other colours (``vision.dice.restyle``); photos with no such die are
    left out."""
    out: list[Sample] = []
    for img, dice in real:
        for _ in range(copies):
            copy, changed = img.copy(), False
            for cx, cy, c, size in dice:
                twin = restyled_twin(copy, cx, cy, size, c + 1, rng) if c < 6 else None
                if twin is not None:
                    ox, oy = twin.origin
                    th, tw = twin.image.shape[:2]
                    copy[oy:oy + th, ox:ox + tw] = twin.image
                    changed = True
            if changed:
                out.append((copy, dice))
    return out


def _sample(img: np.ndarray, dice: list[synth.SynthDie]) -> Sample:
    """A synthetic frame and its dice as a training sample (class 6: unreadable)."""
    return img, [(d.cx, d.cy, (d.value - 1) if d.value else 6, d.size) for d in dice]


def make_synth(n: int, seed: int, max_size: float = 110.0,
               unreadable_rate: float = 0.25, touching_rate: float = 0.3,
               marbled_rate: float = 0.0, wide_colours_rate: float = 0.0) -> list[Sample]:
    rng = np.random.default_rng(seed)
    out: list[Sample] = []
    for _ in range(n):
        img, dice = synth.scene(rng, 400, 400, size_range=(14.0, max_size),
                                unreadable_rate=unreadable_rate, touching_rate=touching_rate,
                                marbled_rate=marbled_rate, wide_colours_rate=wide_colours_rate)
        out.append(_sample(img, dice))
    return out


def make_packed(n: int, seed: int, cocked: float = 0.0) -> list[Sample]:
    """Tight packs of dice of one set lying face to face (``vision.dice.synth.packed_scene``;
    ``cocked``: the chance that the lone die beside a pack is cocked)."""
    rng = np.random.default_rng(seed)
    out: list[Sample] = []
    for _ in range(n):
        img, dice = synth.packed_scene(rng, cocked=cocked)
        out.append(_sample(img, dice))
    return out


def make_table(n: int, seed: int, die_target: float = 40.0) -> list[Sample]:
    """Dice on the synthetic table (``vision.synth``, the demo and bench renderer), as the
    table camera reads them: the board's dice area cut out of a 2028x1520 frame and
    scaled so a die is ``die_target`` px (``vision.table_dice``), 2-6 dice in it."""
    from vision.render import render_board
    from vision.synth import demo_board, random_riders, table_scene

    board = demo_board()
    assert board.dice_area_mm is not None
    ppm = 2.5
    board_img = render_board(board, ppm)
    rng = np.random.default_rng(seed)
    out: list[Sample] = []
    ax, ay, aw, ah = board.dice_area_mm
    for _ in range(n):
        sc = table_scene(board, random_riders(board, rng, 16), rng=rng,
                         n_dice=int(rng.integers(2, 7)), board_image=board_img,
                         board_px_per_mm=ppm)
        cam = sc.camera
        m = 16.0
        corners = cam.project(np.array([[ax - m, ay - m, 0], [ax + aw + m, ay - m, 0],
                                        [ax + aw + m, ay + ah + m, 0], [ax - m, ay + ah + m, 0]]))
        x0, y0 = np.floor(corners.min(0)).astype(int)
        x1, y1 = np.ceil(corners.max(0)).astype(int)
        x0, y0 = max(0, x0), max(0, y0)
        x1, y1 = min(sc.image.shape[1], x1), min(sc.image.shape[0], y1)
        dice = []
        for d in sc.dice:
            dice.append((d.center[0] - x0, d.center[1] - y0, d.value - 1, sc.die_side_px(d)))
        if not dice or x1 - x0 < 64 or y1 - y0 < 64:
            continue
        scale = die_target / float(np.mean([d[3] for d in dice]))
        img = cv2.resize(sc.image[y0:y1, x0:x1], None, fx=scale, fy=scale,
                         interpolation=cv2.INTER_LINEAR if scale > 1 else cv2.INTER_AREA)
        out.append((img, [(x * scale, y * scale, c, size * scale) for x, y, c, size in dice]))
    return out


def augment(sample: Sample, rng: random.Random) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                         np.ndarray, np.ndarray]:
    img, dice = sample
    h, w = img.shape[:2]
    scale = math.exp(rng.uniform(math.log(0.6), math.log(1.6)))
    ang = rng.uniform(-180, 180) if rng.random() < 0.7 else rng.choice([0, 90, 180, 270])
    # pick a centre, biased towards a die
    if dice and rng.random() < 0.8:
        d = rng.choice(dice)
        cx, cy = d[0] + rng.uniform(-120, 120) / scale, d[1] + rng.uniform(-120, 120) / scale
    else:
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    m = cv2.getRotationMatrix2D((cx, cy), ang, scale)
    m[0, 2] += CROP / 2 - cx
    m[1, 2] += CROP / 2 - cy
    flip = rng.random() < 0.5
    if flip:
        m[0] = -m[0]
        m[0, 2] += CROP - 1
    border = cv2.BORDER_REFLECT101 if rng.random() < 0.7 else cv2.BORDER_CONSTANT
    out = cv2.warpAffine(img, m, (CROP, CROP), flags=cv2.INTER_LINEAR, borderMode=border,
                         borderValue=tuple(int(v) for v in np.random.randint(0, 255, 3)))
    # photometric
    f = out.astype(np.float32)
    if rng.random() < 0.5:  # hue rotation (dice and table colours)
        hsv = cv2.cvtColor(out, cv2.COLOR_BGR2HSV)
        hsv[..., 0] = (hsv[..., 0].astype(np.int32) + rng.randint(0, 179)) % 180
        f = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR).astype(np.float32)
    if rng.random() < 0.2:
        f = cv2.cvtColor(cv2.cvtColor(f.astype(np.uint8), cv2.COLOR_BGR2GRAY),
                         cv2.COLOR_GRAY2BGR).astype(np.float32)
    f = f * rng.uniform(0.6, 1.4) + rng.uniform(-40, 40)
    f = f * np.array([rng.uniform(0.85, 1.15) for _ in range(3)], np.float32)
    if rng.random() < 0.3:
        f = np.asarray(cv2.GaussianBlur(f, (0, 0), rng.uniform(0.3, 1.2)), np.float32)
    f = f + np.random.normal(0, rng.uniform(0, 6), f.shape).astype(np.float32)
    f = np.clip(f, 0, 255)
    if rng.random() < 0.3:
        q = rng.randint(40, 95)
        ok, enc = cv2.imencode(".jpg", f.astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, q])
        f = np.asarray(cv2.imdecode(enc, cv2.IMREAD_COLOR), np.float32)
    # targets
    g = CROP // STRIDE
    heat = np.zeros((g, g), np.float32)
    cls = np.full((g, g), -1, np.int64)
    off = np.zeros((3, g, g), np.float32)
    offmask = np.zeros((g, g), np.float32)
    yy, xx = np.mgrid[0:g, 0:g].astype(np.float32)
    for dx, dy, c, size in dice:
        px = m[0, 0] * dx + m[0, 1] * dy + m[0, 2]
        py = m[1, 0] * dx + m[1, 1] * dy + m[1, 2]
        if not (0 <= px < CROP and 0 <= py < CROP):
            continue
        s = size * scale / STRIDE
        gx, gy = px / STRIDE - 0.5, py / STRIDE - 0.5
        sigma = max(0.6, 0.18 * s)
        heat = np.maximum(heat, np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * sigma**2)))
        ix, iy = int(round(gx)), int(round(gy))
        ix, iy = min(max(ix, 0), g - 1), min(max(iy, 0), g - 1)
        heat[iy, ix] = 1.0
        r = 1 if s > 2.5 else 0
        for ddy in range(-r, r + 1):
            for ddx in range(-r, r + 1):
                jx, jy = ix + ddx, iy + ddy
                if 0 <= jx < g and 0 <= jy < g and (ddx == 0 and ddy == 0 or cls[jy, jx] < 0):
                    cls[jy, jx] = c
        off[0, iy, ix] = gx - ix
        off[1, iy, ix] = gy - iy
        off[2, iy, ix] = math.log(max(s, 0.5))
        offmask[iy, ix] = 1.0
    x = (f / 255.0).transpose(2, 0, 1).astype(np.float32)
    return x, heat, cls, off, offmask


def batch(samples: list[Sample], n: int, rng: random.Random) -> list[torch.Tensor]:
    parts = [augment(rng.choice(samples), rng) for _ in range(n)]
    return [torch.from_numpy(np.stack([p[i] for p in parts])) for i in range(5)]


def mixed_batch(real: list[Sample], syn: list[Sample], args: argparse.Namespace,
                rng: random.Random) -> list[torch.Tensor]:
    """A training batch of ``args.batch`` samples, ``args.synth_frac`` of them synthetic:
    images, heatmaps, classes, offsets, offset mask (:func:`augment`)."""
    nsyn = int(round(args.batch * args.synth_frac))
    bs = batch(real, args.batch - nsyn, rng)
    if nsyn:
        bsyn = batch(syn, nsyn, rng)
        bs = [torch.cat([a, b]) for a, b in zip(bs, bsyn, strict=True)]
    return bs


def loss_fn(out: torch.Tensor, heat: torch.Tensor, cls: torch.Tensor, off: torch.Tensor,
            offmask: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
    p = torch.sigmoid(out[:, 0]).clamp(1e-4, 1 - 1e-4)
    pos = (heat >= 1.0).float()
    npos = pos.sum().clamp(min=1.0)
    lpos = -torch.log(p) * (1 - p) ** 2 * pos
    lneg = -torch.log(1 - p) * p**2 * (1 - heat) ** 4 * (1 - pos)
    lh = (lpos.sum() + lneg.sum()) / npos
    lo = (F.l1_loss(out[:, 1:4], off, reduction="none").sum(1) * offmask).sum() / npos
    logits = out[:, 4:].permute(0, 2, 3, 1).reshape(-1, NCLS)
    lc = F.cross_entropy(logits, cls.reshape(-1), ignore_index=-1)
    if torch.isnan(lc):
        lc = torch.zeros((), dtype=out.dtype)
    total = lh + lo + lc
    return total, {"heat": float(lh), "off": float(lo), "cls": float(lc)}


def distill_fn(out: torch.Tensor, teacher: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
    """How far the student's outputs are from the teacher's (both raw): the heatmap
    (cross-entropy with the teacher's probabilities as soft targets), and where the
    teacher sees a die (heat >= 0.3, weighted by it) the offsets and size (L1) and the
    outcome probabilities (KL divergence)."""
    t_heat = torch.sigmoid(teacher[:, 0])
    lh = F.binary_cross_entropy_with_logits(out[:, 0], t_heat, reduction="sum")
    w = t_heat * (t_heat >= 0.3).float()
    n = w.sum().clamp(min=1.0)
    lh = lh / n
    lo = (F.l1_loss(out[:, 1:4], teacher[:, 1:4], reduction="none").sum(1) * w).sum() / n
    kl = F.kl_div(F.log_softmax(out[:, 4:], 1), F.log_softmax(teacher[:, 4:], 1),
                  reduction="none", log_target=True).sum(1)
    lk = (kl * w).sum() / n
    return lh + lo + lk, {"kd_heat": float(lh), "kd_off": float(lo), "kd_cls": float(lk)}


class Export(nn.Module):
    """Inference wrapper: sigmoid on the heatmap, softmax on the class logits."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        o = self.net(x)
        return torch.cat([torch.sigmoid(o[:, :1]), o[:, 1:4], torch.softmax(o[:, 4:], 1)], 1)


def export(net: DiceNet, path: Path) -> None:
    """Write ``net`` (a copy in eval mode, its fuse split: :meth:`DiceNet.split_fuse`)
    as ONNX with the sigmoid and softmax of :class:`Export`, and beside it its
    space-to-depth twin (``tools/space_to_depth_onnx.py``), which the reader runs
    on OpenCV 5."""
    net = copy.deepcopy(net).eval()
    net.split_fuse()
    dummy = torch.zeros(1, 3, 480, 640)
    if net.arch in FAST_STEM_BLOCKS:  # the file reads the pixel blocks; no twin is needed
        net.blocks_input = True
        dummy = torch.zeros(1, 3 * BLOCK * BLOCK, 480 // BLOCK, 640 // BLOCK)
    torch.onnx.export(Export(net), (dummy,), str(path), input_names=["image"],
                      output_names=["out"], opset_version=13, dynamo=False,
                      dynamic_axes={"image": {2: "h", 3: "w"}, "out": {2: "gh", 3: "gw"}})
    if net.arch not in FAST_STEM_BLOCKS:
        write_twin(path)


def train_stem(net: DiceNet, teacher: DiceNet, real: list[Sample], syn: list[Sample],
               args: argparse.Namespace, rng: random.Random) -> None:
    """Train only ``net``'s stem (``s4``) for ``args.stem_minutes`` to give what the
    teacher's stem gives (mean squared error on the stride-4 features), on the same
    mix of photos and synthetic scenes as the main training; the rest of ``net`` is
    left as it is (warm-started from the teacher by ``--past-stem-onnx``)."""
    params = list(net.s4.parameters())
    opt = torch.optim.AdamW(params, lr=args.lr, weight_decay=1e-4)
    budget = args.stem_minutes * 60
    t0 = time.time()
    step, losses = 0, []
    while (el := time.time() - t0) < budget:
        frac = el / budget
        for gparam in opt.param_groups:
            gparam["lr"] = max(args.lr * 0.5 * (1 + math.cos(math.pi * frac)), 3e-5)
        x = mixed_batch(real, syn, args, rng)[0]
        train_mode(net, frozen_bn=True)
        with torch.no_grad():
            target = teacher.s4(x)
        loss = F.mse_loss(net.s4(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
        step += 1
        if step % 50 == 0:
            print(f"stem step {step} t={el:.0f}s mse={sum(losses) / len(losses):.5f}",
                  flush=True)
            losses.clear()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=default_data_dir())
    ap.add_argument("--out", type=Path, default=REPO / "vision" / "models" / "dice.onnx")
    ap.add_argument("--minutes", type=float, default=25.0)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--synth", type=int, default=800, help="synthetic scenes in the pool")
    ap.add_argument("--synth-max-size", type=float, default=150.0,
                    help="largest synthetic die face, px")
    ap.add_argument("--synth-frac", type=float, default=0.35)
    ap.add_argument("--packed", type=int, default=0, metavar="N",
                    help="N synthetic frames of dice packed face to face (2-5 of one set) "
                         "in the pool")
    ap.add_argument("--packed-cocked", type=float, default=0.0, metavar="P",
                    help="chance that the lone die beside a pack is cocked (unreadable)")
    ap.add_argument("--table", type=int, default=0,
                    help="synthetic table frames (vision.synth) in the synthetic pool")
    ap.add_argument("--touching", type=float, default=0.3,
                    help="share of synthetic scenes with the dice packed side by side")
    ap.add_argument("--marbled", type=float, default=0.0,
                    help="share of the synthetic dice with marbled bodies")
    ap.add_argument("--wide-colours", type=float, default=0.0,
                    help="share of synthetic dice in any body and pip colours (vision.dice.palette)")
    ap.add_argument("--restyle", type=int, default=0, metavar="K",
                    help="add K copies of each photo with its dice restyled (vision.dice.restyle)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--val", action="store_true",
                    help="keep the val part of dev out of training (for tuning thresholds)")
    ap.add_argument("--init", type=Path, default=None, help="warm start from a .pt")
    ap.add_argument("--init-onnx", type=Path, default=None,
                    help="warm start from an exported .onnx (batch norms then stay frozen)")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--arch", choices=["base", "lite", *FAST_STEM_BLOCKS], default="base")
    ap.add_argument("--past-stem-onnx", type=Path, default=None,
                    help="\"fast\", \"fast2\": load all but the stem from this \"base\" file")
    ap.add_argument("--stem-minutes", type=float, default=0.0,
                    help="first train only the stem, to give the --teacher's stride-4 "
                         "features (MSE), for this long")
    ap.add_argument("--teacher", type=Path, default=None,
                    help="an exported base .onnx to distil from (its outputs are targets too)")
    ap.add_argument("--backbone-onnx", type=Path, default=None,
                    help="start the backbone (s4, s8, s16) from an exported .onnx")
    ap.add_argument("--freeze-backbone-minutes", type=float, default=0.0,
                    help="train only the layers after the backbone for this long first")
    ap.add_argument("--frozen-bn", action="store_true",
                    help="keep the batch norms frozen (a --init .pt trained with them frozen)")
    ap.add_argument("--set-weight", action="append", default=[], metavar="SET=N",
                    help="draw the photos of SET N times as often (repeatable)")
    ap.add_argument("--export-only", action="store_true", help="export an untrained net")
    add_label_fix_args(ap, learn=True)
    args = ap.parse_args()
    if args.stem_minutes > 0 and args.teacher is None:
        ap.error("--stem-minutes needs --teacher")
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    rng = random.Random(args.seed)
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    net = DiceNet(arch=args.arch)
    frozen_bn = (args.frozen_bn or args.init_onnx is not None or args.backbone_onnx is not None
                 or args.past_stem_onnx is not None)
    if args.past_stem_onnx:
        init_from_onnx(net, args.past_stem_onnx, past_stem=True)
    if args.backbone_onnx:
        n_backbone = sum(isinstance(m, nn.Conv2d) for b in net.backbone() for m in b.modules())
        init_from_onnx(net, args.backbone_onnx, first=n_backbone)
    teacher: DiceNet | None = None
    if args.teacher:
        teacher = DiceNet()
        init_from_onnx(teacher, args.teacher)
        teacher.eval()
        for p in teacher.parameters():
            p.requires_grad_(False)
    if args.init:
        old = torch.load(args.init)
        hw, hb = old["head.weight"], old["head.bias"]
        if hw.shape[0] == 1 + 2 + NCLS:  # from a net without the size head
            nw, nb = net.head.weight.detach().clone(), net.head.bias.detach().clone()
            nw[:3], nb[:3] = hw[:3], hb[:3]
            nw[4:], nb[4:] = hw[3:], hb[3:]
            nw[3].zero_()
            nb[3] = 1.5
            old["head.weight"], old["head.bias"] = nw, nb
        net.load_state_dict(old)
    if args.init_onnx:
        init_from_onnx(net, args.init_onnx)
    if args.export_only:
        export(net, args.out)
        return 0
    t0 = time.time()
    weights = {k: int(v) for k, v in (w.split("=") for w in args.set_weight)}
    fixes = fixes_from_args(args)
    real = load_real(args.data, args.val, weights, fixes)
    if args.restyle:
        restyled = restyled_photos(real, args.restyle, random.Random(args.seed + 5))
        print(f"restyled photos: {len(restyled)}", flush=True)
        real += restyled
    if not real:
        ap.error(f"no labelled dev photographs under {args.data} (see --data, PELOTON_DICE_DATA)")
    syn = make_synth(args.synth, args.seed + 1, args.synth_max_size, touching_rate=args.touching,
                     marbled_rate=args.marbled, wide_colours_rate=args.wide_colours)
    if args.table:
        syn += make_table(args.table, args.seed + 2)
    if args.packed:
        syn += make_packed(args.packed, args.seed + 3, args.packed_cocked)
    print(f"real {len(real)} images, synthetic {len(syn)}, loaded in {time.time() - t0:.0f}s",
          flush=True)
    if args.stem_minutes > 0:
        assert teacher is not None  # checked before loading
        train_stem(net, teacher, real, syn, args, rng)
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    budget = args.minutes * 60
    t0 = time.time()
    step = 0
    hist: list[dict[str, float]] = []
    while True:
        el = time.time() - t0
        if el > budget:
            break
        frac = el / budget
        lr = args.lr * (0.5 * (1 + math.cos(math.pi * frac))) if frac > 0.03 else \
            args.lr * frac / 0.03
        for gparam in opt.param_groups:
            gparam["lr"] = max(lr, 3e-5)
        bs = mixed_batch(real, syn, args, rng)
        train_mode(net, frozen_bn)
        freeze = el < args.freeze_backbone_minutes * 60
        for b in net.backbone():
            for p in b.parameters():
                p.requires_grad_(not freeze)
        out = net(bs[0])
        loss, parts = loss_fn(out, *bs[1:])
        if teacher is not None:
            with torch.no_grad():
                t_out = teacher(bs[0])
            kd, kd_parts = distill_fn(out, t_out)
            loss = loss + kd
            parts.update(kd_parts)
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist.append(parts)
        step += 1
        if step % 50 == 0:
            avg = {k: sum(h[k] for h in hist) / len(hist) for k in hist[0]}
            hist.clear()
            print(f"step {step} t={el:.0f}s lr={lr:.5f} " +
                  " ".join(f"{k}={v:.4f}" for k, v in avg.items()), flush=True)
        if step % 500 == 0:
            export(net, args.out)
            torch.save(net.state_dict(), args.out.with_suffix(".pt"))
    export(net, args.out)
    torch.save(net.state_dict(), args.out.with_suffix(".pt"))
    print(f"exported {args.out} after {step} steps", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
