"""Synthetic dice scenes drawn with OpenCV, for training and for unit tests.

A scene is a background (plain, wood grain, white tray, printed board), some
clutter (cables, cards, a hand at the edge) and dice of random colour, size,
rotation and view: top-down, oblique (side faces showing), touching, with
shadows and glare. Some dice are drawn *unreadable* on purpose: cocked (resting
on an edge, two faces equally foreshortened), heavily blurred, or with a logo
instead of pips. Every die comes with its label: the centre of its top face,
its value (0 for unreadable) and its size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision.dice.palette import pick_colours

# Pip positions on a unit face ([-1, 1] square), per value.
_PIPS: dict[int, list[tuple[float, float]]] = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
    5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
}

# Die body colours (BGR) and pip colours that go with them.
_BODIES: list[tuple[tuple[int, int, int], list[tuple[int, int, int]]]] = [
    ((235, 240, 240), [(20, 20, 20), (30, 30, 170), (150, 60, 20)]),  # white
    ((200, 225, 235), [(25, 25, 25)]),  # ivory
    ((25, 25, 25), [(235, 235, 235), (40, 40, 200), (40, 200, 230)]),  # black
    ((40, 40, 190), [(240, 240, 240), (20, 20, 20)]),  # red
    ((40, 210, 230), [(20, 20, 20), (40, 40, 190)]),  # yellow
    ((60, 150, 40), [(240, 240, 240)]),  # green
    ((150, 70, 30), [(240, 240, 240), (40, 200, 230)]),  # blue
    ((110, 40, 90), [(240, 240, 240)]),  # purple
    ((30, 120, 235), [(20, 20, 20), (240, 240, 240)]),  # orange
]


@dataclass(frozen=True)
class SynthDie:
    """The label of one drawn die: top-face centre, value (0 = unreadable), face size."""

    cx: float
    cy: float
    value: int
    size: float
    #: Centres of the faces a cocked die shows (each looks like a squashed die on its
    #: own: a reader must not take either for a top face).
    faces: tuple[tuple[float, float], ...] = ()


def _rand_color(rng: np.random.Generator, lo: int = 0, hi: int = 256) -> tuple[int, int, int]:
    c = rng.integers(lo, hi, 3)
    return (int(c[0]), int(c[1]), int(c[2]))


def background(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A random table surface of size ``h`` x ``w`` (BGR uint8)."""
    kind = rng.integers(0, 5)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    if kind == 0:  # wood grain
        base = np.array([rng.uniform(90, 200), rng.uniform(140, 220), rng.uniform(180, 240)])
        ang = rng.uniform(0, math.pi)
        u = xx * math.cos(ang) + yy * math.sin(ang)
        v = -xx * math.sin(ang) + yy * math.cos(ang)
        freq = rng.uniform(0.03, 0.15)
        warp = 8 * np.sin(v * rng.uniform(0.005, 0.03) + rng.uniform(0, 6))
        g = 0.5 + 0.5 * np.sin((u + warp) * freq)
        g = g ** rng.uniform(1, 4)
        shade = 1.0 - rng.uniform(0.05, 0.3) * g
        img = base[None, None, :] * shade[..., None]
    elif kind == 1:  # white / grey tray
        v0 = rng.uniform(150, 250)
        img = np.full((h, w, 3), v0, np.float32) + rng.normal(0, 3, (1, 1, 3))
        grad = (xx / w - 0.5) * rng.uniform(-40, 40) + (yy / h - 0.5) * rng.uniform(-40, 40)
        img = img + grad[..., None]
    elif kind == 2:  # printed board: coloured shapes, lines, text
        img = np.full((h, w, 3), _rand_color(rng, 60, 256), np.float32)
        canvas = img.astype(np.uint8)
        for _ in range(int(rng.integers(4, 20))):
            col = _rand_color(rng)
            t = rng.integers(0, 4)
            p = (int(rng.integers(0, w)), int(rng.integers(0, h)))
            q = (int(rng.integers(0, w)), int(rng.integers(0, h)))
            if t == 0:
                cv2.rectangle(canvas, p, q, col, -1)
            elif t == 1:
                cv2.line(canvas, p, q, col, int(rng.integers(1, 8)), cv2.LINE_AA)
            elif t == 2:
                cv2.circle(canvas, p, int(rng.integers(3, 40)), col, int(rng.choice([-1, 2])))
            else:
                cv2.putText(canvas, "".join(rng.choice(list("ABCDEF0123456789"), 5)), p,
                            cv2.FONT_HERSHEY_SIMPLEX, rng.uniform(0.4, 1.5), col, 2, cv2.LINE_AA)
        img = canvas.astype(np.float32)
    elif kind == 3:  # felt / cloth: coloured with fine noise
        img = np.full((h, w, 3), _rand_color(rng, 20, 200), np.float32)
        img = img + rng.normal(0, 6, (h, w, 1)).astype(np.float32)
    else:  # smooth gradient, any colour
        a = np.array(_rand_color(rng, 30, 256), np.float32)
        b = np.array(_rand_color(rng, 30, 256), np.float32)
        t = (xx / w)[..., None]
        img = a * (1 - t) + b * t
    img = img + rng.normal(0, rng.uniform(1, 5), (h, w, 1)).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def _clutter(rng: np.random.Generator, img: np.ndarray) -> None:
    """Cables, cards and a hand at the edge, drawn in place."""
    h, w = img.shape[:2]
    if rng.random() < 0.3:
        _keyboard(rng, img)
    for _ in range(int(rng.integers(0, 3))):
        t = rng.integers(0, 3)
        if t == 0:  # cable
            pts = np.cumsum(rng.normal(0, 40, (6, 2)), axis=0) + [rng.uniform(0, w),
                                                                   rng.uniform(0, h)]
            col = _rand_color(rng, 0, 80)
            cv2.polylines(img, [pts.astype(np.int32)], False, col, int(rng.integers(4, 14)),
                          cv2.LINE_AA)
        elif t == 1:  # card
            c = (rng.uniform(0, w), rng.uniform(0, h))
            box = cv2.boxPoints((c, (rng.uniform(40, 120), rng.uniform(60, 170)),
                                 rng.uniform(0, 180)))
            cv2.fillPoly(img, [box.astype(np.int32)], _rand_color(rng, 100, 256), cv2.LINE_AA)
            cv2.polylines(img, [box.astype(np.int32)], True, _rand_color(rng), 2, cv2.LINE_AA)
        else:  # hand at the edge: skin-coloured blob
            side = rng.integers(0, 4)
            cx = [0, w, rng.uniform(0, w), rng.uniform(0, w)][side]
            cy = [rng.uniform(0, h), rng.uniform(0, h), 0, h][side]
            skin = (int(rng.uniform(90, 180)), int(rng.uniform(130, 200)),
                    int(rng.uniform(170, 240)))
            cv2.ellipse(img, (int(cx), int(cy)), (int(rng.uniform(40, 90)),
                        int(rng.uniform(60, 130))), rng.uniform(0, 180), 0, 360, skin, -1,
                        cv2.LINE_AA)


def _keyboard(rng: np.random.Generator, img: np.ndarray) -> None:
    """A patch of keyboard (rows of rounded keys with symbols): looks a lot like dice."""
    h, w = img.shape[:2]
    key = float(rng.uniform(14, 45))
    gap = key * float(rng.uniform(0.15, 0.35))
    x0, y0 = float(rng.uniform(-w / 2, w / 2)), float(rng.uniform(-h / 2, h / 2))
    ang = float(rng.uniform(0, 360))
    rot = np.array([[math.cos(math.radians(ang)), -math.sin(math.radians(ang))],
                    [math.sin(math.radians(ang)), math.cos(math.radians(ang))]], np.float32)
    dark = rng.random() < 0.7
    slab = _rand_color(rng, 90, 190) if dark else _rand_color(rng, 20, 80)
    keyc = _rand_color(rng, 0, 60) if dark else _rand_color(rng, 200, 256)
    symc = (230, 230, 230) if dark else (30, 30, 30)
    cols, rows = int(rng.integers(3, 12)), int(rng.integers(2, 6))
    corners = np.array([[0, 0], [cols, 0], [cols, rows], [0, rows]], np.float32) * (key + gap)
    slab_pts = (corners - gap) @ rot.T + [x0, y0]
    cv2.fillPoly(img, [slab_pts.astype(np.int32)], slab, cv2.LINE_AA)
    sq = _rounded_square(key, 0.2)
    for r in range(rows):
        for c in range(cols):
            centre = np.array([c + 0.5, r + 0.5], np.float32) * (key + gap) + [
                rng.uniform(-0.1, 0.1) * key, 0]
            pts = sq @ rot.T + centre @ rot.T + [x0, y0]
            cv2.fillPoly(img, [pts.astype(np.int32)], keyc, cv2.LINE_AA)
            q = pts.mean(0)
            if rng.random() < 0.7:  # letters and symbols, never pip-like dots
                cv2.putText(img, str(rng.choice(list("ASDFQWZXfn^~<>"))),
                            (int(q[0] - key * 0.2), int(q[1] + key * 0.15)),
                            cv2.FONT_HERSHEY_SIMPLEX, key / 60, symc, 1, cv2.LINE_AA)


def _rounded_square(size: float, corner: float, n: int = 4) -> np.ndarray:
    """Outline of a square of side 2 (times ``size``/2) with rounded corners."""
    r = corner
    pts = []
    for cx, cy, a0 in ((1 - r, 1 - r, 0), (-1 + r, 1 - r, 90), (-1 + r, -1 + r, 180),
                       (1 - r, -1 + r, 270)):
        for k in range(n + 1):
            a = math.radians(a0 + 90 * k / n)
            pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return np.array(pts, np.float32) * (size / 2)


def _shade(col: tuple[int, int, int], f: float) -> tuple[int, int, int]:
    return (int(min(255, col[0] * f)), int(min(255, col[1] * f)), int(min(255, col[2] * f)))


def marble(rng: np.random.Generator, h: int, w: int, body: tuple[int, int, int],
           vein: tuple[int, int, int]) -> np.ndarray:
    """An ``h`` x ``w`` patch of marbled plastic: ``body`` swirled with ``vein``."""
    cell = max(4, int(min(h, w) * rng.uniform(0.15, 0.4)))
    noise = rng.normal(0, 1, (h // cell + 2, w // cell + 2)).astype(np.float32)
    turb = cv2.resize(noise, (w, h), interpolation=cv2.INTER_CUBIC)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = rng.uniform(0, math.pi)
    freq = rng.uniform(1.5, 5.0) * 2 * math.pi / max(h, w)
    t = 0.5 + 0.5 * np.sin(freq * (xx * math.cos(a) + yy * math.sin(a))
                           + rng.uniform(1.5, 4.0) * turb)
    t = t ** rng.uniform(1.0, 4.0)  # thin veins or broad clouds
    out = (np.array(body, np.float32) * (1 - t[..., None])
           + np.array(vein, np.float32) * t[..., None])
    return np.clip(out, 0, 255).astype(np.uint8)


def _draw_face(img: np.ndarray, m: np.ndarray, body: tuple[int, int, int],
               pip: tuple[int, int, int], value: int, corner: float, pip_r: float,
               rng: np.random.Generator, logo: bool = False, alpha: float = 1.0,
               vein: tuple[int, int, int] | None = None) -> None:
    """Draw one face: ``m`` maps the unit face square ([-1,1]^2) to image pixels (2x3).
    With ``vein`` the face is marbled: ``body`` swirled with that colour."""
    outline = _rounded_square(2.0, corner)
    pts = outline @ m[:, :2].T + m[:, 2]
    shift = 4
    scale = 1 << shift
    layer = img.copy() if alpha < 1.0 else img
    poly = np.round(pts * scale).astype(np.int32)
    if vein is None:
        cv2.fillPoly(layer, [poly], body, cv2.LINE_AA, shift)
    else:
        x, y, w, h = cv2.boundingRect(np.round(pts).astype(np.int32))
        x0, y0 = max(0, x - 1), max(0, y - 1)
        x1, y1 = min(layer.shape[1], x + w + 1), min(layer.shape[0], y + h + 1)
        if x1 > x0 and y1 > y0:  # the face's mask over its bounding box only
            mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
            cv2.fillPoly(mask, [poly - np.array([x0, y0], np.int32) * scale], 255, cv2.LINE_AA,
                         shift)
            cover = mask[..., None].astype(np.float32) / 255.0
            patch = marble(rng, y1 - y0, x1 - x0, body, vein).astype(np.float32)
            roi = layer[y0:y1, x0:x1]
            roi[:] = (roi * (1 - cover) + patch * cover).astype(np.uint8)
    sx = float(np.linalg.norm(m[:, 0]))
    sy = float(np.linalg.norm(m[:, 1]))
    if logo:
        kind = rng.integers(0, 3)
        if kind == 0:  # a star
            star = []
            for k in range(10):
                rr = 0.7 if k % 2 == 0 else 0.3
                a = math.pi * k / 5
                star.append((rr * math.cos(a), rr * math.sin(a)))
            sp = np.array(star, np.float32) @ m[:, :2].T + m[:, 2]
            cv2.fillPoly(layer, [np.round(sp * scale).astype(np.int32)], pip, cv2.LINE_AA,
                         shift)
        elif kind == 1:  # a ring with a letter
            c = m[:, 2]
            cv2.ellipse(layer, (int(c[0]), int(c[1])), (max(1, int(0.6 * sx)),
                        max(1, int(0.6 * sy))), 0, 0, 360, pip, max(1, int(0.12 * sx)),
                        cv2.LINE_AA)
            cv2.putText(layer, str(rng.choice(list("PKQXG"))), (int(c[0] - 0.25 * sx),
                        int(c[1] + 0.25 * sy)), cv2.FONT_HERSHEY_SIMPLEX, 0.025 * sx, pip,
                        max(1, int(0.08 * sx)), cv2.LINE_AA)
        else:  # a number in digits (some dice print 1 as a logo)
            c = m[:, 2]
            cv2.putText(layer, str(rng.integers(1, 7)), (int(c[0] - 0.35 * sx),
                        int(c[1] + 0.4 * sy)), cv2.FONT_HERSHEY_SIMPLEX, 0.04 * sx, pip,
                        max(1, int(0.12 * sx)), cv2.LINE_AA)
    elif value > 0:
        off = 0.52
        for px, py in _PIPS[value]:
            c = m[:, :2] @ np.array([px * off, py * off], np.float32) + m[:, 2]
            ax = max(0.6, pip_r * sx)
            ay = max(0.6, pip_r * sy)
            ang = math.degrees(math.atan2(m[1, 0], m[0, 0]))
            cv2.ellipse(layer, (int(round(c[0] * scale)), int(round(c[1] * scale))),
                        (int(round(ax * scale)), int(round(ay * scale))), ang, 0, 360, pip, -1,
                        cv2.LINE_AA, shift)
    if alpha < 1.0:
        cv2.addWeighted(layer, alpha, img, 1 - alpha, 0, dst=img)


def marble_vein(rng: np.random.Generator, body: tuple[int, int, int],
                pip: tuple[int, int, int]) -> tuple[int, int, int]:
    """A vein colour for a marbled body: another body colour, or white or black,
    kept apart from the pips' colour so that the pips still stand out."""
    options = [b for b, _ in _BODIES] + [(245, 245, 245), (15, 15, 15)]
    far = [c for c in options
           if sum(abs(a - b) for a, b in zip(c, pip, strict=True)) > 200
           and sum(abs(a - b) for a, b in zip(c, body, strict=True)) > 60]
    pick = far or options
    c = pick[int(rng.integers(0, len(pick)))]
    mix = float(rng.uniform(0.4, 1.0))  # how strong the veins are
    r, g, b = (int(x + (v - x) * mix) for x, v in zip(body, c, strict=True))
    return r, g, b


def motion_kernel(length: float, angle: float) -> np.ndarray:
    """A straight smear of ``length`` pixels at ``angle`` degrees (``cv2.filter2D``'s
    kernel, summing to 1): a die still moving, or a hand-held shot."""
    n = 2 * math.ceil(length / 2) + 1
    big = np.zeros((n * 4, n * 4), np.float32)  # drawn at 4x and shrunk: sub-pixel ends
    c = n * 2
    dx = math.cos(math.radians(angle)) * length * 2
    dy = math.sin(math.radians(angle)) * length * 2
    cv2.line(big, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 4,
             cv2.LINE_AA)
    k = cv2.resize(big, (n, n), interpolation=cv2.INTER_AREA)
    return np.asarray(k / max(1e-6, float(k.sum())), np.float32)


def motion_blur(img: np.ndarray, rng: np.random.Generator, cx: float, cy: float,
                size: float, length: tuple[float, float] = (0.5, 0.9)) -> None:
    """Smear a die in place as a die still rolling: a straight motion blur of
    ``length`` (a range, in die sizes: 0.5-0.9 makes it unreadable) in a random
    direction over the square 2.6 dice wide around (cx, cy)."""
    h, w = img.shape[:2]
    ker = motion_kernel(max(5.0, size * rng.uniform(*length)), rng.uniform(0, 180))
    r0 = int(size * 1.3)
    y0, y1 = max(0, int(cy) - r0), min(h, int(cy) + r0)
    x0, x1 = max(0, int(cx) - r0), min(w, int(cx) + r0)
    img[y0:y1, x0:x1] = cv2.filter2D(img[y0:y1, x0:x1], -1, ker)


def draw_die(img: np.ndarray, rng: np.random.Generator, cx: float, cy: float, size: float,
             value: int, *, angle: float | None = None, oblique: float = 0.0,
             cocked: bool = False, logo: bool = False,
             body: tuple[int, int, int] | None = None,
             pip: tuple[int, int, int] | None = None, shadow: bool = True,
             glare: bool = False, translucent: bool = False,
             marbled: bool = False) -> SynthDie:
    """Draw one die in place on ``img`` and return its label.

    ``size`` is the side of the top face in pixels, ``value`` 1..6. ``oblique``
    (0..1) shows the side faces as seen by a tilted camera; ``cocked`` draws a
    die resting on an edge (unreadable); ``logo`` replaces the pips by a logo
    (unreadable); ``marbled`` swirls the body with a second colour. Labels of
    unreadable dice have value 0.
    """
    if body is None or pip is None:
        b, pips = _BODIES[int(rng.integers(0, len(_BODIES)))]
        body = body or b
        pip = pip or pips[int(rng.integers(0, len(pips)))]
    if angle is None:
        angle = float(rng.uniform(0, 360))
    corner = float(rng.uniform(0.1, 0.35))
    pip_r = float(rng.uniform(0.13, 0.2))
    a = math.radians(angle)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]], np.float32)
    half = size / 2
    alpha = float(rng.uniform(0.75, 0.9)) if translucent else 1.0
    vein = marble_vein(rng, body, pip) if marbled else None
    if shadow:
        d = rng.uniform(0.05, 0.25) * size
        sh = np.zeros(img.shape[:2], np.float32)
        cv2.circle(sh, (int(cx + d), int(cy + d)), int(size * 0.6), 1.0, -1)
        k = int(size * 0.4) | 1
        sh = cv2.GaussianBlur(sh, (k, k), 0) * rng.uniform(0.2, 0.5)
        img[:] = (img.astype(np.float32) * (1 - sh[..., None])).astype(np.uint8)
    if cocked:
        # Resting on an edge: two faces each foreshortened to ~cos(45 deg).
        f = float(rng.uniform(0.55, 0.8))
        g = math.sqrt(max(0.0, 1.0 - f * f)) * float(rng.uniform(0.85, 1.15))
        ux = rot @ np.array([1, 0], np.float32)
        uy = rot @ np.array([0, 1], np.float32)
        c1 = np.array([cx, cy], np.float32) - uy * half * g
        c2 = np.array([cx, cy], np.float32) + uy * half * f
        m1 = np.column_stack([ux * half, uy * half * g, c1]).astype(np.float32)
        m2 = np.column_stack([ux * half, uy * half * f, c2]).astype(np.float32)
        v1, v2 = int(rng.integers(1, 7)), int(rng.integers(1, 7))
        _draw_face(img, m1, _shade(body, 0.8), pip, v1, corner, pip_r, rng, alpha=alpha, vein=vein)
        _draw_face(img, m2, _shade(body, 0.95), pip, v2, corner, pip_r, rng, alpha=alpha, vein=vein)
        return SynthDie(cx, cy, 0, size, ((float(c1[0]), float(c1[1])), (float(c2[0]), float(c2[1]))))
    # Oblique view: the top face is squashed along the view direction and the
    # near side face shows below it.
    squash = 1.0 - 0.3 * oblique
    view = float(rng.uniform(0, 2 * math.pi)) if oblique > 0 else 0.0
    vd = np.array([math.cos(view), math.sin(view)], np.float32)
    vp = np.array([-vd[1], vd[0]], np.float32)
    # Affine that squashes along vd: A = I - (1-squash) vd vd^T
    sq = np.eye(2, dtype=np.float32) - (1 - squash) * np.outer(vd, vd)
    top = sq @ rot * half
    if oblique > 0:
        depth = oblique * 0.8 * half
        for side_dir, shade in ((vd, 0.7), (vp * np.sign(rng.uniform(-1, 1)), 0.55)):
            # A side face: the top face's edge extruded along +vd.
            # Choose the face axis closest to side_dir.
            axes = [(top[:, 0], top[:, 1]), (top[:, 1], top[:, 0]),
                    (-top[:, 0], top[:, 1]), (-top[:, 1], top[:, 0])]
            best, other = max(axes, key=lambda e: float(np.dot(e[0], side_dir)))
            if float(np.dot(best, vd)) <= 0:
                continue
            c = np.array([cx, cy], np.float32) + best + vd * depth
            ms = np.column_stack([other, vd * depth, c]).astype(np.float32)
            _draw_face(img, ms, _shade(body, shade), pip, int(rng.integers(1, 7)), corner,
                       pip_r, rng, alpha=alpha, vein=vein)
    m = np.column_stack([top, [cx, cy]]).astype(np.float32)
    _draw_face(img, m, body, pip, value, corner, pip_r, rng, logo=logo, alpha=alpha,
               vein=vein)
    if glare:
        gl = img.copy()
        gx = cx + rng.uniform(-0.4, 0.4) * size
        gy = cy + rng.uniform(-0.4, 0.4) * size
        cv2.ellipse(gl, (int(gx), int(gy)), (max(1, int(size * 0.15)), max(1, int(size * 0.06))),
                    rng.uniform(0, 180), 0, 360, (255, 255, 255), -1, cv2.LINE_AA)
        cv2.addWeighted(gl, 0.6, img, 0.4, 0, dst=img)
    return SynthDie(cx, cy, 0 if logo else value, size)


def packed_scene(rng: np.random.Generator, h: int = 400, w: int = 400, *,
                 size_range: tuple[float, float] = (18.0, 70.0), cocked: float = 0.0
                 ) -> tuple[np.ndarray, list[SynthDie]]:
    """A frame with a tight pack of 2-5 dice of one set (same colours, same turn) lying
    face to face in a grid, gaps of 4-12 % of a die, as two dice thrown together often
    come to rest; sometimes a lone die of the set beside it, cocked (unreadable, value
    0) with probability ``cocked``: a cocked die also shows two faces side by side.
    Top-down or slightly oblique, with the usual camera blur and noise."""
    img = background(rng, h, w)
    _clutter(rng, img)
    size = float(np.exp(rng.uniform(math.log(size_range[0]), math.log(size_range[1]))))
    b, pips = _BODIES[int(rng.integers(0, len(_BODIES)))]
    pip = pips[int(rng.integers(0, len(pips)))]
    angle = float(rng.uniform(0, 90))
    a = math.radians(angle)
    n = int(rng.integers(2, 6))
    cells = [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (-1, 1), (2, 1)]
    order = [0, *(1 + rng.permutation(len(cells) - 1))]
    chosen = [cells[i] for i in order[:n]]
    if not any(c in chosen for c in cells[1:3]):  # keep the pack joined
        chosen[1] = cells[1]
    gap = float(rng.uniform(1.04, 1.12))
    oblique = float(rng.uniform(0, 0.35)) if rng.random() < 0.3 else 0.0
    span = 3 * gap * size
    ox = float(rng.uniform(span, max(span + 1, w - span)))
    oy = float(rng.uniform(span, max(span + 1, h - span)))
    dice = []
    for i, j in chosen:
        x = ox + gap * size * (i * math.cos(a) - j * math.sin(a))
        y = oy + gap * size * (i * math.sin(a) + j * math.cos(a))
        tilt = float(rng.uniform(-3, 3))
        dice.append(draw_die(img, rng, x, y, size, int(rng.integers(1, 7)), angle=angle + tilt,
                             oblique=oblique, body=b, pip=pip, shadow=bool(rng.random() < 0.5),
                             glare=bool(rng.random() < 0.2)))
    if rng.random() < 0.5:
        for _try in range(20):
            x, y = float(rng.uniform(size, w - size)), float(rng.uniform(size, h - size))
            if all(math.hypot(x - d.cx, y - d.cy) > 1.8 * size for d in dice):
                tilted = cocked > 0 and bool(rng.random() < cocked)
                dice.append(draw_die(img, rng, x, y, size, int(rng.integers(1, 7)),
                                     oblique=oblique, body=b, pip=pip, cocked=tilted))
                break
    if rng.random() < 0.5:
        img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.3, 1.0)))
    noise = rng.normal(0, rng.uniform(0, 4), img.shape)
    img = np.clip(img.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    return img, dice


def scene(rng: np.random.Generator, h: int = 480, w: int = 640, *, n_dice: int | None = None,
          size_range: tuple[float, float] = (16.0, 90.0), unreadable_rate: float = 0.12,
          touching: bool | None = None,
          touching_rate: float = 0.3,
          marbled_rate: float = 0.0,
          wide_colours_rate: float = 0.0) -> tuple[np.ndarray, list[SynthDie]]:
    """A whole synthetic frame with its labels; ``touching`` (or, when None, a draw with
    ``touching_rate``) packs the dice side by side; a share ``marbled_rate`` of the
    dice is marbled, a share ``wide_colours_rate`` takes any body and pip colours of
    ``vision.dice.palette`` (0 for either keeps the random draws, hence the frames, of
    earlier code)."""
    img = background(rng, h, w)
    _clutter(rng, img)
    if n_dice is None:
        n_dice = int(rng.integers(1, 9))
    size = float(np.exp(rng.uniform(math.log(size_range[0]), math.log(size_range[1]))))
    oblique = float(rng.uniform(0, 1)) if rng.random() < 0.5 else 0.0
    if touching is None:
        touching = bool(rng.random() < touching_rate)
    dice: list[SynthDie] = []
    placed: list[tuple[float, float, float]] = []
    for _ in range(n_dice):
        s = size * float(rng.uniform(0.85, 1.15))
        for _try in range(30):
            x = float(rng.uniform(s, w - s))
            y = float(rng.uniform(s, h - s))
            if touching and placed and rng.random() < 0.7:
                # Right beside a die already there: side by side, face to face.
                px, py, ps = placed[int(rng.integers(0, len(placed)))]
                a = float(rng.uniform(0, 2 * math.pi))
                d = (ps + s) / 2 * float(rng.uniform(1.02, 1.2))
                x, y = px + d * math.cos(a), py + d * math.sin(a)
                if not (s <= x <= w - s and s <= y <= h - s):
                    continue
            mind = 1.0 if touching else 1.6
            if all(math.hypot(x - px, y - py) > mind * max(s, ps) for px, py, ps in placed):
                break
        else:
            continue
        placed.append((x, y, s))
        r = rng.random()
        cocked = r < unreadable_rate * 0.5
        logo = (not cocked) and r < unreadable_rate * 0.75
        blur = (not cocked and not logo) and r < unreadable_rate
        value = int(rng.integers(1, 7))
        body, pip = (pick_colours(rng) if wide_colours_rate > 0
                     and rng.random() < wide_colours_rate else (None, None))
        die = draw_die(img, rng, x, y, s, value, oblique=oblique * float(rng.uniform(0.7, 1.0)),
                       cocked=cocked, logo=logo, glare=bool(rng.random() < 0.2),
                       translucent=bool(rng.random() < 0.1),
                       marbled=marbled_rate > 0 and bool(rng.random() < marbled_rate),
                       body=body, pip=pip)
        if blur:  # heavy motion blur over this die only: unreadable
            motion_blur(img, rng, x, y, s)
            die = SynthDie(die.cx, die.cy, 0, die.size, die.faces)
        dice.append(die)
    # Camera: slight blur and noise.
    if rng.random() < 0.5:
        img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.3, 1.0)))
    noise = rng.normal(0, rng.uniform(0, 4), img.shape)
    img = np.clip(img.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    return img, dice
