"""The detector's space-to-depth twin and the input blobs of both detector files.

The twin (``dice_s2d.onnx``, written by ``tools/space_to_depth_onnx.py``) is
the detector with its first convolution (3x3, stride 2) rewritten as a 2x2
convolution over the frame's 2x2 pixel blocks stacked as 12 channels: the same
outputs within 1e-5, ~0.9x the time on OpenCV 5's dnn engine, slower on
OpenCV 4's classic one (the Pi's), so ``DiceReader`` reads it only on OpenCV 5
(docs/dice.md, "How it works").
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import cv2
import numpy as np


def plain_blob(img: np.ndarray) -> np.ndarray:
    """A BGR uint8 image as a 1x3xHxW float32 blob scaled to 0..1 (faster than
    ``cv2.dnn.blobFromImage``, same values)."""
    h, w = img.shape[:2]
    out = np.empty((1, 3, h, w), np.float32)
    for i, ch in enumerate(cv2.split(img)):
        np.multiply(ch, np.float32(1.0 / 255.0), out=out[0, i])
    return out


def s2d_blob(img: np.ndarray) -> np.ndarray:
    """A BGR uint8 image of even sides as the space-to-depth twin's input: a
    1x12x(H/2)x(W/2) float32 blob scaled to 0..1, channel ``(2 * dy + dx) * 3 + c``
    holding colour ``c`` of the pixels at row offset ``dy`` and column offset ``dx``
    in each 2x2 block."""
    h, w = img.shape[:2]
    blocks = img.reshape(h // 2, 2, w // 2, 2, 3).transpose(1, 3, 4, 0, 2)
    out = np.empty((1, 12, h // 2, w // 2), np.float32)
    np.multiply(blocks, np.float32(1.0 / 255.0), out=out[0].reshape(2, 2, 3, h // 2, w // 2))
    return out


def space_to_depth_twin(model_path: Path) -> Path:
    """Where a detector file's space-to-depth twin lies: ``dice.onnx`` ->
    ``dice_s2d.onnx``."""
    return model_path.with_name(model_path.stem + "_s2d" + model_path.suffix)


def check_twin(path: Path, twin: Path) -> None:
    """Raise ``ValueError`` unless the detector files ``path`` and ``twin`` (its
    space-to-depth twin) give the same outputs on a test pattern: a twin left
    from an earlier detector would read with other weights. Checked once per
    process for the files as they are (their sizes and times), not per reader."""
    stamps = tuple((p.stat().st_size, p.stat().st_mtime_ns) for p in (path, twin))
    _check_twin_files(path.resolve(), twin.resolve(), stamps)


@functools.lru_cache(maxsize=8)
def _check_twin_files(path: Path, twin: Path, stamps: tuple[tuple[int, int], ...]) -> None:
    """:func:`check_twin` for files of these ``stamps`` (the cache key; a failed
    check raises and is not cached)."""
    yy, xx = np.mgrid[0:64, 0:64]
    img = np.dstack([(xx * 4) % 256, (yy * 4) % 256, ((xx + yy) * 2 + 3 * (xx // 8 % 2)) % 256]
                    ).astype(np.uint8)
    a, b = cv2.dnn.readNetFromONNX(str(path)), cv2.dnn.readNetFromONNX(str(twin))
    a.setInput(plain_blob(img))
    b.setInput(s2d_blob(img))
    try:
        diff = float(np.abs(np.asarray(a.forward()) - np.asarray(b.forward())).max())
    except (cv2.error, ValueError):  # another network altogether
        diff = math.inf
    if not diff <= 1e-4:
        raise ValueError(f"{twin} is not the space-to-depth twin of {path} (outputs differ by "
                         f"{diff:.3g}): write it again with tools/space_to_depth_onnx.py")
