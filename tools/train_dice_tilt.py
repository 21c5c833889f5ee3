"""Train the table's tilt check (is a die cocked?) and export ``vision/models/dice_tilt.onnx``.

The check (``vision.dice.tilt_check``) looks at a die in a *top view*: its
neighbourhood in the frame redrawn as seen straight down onto the plane of
the flat dice's top faces, through the board's pose and the camera's place.
It is trained on the synthetic table alone (no photographs of cocked dice
exist)::

    nice /tmp/trainvenv/bin/python tools/train_dice_tilt.py --scenes 2000 --minutes 10

The committed model (rule 69 of docs/dice-history.md) is rule 65's trained on:
``--cache A.npz --more B.npz --more C.npz --more D.npz --init-onnx dice_tilt.onnx
--lr 1e-3 --minutes 45 --threads 2 --seed 1000``, A, B, C the 72,000 views each of
``--scenes 6000`` at seeds 1000, 2000, 3000, D the 65,813 of ``--scenes 4000 --seed
4000 --side-views 1.0`` (20.5k steps). Rule 65's was rule 64's trained on with A and
B (19.8k steps); rule 64's ``--scenes 6000 --minutes 40`` (drawn in 28 minutes,
16.8k steps), rule 63's ``--scenes 3000 --minutes 15``.
Its views are turned so that the camera's foot lies below
(``die_top_view(aligned=True)``): a flat die's side faces then always show at its
bottom, a cocked die's second face anywhere; training turns them only by
mirroring left-right.

Data: ``--scenes`` frames of ``vision.synth.table_scene`` (the demo board
under a random camera, 6 dice of one style, 14-18 mm, in or near the dice
area; in half the frames the third and fourth die rest cocked on an edge,
tipped 20-70 degrees; in ``--touching`` of them the first two lie face to
face). The board is found in each frame as the table finds it
(``vision.board.locate_board``), the camera placed from it, and each die seen
twice in a top view of the nominal 16 mm die where the reader would report
it: a flat die up to 0.2 die from its top face's centre, a cocked die up
to 0.4 die from its cube's centre (the reader proposes it on one of the faces
it shows); with ``--side-views`` also a flat die on its side faces toward the
camera (:func:`side_face_point`, labelled cocked: the reader sometimes proposes
a ``null`` there, and the table's re-reads can read a side face's pips).
Labels: a flat die's value 1..6 at 0..5, cocked at 6 (the check withholds
on the last and, since rule 70, on a value read otherwise than the reader's).
A tenth of the views is kept out to report the accuracy. Scenes come in
chunks of 250 from the random streams ``[--seed, k]`` (default seed 1000: the
streams of `companion bench vision --seed 1000`'s first scenes; judge on
other bench seeds).

``--cache FILE`` keeps the drawn views (read if it exists); ``--more FILE`` adds
the views of another run's cache (each file keeps its own tenth out, the first
file's the same as a run on it alone); ``--init-onnx`` starts from an exported
network instead of at random (a fine-tune).
"""

from __future__ import annotations

import argparse
import math
import os
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

from train_dice_cls import Export  # noqa: E402

from vision.board import BoardPose, camera_centre, locate_board  # noqa: E402
from vision.dice.tilt_check import (  # noqa: E402
    COCKED,
    TILT_MODEL_PATH,
    VIEW_PX_PER_DIE,
    VIEW_SIZE,
    die_top_view,
    view_angle_deg,
)
from vision.render import render_board  # noqa: E402
from vision.synth import demo_board, random_riders, table_scene  # noqa: E402
from vision.top_view import top_view  # noqa: E402

#: Views turned so the camera's foot lies below, as the check reads them (rule 63);
#: TILT_ALIGNED=0 draws them as the network of rules 56-62b saw them (any turn).
ALIGNED = os.environ.get("TILT_ALIGNED", "1") == "1"

#: The die size the table's reader assumes (``read_table_dice(die_mm=...)``).
NOMINAL_DIE_MM = 16.0


#: Side-face views (rule 69): how far off a flat die's centre toward the camera (dice),
#: and the last word of their random stream's seed.
SIDE_OFF_MIN = 0.6
SIDE_OFF_MAX = 1.1
SIDE_STREAM = 7

#: Scenes drawn from one random stream (``[seed, chunk]``): the data do not depend
#: on how many workers draw them.
CHUNK = 250


def side_face_point(image: np.ndarray, pose: BoardPose, camera: tuple[float, float, float],
                    centre: tuple[float, float], die_mm: float, rng: np.random.Generator
                    ) -> tuple[float, float] | None:
    """A frame px on the side faces a flat die (top face centred at frame px ``centre``,
    ``die_mm`` across) shows toward the camera: in the plane of its top face,
    :data:`SIDE_OFF_MIN` die or more off its centre toward the camera's foot, up to
    where its side faces end (0.5 die + the die's height times the tangent of the
    angle it is seen at, at most :data:`SIDE_OFF_MAX`), up to 0.25 die to either
    side; None where the die is seen too steeply for that band to exist."""
    angle = view_angle_deg(pose, camera, centre)
    reach = min(SIDE_OFF_MAX, 0.5 + math.tan(math.radians(angle)))
    if not reach > SIDE_OFF_MIN + 0.05:
        return None
    ppm = VIEW_PX_PER_DIE / NOMINAL_DIE_MM
    view = top_view(image, pose, camera, centre, NOMINAL_DIE_MM, ppm, VIEW_SIZE)
    if view is None or view.away == (0.0, 0.0):
        return None
    along = float(rng.uniform(SIDE_OFF_MIN, reach)) * die_mm * ppm
    across = float(rng.uniform(-0.25, 0.25)) * die_mm * ppm
    (ux, uy), (cx, cy) = view.away, view.centre
    return view.frame_point(cx - along * ux - across * uy, cy - along * uy + across * ux)


def views_of_scenes(n: int, seed: int | list[int], touching: float,
                    max_tilt_deg: float = 35.0, max_view_deg: float | None = None,
                    side_views: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Top views (N x VIEW_SIZE x VIEW_SIZE x 3 uint8) of the dice of ``n`` table
    scenes drawn from the random stream ``seed`` (an int or a sequence of them), and
    their labels (a flat die's value - 1, or :data:`COCKED`). The camera is tilted up
    to ``max_tilt_deg``; with ``max_view_deg`` only the views of dice seen within it
    of straight down are kept (the random stream is drawn alike either way). With
    ``side_views`` > 0, that share of the flat dice also gives a view centred on its
    side faces toward the camera (:func:`side_face_point`), labelled :data:`COCKED`
    (a reading there must be withheld), drawn from a stream of its own so the other
    views stay as they are without it."""
    board = demo_board()
    ppm = 2.5
    board_img = render_board(board, ppm)
    rng = np.random.default_rng(seed)
    side_rng = np.random.default_rng([*np.atleast_1d(seed).tolist(), SIDE_STREAM])
    xs: list[np.ndarray] = []
    ys: list[int] = []
    for _ in range(n):
        sc = table_scene(board, random_riders(board, rng, int(rng.integers(0, 17))), rng=rng,
                         n_dice=6, die_mm=float(rng.uniform(14.0, 18.0)),
                         dice_in_area=bool(rng.random() < 0.8), board_image=board_img,
                         board_px_per_mm=ppm, dice_touching=bool(rng.random() < touching),
                         dice_cocked=(2, 3) if rng.random() < 0.5 else (),
                         max_tilt_deg=max_tilt_deg)
        pose = locate_board(sc.image, board)
        h, w = sc.image.shape[:2]
        camera = camera_centre(pose, (w, h))
        if camera is None:
            continue
        for d in sc.dice:
            cocked = d.value == 0
            side = sc.die_side_px(d)
            for _twice in range(2):
                off = float(rng.uniform(0, 0.4 if cocked else 0.2)) * side
                a = float(rng.uniform(0, 2 * math.pi))
                at = (d.center[0] + off * math.cos(a), d.center[1] + off * math.sin(a))
                view = die_top_view(sc.image, pose, camera, at, NOMINAL_DIE_MM, ALIGNED)
                if max_view_deg is not None and not (
                        view_angle_deg(pose, camera, at) < max_view_deg):
                    continue
                if view is not None:
                    xs.append(view)
                    ys.append(COCKED if cocked else d.value - 1)
            if cocked or not side_rng.random() < side_views:
                continue
            on_side = side_face_point(sc.image, pose, camera, d.center, d.size_mm, side_rng)
            if on_side is None or (max_view_deg is not None and not (
                    view_angle_deg(pose, camera, on_side) < max_view_deg)):
                continue
            view = die_top_view(sc.image, pose, camera, on_side, NOMINAL_DIE_MM, ALIGNED)
            if view is not None:
                xs.append(view)
                ys.append(COCKED)
    return np.array(xs, np.uint8).reshape(-1, VIEW_SIZE, VIEW_SIZE, 3), np.array(ys, np.int64)


def _chunk(job: tuple[int, int, int, float, float, float | None, float]
           ) -> tuple[np.ndarray, np.ndarray]:
    seed, k, n, touching, max_tilt_deg, max_view_deg, side_views = job
    cv2.setNumThreads(1)
    return views_of_scenes(n, [seed, k], touching, max_tilt_deg, max_view_deg, side_views)


def all_views(scenes: int, seed: int, touching: float, workers: int,
              max_tilt_deg: float = 35.0, max_view_deg: float | None = None,
              side_views: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`views_of_scenes` of ``scenes`` scenes in chunks of :data:`CHUNK`, drawn by
    ``workers`` processes."""
    jobs = [(seed, k, min(CHUNK, scenes - k * CHUNK), touching, max_tilt_deg, max_view_deg,
             side_views) for k in range(-(-scenes // CHUNK))]
    if workers > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            parts = pool.map(_chunk, jobs)
    else:
        parts = [_chunk(job) for job in jobs]
    return np.concatenate([x for x, _ in parts]), np.concatenate([y for _, y in parts])


def tilt_net() -> nn.Module:
    """Four 3x3 convolutions (16, 32, 64, 64 channels; ~61k weights), pooled to seven
    logits (the values 1..6 of a flat die, cocked)."""
    return nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, COCKED + 1))


def held_out_split(sizes: list[int], gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Indices (held out, trained on) of view sets of ``sizes`` laid end to end: a random
    tenth of each set held out, so a set keeps the same tenth out whatever follows it
    (the first set's is the one a run on it alone, with the same seed, held out)."""
    held, train = [], []
    start = 0
    for n in sizes:
        order = torch.randperm(n, generator=gen) + start
        held.append(order[: n // 10])
        train.append(order[n // 10:])
        start += n
    return torch.cat(held), torch.cat(train)


def init_from_onnx(net: nn.Module, path: Path) -> None:
    """Load the weights of an exported tilt network (``Export(tilt_net())``, whose
    initializers are named ``net.<layer>.weight``) into ``net``."""
    import onnx
    from onnx import numpy_helper

    inits = {i.name.removeprefix("net."): torch.from_numpy(numpy_helper.to_array(i).copy())
             for i in onnx.load(str(path)).graph.initializer}
    missing, unexpected = net.load_state_dict(inits, strict=False)
    if missing or unexpected:
        raise SystemExit(f"{path} is not a tilt network of this shape: missing {missing}, "
                         f"unexpected {unexpected}")


def augment(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """A batch turned by a multiple of 90 degrees, maybe mirrored, brightness 0.7-1.3."""
    if torch.rand((), generator=gen) < 0.5:
        x = torch.flip(x, (3,))
    if not ALIGNED:  # aligned views keep the camera's foot below: mirrored left-right only
        x = torch.rot90(x, int(torch.randint(4, (), generator=gen)), (2, 3))
    return x * (0.7 + 0.6 * torch.rand(len(x), 1, 1, 1, generator=gen))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--touching", type=float, default=0.3,
                    help="share of the scenes whose first two dice lie face to face")
    ap.add_argument("--max-tilt-deg", type=float, default=35.0,
                    help="the scenes' camera tilted up to this (degrees)")
    ap.add_argument("--side-views", type=float, default=0.0,
                    help="share of the flat dice also seen on their side faces toward the "
                         "camera, labelled cocked (rule 69)")
    ap.add_argument("--max-view-deg", type=float, default=None,
                    help="keep only the views of dice seen within this of straight down")
    ap.add_argument("--cache", type=Path, default=None,
                    help="an .npz of the views: read if it exists, else written")
    ap.add_argument("--more", type=Path, action="append", default=[],
                    help="another .npz of views (an earlier run's --cache) added to the "
                         "data; each file keeps its own tenth out (repeatable)")
    ap.add_argument("--init-onnx", type=Path, default=None,
                    help="start from the weights of an exported tilt network "
                         "(e.g. vision/models/dice_tilt.onnx) instead of at random")
    ap.add_argument("--workers", type=int, default=2, help="processes drawing the scenes")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=Path, default=TILT_MODEL_PATH)
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    t0 = time.time()
    if args.cache is not None and args.cache.is_file():
        data = np.load(args.cache)
        views, labels = data["x"], data["y"]
    else:
        views, labels = all_views(args.scenes, args.seed, args.touching, args.workers,
                                  args.max_tilt_deg, args.max_view_deg, args.side_views)
        if args.cache is not None:
            np.savez_compressed(args.cache, x=views, y=labels)
    parts = [(views, labels)]
    for path in args.more:
        data = np.load(path)
        parts.append((data["x"], data["y"]))
    views = np.concatenate([v for v, _ in parts])
    labels = np.concatenate([lab for _, lab in parts])
    print(f"{len(labels)} views, {int((labels == COCKED).sum())} cocked "
          f"({time.time() - t0:.0f}s)", flush=True)
    x = torch.from_numpy(views).permute(0, 3, 1, 2).float().div(255.0).contiguous()
    y = torch.from_numpy(labels)
    gen = torch.Generator().manual_seed(args.seed)
    held, train = held_out_split([len(lab) for _, lab in parts], gen)
    net = tilt_net()
    if args.init_onnx is not None:
        init_from_onnx(net, args.init_onnx)
    opt = torch.optim.AdamW(net.parameters(), args.lr, weight_decay=1e-4)
    budget = args.minutes * 60
    t0 = time.time()
    step = 0
    while time.time() - t0 < budget:
        frac = (time.time() - t0) / budget
        for g in opt.param_groups:
            g["lr"] = args.lr * 0.5 * (1 + math.cos(math.pi * frac))
        b = train[torch.randint(len(train), (args.batch,), generator=gen)]
        loss = F.cross_entropy(net(augment(x[b], gen)), y[b])
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % 500 == 0:
            net.eval()
            with torch.no_grad():
                probs = torch.softmax(net(x[held]), 1)
            net.train()
            p, yh = probs[:, COCKED], y[held]
            flat, cocked = yh != COCKED, yh == COCKED
            flat_called = int(((p >= 0.5) & flat).sum())
            cocked_missed = int(((p < 0.5) & cocked).sum())
            value_right = int((probs[:, :COCKED].argmax(1) == yh)[flat].sum())
            print(f"step {step} loss {loss.item():.4f} held out: flat called cocked "
                  f"{flat_called}/{int(flat.sum())}, cocked missed {cocked_missed}/"
                  f"{int(cocked.sum())}, flat values right {value_right}", flush=True)
    net.eval()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(Export(net), (torch.zeros(1, 3, VIEW_SIZE, VIEW_SIZE),), str(args.out),
                      input_names=["views"], output_names=["probs"], opset_version=13,
                      dynamo=False, dynamic_axes={"views": {0: "n"}, "probs": {0: "n"}})
    print(f"saved {args.out} after {step} steps", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
