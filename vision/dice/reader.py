"""Read the top faces of six-sided pip dice in a camera frame.

One small fully convolutional network (``vision/models/dice.onnx``, run with
OpenCV's dnn module) looks at the frame and predicts, on a grid of 8x8-pixel
cells: a die-centre heatmap, the sub-cell offset of each centre, and for each
centre the probabilities of the seven outcomes "1".."6" and "unreadable"
(cocked, blurred, logo face). Peaks of the heatmap are dice; a die whose best
value is not clearly the most likely outcome is reported with ``value=None``
("seen, roll again") rather than a guess. See docs/dice.md.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

MODEL_PATH = Path(__file__).resolve().parents[1] / "models" / "dice.onnx"

_STRIDE = 8
_ALIGN = 32
_UNREADABLE = 6


@dataclass(frozen=True)
class DieReading:
    """One die seen in a frame.

    ``value`` is the top face 1..6, or ``None`` when the die was seen but could
    not be read safely (cocked, blurred, a logo face, or simply doubtful).
    ``center`` is the top face's centre in pixels of the full frame.
    ``confidence`` (0..1) is the detection score times the probability of the
    most likely outcome.
    """

    value: int | None
    center: tuple[float, float]
    confidence: float


class DiceReader:
    """The dice reader: load the network once, then call :meth:`read` per frame.

    ``work_side`` caps the longer side of the image the network sees: larger
    frames (or regions) are downscaled to it, smaller ones are used as they are.
    ``det_threshold`` is the heatmap score a die needs to be reported at all;
    ``value_threshold`` the probability its value needs to be reported rather
    than ``None``.
    """

    def __init__(self, model_path: Path | str | None = None, *, work_side: int = 1024,
                 det_threshold: float = 0.35, value_threshold: float = 0.85,
                 min_side: int = 32) -> None:
        path = Path(model_path) if model_path is not None else MODEL_PATH
        if not path.is_file():
            raise FileNotFoundError(f"dice model not found: {path}")
        self._net = cv2.dnn.readNetFromONNX(str(path))
        self._lock = threading.Lock()
        self.work_side = work_side
        self.det_threshold = det_threshold
        self.value_threshold = value_threshold
        self.min_side = min_side

    def read(self, frame: np.ndarray,
             roi: tuple[int, int, int, int] | None = None) -> list[DieReading]:
        """The dice in ``frame`` (BGR, grey or BGRA ``uint8``), optionally within ``roi``.

        ``roi`` is ``(x, y, w, h)`` in frame pixels; it is clipped to the frame.
        Centres are always in full-frame pixels. An empty frame or region gives
        an empty list; anything that is not an image array raises ``ValueError``.
        """
        img = _as_bgr(frame)
        ox, oy = 0, 0
        if roi is not None:
            x, y, w, h = (int(v) for v in roi)
            x0, y0 = max(0, x), max(0, y)
            x1, y1 = min(img.shape[1], x + w), min(img.shape[0], y + h)
            if x1 <= x0 or y1 <= y0:
                return []
            img = img[y0:y1, x0:x1]
            ox, oy = x0, y0
        h, w = img.shape[:2]
        if h < self.min_side or w < self.min_side:
            return []
        scale = min(1.0, self.work_side / max(h, w))
        if scale < 1.0:
            img = cv2.resize(img, (max(1, round(w * scale)), max(1, round(h * scale))),
                             interpolation=cv2.INTER_AREA)
        out = self._forward(img)
        return [DieReading(value, (ox + cx / scale, oy + cy / scale), conf)
                for value, cx, cy, conf in self._decode(out, img.shape[1], img.shape[0])]

    def _forward(self, img: np.ndarray) -> np.ndarray:
        h, w = img.shape[:2]
        ph = (-h) % _ALIGN
        pw = (-w) % _ALIGN
        if ph or pw:
            img = cv2.copyMakeBorder(img, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
        blob = cv2.dnn.blobFromImage(img, 1.0 / 255.0)
        with self._lock:
            self._net.setInput(blob)
            out = self._net.forward()
        return np.asarray(out)[0]

    def _decode(self, out: np.ndarray, w: int,
                h: int) -> list[tuple[int | None, float, float, float]]:
        heat = np.ascontiguousarray(out[0], dtype=np.float32)
        gh = min(heat.shape[0], math.ceil(h / _STRIDE))
        gw = min(heat.shape[1], math.ceil(w / _STRIDE))
        heat = heat[:gh, :gw]
        peaks = (heat >= self.det_threshold) & (heat >= cv2.dilate(heat, np.ones((3, 3))))
        found: list[tuple[int | None, float, float, float]] = []
        for iy, ix in zip(*np.nonzero(peaks), strict=True):
            score = float(heat[iy, ix])
            cx = (ix + 0.5 + float(out[1, iy, ix])) * _STRIDE
            cy = (iy + 0.5 + float(out[2, iy, ix])) * _STRIDE
            probs = out[3:, iy, ix].astype(np.float64)
            probs = probs / max(1e-9, float(probs.sum()))
            best = int(np.argmax(probs))
            p = float(probs[best])
            value: int | None = best + 1
            if best == _UNREADABLE or p < self.value_threshold:
                value = None
            cx = min(max(cx, 0.0), w - 1.0)
            cy = min(max(cy, 0.0), h - 1.0)
            found.append((value, cx, cy, round(score * p, 4)))
        found.sort(key=lambda d: (d[2], d[1]))
        return found


def _as_bgr(frame: np.ndarray) -> np.ndarray:
    """A 3-channel ``uint8`` view or copy of ``frame``; ``ValueError`` if it is no image."""
    if not isinstance(frame, np.ndarray):
        raise ValueError(f"frame must be a numpy array, not {type(frame).__name__}")
    if frame.ndim == 2:
        frame = frame[:, :, None]
    if frame.ndim != 3 or frame.shape[2] not in (1, 3, 4):
        raise ValueError(f"frame must be HxW, HxWx3 or HxWx4, not shape {frame.shape}")
    if frame.size == 0:
        return np.zeros((0, 0, 3), np.uint8)
    if frame.dtype != np.uint8:
        if np.issubdtype(frame.dtype, np.floating):
            hi = 1.0 if float(np.nanmax(frame)) <= 1.0 else 255.0
            frame = np.clip(np.nan_to_num(frame) * (255.0 / hi), 0, 255).astype(np.uint8)
        elif frame.dtype == np.uint16:
            frame = (frame >> 8).astype(np.uint8)
        else:
            frame = np.clip(frame, 0, 255).astype(np.uint8)
    if frame.shape[2] == 1:
        return cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    if frame.shape[2] == 4:
        return cv2.cvtColor(frame, cv2.COLOR_BGRA2BGR)
    return frame


_default: DiceReader | None = None
_default_lock = threading.Lock()


def default_reader() -> DiceReader:
    """The shared reader with the committed model (loaded on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = DiceReader()
        return _default


def read_dice(frame: np.ndarray,
              roi: tuple[int, int, int, int] | None = None) -> list[DieReading]:
    """The dice in a BGR ``frame`` (optionally within ``roi`` = x, y, w, h).

    Uses the shared :func:`default_reader`. Each :class:`DieReading` has the
    value 1..6 or ``None`` (seen but unreadable), the top-face centre in frame
    pixels and a confidence 0..1.
    """
    return default_reader().read(frame, roi)
