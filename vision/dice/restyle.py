"""Photographed dice restyled: the same die in the same light, in other colours (training data).

The face classifier's doubts on real photographs are dice of kinds the shared
photos hold few of: marbled dice whose veins look like pips, coloured pips that
hardly stand out from a coloured face (teal with yellow pips, red with yellow,
dark marbled with red; docs/dice-history.md). Drawn dice (``vision.dice.synth``)
have those colours but not a photograph's light, lens and pip shapes. A restyled
twin keeps a photographed die's geometry, shading, glare and pips and gives its
top face a new body colour (plain or marbled with veins) and new pip colours.
``tools/train_dice_cls.py --restyle`` adds them to the real crops.

Only dice whose face is told from the table by its colour and whose pips are
found cleanly (:func:`vision.dice.pip_twins.in_pattern`) are restyled: on the
others a vein or a missed pip would be painted over with the wrong colour.
"""

from __future__ import annotations

import random

import cv2
import numpy as np

from vision.dice.palette import BGR, pick_colours
from vision.dice.pip_twins import Twin, find_pips, in_pattern, patch_round
from vision.dice.synth import marble, marble_vein


def pick_style(gen: np.random.Generator, marbled_rate: float = 0.6) -> tuple[BGR, BGR, BGR | None]:
    """A body colour, a pip colour that stands out from it (``vision.dice.palette``), and
    a vein colour (None for a plain body) for a restyled die."""
    body, pip = pick_colours(gen)
    vein = marble_vein(gen, body, pip) if gen.random() < marbled_rate else None
    return body, pip, vein


def restyled_twin(img: np.ndarray, cx: float, cy: float, size: float, value: int,
                  rng: random.Random, min_side: float = 14.0,
                  marbled_rate: float = 0.6) -> Twin | None:
    """The die at (cx, cy) (``size`` as the detector sees it, ``value`` its label) with
    its top face in a new style (:func:`pick_style`), in a patch of 2.5 sizes round it;
    None where its face is not told from the table by colour, its pips are not found
    cleanly, or its face is under ``min_side`` pixels.

    Each pixel of the face keeps how far it lay from the face's colour towards its pips'
    (so the pips' shapes and soft edges stay) and the light on it (the face's lightness
    under the pips against its median: shadows, glare, the light's fall-off); what lies
    outside the face (the table, the die's sides) stays as it was.
    """
    face = find_pips(img, cx, cy, size)
    if face is None or face.outline is None or face.side < min_side \
            or not in_pattern(face, value):
        return None
    patch, (px0, py0) = patch_round(img, cx, cy, size)
    rh, rw = face.outline.shape
    x, y = face.origin[0] - px0, face.origin[1] - py0
    region = patch[y:y + rh, x:x + rw]
    grow = max(1, round(0.04 * face.side))
    disk = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * grow + 1, 2 * grow + 1))
    pips = cv2.dilate(face.pips_mask(), disk)
    lab = cv2.cvtColor(region, cv2.COLOR_BGR2LAB)
    # The face's colour under the pips (inpainted), and how far each pixel lies from it
    # towards the pips' colour: the pips' own anti-aliased edges, kept as they were.
    under = cv2.inpaint(lab, pips, grow + 2, cv2.INPAINT_TELEA)
    body_lab = cv2.GaussianBlur(under.astype(np.float32), (0, 0), 0.7)
    labf = lab.astype(np.float32)
    pip_core = cv2.erode(pips, disk) > 0
    pip_lab = np.median(labf[pip_core] if pip_core.any() else labf[pips > 0], axis=0)
    step = pip_lab - body_lab
    along = (labf - body_lab) * step
    t = np.clip(along.sum(2) / np.maximum((step * step).sum(2), 1.0), 0.0, 1.0) * (pips > 0)
    # The light (shadows, fall-off, glare) as the face's lightness against its median;
    # an offset keeps a dark face's noise from being amplified into blotches.
    light = body_lab[..., 0]
    shade = np.clip((light + 20) / (float(np.median(light[face.outline])) + 20), 0.2, 2.5)
    gen = np.random.default_rng(rng.randrange(2 ** 32))
    body, pip, vein = pick_style(gen, marbled_rate)
    tex = (marble(gen, rh, rw, body, vein) if vein is not None
           else np.full((rh, rw, 3), body, np.uint8)).astype(np.float32)
    pa = t[..., None]
    new = (tex * (1.0 - pa) + np.array(pip, np.float32) * pa) * shade[..., None]
    # The face's outline is shrunk by a pixel (find_pips): grow it back over the edge.
    cover = cv2.dilate(face.outline.astype(np.uint8), disk).astype(np.float32)
    fa = cv2.GaussianBlur(cover, (0, 0), 0.8)[..., None]
    region[:] = np.clip(region * (1.0 - fa) + new * fa + 0.5, 0, 255).astype(np.uint8)
    return Twin(patch, cx - px0, cy - py0, value, (px0, py0))
