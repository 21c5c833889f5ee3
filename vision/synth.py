"""The synthetic table: the printed board, riders and dice as an overhead camera sees them.

``table_scene(board, riders, rng=...)`` renders the board (``vision.render``)
with riders standing on spaces (a token marker on a round coloured base),
yellow-jersey pieces and pip dice on the table around it, seen by a pinhole
camera under a random pose (tilt up to 35 degrees, rotation, distance), with
uneven light, soft shadows, blur and sensor noise. It returns the image and
the ground truth: rider -> space, the jerseys, the dice values and the centres
of their top faces in image pixels. Everything comes from the numpy
``Generator`` passed in, so a seed gives the same scene every time.

World coordinates are board millimetres: x to the right, y down the board,
z into the table (so things standing on the table have negative z).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.boards import Board
from vision.markers import JERSEYS, RIDERS, STICKER_RATE, TEAM_COLOURS, marker_image, team_of
from vision.render import render_board, space_polygon

DEFAULT_SIZE = (2028, 1520)  # width, height
JERSEY_BGR = (30, 210, 240)
SKIN_BGR = (120, 150, 205)

# Pip positions on a face with corners at (+-1, +-1).
PIPS: dict[int, list[tuple[float, float]]] = {
    1: [(0, 0)],
    2: [(-0.5, -0.5), (0.5, 0.5)],
    3: [(-0.5, -0.5), (0, 0), (0.5, 0.5)],
    4: [(-0.5, -0.5), (0.5, -0.5), (-0.5, 0.5), (0.5, 0.5)],
    5: [(-0.5, -0.5), (0.5, -0.5), (0, 0), (-0.5, 0.5), (0.5, 0.5)],
    6: [(-0.5, -0.55), (0.5, -0.55), (-0.5, 0), (0.5, 0), (-0.5, 0.55), (0.5, 0.55)],
}
# Die bodies (BGR) with their pip colour.
DIE_STYLES: list[tuple[tuple[int, int, int], tuple[int, int, int]]] = [
    ((238, 240, 240), (25, 25, 25)),  # white, black pips
    ((235, 238, 240), (30, 30, 170)),  # white, red pips
    ((40, 40, 190), (240, 240, 240)),  # red, white pips
    ((40, 200, 225), (20, 20, 20)),  # yellow, black pips
    ((150, 80, 30), (240, 240, 240)),  # blue, white pips
    ((30, 30, 30), (235, 235, 235)),  # black, white pips
]


@dataclass(frozen=True)
class Camera:
    """A pinhole camera: intrinsics ``K``, rotation ``R`` (world -> camera), centre ``C``."""

    K: np.ndarray
    R: np.ndarray
    C: np.ndarray
    size: tuple[int, int]

    def project(self, pts: np.ndarray) -> np.ndarray:
        """World points (N, 3) -> image px (N, 2)."""
        p = (np.asarray(pts, float) - self.C) @ self.R.T
        q = p @ self.K.T
        return q[:, :2] / q[:, 2:3]

    def homography(self, z: float = 0.0) -> np.ndarray:
        """Board mm on the plane at height ``z`` (world z, negative above the table) -> image px."""
        t = -self.R @ self.C + self.R[:, 2] * z
        H = self.K @ np.column_stack([self.R[:, 0], self.R[:, 1], t])
        return H / H[2, 2]


@dataclass(frozen=True)
class SynthDie:
    """The truth of one drawn die: its value and the centre of its top face."""

    value: int
    center: tuple[float, float]  # image px
    center_mm: tuple[float, float]
    size_mm: float


@dataclass
class Scene:
    """A synthetic frame and its ground truth."""

    image: np.ndarray
    riders: dict[int, str]  # rider -> space id
    jerseys: dict[int, str]  # jersey id (20..50) -> space id
    token_mm: dict[int, tuple[float, float]]  # token id -> centre in board mm
    dice: list[SynthDie]
    camera: Camera
    hidden_corners: list[int] = field(default_factory=list)
    params: dict[str, float] = field(default_factory=dict)

    @property
    def board_to_image(self) -> np.ndarray:
        return self.camera.homography(0.0)

    def die_side_px(self, die: SynthDie) -> float:
        """The mean side of ``die``'s top face in image px, as the camera sees it."""
        x, y = die.center_mm
        s, z = die.size_mm / 2, -die.size_mm
        top = self.camera.project(np.array([[x - s, y - s, z], [x + s, y - s, z],
                                            [x + s, y + s, z], [x - s, y + s, z]]))
        return float(np.linalg.norm(top - np.roll(top, 1, axis=0), axis=1).mean())


def random_riders(board: Board, rng: np.random.Generator, n: int = 16,
                  riders: tuple[int, ...] = RIDERS) -> dict[int, str]:
    """``n`` riders on distinct random spaces, as rider -> space id."""
    ids = list(board.spaces)
    n = min(n, len(ids), len(riders))
    spaces = rng.choice(len(ids), size=n, replace=False)
    who = rng.choice(len(riders), size=n, replace=False)
    return {int(riders[w]): ids[int(s)] for w, s in zip(who, spaces, strict=True)}


def look_at(target: np.ndarray, tilt_deg: float, azimuth_deg: float, roll_deg: float,
            distance: float, f_px: float, size: tuple[int, int]) -> Camera:
    """A camera ``distance`` mm from ``target`` on the table, tilted from the vertical."""
    t, a = math.radians(tilt_deg), math.radians(azimuth_deg)
    C = np.asarray(target, float) + distance * np.array(
        [math.sin(t) * math.cos(a), math.sin(t) * math.sin(a), -math.cos(t)])
    f = (np.asarray(target, float) - C)
    f /= np.linalg.norm(f)
    # Start from the board's x axis as the image's right, then roll about the axis.
    r0 = np.array([1.0, 0.0, 0.0]) - f * f[0]
    if np.linalg.norm(r0) < 1e-6:
        r0 = np.array([0.0, 1.0, 0.0]) - f * f[1]
    r0 /= np.linalg.norm(r0)
    d0 = np.cross(f, r0)
    ro = math.radians(roll_deg)
    r = math.cos(ro) * r0 + math.sin(ro) * d0
    d = np.cross(f, r)
    R = np.vstack([r, d, f])
    w, h = size
    K = np.array([[f_px, 0, (w - 1) / 2], [0, f_px, (h - 1) / 2], [0, 0, 1.0]])
    return Camera(K, R, C, size)


def _fit_camera(board: Board, rng: np.random.Generator, size: tuple[int, int], tilt: float,
                azimuth: float, roll: float, fill: float, f_px: float) -> Camera:
    """A camera pose at which the board fills ``fill`` of the frame, roughly centred."""
    bw, bh = board.size_mm
    corners = np.array([[0, 0, 0], [bw, 0, 0], [bw, bh, 0], [0, bh, 0]], float)
    target = np.array([bw / 2, bh / 2, 0.0])
    dist = 1.2 * max(bw, bh)
    w, h = size
    for _ in range(6):
        cam = look_at(target, tilt, azimuth, roll, dist, f_px, size)
        p = cam.project(corners)
        lo, hi = p.min(axis=0), p.max(axis=0)
        s = max((hi[0] - lo[0]) / (fill * w), (hi[1] - lo[1]) / (fill * h))
        dist *= s
        # Move the aim so that the board's bounding box is centred (plus a small jitter).
        centre = (lo + hi) / 2
        want = np.array([(w - 1) / 2, (h - 1) / 2]) + rng.normal(0, 0.01, 2) * (w, h) * (1 - fill)
        Hinv = np.linalg.inv(cam.homography(0.0))
        a = Hinv @ np.array([centre[0], centre[1], 1.0])
        b = Hinv @ np.array([want[0], want[1], 1.0])
        target[:2] += a[:2] / a[2] - b[:2] / b[2]
    return look_at(target, tilt, azimuth, roll, dist, f_px, size)


def _scale_px_per_mm(H: np.ndarray, pts: np.ndarray) -> float:
    """Largest local scale (image px per board mm) of a homography at some points."""
    best = 0.0
    for x, y in pts:
        q = H @ np.array([[x, x + 1, x], [y, y, y + 1], [1, 1, 1]], float)
        q = q[:2] / q[2]
        best = max(best, float(np.linalg.norm(q[:, 1] - q[:, 0])),
                   float(np.linalg.norm(q[:, 2] - q[:, 0])))
    return best


def _wood(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """A table top (wood grain or a plain cloth), BGR uint8, drawn at a low resolution."""
    sw, sh = max(8, w // 4), max(8, h // 4)
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    if rng.random() < 0.7:
        base = np.array([rng.uniform(60, 140), rng.uniform(100, 170), rng.uniform(140, 210)])
        ang = rng.uniform(0, math.pi)
        u = xx * math.cos(ang) + yy * math.sin(ang)
        v = -xx * math.sin(ang) + yy * math.cos(ang)
        warp = 6 * np.sin(v * rng.uniform(0.01, 0.04) + rng.uniform(0, 6))
        g = (0.5 + 0.5 * np.sin((u + warp) * rng.uniform(0.1, 0.4))) ** rng.uniform(1, 3)
        img = base[None, None, :] * (1.0 - rng.uniform(0.08, 0.25) * g)[..., None]
    else:
        img = np.empty((sh, sw, 3), np.float32)
        img[:] = rng.uniform(50, 200, 3)
    small = np.clip(img, 0, 255).astype(np.uint8)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def _draw_token(tex: np.ndarray, token_id: int, center_mm: tuple[float, float], angle: float,
                side_mm: float, ppm: float, base_bgr: tuple[int, int, int] | None,
                sticker: bool, base_d_mm: float) -> None:
    """A rider (or jersey piece) seen from above: coloured base, white sticker, marker."""
    cx, cy = center_mm[0] * ppm - 0.5, center_mm[1] * ppm - 0.5
    if base_bgr is not None:
        # Soft contact shadow, then the base.
        rr = int(round(base_d_mm / 2 * ppm * 16))
        sh = (int(round((cx + 1.2 * ppm) * 16)), int(round((cy + 1.5 * ppm) * 16)))
        cv2.circle(tex, sh, rr, (60, 60, 60), -1, cv2.LINE_AA, 4)
        cv2.circle(tex, (int(round(cx * 16)), int(round(cy * 16))), rr, base_bgr, -1,
                   cv2.LINE_AA, 4)
        dark = tuple(int(c * 0.6) for c in base_bgr)
        cv2.circle(tex, (int(round(cx * 16)), int(round(cy * 16))), rr, dark,
                   max(1, int(round(0.6 * ppm))), cv2.LINE_AA, 4)
    if not sticker:
        return
    rs = side_mm * STICKER_RATE / 2 * ppm
    cv2.circle(tex, (int(round(cx * 16)), int(round(cy * 16))), int(round(rs * 16)),
               (250, 250, 250), -1, cv2.LINE_AA, 4)
    n = max(24, int(round(side_mm * ppm * 4)))
    mk = marker_image(token_id, n)
    # Drawn oversampled, then placed by a warp that samples one point a pixel: smoothed to
    # the texture's pixel first, or a turned marker's edges come out in steps.
    k_aa = n / (side_mm * ppm)
    if k_aa > 1.0:
        mk = cv2.GaussianBlur(mk, (0, 0), 0.5 * k_aa)
    s = side_mm * ppm / n
    ca, sa = math.cos(angle) * s, math.sin(angle) * s
    # marker pixel (u, v) -> texture: centre + rotation * (u - n/2, v - n/2)
    half = (n - 1) / 2
    M = np.array([[ca, -sa, cx - ca * half + sa * half], [sa, ca, cy - sa * half - ca * half]])
    r = int(math.ceil(side_mm * ppm * 0.75)) + 2
    x0, y0 = max(0, int(cx) - r), max(0, int(cy) - r)
    x1, y1 = min(tex.shape[1], int(cx) + r + 1), min(tex.shape[0], int(cy) + r + 1)
    if x1 <= x0 or y1 <= y0:
        return
    M[:, 2] -= (x0, y0)
    patch = cv2.warpAffine(mk, M, (x1 - x0, y1 - y0), flags=cv2.INTER_AREA, borderValue=255)
    roi = tex[y0:y1, x0:x1]
    roi[:] = np.minimum(roi, patch[..., None])


def _draw_raised_token(img: np.ndarray, cam: Camera, token_id: int,
                       center_mm: tuple[float, float], angle: float, side_mm: float,
                       base_bgr: tuple[int, int, int], sticker: bool, base_d_mm: float,
                       height_mm: float) -> None:
    """A rider whose top (coloured disc with the sticker) is ``height_mm`` above the board."""
    cx, cy = center_mm
    r = base_d_mm / 2
    t = np.linspace(0, 2 * math.pi, 40, endpoint=False)
    ring = np.c_[cx + r * np.cos(t), cy + r * np.sin(t)]
    bottom = cam.project(np.c_[ring, np.zeros(len(t))])
    top = cam.project(np.c_[ring, np.full(len(t), -height_mm)])
    hull = cv2.convexHull(np.round(np.vstack([bottom, top]) * 16).astype(np.int32))
    body = tuple(int(c * 0.55) for c in base_bgr)
    cv2.fillConvexPoly(img, hull, body, cv2.LINE_AA, 4)
    # The top, drawn flat in a small texture, then seen at its height.
    ppm = 8.0
    size_mm = base_d_mm + 2.0
    n = int(math.ceil(size_mm * ppm))
    tex = np.full((n, n, 3), 255, np.uint8)
    half = size_mm / 2
    _draw_token(tex, token_id, (half, half), angle, side_mm, ppm, base_bgr, sticker, base_d_mm)
    mask = np.zeros((n, n), np.uint8)
    cv2.circle(mask, (int(round((half * ppm - 0.5) * 16)), int(round((half * ppm - 0.5) * 16))),
               int(round(r * ppm * 16)), 255, -1, cv2.LINE_AA, 4)
    P = np.array([[1 / ppm, 0, cx - half + 0.5 / ppm], [0, 1 / ppm, cy - half + 0.5 / ppm],
                  [0, 0, 1.0]])
    Hp = cam.homography(-height_mm) @ P
    corners = cv2.perspectiveTransform(
        np.array([[[0, 0]], [[n, 0]], [[n, n]], [[0, n]]], np.float64), Hp).reshape(-1, 2)
    h, w = img.shape[:2]
    x0, y0 = max(0, int(corners[:, 0].min()) - 1), max(0, int(corners[:, 1].min()) - 1)
    x1, y1 = min(w, int(corners[:, 0].max()) + 2), min(h, int(corners[:, 1].max()) + 2)
    if x1 <= x0 or y1 <= y0:
        return
    Tr = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1.0]]) @ Hp
    # A camera pixel averages the texels it covers; a warp samples one point (OpenCV's
    # warps have no area mode), so the texture is smoothed to the pixel's size first -
    # else the marker's edges alias into steps that no real camera shows.
    k = n / max(1.0, float(np.ptp(corners[:, 0])), float(np.ptp(corners[:, 1])))
    smooth = cv2.GaussianBlur(tex, (0, 0), 0.5 * k) if k > 1.0 else tex
    top_img = cv2.warpPerspective(smooth, Tr, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
    alpha = cv2.warpPerspective(mask, Tr, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
    a = (alpha.astype(np.float32) / 255.0)[..., None]
    roi = img[y0:y1, x0:x1]
    roi[:] = np.clip(roi * (1 - a) + top_img * a, 0, 255).astype(np.uint8)


def _place_tokens(board: Board, riders: dict[int, str], jerseys: dict[int, str],
                  rng: np.random.Generator, jitter_mm: float,
                  at_mm: dict[int, tuple[float, float]] | None) -> dict[int, tuple[float, float]]:
    out: dict[int, tuple[float, float]] = {}
    for tid, sid in list(riders.items()) + list(jerseys.items()):
        if at_mm and tid in at_mm:
            out[tid] = at_mm[tid]
            continue
        cx, cy = board.spaces[sid].center_mm
        poly = space_polygon(board.spaces[sid]).astype(np.float32)
        if tid in jerseys:  # the jersey piece stands at the back of the space
            cx, cy = cx - 9.0, cy - 7.0
            if cv2.pointPolygonTest(poly, (cx, cy), True) < 3.0:
                cx, cy = board.spaces[sid].center_mm
        for _ in range(20):
            dx, dy = rng.uniform(-jitter_mm, jitter_mm, 2)
            if cv2.pointPolygonTest(poly, (float(cx + dx), float(cy + dy)), True) >= 6.0:
                break
        else:
            dx = dy = 0.0
        out[tid] = (float(cx + dx), float(cy + dy))
    return out


def _draw_die(img: np.ndarray, cam: Camera, center_mm: tuple[float, float], size_mm: float,
              yaw: float, value: int, body: tuple[int, int, int], pip: tuple[int, int, int],
              light: np.ndarray, side_pips: bool = True) -> tuple[float, float]:
    """A die standing on the table, drawn in 3D: the side faces the camera sees (with
    their pips unless ``side_pips`` is False), then the top with its pips."""
    s = size_mm / 2
    cx, cy = center_mm
    c, sn = math.cos(yaw), math.sin(yaw)
    ex, ey = np.array([c, sn, 0.0]) * s, np.array([-sn, c, 0.0]) * s
    base = np.array([cx, cy, 0.0])
    top = base + np.array([0, 0, -size_mm])
    # Shadow on the table (offset along the light).
    sq = [base + a * ex + b * ey for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    off = np.array([light[0], light[1], 0.0]) * size_mm * 0.6
    shadow = cam.project(np.array([p + off for p in sq] + sq))
    hull = cv2.convexHull(np.round(shadow * 16).astype(np.int32))
    ov = img.copy()
    cv2.fillConvexPoly(ov, hull, (0, 0, 0), cv2.LINE_AA, 4)
    cv2.addWeighted(ov, 0.35, img, 0.65, 0, dst=img)
    # The side faces the camera sees, with their pips: the four values round ``value``
    # in a fixed order (opposite faces add up to 7), so the scene's rng is not drawn on.
    a, b = (v for v in range(1, 7) if v not in (value, 7 - value) and v < 4)
    vert = np.array([0, 0, -s])
    for n, side_value in zip((ex / s, -ex / s, ey / s, -ey / s), (a, 7 - a, b, 7 - b),
                             strict=True):
        u = np.cross(np.array([0, 0, -1.0]), n)
        fc = base + n * s + vert
        if float(np.dot(cam.C - fc, n)) <= 0:
            continue
        shade = 0.55 + 0.3 * max(0.0, float(np.dot(n[:2], -light[:2])))
        p = cam.project(np.array([fc + i * u * s + j * vert for i, j in
                                  ((-1, -1), (1, -1), (1, 1), (-1, 1))]))
        col = tuple(int(v * shade) for v in body)
        cv2.fillConvexPoly(img, np.round(p * 16).astype(np.int32), col, cv2.LINE_AA, 4)
        if side_pips:
            pcol = tuple(int(k * (0.6 + 0.4 * shade)) for k in pip)
            _draw_pips(img, cam, fc, u * s, vert, side_value, pcol)
    corner = 0.12  # rounded corners of the top face
    outline = []
    for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        for k in range(4):
            t = (k / 3) * math.pi / 2 + math.atan2(b, a) - math.pi / 4
            fu = a * (1 - corner) + corner * math.cos(t) * math.sqrt(2) * 0.71
            fv = b * (1 - corner) + corner * math.sin(t) * math.sqrt(2) * 0.71
            outline.append(top + fu * ex + fv * ey)
    p = cam.project(np.array(outline))
    cv2.fillPoly(img, [np.round(p * 16).astype(np.int32)], body, cv2.LINE_AA, 4)
    edge = tuple(int(v * 0.8) for v in body)
    cv2.polylines(img, [np.round(p * 16).astype(np.int32)], True, edge, 1, cv2.LINE_AA, 4)
    _draw_pips(img, cam, top, ex, ey, value, pip)
    ctr = cam.project(top[None, :])[0]
    return float(ctr[0]), float(ctr[1])


def _draw_pips(img: np.ndarray, cam: Camera, centre: np.ndarray, ex: np.ndarray,
               ey: np.ndarray, value: int, colour: tuple[int, ...]) -> None:
    """The pips of ``value`` on a face at ``centre`` (world mm) whose half-sides are
    ``ex`` and ``ey``, as the camera sees them."""
    r = 0.2
    for px, py in PIPS[value]:
        ring = [centre + (px + r * math.cos(t)) * ex + (py + r * math.sin(t)) * ey
                for t in np.linspace(0, 2 * math.pi, 16, endpoint=False)]
        q = cam.project(np.array(ring))
        cv2.fillPoly(img, [np.round(q * 16).astype(np.int32)], colour, cv2.LINE_AA, 4)


def _cocked_faces(rng: np.random.Generator, top: int) -> tuple[int, int, int]:
    """The faces a cocked die shows: ``top``, one of the four round it (toward the tip)
    and the one beside both; opposite faces add up to 7."""
    tip = int(rng.choice([v for v in range(1, 7) if v not in (top, 7 - top)]))
    side = next(v for v in range(1, 7) if v not in (top, 7 - top, tip, 7 - tip))
    return top, tip, side


def _draw_cocked_die(img: np.ndarray, cam: Camera, center_mm: tuple[float, float],
                     size_mm: float, yaw: float, lean: float, values: tuple[int, int, int],
                     body: tuple[int, int, int], pip: tuple[int, int, int],
                     light: np.ndarray) -> tuple[float, float]:
    """A cocked die, drawn in 3D: resting on one bottom edge (along ``yaw``'s normal,
    through ``center_mm``), tipped ``lean`` radians from flat, as a die comes to rest
    leaning on another die or the tray's wall. Every face the camera sees is drawn
    with its pips: ``values`` are the faces up, toward the tip and sideways when flat
    (their opposites add up to 7). Returns the image px of the cube's centre."""
    s = size_mm / 2
    c, sn = math.cos(yaw), math.sin(yaw)
    e1, e2, up = np.array([c, sn, 0.0]), np.array([-sn, c, 0.0]), np.array([0.0, 0.0, -1.0])
    # The cube turned about the resting edge (along e2 through the centre): its axes.
    ax = math.cos(lean) * e1 + math.sin(lean) * up
    az = -math.sin(lean) * e1 + math.cos(lean) * up
    ay = e2
    edge = np.array([center_mm[0], center_mm[1], 0.0])
    centre = edge - ax * s + az * s  # the cube lies on the -ax side of its edge
    corners = [centre + a * ax * s + b * ay * s + d * az * s
               for a in (-1, 1) for b in (-1, 1) for d in (-1, 1)]
    # Each corner's shadow: dropped to the table (z = 0; up is -z) and moved along
    # ``light`` by 0.6 of its height, the way _draw_die casts its shadow (the faces
    # facing -light are the lit ones).
    sun = np.array([light[0], light[1], 0.0]) * 0.6
    shadow = [np.array([p[0], p[1], 0.0]) - sun * p[2] for p in corners]
    hull = cv2.convexHull(np.round(cam.project(np.array(shadow + corners)) * 16).astype(np.int32))
    ov = img.copy()
    cv2.fillConvexPoly(ov, hull, (0, 0, 0), cv2.LINE_AA, 4)
    cv2.addWeighted(ov, 0.35, img, 0.65, 0, dst=img)
    top, tip, side = values
    faces = [(az, ax, ay, top), (-az, ax, ay, 7 - top), (ax, ay, az, tip),
             (-ax, ay, az, 7 - tip), (ay, az, ax, side), (-ay, az, ax, 7 - side)]
    for n, u, v, value in faces:
        fc = centre + n * s
        if float(np.dot(cam.C - fc, n)) <= 0:
            continue
        shade = min(1.0, 0.55 + 0.45 * max(0.0, float(np.dot(n, up)))
                    + 0.3 * max(0.0, float(np.dot(n[:2], -light[:2]))))
        quad = cam.project(np.array([fc + a * u * s + b * v * s
                                     for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))]))
        col = tuple(int(k * shade) for k in body)
        cv2.fillConvexPoly(img, np.round(quad * 16).astype(np.int32), col, cv2.LINE_AA, 4)
        edge_col = tuple(int(k * shade * 0.8) for k in body)
        cv2.polylines(img, [np.round(quad * 16).astype(np.int32)], True, edge_col, 1,
                      cv2.LINE_AA, 4)
        pcol = tuple(int(k * (0.6 + 0.4 * shade)) for k in pip)
        _draw_pips(img, cam, fc, u * s, v * s, value, pcol)
    ctr = cam.project(centre[None, :])[0]
    return float(ctr[0]), float(ctr[1])


def _place_dice(board: Board, cam: Camera, rng: np.random.Generator, n: int, size_mm: float,
                token_mm: dict[int, tuple[float, float]],
                in_area: bool = True) -> list[tuple[float, float]]:
    """Places for ``n`` dice: in the board's dice area where it has one (and
    ``in_area``) and the area is in the frame, else anywhere inside the frame,
    off the road, clear of markers and tokens."""
    if in_area and board.dice_area_mm is not None:
        placed = _place_dice_in_area(board.dice_area_mm, cam, rng, n, size_mm)
        if len(placed) == n:
            return placed
    w, h = cam.size
    Hinv = np.linalg.inv(cam.homography(-size_mm))
    space_c = np.array([s.center_mm for s in board.spaces.values()], float)
    marker_c = np.array([[m.x_mm + m.side_mm / 2, m.y_mm + m.side_mm / 2]
                         for m in board.markers.values()] or [[-1e9, -1e9]], float)
    tok = np.array(list(token_mm.values()) or [(-1e9, -1e9)], float)
    out: list[tuple[float, float]] = []
    for attempt in range(400):
        relax = attempt > 300
        px = rng.uniform(0.08 * w, 0.92 * w), rng.uniform(0.08 * h, 0.92 * h)
        q = Hinv @ np.array([px[0], px[1], 1.0])
        x, y = q[0] / q[2], q[1] / q[2]
        pt = np.array([x, y])
        if not relax and np.min(np.linalg.norm(space_c - pt, axis=1)) < 30 + size_mm:
            continue
        if np.min(np.linalg.norm(marker_c - pt, axis=1)) < 35 + size_mm:
            continue
        if np.min(np.linalg.norm(tok - pt, axis=1)) < 20 + size_mm:
            continue
        if out and min(math.dist((x, y), o) for o in out) < 2.2 * size_mm:
            continue
        out.append((float(x), float(y)))
        if len(out) == n:
            break
    return out


def _place_dice_in_area(area: tuple[float, float, float, float], cam: Camera,
                        rng: np.random.Generator, n: int,
                        size_mm: float) -> list[tuple[float, float]]:
    """Places for ``n`` dice inside ``area`` (board mm) and the frame, apart from each other."""
    ax, ay, aw, ah = area
    w, h = cam.size
    hom = cam.homography(-size_mm)
    m = size_mm
    if aw <= 2 * m or ah <= 2 * m:
        return []
    out: list[tuple[float, float]] = []
    for _ in range(200):
        x, y = float(rng.uniform(ax + m, ax + aw - m)), float(rng.uniform(ay + m, ay + ah - m))
        q = hom @ np.array([x, y, 1.0])
        if q[2] <= 0 or not (0.03 * w < q[0] / q[2] < 0.97 * w and 0.03 * h < q[1] / q[2] < 0.97 * h):
            continue
        if any(math.dist((x, y), o) < 2.2 * size_mm for o in out):
            continue
        out.append((x, y))
        if len(out) == n:
            break
    return out


def _all_in_area(area: tuple[float, float, float, float] | None,
                 points: list[tuple[float, float]]) -> bool:
    if area is None:
        return False
    ax, ay, aw, ah = area
    return all(ax <= x <= ax + aw and ay <= y <= ay + ah for x, y in points)


def _hand(img: np.ndarray, center: tuple[float, float], size_px: float,
          rng: np.random.Generator) -> None:
    """A rough hand (palm and fingers) over a point of the image."""
    cx, cy = center
    ang = rng.uniform(0, 2 * math.pi)
    u = np.array([math.cos(ang), math.sin(ang)])
    v = np.array([-u[1], u[0]])
    col = tuple(int(c * rng.uniform(0.85, 1.1)) for c in SKIN_BGR)
    palm = np.array([cx, cy]) + u * size_px * 0.6
    cv2.ellipse(img, (int(palm[0]), int(palm[1])), (int(size_px * 0.9), int(size_px * 0.7)),
                math.degrees(ang), 0, 360, col, -1, cv2.LINE_AA)
    # The arm, going out of the frame.
    far = palm + u * size_px * 6
    cv2.line(img, (int(palm[0]), int(palm[1])), (int(far[0]), int(far[1])), col,
             int(size_px * 1.1), cv2.LINE_AA)
    for k in range(4):
        base = palm - u * size_px * 0.5 + v * (k - 1.5) * size_px * 0.38
        tip = base - u * size_px * 0.9
        cv2.line(img, (int(base[0]), int(base[1])), (int(tip[0]), int(tip[1])), col,
                 max(2, int(size_px * 0.28)), cv2.LINE_AA)


def table_scene(
    board: Board,
    riders: dict[int, str] | None = None,
    *,
    rng: np.random.Generator,
    size: tuple[int, int] = DEFAULT_SIZE,
    jerseys: dict[int, str] | None = None,
    n_dice: int = 2,
    dice_values: list[int] | None = None,
    die_mm: float = 16.0,
    dice_in_area: bool = True,
    dice_touching: bool = False,
    dice_cocked: tuple[int, ...] = (),
    side_pips: bool = True,
    tilt_deg: float | None = None,
    max_tilt_deg: float = 35.0,
    rotation_deg: float | None = None,
    fill: float | None = None,
    blur_sigma: float | None = None,
    noise_sigma: float | None = None,
    uneven_light: bool = True,
    shadows: bool = True,
    hide_corners: tuple[int, ...] = (),
    hide_tokens: tuple[int, ...] = (),
    stickers: bool = True,
    token_side_mm: float = 10.0,
    base_d_mm: float | None = None,
    jitter_mm: float = 3.0,
    token_at_mm: dict[int, tuple[float, float]] | None = None,
    token_height_mm: float = 0.0,
    board_image: np.ndarray | None = None,
    board_px_per_mm: float | None = None,
) -> Scene:
    """Render one camera frame of the table and its ground truth (see the module doc).

    ``riders`` maps rider number -> space id (default: none); ``jerseys`` jersey
    id (20..50) -> space id. ``None`` pose and image settings are drawn from
    ``rng``: tilt 0..``max_tilt_deg`` toward any side, the board's long side
    along the frame's (either way round) +-20 degrees, the board filling 80-97 %
    of the frame, blur sigma 0.3..1.5, noise sigma 1..6. ``hide_corners`` puts a
    hand over those corner markers, ``hide_tokens`` over those tokens. ``stickers=False`` draws riders without
    markers (for the colour fallback). ``token_at_mm`` forces token centres.
    ``token_height_mm`` raises the riders' tops (disc and sticker) above the
    board, as on real plastic riders; the truth stays the foot point.
    ``board_image`` (rendered at ``board_px_per_mm``) saves re-rendering the
    board for every frame of a run. The dice lie in the board's dice area
    (``dice_area_mm``) where it has one and it is in the frame (``params
    ["dice_in_area"]`` says whether they do), anywhere off the road otherwise
    or with ``dice_in_area=False``; with ``dice_touching`` the second die lies
    face to face with the first, as two dice thrown together often come to rest.
    The dice numbered in ``dice_cocked`` (0: the first) rest cocked, on an edge,
    tipped 20-70 degrees (their truth's value is 0: unreadable;
    ``params["cocked_lean_deg"]`` is the lean of the last one drawn).
    ``side_pips=False`` draws the flat dice's side faces plain, as the renderer did
    before 2026-11-29 (the scenes the tests pin were found on that render).
    """
    riders = dict(riders or {})
    jerseys = dict(jerseys or {})
    w, h = size
    tilt = float(rng.uniform(0, max_tilt_deg) if tilt_deg is None else tilt_deg)
    azimuth = float(rng.uniform(0, 360))
    # The camera is mounted to frame the board: its long side along the frame's, either
    # way round, give or take 20 degrees; the board fills 80-97 % of the frame.
    roll = float(rng.choice([0.0, 180.0]) + rng.uniform(-20, 20)
                 if rotation_deg is None else rotation_deg)
    fill_ = float(rng.uniform(0.8, 0.97) if fill is None else fill)
    blur = float(rng.uniform(0.3, 1.5) if blur_sigma is None else blur_sigma)
    noise = float(rng.uniform(1.0, 6.0) if noise_sigma is None else noise_sigma)
    f_px = 0.78 * w * float(rng.uniform(0.9, 1.1))
    cam = _fit_camera(board, rng, size, tilt, azimuth, roll, fill_, f_px)
    H = cam.homography(0.0)
    bw, bh = board.size_mm
    scale = _scale_px_per_mm(H, np.array([[0, 0], [bw, 0], [bw, bh], [0, bh]], float))

    # The board texture, with the tokens drawn flat on it.
    if board_image is not None and board_px_per_mm is not None:
        tex, ppm = board_image.copy(), float(board_px_per_mm)
    else:
        ppm = float(np.clip(scale * 1.4, 2.0, 8.0))
        tex = render_board(board, ppm)
    if base_d_mm is None:  # the rider's top: a little wider than the sticker
        base_d_mm = token_side_mm * STICKER_RATE + 4.0
    token_mm = _place_tokens(board, riders, jerseys, rng, jitter_mm, token_at_mm)
    raised: list[tuple[int, tuple[float, float], float, tuple[int, int, int], float]] = []
    for tid, c in token_mm.items():
        base = JERSEY_BGR if tid in JERSEYS else TEAM_COLOURS[team_of(tid)]
        d = base_d_mm * (0.9 if tid in JERSEYS else 1.0)
        angle = float(rng.uniform(0, 2 * math.pi))
        if token_height_mm > 0:
            _draw_token(tex, tid, (c[0] + 1.0, c[1] + 1.5), angle, token_side_mm, ppm,
                        (70, 70, 70), False, d)  # only its shadow on the board
            raised.append((tid, c, angle, base, d))
        else:
            _draw_token(tex, tid, c, angle, token_side_mm, ppm, base, stickers, d)

    img = _wood(rng, w, h)
    S = np.array([[ppm, 0, -0.5], [0, ppm, -0.5], [0, 0, 1.0]])
    Himg = H @ np.linalg.inv(S)
    cv2.warpPerspective(tex, Himg, (w, h), dst=img, flags=cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_TRANSPARENT)
    # Raised riders, farthest from the camera first so that nearer ones hide them.
    raised.sort(key=lambda r: -math.dist((r[1][0], r[1][1]), (cam.C[0], cam.C[1])))
    for tid, c, angle, base, d in raised:
        _draw_raised_token(img, cam, tid, c, angle, token_side_mm, base, stickers, d,
                           token_height_mm)

    # Dice on the table around the board.
    light = rng.normal(0, 1, 2)
    light /= np.linalg.norm(light) or 1.0
    values = list(dice_values) if dice_values is not None else [
        int(v) for v in rng.integers(1, 7, n_dice)]
    dice: list[SynthDie] = []
    places = _place_dice(board, cam, rng, len(values), die_mm, token_mm, dice_in_area)
    style = DIE_STYLES[int(rng.integers(0, len(DIE_STYLES)))]
    yaws = [float(rng.uniform(0, math.pi / 2)) for _ in places[:len(values)]]
    if dice_touching and len(places) >= 2:
        # The second die face to face with the first: beside one of its sides, turned
        # alike (give or take 3 degrees), a gap of 2-12 % of a die between them.
        side = int(rng.integers(0, 4)) * math.pi / 2
        d = die_mm * float(rng.uniform(1.02, 1.12))
        x0, y0 = places[0]
        places[1] = (x0 + d * math.cos(yaws[0] + side), y0 + d * math.sin(yaws[0] + side))
        yaws[1] = yaws[0] + math.radians(float(rng.uniform(-3, 3)))
    order = list(range(len(yaws)))
    if dice_touching:  # the die farther from the camera first: the nearer one hides it
        order.sort(key=lambda k: -math.dist(places[k], (cam.C[0], cam.C[1])))
    drawn: dict[int, SynthDie] = {}
    lean: float | None = None  # degrees, the last cocked die's
    for k in order:
        if k in dice_cocked:
            lean = float(rng.uniform(20, 70))
            ctr = _draw_cocked_die(img, cam, places[k], die_mm, yaws[k], math.radians(lean),
                                   _cocked_faces(rng, values[k]), style[0], style[1], light)
            drawn[k] = SynthDie(0, ctr, places[k], die_mm)
            continue
        ctr = _draw_die(img, cam, places[k], die_mm, yaws[k], values[k], style[0], style[1],
                        light, side_pips)
        drawn[k] = SynthDie(values[k], ctr, places[k], die_mm)
    dice.extend(drawn[k] for k in range(len(yaws)))

    for cid in hide_corners:
        m = board.markers.get(cid)
        if m is None:
            continue
        c = cam.project(np.array([[m.x_mm + m.side_mm / 2, m.y_mm + m.side_mm / 2, 0]]))[0]
        side_px = m.side_mm * scale
        _hand(img, (float(c[0]), float(c[1])), side_px * 1.6, rng)
    for tid in hide_tokens:
        if tid not in token_mm:
            continue
        c = cam.project(np.array([[token_mm[tid][0], token_mm[tid][1], 0]]))[0]
        _hand(img, (float(c[0]), float(c[1])), base_d_mm * scale * 1.2, rng)

    # Light: a smooth gain field and soft shadows, computed small and scaled up.
    if uneven_light or shadows:
        sw, sh = max(8, w // 16), max(8, h // 16)
        yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
        gain = np.ones((sh, sw), np.float32)
        if uneven_light:
            gx, gy = rng.uniform(-0.35, 0.35, 2)
            gain += gx * (xx / sw - 0.5) + gy * (yy / sh - 0.5)
            sx, sy = rng.uniform(0, sw), rng.uniform(0, sh)
            rad = rng.uniform(0.3, 0.8) * max(sw, sh)
            gain += rng.uniform(0.0, 0.25) * np.exp(-((xx - sx) ** 2 + (yy - sy) ** 2) / rad**2)
        if shadows:
            mask = np.zeros((sh, sw), np.float32)
            for _ in range(int(rng.integers(0, 3))):
                pts = np.round(rng.uniform(0, 1, (5, 2)) * (sw, sh)).astype(np.int32)
                cv2.fillConvexPoly(mask, cv2.convexHull(pts), float(rng.uniform(0.15, 0.35)))
            gain *= 1.0 - cv2.GaussianBlur(mask, (0, 0), 1.5)
        g = cv2.resize(gain, (w, h), interpolation=cv2.INTER_LINEAR)
        img = np.clip(img.astype(np.float32) * g[..., None], 0, 255).astype(np.uint8)
    if blur > 0:
        img = cv2.GaussianBlur(img, (0, 0), blur)
    if noise > 0:
        n = rng.normal(0, noise, img.shape).astype(np.float32)
        img = np.clip(img.astype(np.float32) + n, 0, 255).astype(np.uint8)
    params = {"tilt_deg": tilt, "azimuth_deg": azimuth, "rotation_deg": roll, "fill": fill_,
              "blur_sigma": blur, "noise_sigma": noise, "px_per_mm": scale, "focal_px": f_px,
              "dice_in_area": _all_in_area(board.dice_area_mm, [d.center_mm for d in dice])}
    if lean is not None:
        params["cocked_lean_deg"] = lean
    return Scene(img, riders, jerseys, token_mm, dice, cam, list(hide_corners), params)


DEMO_NOTATION = """
.o  .o  .o  .   .   c1  c2  c2  .   .   u1  u2  u2  u3  .   .  |A .   d2  d2  .   .
.o  .o  .o  .   .   c1  c2  .   .   .   u1  u2  u2  u3  .   .  |A .   d2  d2  .   .
=   =   =   _   _   _   _   _   _   _   _   _   _   _   _   _     _   _   _   _   _
.o  .o  .o  .   .   c1  c2  c2  .   .   u1  u2  u2  u3  .   .  |A .   d2  d2  .   .
.o  .o  .o  .   .   c1  c2  c2  .   .   u1  u2  u2  u3  .   .  |A .   d2  d2  .   .
"""


def demo_board() -> Board:
    """The shipped standard board, or (if it cannot be loaded) a generated straight road."""
    from companion.boards import BoardError, load_board, parse_board

    try:
        return load_board("standard")
    except BoardError:
        return parse_board(DEMO_NOTATION, name="generated demo road")[0]
