"""Train the dice reader's face classifier and export it to ``vision/models/dice_cls.onnx``.

Second stage of the reader (see tools/train_dice.py for the detector and for
the environment): a tiny CNN that looks at a ``CLS_SIZE`` square crop around a
detected die (``vision.dice.reader.face_crop``) and says 1..6, "unreadable" or
"not a die". Trained on face crops of the dev photographs (minus the val part
with ``--val``) and of synthetic scenes, with rotations, flips, scale and
centre jitter and colour changes::

    nice /tmp/trainvenv/bin/python tools/train_dice_cls.py --val --minutes 12
"""

from __future__ import annotations

import argparse
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

from train_dice import conv_bn, dws, init_from_onnx, load_real, train_mode  # noqa: E402

from vision.dice import synth  # noqa: E402
from vision.dice.data import default_data_dir  # noqa: E402
from vision.dice.reader import CLS_SIZE, face_crop  # noqa: E402

NCLS = 8  # values 1..6 -> 0..5, unreadable -> 6, not a die -> 7


class ClsNet(nn.Module):
    """The classifier: ``small`` (~78k weights, ~2 ms for 8 crops on one core) or
    ``wide`` (~160k weights, a full 3x3 layer more at full size, ~3.5x the time)."""

    def __init__(self, arch: str = "small") -> None:
        super().__init__()
        if arch == "small":
            self.body = nn.Sequential(
                conv_bn(3, 24), dws(24, 48, 2), dws(48, 48), dws(48, 64, 2), dws(64, 64),
                dws(64, 128, 2), dws(128, 128))
            out = 128
        elif arch == "wide":
            self.body = nn.Sequential(
                conv_bn(3, 32), conv_bn(32, 32), dws(32, 64, 2), dws(64, 64), dws(64, 96, 2),
                dws(96, 96), dws(96, 96), dws(96, 192, 2), dws(192, 192))
            out = 192
        else:
            raise ValueError(f"unknown classifier arch {arch!r}")
        self.head = nn.Conv2d(out, NCLS, CLS_SIZE // 8)  # = flatten + fully connected

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


Item = tuple[np.ndarray, float, float, float, int]  # image, cx, cy, size, class


def items_from(samples: list, background_per_image: int, rng: random.Random) -> list[Item]:
    items: list[Item] = []
    for img, dice in samples:
        h, w = img.shape[:2]
        sizes = [d[3] for d in dice] or [40.0]
        for cx, cy, c, size in dice:
            items.append((img, cx, cy, size, c))
        for _ in range(background_per_image):
            for _try in range(20):
                x, y = rng.uniform(0, w), rng.uniform(0, h)
                s = rng.choice(sizes) * rng.uniform(0.7, 1.4)
                if all(math.hypot(x - d[0], y - d[1]) > 0.9 * max(s, d[3]) for d in dice):
                    items.append((img, x, y, s, 7))
                    break
    return items


#: Probabilities of the colour augmentations (hue turned, grey, inverted): set from
#: the command line.
AUG = {"hue": 0.5, "grey": 0.15, "invert": 0.1}


def make_synth(n: int, seed: int, max_size: float, unreadable_rate: float) -> list:
    """Synthetic scenes as (image, dice) with dice (cx, cy, class, size); a cocked die is
    there three times, "unreadable" centred on itself and on each face it shows (the
    detector often proposes one of the faces as a die)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        img, dice = synth.scene(rng, 400, 400, size_range=(14.0, max_size),
                                unreadable_rate=unreadable_rate)
        items = []
        for d in dice:
            items.append((d.cx, d.cy, (d.value - 1) if d.value else 6, d.size))
            items.extend((fx, fy, 6, d.size) for fx, fy in d.faces)
        out.append((img, items))
    return out


def crop_aug(item: Item, rng: random.Random) -> np.ndarray:
    img, cx, cy, size, c = item
    size = size * math.exp(rng.uniform(-0.2, 0.2))
    cx += rng.uniform(-0.1, 0.1) * size
    cy += rng.uniform(-0.1, 0.1) * size
    crop = face_crop(img, cx, cy, size, rng.uniform(0, 360), rng.random() < 0.5)
    f = crop.astype(np.float32)
    if rng.random() < AUG["hue"]:
        hsv = cv2.cvtColor(crop, cv2.COLOR_BGR2HSV)
        hsv[..., 0] = (hsv[..., 0].astype(np.int32) + rng.randint(0, 179)) % 180
        f = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR).astype(np.float32)
    if rng.random() < AUG["grey"]:
        f = np.repeat(f.mean(2, keepdims=True), 3, 2)
    if rng.random() < AUG["invert"]:
        f = 255 - f  # light pips on dark dice and the reverse
    f = f * rng.uniform(0.6, 1.4) + rng.uniform(-40, 40)
    f = f * np.array([rng.uniform(0.85, 1.15) for _ in range(3)], np.float32)
    if rng.random() < 0.25:
        f = cv2.GaussianBlur(f, (0, 0), rng.uniform(0.3, 0.9))
    f = f + np.random.normal(0, rng.uniform(0, 6), f.shape).astype(np.float32)
    return np.clip(f, 0, 255).transpose(2, 0, 1) / 255.0


class Export(nn.Module):
    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.net(x), 1)


def export(net: nn.Module, path: Path) -> None:
    net.eval()
    torch.onnx.export(Export(net), (torch.zeros(1, 3, CLS_SIZE, CLS_SIZE),), str(path),
                      input_names=["crops"], output_names=["probs"], opset_version=13,
                      dynamo=False, dynamic_axes={"crops": {0: "n"}, "probs": {0: "n"}})


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=default_data_dir())
    ap.add_argument("--out", type=Path, default=REPO / "vision" / "models" / "dice_cls.onnx")
    ap.add_argument("--minutes", type=float, default=12.0)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--synth", type=int, default=700)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--val", action="store_true", help="keep the val part of dev out")
    ap.add_argument("--init", type=Path, default=None, help="warm start from a .pt")
    ap.add_argument("--init-onnx", type=Path, default=None,
                    help="warm start from an exported .onnx (batch norms then stay frozen)")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--arch", choices=["small", "wide"], default="small")
    ap.add_argument("--real-weight", type=float, default=0.6,
                    help="share of each batch taken from the real photographs")
    ap.add_argument("--hue", type=float, default=AUG["hue"], help="share of crops with their hue turned")
    ap.add_argument("--invert", type=float, default=AUG["invert"], help="share of crops inverted")
    args = ap.parse_args()
    AUG["hue"], AUG["invert"] = args.hue, args.invert
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    rng = random.Random(args.seed)
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    t0 = time.time()
    real = items_from(load_real(args.data, args.val), 3, rng)
    syn = items_from(make_synth(args.synth, args.seed + 7, 150.0, 0.3), 2, rng)
    print(f"real crops {len(real)}, synthetic {len(syn)} ({time.time() - t0:.0f}s)", flush=True)
    net = ClsNet(args.arch)
    if args.init:
        net.load_state_dict(torch.load(args.init))
    if args.init_onnx:
        init_from_onnx(net, args.init_onnx)
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    budget = args.minutes * 60
    t0 = time.time()
    step = 0
    losses: list[float] = []
    accs: list[float] = []
    while time.time() - t0 < budget:
        frac = (time.time() - t0) / budget
        lr = args.lr * 0.5 * (1 + math.cos(math.pi * frac))
        for g in opt.param_groups:
            g["lr"] = max(lr, 3e-5)
        nsyn = round(args.batch * (1.0 - args.real_weight))
        picks = [rng.choice(real) for _ in range(args.batch - nsyn)] + \
            [rng.choice(syn) for _ in range(nsyn)]
        x = torch.from_numpy(np.stack([crop_aug(it, rng) for it in picks]).astype(np.float32))
        y = torch.tensor([it[4] for it in picks])
        train_mode(net, args.init_onnx is not None)
        out = net(x).flatten(1)
        loss = F.cross_entropy(out, y, label_smoothing=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        accs.append(float((out.argmax(1) == y).float().mean()))
        step += 1
        if step % 100 == 0:
            print(f"step {step} t={time.time() - t0:.0f}s lr={lr:.5f} loss={np.mean(losses):.4f} "
                  f"acc={np.mean(accs):.3f}", flush=True)
            losses.clear()
            accs.clear()
        if step % 1000 == 0:
            export(net, args.out)
    export(net, args.out)
    torch.save(net.state_dict(), args.out.with_suffix(".pt"))
    print(f"exported {args.out} after {step} steps", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
