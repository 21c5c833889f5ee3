"""Render training scenes of pip dice with Blender's Cycles (CPU, headless): physically based
marbled, translucent, opaque and pearl dice on a light tray, seen from above.

Blender comes from PyPI as the ``bpy`` module (4.5 LTS, built for Python 3.11; its Cycles has
OpenImageDenoise), in a venv of its own, outside the repo::

    python3.11 -m venv /tmp/bpyvenv && /tmp/bpyvenv/bin/pip install 'bpy==4.5.*'
    /tmp/bpyvenv/bin/python tools/render_dice_pbr.py --out /tmp/pbr/batch1 --scenes 300 --seed 1

(``blender -b --python-exit-code 1 -P tools/render_dice_pbr.py -- ARGS`` runs it too.)
Rendering uses one thread unless ``--threads`` says otherwise.

Each scene ``N`` (0-based) gives ``OUT/scene_NNNNN.png`` and ``OUT/scene_NNNNN.json``, a list
of dice: ``{"value": 1..6 (top face), "center": [x, y] (pixel centre of the top face),
"side_px": the top face's side as seen, "corners": its four corners in pixels, "box": [x0, y0,
x1, y1] around the whole cube, "kind": body material}``, all projected from the 3D top face
through the camera. Scene ``N`` depends on ``--seed`` and ``N`` alone.

Unless ``--clean``, the picture is degraded like a phone photo downscaled to a few hundred
pixels: auto exposure, slight white-balance cast, blur, sensor noise, JPEG compression.
"""

from __future__ import annotations

import argparse
import colorsys
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

SIDE = 0.016  # die side, metres
HALF = SIDE / 2
# Face normal (die coordinates) of each value; opposite faces sum to 7.
FACE_NORMALS: dict[int, tuple[float, float, float]] = {
    1: (0, 0, 1), 6: (0, 0, -1), 2: (1, 0, 0), 5: (-1, 0, 0), 3: (0, 1, 0), 4: (0, -1, 0)
}
# Pip centres of each value in face coordinates, in units of the pip spacing.
PIPS: dict[int, list[tuple[int, int]]] = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (-1, 1), (1, -1), (1, 1)],
    5: [(-1, -1), (-1, 1), (0, 0), (1, -1), (1, 1)],
    6: [(-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)],
}

Rgb = tuple[float, float, float]


def srgb(r: int, g: int, b: int) -> Rgb:
    """An sRGB byte colour as linear RGB."""
    def lin(c: float) -> float:
        c /= 255.0
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    return (lin(r), lin(g), lin(b))


def mix(c: Rgb, other: Rgb, t: float) -> Rgb:
    """``c`` moved a fraction ``t`` of the way to ``other``."""
    return (c[0] + t * (other[0] - c[0]), c[1] + t * (other[1] - c[1]), c[2] + t * (other[2] - c[2]))


def scaled(c: Rgb, f: float) -> Rgb:
    """``c`` times ``f``, at most 1."""
    return (min(c[0] * f, 1.0), min(c[1] * f, 1.0), min(c[2] * f, 1.0))


def jitter(rng: np.random.Generator, c: Rgb, hue: float = 0.03, sat: float = 0.12, val: float = 0.15) -> Rgb:
    """``c`` (linear) with hue, saturation and value shifted a little at random."""
    h, s, v = colorsys.rgb_to_hsv(*c)
    h = (h + rng.uniform(-hue, hue)) % 1.0
    s = float(np.clip(s * (1 + rng.uniform(-sat, sat)), 0, 1))
    v = float(np.clip(v * (1 + rng.uniform(-val, val)), 0, 1))
    return colorsys.hsv_to_rgb(h, s, v)


# Marbled bodies: swirl colours, and the pip colours seen on such dice.
MARBLES: list[tuple[list[Rgb], list[Rgb]]] = [
    ([srgb(30, 110, 175), srgb(12, 12, 16)], [srgb(200, 30, 30), srgb(235, 235, 230)]),     # blue + black
    ([srgb(20, 125, 115), srgb(10, 14, 14)], [srgb(225, 200, 40), srgb(235, 235, 230)]),    # teal + black
    ([srgb(35, 135, 70), srgb(215, 195, 40)], [srgb(15, 15, 15), srgb(235, 235, 230)]),     # green + yellow
    ([srgb(30, 110, 90), srgb(60, 150, 120)], [srgb(225, 200, 40)]),                         # teal + green
    ([srgb(195, 145, 55), srgb(70, 40, 18), srgb(230, 190, 100)], [srgb(15, 12, 10)]),      # gold + brown
    ([srgb(105, 14, 22), srgb(230, 222, 220)], [srgb(240, 240, 235), srgb(15, 15, 15)]),    # dark red + white
    ([srgb(170, 60, 90), srgb(235, 220, 225)], [srgb(245, 245, 240)]),                       # pink + white
    ([srgb(75, 30, 110), srgb(225, 220, 230)], [srgb(240, 240, 235), srgb(220, 190, 50)]),  # purple + white
    ([srgb(80, 25, 110), srgb(12, 10, 14)], [srgb(230, 230, 225), srgb(200, 30, 30)]),      # purple + black
    ([srgb(150, 20, 20), srgb(12, 10, 10)], [srgb(230, 230, 225), srgb(225, 200, 40)]),     # red + black
    ([srgb(30, 70, 160), srgb(225, 225, 230)], [srgb(230, 230, 225), srgb(200, 30, 30)]),   # blue + white
    ([srgb(225, 120, 20), srgb(230, 200, 40)], [srgb(15, 15, 15)]),                           # orange + yellow
]
# How often each: the kinds the reader fails on most (blue/teal + black, gold + brown, red + white) first.
MARBLE_WEIGHTS = np.array([4, 3, 1.5, 1.5, 3, 2.5, 1.5, 1.5, 1, 1, 1, 0.5]) / 22.0
# Translucent tints (transmitted colour) and their pips.
TINTS: list[tuple[Rgb, list[Rgb]]] = [
    (srgb(220, 30, 35), [srgb(240, 240, 235), srgb(15, 15, 15)]),    # red
    (srgb(240, 120, 150), [srgb(240, 240, 235)]),                    # pink
    (srgb(40, 80, 210), [srgb(240, 240, 235), srgb(220, 200, 40)]),  # blue
    (srgb(120, 50, 180), [srgb(240, 240, 235)]),                     # purple
    (srgb(70, 70, 75), [srgb(210, 30, 30), srgb(240, 240, 235)]),    # smoke
    (srgb(40, 170, 70), [srgb(240, 240, 235), srgb(15, 15, 15)]),    # green
    (srgb(240, 160, 30), [srgb(15, 15, 15), srgb(240, 240, 235)]),   # amber
]
TINT_WEIGHTS = np.array([3, 2, 1.5, 1, 3, 1, 0.5]) / 12.0
OPAQUE: list[Rgb] = [srgb(238, 236, 230), srgb(15, 15, 17), srgb(200, 25, 25), srgb(230, 210, 30), srgb(30, 150, 60),
                     srgb(30, 70, 170), srgb(90, 30, 120), srgb(230, 110, 20), srgb(120, 70, 35), srgb(225, 120, 160)]
PIP_PAINTS: list[Rgb] = [srgb(240, 240, 235), srgb(15, 15, 15), srgb(205, 30, 30), srgb(230, 205, 40),
                         srgb(200, 160, 60)]


def lightness(c: Rgb) -> float:
    """Perceptual lightness 0..1 of a linear colour (CIE L*/100)."""
    y = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]
    return (116 * y ** (1 / 3) - 16) / 100 if y > 0.008856 else 9.033 * y


def contrasting(rng: np.random.Generator, body: Rgb, paints: list[Rgb]) -> Rgb:
    """A paint from ``paints`` that stands out from ``body`` (lightness at least 0.3 apart), as real
    dice are made; black or white if none does."""
    fits = [c for c in paints if abs(lightness(c) - lightness(body)) >= 0.3]
    if not fits:
        fits = [PIP_PAINTS[0] if lightness(body) < 0.5 else PIP_PAINTS[1]]
    return fits[int(rng.integers(len(fits)))]


@dataclass(frozen=True)
class DieShape:
    """A die mesh variant: corner rounding, pip opening radius, dent depth and spacing (metres)."""

    bevel: float
    pip_radius: float
    pip_depth: float
    spacing: float


def die_mesh(shape: DieShape, n: int = 64) -> Any:
    """A rounded 16 mm cube with spherical pip dents; point attribute ``pipd`` is the signed
    distance into the nearest pip's opening (positive inside), for the paint."""
    import bpy

    h, r, a, d = HALF, shape.bevel, shape.pip_radius, shape.pip_depth
    sphere_r = (a * a + d * d) / (2 * d)
    g = np.linspace(-h, h, n + 1)
    uu, vv = np.meshgrid(g, g, indexing="ij")
    verts, faces, pipd = [], [], []
    idx = np.arange((n + 1) ** 2).reshape(n + 1, n + 1)
    quads = np.stack([idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]], -1).reshape(-1, 4)
    for k, (value, normal) in enumerate(FACE_NORMALS.items()):
        nrm = np.array(normal, float)
        t1 = np.array([nrm[1], nrm[2], nrm[0]]) if nrm[0] == 0 else np.array([0.0, 1.0, 0.0])
        t1 = np.abs(t1) if nrm[0] == 0 else t1
        t2 = np.cross(nrm, t1)
        p = nrm * h + uu[..., None] * t1 + vv[..., None] * t2
        inner = np.clip(p, -(h - r), h - r)
        off = p - inner
        length = np.linalg.norm(off, axis=-1, keepdims=True)
        pos = inner + r * off / np.maximum(length, 1e-12)
        centres = np.array(PIPS[value], float) * shape.spacing
        rho = np.min(np.hypot(uu[..., None] - centres[:, 0], vv[..., None] - centres[:, 1]), axis=-1)
        dent = np.where(rho < a, np.sqrt(np.maximum(sphere_r**2 - rho**2, 0)) - (sphere_r - d), 0.0)
        pos = pos - nrm * dent[..., None]
        verts.append(pos.reshape(-1, 3))
        pipd.append(np.clip(a - rho, -1e-3, 1e-3).reshape(-1))
        faces.append(quads + k * (n + 1) ** 2)
    all_v = np.concatenate(verts)
    all_f = np.concatenate(faces)
    all_d = np.concatenate(pipd)
    key = np.round(all_v / 1e-7).astype(np.int64)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    all_f = inverse[all_f]
    mesh = bpy.data.meshes.new(f"die_{shape.bevel:.4f}_{shape.pip_radius:.4f}")
    mesh.from_pydata(all_v[first].tolist(), [], all_f.tolist())
    attr = mesh.attributes.new("pipd", "FLOAT", "POINT")
    attr.data.foreach_set("value", all_d[first].astype(np.float32))
    mesh.shade_smooth()
    mesh.validate()
    return mesh


def _nodes(mat: Any) -> tuple[Any, Any]:
    mat.use_nodes = True
    nt = mat.node_tree
    nt.nodes.clear()
    return nt.nodes, nt.links


def _principled(nodes: Any, **inputs: Any) -> Any:
    bsdf = nodes.new("ShaderNodeBsdfPrincipled")
    for name, value in inputs.items():
        bsdf.inputs[name.replace("_", " ")].default_value = value
    return bsdf


def _rgba(c: Rgb) -> tuple[float, float, float, float]:
    return (c[0], c[1], c[2], 1.0)


def die_material(rng: np.random.Generator, name: str) -> tuple[Any, str]:
    """A random die material (body and pip paint, mixed by the mesh's ``pipd``) and its kind."""
    import bpy

    mat = bpy.data.materials.new(name)
    nodes, links = _nodes(mat)
    out = nodes.new("ShaderNodeOutputMaterial")
    kind = str(rng.choice(["marbled", "translucent", "opaque", "pearl"], p=[0.42, 0.28, 0.2, 0.1]))
    coat = float(rng.uniform(0.5, 1.0))
    coat_rough = float(rng.uniform(0.02, 0.1))
    if kind == "translucent":
        tint, pips = TINTS[rng.choice(len(TINTS), p=TINT_WEIGHTS)]
        tint = jitter(rng, tint)
        surface = mix(tint, (1.0, 1.0, 1.0), 0.6)  # the surface tints a little, the volume most
        body = _principled(nodes, Base_Color=_rgba(surface), Roughness=float(rng.uniform(0.0, 0.12)), IOR=1.5,
                           Transmission_Weight=1.0, Coat_Weight=0.0)
        vol = nodes.new("ShaderNodeVolumeAbsorption")
        vol.inputs["Color"].default_value = _rgba(tint)
        vol.inputs["Density"].default_value = float(rng.uniform(0.2, 2.0)) / SIDE
        if rng.random() < 0.6:  # a little milkiness
            scat = nodes.new("ShaderNodeVolumeScatter")
            scat.inputs["Color"].default_value = _rgba(tint)
            scat.inputs["Density"].default_value = float(rng.uniform(0.2, 1.5)) / SIDE
            add = nodes.new("ShaderNodeAddShader")
            links.new(vol.outputs[0], add.inputs[0])
            links.new(scat.outputs[0], add.inputs[1])
            vol = add
        links.new(vol.outputs[0], out.inputs["Volume"])
    elif kind in ("marbled", "pearl") and (kind == "marbled" or rng.random() < 0.6):
        colours, pips = MARBLES[rng.choice(len(MARBLES), p=MARBLE_WEIGHTS)]
        colours = [jitter(rng, c) for c in colours]
        body = _principled(nodes, Roughness=float(rng.uniform(0.15, 0.4)), Coat_Weight=coat,
                           Coat_Roughness=coat_rough)
        coords = nodes.new("ShaderNodeTexCoord")
        mapping = nodes.new("ShaderNodeMapping")
        mapping.inputs["Location"].default_value = tuple(rng.uniform(-50, 50, 3))
        mapping.inputs["Rotation"].default_value = tuple(rng.uniform(0, 2 * math.pi, 3))
        mapping.inputs["Scale"].default_value = (1 / SIDE,) * 3
        links.new(coords.outputs["Object"], mapping.inputs["Vector"])
        ramp = nodes.new("ShaderNodeValToRGB")
        els = ramp.color_ramp.elements
        tex = nodes.new("ShaderNodeTexNoise")
        tex.inputs["Scale"].default_value = float(rng.uniform(1.5, 3.5))  # a few blobs on every face
        tex.inputs["Detail"].default_value = float(rng.uniform(1.5, 3.5))
        tex.inputs["Roughness"].default_value = float(rng.uniform(0.45, 0.6))
        tex.inputs["Distortion"].default_value = float(rng.uniform(0.5, 2.5))
        if rng.random() < 0.65:  # swirls: two colours in blobs and streaks, split at an iso-line of the noise
            split, soft = float(rng.uniform(0.45, 0.55)), float(rng.uniform(0.02, 0.1))
            els[0].position, els[0].color = split - soft, _rgba(colours[0])
            els[1].position, els[1].color = split + soft, _rgba(colours[1])
        else:  # veins of the second colour along iso-lines, through the first
            width, soft = float(rng.uniform(0.01, 0.05)), float(rng.uniform(0.005, 0.03))
            els[0].position, els[0].color = 0.5 - width - soft, _rgba(colours[0])
            els[1].position, els[1].color = 0.5 - width, _rgba(colours[1])
            e = els.new(0.5 + width)
            e.color = _rgba(colours[1])
            e = els.new(min(0.5 + width + soft, 1.0))
            e.color = _rgba(colours[0])
        links.new(mapping.outputs["Vector"], tex.inputs["Vector"])
        if len(colours) > 2:
            e = els.new(min(els[len(els) - 1].position + 0.12, 0.99))
            e.color = _rgba(colours[2])
        links.new(tex.outputs["Fac"], ramp.inputs["Fac"])
        links.new(ramp.outputs["Color"], body.inputs["Base Color"])
        glassy = rng.random() < 0.45
        if glassy:  # one of the colours clear resin: light goes in there and is absorbed inside
            clear = int(rng.integers(2))
            mask = nodes.new("ShaderNodeMapRange")
            mask.inputs["From Min"].default_value = els[0].position
            mask.inputs["From Max"].default_value = els[1].position
            weight = float(rng.uniform(0.5, 0.95))
            mask.inputs["To Min"].default_value = weight if clear == 0 else 0.0
            mask.inputs["To Max"].default_value = 0.0 if clear == 0 else weight
            links.new(tex.outputs["Fac"], mask.inputs["Value"])
            links.new(mask.outputs["Result"], body.inputs["Transmission Weight"])
            vol = nodes.new("ShaderNodeVolumeAbsorption")
            vol.inputs["Color"].default_value = _rgba(colours[clear])
            vol.inputs["Density"].default_value = float(rng.uniform(1.0, 4.0)) / SIDE
            links.new(vol.outputs[0], out.inputs["Volume"])
        elif rng.random() < 0.7:  # swirls lit from inside
            body.inputs["Subsurface Weight"].default_value = float(rng.uniform(0.2, 0.8))
            body.inputs["Subsurface Radius"].default_value = (1.0, 0.6, 0.4)
            body.inputs["Subsurface Scale"].default_value = float(rng.uniform(0.001, 0.004))
        if kind == "pearl" or rng.random() < 0.35:  # shimmer in one of the colours
            metal = nodes.new("ShaderNodeMapRange")
            metal.inputs["To Min"].default_value = float(rng.uniform(0.1, 0.45))
            metal.inputs["To Max"].default_value = 0.0
            links.new(tex.outputs["Fac"], metal.inputs["Value"])
            links.new(metal.outputs["Result"], body.inputs["Metallic"])
        if rng.random() < 0.25:  # another paint that stands out from the swirl's mean colour
            mean = mix(colours[0], colours[1], 0.5)
            pips = [contrasting(rng, mean, PIP_PAINTS)]
    else:
        base = jitter(rng, OPAQUE[rng.integers(len(OPAQUE))])
        body = _principled(nodes, Base_Color=_rgba(base), Roughness=float(rng.uniform(0.15, 0.45)),
                           Coat_Weight=coat, Coat_Roughness=coat_rough)
        if kind == "pearl":
            body.inputs["Metallic"].default_value = float(rng.uniform(0.15, 0.5))
            body.inputs["Sheen Weight"].default_value = float(rng.uniform(0.3, 1.0))
        if rng.random() < 0.3:
            body.inputs["Subsurface Weight"].default_value = float(rng.uniform(0.1, 0.5))
            body.inputs["Subsurface Scale"].default_value = float(rng.uniform(0.001, 0.003))
        pips = [contrasting(rng, base, PIP_PAINTS)]
    # Pip paint: a contrasting colour, glossy.
    pip_c = pips[0] if rng.random() < 0.6 else pips[rng.integers(len(pips))]  # mostly the usual paint
    paint = _principled(nodes, Base_Color=_rgba(jitter(rng, pip_c, val=0.1)), Roughness=float(rng.uniform(0.2, 0.45)),
                        Coat_Weight=float(rng.uniform(0.3, 1.0)), Coat_Roughness=coat_rough)
    attr = nodes.new("ShaderNodeAttribute")
    attr.attribute_name = "pipd"
    edge = nodes.new("ShaderNodeMath")
    edge.operation = "MULTIPLY_ADD"
    edge.use_clamp = True
    edge.inputs[1].default_value = 1 / 0.00008  # paint edge 0.08 mm wide
    edge.inputs[2].default_value = 0.5
    links.new(attr.outputs["Fac"], edge.inputs[0])
    mixer = nodes.new("ShaderNodeMixShader")
    links.new(edge.outputs[0], mixer.inputs["Fac"])
    links.new(body.outputs[0], mixer.inputs[1])
    links.new(paint.outputs[0], mixer.inputs[2])
    links.new(mixer.outputs[0], out.inputs["Surface"])
    return mat, kind


def grain_image(size: int = 512, seed: int = 0) -> Any:
    """A tileable grey texture of paper grain with faint blotches (0..1, mean 0.5), made once."""
    import bpy

    rng = np.random.default_rng(seed)
    freq = np.fft.fftfreq(size)
    f = np.hypot(*np.meshgrid(freq, freq, indexing="ij"))
    img = np.zeros((size, size))
    for fc, weight in ((0.35, 1.0), (0.08, 0.6), (0.01, 0.8)):  # fibres, speckle, blotches
        spec = np.fft.fft2(rng.normal(size=(size, size))) * np.exp(-((f / fc) ** 2))
        layer = np.real(np.fft.ifft2(spec))
        img += weight * layer / layer.std()
    img = np.clip(0.5 + img / (6 * img.std()), 0, 1)
    image = bpy.data.images.new("grain", size, size, alpha=False, float_buffer=True)
    image.colorspace_settings.name = "Non-Color"
    rgba = np.repeat(img[..., None], 4, axis=2).astype(np.float32)
    rgba[..., 3] = 1
    image.pixels.foreach_set(rgba.ravel())
    image.pack()
    return image


def tray_material(rng: np.random.Generator, grain: Any) -> Any:
    """A light card: white, light grey or slightly warm, with a faint grain (``grain`` image)."""
    import bpy

    mat = bpy.data.materials.new("tray")
    nodes, links = _nodes(mat)
    out = nodes.new("ShaderNodeOutputMaterial")
    base = [srgb(235, 235, 232), srgb(200, 200, 198), srgb(215, 214, 210), srgb(225, 220, 210)][rng.integers(4)]
    base = jitter(rng, base, hue=0.02, sat=0.3, val=0.08)
    bsdf = _principled(nodes, Roughness=float(rng.uniform(0.5, 0.9)))
    coords = nodes.new("ShaderNodeTexCoord")
    mapping = nodes.new("ShaderNodeMapping")
    mapping.inputs["Location"].default_value = (*rng.uniform(0, 1, 2), 0.0)
    mapping.inputs["Rotation"].default_value = (0.0, 0.0, float(rng.uniform(0, 2 * math.pi)))
    mapping.inputs["Scale"].default_value = (float(rng.uniform(3, 12)),) * 3  # texture tile 8..33 cm
    tex = nodes.new("ShaderNodeTexImage")
    tex.image = grain
    tex.extension = "REPEAT"
    tex.interpolation = "Linear"
    links.new(coords.outputs["Object"], mapping.inputs["Vector"])
    links.new(mapping.outputs["Vector"], tex.inputs["Vector"])
    ramp = nodes.new("ShaderNodeValToRGB")
    amount = float(rng.uniform(0.03, 0.15))
    ramp.color_ramp.elements[0].color = _rgba(scaled(base, 1 - amount))
    ramp.color_ramp.elements[1].color = _rgba(scaled(base, 1 + amount))
    links.new(tex.outputs["Color"], ramp.inputs["Fac"])
    links.new(ramp.outputs["Color"], bsdf.inputs["Base Color"])
    links.new(bsdf.outputs[0], out.inputs["Surface"])
    return mat


def setup_render(size: int, samples: int, threads: int) -> Any:
    """An empty scene set up for Cycles on the CPU, denoised, writing linear EXR."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.render.engine = "CYCLES"
    cy = scene.cycles
    cy.device = "CPU"
    cy.samples = samples
    cy.use_adaptive_sampling = True
    cy.adaptive_threshold = 0.05
    cy.use_denoising = True
    cy.denoiser = "OPENIMAGEDENOISE"
    cy.denoising_input_passes = "RGB_ALBEDO_NORMAL"
    cy.denoising_prefilter = "FAST"
    cy.use_light_tree = False  # two lights and the world: the tree only costs time
    cy.max_bounces = 8
    cy.diffuse_bounces = 1
    cy.glossy_bounces = 2
    cy.transmission_bounces = 8
    cy.volume_bounces = 1
    cy.transparent_max_bounces = 4
    cy.caustics_reflective = False
    cy.caustics_refractive = True
    cy.blur_glossy = 1.0
    cy.sample_clamp_indirect = 5.0
    cy.pixel_filter_type = "BLACKMAN_HARRIS"
    scene.render.threads_mode = "FIXED"
    scene.render.threads = threads
    scene.render.resolution_x = scene.render.resolution_y = size
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "OPEN_EXR"
    scene.render.image_settings.color_depth = "32"
    scene.render.image_settings.exr_codec = "NONE"
    scene.view_settings.view_transform = "Standard"
    scene.view_settings.look = "None"
    scene.view_settings.exposure = 0.0
    scene.render.film_transparent = False
    return scene


def clear_scene(keep_meshes: set[str]) -> None:
    """Remove last scene's objects, materials, lights, cameras and worlds (not the die meshes)."""
    import bpy

    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj, do_unlink=True)
    for coll in (bpy.data.materials, bpy.data.lights, bpy.data.cameras, bpy.data.worlds):
        for block in list(coll):
            coll.remove(block)
    for mesh in list(bpy.data.meshes):
        if mesh.name not in keep_meshes:
            bpy.data.meshes.remove(mesh)


def look_at(location: Any, target: Any, roll: float) -> Any:
    """World matrix of a camera or light at ``location`` looking at ``target``, turned by ``roll``."""
    from mathutils import Matrix, Vector

    direction = Vector(target) - Vector(location)
    rot = direction.to_track_quat("-Z", "Y").to_matrix().to_4x4()
    return Matrix.Translation(Vector(location)) @ rot @ Matrix.Rotation(roll, 4, "Z")


def add_light(name: str, kind: str, size: float, power: float, location: Any, target: Any) -> Any:
    """An area light of ``size`` metres and ``power`` W aimed at ``target``."""
    import bpy

    light = bpy.data.lights.new(name, "AREA")
    light.shape = kind
    light.size = size
    light.energy = power
    obj = bpy.data.objects.new(name, light)
    bpy.context.scene.collection.objects.link(obj)
    obj.matrix_world = look_at(location, target, 0.0)
    return obj


class Renderer:
    """Builds and renders scenes; die meshes are made once and shared."""

    def __init__(self, size: int, samples: int, threads: int) -> None:
        self.size = size
        self.scene = setup_render(size, samples, threads)
        self.meshes: dict[DieShape, Any] = {}
        self.grain = grain_image()
        self.tmp = Path(tempfile.mkdtemp(prefix="render_dice_pbr_"))

    def mesh(self, shape: DieShape) -> Any:
        """The shared mesh of ``shape``."""
        if shape not in self.meshes:
            self.meshes[shape] = die_mesh(shape)
        return self.meshes[shape]

    def build(self, rng: np.random.Generator) -> list[dict[str, Any]]:
        """Lay out one random scene; the dice's labels (before projection: world geometry)."""
        import bpy
        from bpy_extras.object_utils import world_to_camera_view
        from mathutils import Matrix, Vector

        clear_scene({m.name for m in self.meshes.values()})
        scene = self.scene
        coll = scene.collection

        # The room: bright above (ceiling), darker toward the horizon (walls, furniture).
        world = bpy.data.worlds.new("room")
        world.use_nodes = True
        wn, wl = world.node_tree.nodes, world.node_tree.links
        bg = wn["Background"]
        coords = wn.new("ShaderNodeTexCoord")
        sep = wn.new("ShaderNodeSeparateXYZ")
        ramp = wn.new("ShaderNodeValToRGB")
        grey = float(rng.uniform(0.7, 1.0))
        warm = float(rng.uniform(-0.06, 0.06))
        ceiling = (grey * (1 + warm), grey, grey * (1 - warm), 1.0)
        low = float(rng.uniform(0.1, 0.4))
        ramp.color_ramp.elements[0].position = 0.0
        ramp.color_ramp.elements[0].color = tuple(c * low for c in ceiling[:3]) + (1.0,)
        ramp.color_ramp.elements[1].color = ceiling
        wl.new(coords.outputs["Generated"], sep.inputs[0])
        wl.new(sep.outputs["Z"], ramp.inputs["Fac"])
        wl.new(ramp.outputs["Color"], bg.inputs["Color"])
        bg.inputs["Strength"].default_value = float(rng.uniform(0.4, 0.9))
        world.cycles.sampling_method = "NONE"  # smooth: found by the surfaces' own rays; a map costs 1 s a scene
        scene.world = world

        bpy.ops.mesh.primitive_plane_add(size=1.0)
        tray = bpy.context.active_object
        tray.data.materials.append(tray_material(rng, self.grain))

        # Camera: down at 0..25 degrees off vertical, at phone distance, a lens giving the wanted die size.
        tilt = math.radians(float(rng.uniform(0, 25)))
        azim = float(rng.uniform(0, 2 * math.pi))
        dist = float(rng.uniform(0.25, 0.55))
        side_px = float(rng.uniform(29, 64))
        cam_data = bpy.data.cameras.new("cam")
        cam_data.sensor_fit = "HORIZONTAL"
        cam_data.sensor_width = 36.0
        cam_data.lens = side_px * 36.0 * dist / (self.size * SIDE)
        cam = bpy.data.objects.new("cam", cam_data)
        coll.objects.link(cam)
        target = Vector((0.0, 0.0, SIDE))
        loc = target + dist * Vector((math.sin(tilt) * math.cos(azim), math.sin(tilt) * math.sin(azim), math.cos(tilt)))
        cam.matrix_world = look_at(loc, target, float(rng.uniform(0, 2 * math.pi)))
        scene.camera = cam

        # Lights: a large soft one 15-45 degrees off the zenith and a small, sharper one lower down
        # (their power set for an irradiance at the dice), and the room (world) all round.
        for name, outline, size, dist, zenith, irradiance in (
            ("soft", str(rng.choice(["RECTANGLE", "DISK"])), rng.uniform(0.6, 1.8), rng.uniform(1.5, 2.5),
             rng.uniform(15, 45), rng.uniform(0.4, 0.9)),
            ("small", "DISK", rng.uniform(0.02, 0.2), rng.uniform(0.6, 1.5), rng.uniform(5, 45), rng.uniform(0.1, 0.7)),
        ):
            zen, az = math.radians(float(zenith)), float(rng.uniform(0, 2 * math.pi))
            loc_l = float(dist) * Vector((math.sin(zen) * math.cos(az), math.sin(zen) * math.sin(az), math.cos(zen)))
            power = math.pi**2 * float(irradiance) * float(dist) ** 2
            add_light(name, outline, float(size), power, loc_l, (0, 0, 0))

        bpy.context.view_layer.update()
        # Dice: centres where rays through random image points meet the plane of the top faces.
        n_dice = int(rng.choice([1, 2, 3, 4], p=[0.2, 0.3, 0.3, 0.2]))
        shape = DieShape(bevel=float(rng.choice([0.0018, 0.0024, 0.003])),
                         pip_radius=float(rng.choice([0.0014, 0.0016, 0.0018])),
                         pip_depth=0.0005, spacing=float(rng.choice([0.0044, 0.0048])))
        mesh = self.mesh(shape)
        cam_m = cam.matrix_world
        half_w = 18.0 / cam_data.lens
        placed: list[tuple[Any, float]] = []  # (centre xy, yaw)
        for _ in range(60):
            if len(placed) == n_dice:
                break
            if placed and rng.random() < 0.2:  # face to face with one already placed
                base_c, yaw = placed[int(rng.integers(len(placed)))]
                ang = yaw + float(rng.integers(4)) * math.pi / 2
                c = base_c + Vector((math.cos(ang), math.sin(ang))) * (SIDE + 0.0002)
                touching = True
            else:
                u, v = rng.uniform(0.18, 0.82, 2)
                ray = cam_m.to_3x3() @ Vector(((u - 0.5) * 2 * half_w, (v - 0.5) * 2 * half_w, -1.0))
                origin = cam_m.translation
                t = (SIDE - origin.z) / ray.z
                hit = origin + t * ray
                c = Vector((hit.x, hit.y))
                yaw = float(rng.uniform(0, 2 * math.pi))
                touching = False
            ok = all((c - pc).length > (SIDE * 1.02 if touching else SIDE * 1.5) for pc, _ in placed)
            if touching:
                ok = ok and all((c - pc).length > SIDE * 0.99 for pc, _ in placed)
            if ok:
                placed.append((c, yaw))

        labels: list[tuple[int, str, float, float, float]] = []  # value, kind, x, y, yaw
        for i, (c, yaw) in enumerate(placed):
            value = int(rng.integers(1, 7))
            face_up = Vector(FACE_NORMALS[value]).rotation_difference(Vector((0, 0, 1))).to_matrix().to_4x4()
            world_m = Matrix.Translation((c.x, c.y, HALF)) @ Matrix.Rotation(yaw, 4, "Z") @ face_up
            obj = bpy.data.objects.new(f"die{i}", mesh)
            coll.objects.link(obj)
            mat, kind = die_material(rng, f"die{i}")
            obj.matrix_world = world_m
            if not mesh.materials:
                mesh.materials.append(None)
            obj.material_slots[0].link = "OBJECT"  # each die its own material on the shared mesh
            obj.material_slots[0].material = mat
            labels.append((value, kind, c.x, c.y, yaw))
        bpy.context.view_layer.update()

        size = self.size

        def px(co: Any) -> tuple[float, float]:
            p = world_to_camera_view(scene, cam, Vector(co))
            return (p.x * size, (1.0 - p.y) * size)

        out = []
        for value, kind, x, y, yaw in labels:
            rot = Matrix.Rotation(yaw, 3, "Z")
            top = [Vector((x, y, SIDE)) + rot @ Vector((sx * HALF, sy * HALF, 0)) for sx, sy in
                   ((-1, -1), (1, -1), (1, 1), (-1, 1))]
            corners = [px(co) for co in top]
            cube = corners + [px(co - Vector((0, 0, SIDE))) for co in top]
            side = sum(math.dist(corners[k], corners[(k + 1) % 4]) for k in range(4)) / 4
            cx, cy = px((x, y, SIDE))
            xs, ys = [p[0] for p in cube], [p[1] for p in cube]
            out.append({"value": value, "center": [round(cx, 2), round(cy, 2)], "side_px": round(side, 2),
                        "corners": [[round(a, 2), round(b, 2)] for a, b in corners],
                        "box": [round(min(xs), 2), round(min(ys), 2), round(max(xs), 2), round(max(ys), 2)],
                        "kind": kind})
        return out

    def render(self) -> np.ndarray:
        """Render the current scene; linear RGB float32, rows top first."""
        import bpy

        path = self.tmp / "frame.exr"
        self.scene.render.filepath = str(path)
        bpy.ops.render.render(write_still=True)
        img = bpy.data.images.load(str(path))
        w, h = img.size
        buf = np.empty(w * h * 4, np.float32)
        img.pixels.foreach_get(buf)
        bpy.data.images.remove(img)
        return buf.reshape(h, w, 4)[::-1, :, :3].copy()

    def save_png(self, rgb8: np.ndarray, path: Path, jpeg_quality: int | None) -> None:
        """Write ``rgb8`` (uint8, rows top first) as PNG, after a JPEG round trip if asked."""
        import bpy

        h, w = rgb8.shape[:2]
        img = bpy.data.images.new("out", w, h, alpha=False)
        rgba = np.ones((h, w, 4), np.float32)
        rgba[..., :3] = rgb8[::-1] / 255.0
        img.pixels.foreach_set(rgba.ravel())
        if jpeg_quality is not None:
            jpg = self.tmp / "frame.jpg"
            img.filepath_raw = str(jpg)
            img.file_format = "JPEG"
            img.save(quality=jpeg_quality)
            bpy.data.images.remove(img)
            img = bpy.data.images.load(str(jpg))
            buf = np.empty(h * w * 4, np.float32)
            img.pixels.foreach_get(buf)
            bpy.data.images.remove(img)
            img = bpy.data.images.new("out", w, h, alpha=False)
            img.pixels.foreach_set(buf)
        img.filepath_raw = str(path)
        img.file_format = "PNG"
        img.save()
        bpy.data.images.remove(img)


def gaussian_blur(img: np.ndarray, sigma: float) -> np.ndarray:
    """Separable Gaussian blur of an HxWxC float image (edges clamped)."""
    if sigma <= 0:
        return img
    r = max(1, int(math.ceil(3 * sigma)))
    k = np.exp(-0.5 * (np.arange(-r, r + 1) / sigma) ** 2)
    k /= k.sum()
    pad = np.pad(img, ((r, r), (r, r), (0, 0)), mode="edge")
    tmp = np.zeros((img.shape[0], pad.shape[1], img.shape[2]))
    for i in range(2 * r + 1):
        tmp += k[i] * pad[i:i + img.shape[0]]
    out = np.zeros(img.shape)
    for i in range(2 * r + 1):
        out += k[i] * tmp[:, i:i + img.shape[1]]
    return out


def develop(lin: np.ndarray, rng: np.random.Generator, clean: bool) -> np.ndarray:
    """Linear render -> sRGB uint8 like a phone: auto exposure on the tray, soft highlight roll-off,
    and unless ``clean`` a white-balance cast, blur and noise."""
    lum = lin @ np.array([0.2126, 0.7152, 0.0722], np.float32)
    target = float(rng.uniform(0.66, 0.82)) if not clean else 0.75
    target_lin = ((target + 0.055) / 1.055) ** 2.4
    x = lin * (target_lin / max(float(np.median(lum)), 1e-6))
    if not clean:
        x = x * (1 + rng.uniform(-0.04, 0.04, 3)).astype(np.float32)
    knee = 0.8
    x = np.where(x < knee, x, knee + (1 - knee) * np.tanh((x - knee) / (1 - knee)))
    x = np.clip(x, 0, 1)
    s = np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)
    if not clean:  # a phone's punchier look: more contrast and saturation
        k = float(rng.uniform(0.0, 0.3))
        s = (1 - k) * s + k * s * s * (3 - 2 * s)
        grey = s @ np.array([0.299, 0.587, 0.114])
        s = np.clip(grey[..., None] + float(rng.uniform(0.85, 1.15)) * (s - grey[..., None]), 0, 1)
        s = gaussian_blur(s, float(rng.uniform(0.4, 1.0)))
        sigma = float(rng.uniform(0.002, 0.008))
        fine = rng.normal(0, sigma, s.shape[:2] + (1,)) + rng.normal(0, sigma * 0.4, s.shape)
        coarse = rng.normal(0, sigma, (s.shape[0] // 2 + 1, s.shape[1] // 2 + 1, 1))
        coarse = np.repeat(np.repeat(coarse, 2, 0), 2, 1)[: s.shape[0], : s.shape[1]]
        s = s + gaussian_blur(coarse, 0.7) + fine
    return np.clip(np.round(s * 255), 0, 255).astype(np.uint8)


def main(argv: list[str] | None = None) -> int:
    """Render ``--scenes`` scenes into ``--out``."""
    if argv is None:
        argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else sys.argv[1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--scenes", type=int, required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="first scene number (to continue a batch)")
    ap.add_argument("--clean", action="store_true", help="no blur, noise, colour cast or JPEG")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if hasattr(os, "sched_setaffinity"):  # before bpy starts its thread pool: no idle worker spinning on a core
        os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[-args.threads:]))
    renderer = Renderer(args.size, args.samples, args.threads)
    t0 = time.perf_counter()
    for n in range(args.start, args.start + args.scenes):
        rng = np.random.default_rng([args.seed, n])
        dice = renderer.build(rng)
        lin = renderer.render()
        post = np.random.default_rng([args.seed, n, 1])
        rgb8 = develop(lin, post, args.clean)
        quality = None if args.clean else int(post.integers(60, 92))
        renderer.save_png(rgb8, args.out / f"scene_{n:05d}.png", quality)
        (args.out / f"scene_{n:05d}.json").write_text(json.dumps(dice) + "\n")
    dt = time.perf_counter() - t0
    print(f"{args.scenes} scenes in {dt:.1f} s ({dt / max(args.scenes, 1):.2f} s/scene)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
