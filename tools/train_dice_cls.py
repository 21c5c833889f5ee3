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


def make_table(n: int, seed: int, negatives: int = 6) -> list[Item]:
    """Crops of the table renderer's dice (``vision.synth.table_scene``: the demo board
    under a random camera, 6 dice of one style in or near the dice area) and of what
    is around them on that board ("not a die": the dice area's dashed line, the
    track's start dots, numbers, riders). Only a patch around each crop is kept.

    A die's size is the side of its top face in pixels as the camera sees it
    (``Scene.die_side_px``), times 1.2: what the detector proposes for these dice on
    average (1.0-1.6x)."""
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
            out.append((np.ascontiguousarray(img[y0:y1, x0:x1]), x - x0, y - y0, size, c))

    for _ in range(n):
        die_mm = float(rng.uniform(14.0, 18.0))
        sc = table_scene(board, random_riders(board, rng, int(rng.integers(0, 17))), rng=rng,
                         n_dice=6, die_mm=die_mm, dice_in_area=bool(rng.random() < 0.8),
                         board_image=board_img, board_px_per_mm=ppm)
        sizes = []
        for d in sc.dice:
            size = 1.2 * sc.die_side_px(d)
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
                    patch(sc.image, px, py, s, 7)
                    break
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
    ap.add_argument("--table", type=int, default=0,
                    help="table renderer scenes (vision.synth) whose dice and board join the synthetic crops")
    ap.add_argument("--table-weight", type=float, default=0.1,
                    help="share of each batch taken from the table scenes' crops (with --table)")
    ap.add_argument("--hard", type=float, default=0.0,
                    help="share of the real crops drawn by their running loss (hard ones more often)")
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
    table = make_table(args.table, args.seed + 11) if args.table else []
    print(f"real crops {len(real)}, synthetic {len(syn)}, table {len(table)} "
          f"({time.time() - t0:.0f}s)", flush=True)
    net = ClsNet(args.arch)
    if args.init:
        net.load_state_dict(torch.load(args.init))
    if args.init_onnx:
        init_from_onnx(net, args.init_onnx)
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    hardness = np.ones(len(real))  # see --hard
    np_rng = np.random.default_rng(args.seed)
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
        ntab = min(nsyn, round(args.batch * args.table_weight)) if table else 0
        nreal = args.batch - nsyn
        nhard = round(nreal * args.hard)
        ridx = [rng.randrange(len(real)) for _ in range(nreal - nhard)]
        if nhard:
            ridx += [int(i) for i in np_rng.choice(len(real), nhard, p=hardness / hardness.sum())]
        picks = [real[i] for i in ridx] + \
            [rng.choice(syn) for _ in range(nsyn - ntab)] + [rng.choice(table) for _ in range(ntab)]
        x = torch.from_numpy(np.stack([crop_aug(it, rng) for it in picks]).astype(np.float32))
        y = torch.tensor([it[4] for it in picks])
        train_mode(net, args.init_onnx is not None)
        out = net(x).flatten(1)
        each = F.cross_entropy(out, y, label_smoothing=0.05, reduction="none")
        loss = each.mean()
        if nhard:  # running loss of each real crop: the hard ones are drawn more often
            got = each.detach().numpy()[:nreal]
            for i, v in zip(ridx, got, strict=True):
                hardness[i] = 0.7 * hardness[i] + 0.3 * (min(float(v), 3.0) + 0.05)
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
