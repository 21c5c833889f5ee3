"""A die's crop redrawn as a light die with dark pips: the classifier's second look.

The classifier reads white dice with black pips best; the dice it doubts are
coloured ones whose pips differ from the face in hue more than in lightness (a
dark marbled die with red pips, a red die with yellow ones). :func:`contrast_view`
paints every pixel by how far its colour lies from the face's colour (CIE Lab
distance from the median of the crop's centre), so any such die comes out as a
light face with dark pips on a dark table. ``DiceReader`` shows it to the
classifier only for doubtful dice and takes the value only when both looks agree
(docs/dice.md, "Decision").
"""

from __future__ import annotations

import cv2
import numpy as np

#: Share of the crop's side (centred) taken as the face when its colour is measured.
FACE_SHARE = 0.64
#: Percentile of the face's colour distances that maps to full darkness: the pips,
#: a few per cent of the face, lie above it.
REF_PERCENTILE = 97.0
#: The smallest distance (8-bit Lab units) that counts as full darkness: on a face
#: without pips the percentile above is mere noise, which would otherwise be
#: stretched to full contrast (camera noise of 2 grey levels stays mostly light).
MIN_REF = 8.0


def contrast_view(crop: np.ndarray) -> np.ndarray:
    """``crop`` (square BGR ``uint8``, the die centred) redrawn in grey as BGR:
    the face's colour light, colours far from it dark."""
    if crop.ndim != 3 or crop.shape[2] != 3 or crop.dtype != np.uint8:
        raise ValueError(f"contrast_view wants a BGR uint8 crop, not {crop.dtype} {crop.shape}")
    h, w = crop.shape[:2]
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).astype(np.float32)
    ry, rx = max(1, round(h * FACE_SHARE / 2)), max(1, round(w * FACE_SHARE / 2))
    core = (slice(h // 2 - ry, h // 2 + ry), slice(w // 2 - rx, w // 2 + rx))
    face = np.median(lab[core].reshape(-1, 3), axis=0)
    dist = np.sqrt(((lab - face) ** 2).sum(axis=2))
    ref = max(MIN_REF, float(np.percentile(dist[core], REF_PERCENTILE)))
    grey = (235.0 - 215.0 * np.clip(dist / ref, 0.0, 1.0)).astype(np.uint8)
    return cv2.merge([grey, grey, grey])
