"""The detector's space-to-depth twin and the input blobs of the detector files.

The twin (``dice_s2d.onnx``, written by ``tools/space_to_depth_onnx.py``) is
the detector with its first convolution (3x3, stride 2) rewritten as a 2x2
convolution over the frame's 2x2 pixel blocks stacked as 12 channels: the same
outputs within 1e-5, ~0.9x the time on OpenCV 5's dnn engine, slower on
OpenCV 4's classic one (the Pi's), so ``DiceReader`` reads it only on OpenCV 5
(docs/dice.md, "How it works").

A detector trained with a "fast" stem (``tools/train_dice.py --arch fast``)
reads the frame's 4x4 pixel blocks as 48 channels itself, on either engine,
and has no twin; :func:`input_block` tells which input a file takes.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import cv2
import numpy as np

from vision.onnx_input import input_shape


def plain_blob(img: np.ndarray) -> np.ndarray:
    """A BGR uint8 image as a 1x3xHxW float32 blob scaled to 0..1 (faster than
    ``cv2.dnn.blobFromImage``, same values)."""
    h, w = img.shape[:2]
    out = np.empty((1, 3, h, w), np.float32)
    for i, ch in enumerate(cv2.split(img)):
        np.multiply(ch, np.float32(1.0 / 255.0), out=out[0, i])
    return out


def blocks_blob(img: np.ndarray, block: int) -> np.ndarray:
    """A BGR uint8 image whose sides are multiples of ``block`` as its
    ``block`` x ``block`` pixel blocks stacked as channels: a
    1x(3*block*block)x(H/block)x(W/block) float32 blob scaled to 0..1, channel
    ``(block * dy + dx) * 3 + c`` holding colour ``c`` of the pixels at row offset
    ``dy`` and column offset ``dx`` in each block."""
    h, w = img.shape[:2]
    b = block
    cells = img.reshape(h // b, b, w // b, b, 3).transpose(1, 3, 4, 0, 2)
    out = np.empty((1, 3 * b * b, h // b, w // b), np.float32)
    np.multiply(cells, np.float32(1.0 / 255.0), out=out[0].reshape(b, b, 3, h // b, w // b))
    return out


def s2d_blob(img: np.ndarray) -> np.ndarray:
    """A BGR uint8 image of even sides as the space-to-depth twin's input: its 2x2
    pixel blocks as 12 channels (:func:`blocks_blob`)."""
    return blocks_blob(img, 2)


def detector_blob(img: np.ndarray, block: int) -> np.ndarray:
    """The input of a detector file that reads ``block`` x ``block`` pixel blocks
    (:func:`input_block`; 1: the plain image)."""
    return plain_blob(img) if block == 1 else blocks_blob(img, block)


#: The inputs a detector file may take: the plain image, the twin's 2x2 blocks,
#: the "fast" stem's 4x4 blocks.
INPUT_BLOCKS = (1, 2, 4)


def input_block(path: Path) -> int:
    """Which input the detector file ``path`` takes, from the shape its file
    declares (``vision.onnx_input``): 1 for the plain 3-channel image, 2 or 4
    for that many pixels square stacked as channels. ``ValueError`` for any
    other input (not a detector file)."""
    shape = input_shape(path)
    depth = shape[1] if len(shape) == 4 else None
    for block in INPUT_BLOCKS:
        if depth == 3 * block * block:
            return block
    raise ValueError(f"{path} is not a dice detector file: its input {shape} is neither "
                     "the image (1, 3, h, w) nor its 2x2 or 4x4 pixel blocks (12 or 48 channels)")


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
