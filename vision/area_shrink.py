"""Shrinking an image by pixel area, fast where OpenCV's ``INTER_AREA`` is slow.

OpenCV's ``INTER_AREA`` averages each output pixel over the input area it
covers. At a whole-number factor it is fast (2028x1520 -> 1014x760: ~1 ms), at
any other factor it takes a general path: 2028x1520 -> 1024x768 (a factor of
1.98, the camera's frame to the dice detector's working size) takes 17-22 ms on
one core, a quarter of the reader's time on such a frame.

:func:`shrink_by_area` computes the same average another way where the factor
``s`` (per axis) lies near a whole number. Along one axis, the sum of the pixels
over ``[x, x + s)`` is a piecewise linear function ``G(x)`` with a corner at
every whole ``x`` and one more between (at ``x = k + 1 - frac(s)``). A small
filter of taps ``1, ..., 1, frac(s)`` gives ``G`` at every whole ``x``; bilinear
sampling of that at ``x = j * s`` (an affine warp) gives the output. The
interpolation is exact except across the extra corner, where it errs by at most
``255 * p * (1 - p) / s`` grey levels, ``p = frac(s)``: 2.5 at 1.98. So the fast
way is taken only where that bound is small (:data:`MAX_ERROR`), and
``INTER_AREA`` everywhere else. 2028x1520 -> 1024x768: ~8 ms.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

#: Largest error bound ``255 * p * (1 - p) / s`` (grey levels, per axis; ``s`` the
#: factor, ``p`` its fractional part) for which :func:`shrink_by_area` takes the
#: fast way: 2028 -> 1024 px (2.5) does, 1920 -> 1024 px (14.6) does not.
MAX_ERROR = 3.0


def fast_area_applies(in_size: tuple[int, int], out_size: tuple[int, int]) -> bool:
    """Whether :func:`shrink_by_area` takes the fast way from ``in_size`` to
    ``out_size`` (both (w, h)): a shrink by a factor from 1 to under 3 in both
    axes (beyond, the filter grows and is no faster: 4056 -> 1024 px ~60 ms either
    way), not whole in both (``INTER_AREA`` is fast there), each within
    :data:`MAX_ERROR`."""
    factors = [i / o for i, o in zip(in_size, out_size, strict=True)]
    if any(not 1.0 <= s < 3.0 for s in factors) or all(s == int(s) for s in factors):
        return False
    return all(255.0 * (s - math.floor(s)) * (1.0 - (s - math.floor(s))) / s <= MAX_ERROR
               for s in factors)


def _box_taps(s: float) -> np.ndarray:
    """Taps of the sum over ``[x, x + s)`` at whole ``x``, normalised to a mean."""
    whole = math.floor(s)
    taps = [1.0] * whole + ([s - whole] if s > whole else [])
    return np.asarray(taps, np.float32) / np.float32(s)


def shrink_by_area(img: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``img`` shrunk to ``size`` = (w, h) by pixel area, as ``cv2.resize(img, size,
    interpolation=cv2.INTER_AREA)`` within a few grey levels (see the module's
    docstring), ~2.5x faster where :func:`fast_area_applies`; ``INTER_AREA``
    itself elsewhere."""
    h, w = img.shape[:2]
    if not fast_area_applies((w, h), size):
        return cv2.resize(img, size, interpolation=cv2.INTER_AREA)
    sx, sy = w / size[0], h / size[1]
    kx, ky = _box_taps(sx), _box_taps(sy)
    kernel = np.outer(ky, kx)
    summed = cv2.filter2D(img, -1, kernel, anchor=(0, 0), borderType=cv2.BORDER_REPLICATE)
    to_input = np.array([[sx, 0.0, 0.0], [0.0, sy, 0.0]])
    return cv2.warpAffine(summed, to_input, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                          borderMode=cv2.BORDER_REPLICATE)
