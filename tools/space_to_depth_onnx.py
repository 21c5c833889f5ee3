"""Write a dice detector's space-to-depth twin (``dice.onnx`` -> ``dice_s2d.onnx``).

The detector's first layer is a 3x3 convolution with stride 2 over the whole
frame; OpenCV 5's dnn engine spends about a third of the main pass on it and
on changing the 3-channel input's layout. The same layer is exactly a 2x2
convolution with stride 1 over the frame's 2x2 pixel blocks stacked as 12
channels (channel ``(2 * dy + dx) * 3 + c``: colour ``c`` at row offset ``dy``,
column offset ``dx``), padded by one block at the top and left. The twin holds
that layer instead; the reader fills its input in numpy
(``vision.dice.space_to_depth.s2d_blob``) and uses it only on OpenCV 5's engine,
where a whole read takes ~0.92x the time (docs/dice-history.md, rule 32).
``tools/train_dice.py`` writes the twin beside every detector it exports; for
a detector file of other origin::

    /tmp/trainvenv/bin/python tools/space_to_depth_onnx.py vision/models/dice.onnx

writes ``vision/models/dice_s2d.onnx`` (or the path given second). Needs the
``onnx`` package (the training environment has it), never at run time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from vision.dice.space_to_depth import space_to_depth_twin  # noqa: E402

#: Kernel tap k (0..2) of a stride-2 convolution padded by 1 -> (tap of the 2x2
#: convolution over blocks, offset inside the block): tap 0 reads the last pixel
#: of the block before, taps 1 and 2 the two pixels of the block itself.
_TAPS = {0: (0, 1), 1: (1, 0), 2: (1, 1)}


def space_to_depth_weights(w: np.ndarray) -> np.ndarray:
    """The 2x2 kernel over 2x2-pixel blocks (O x 4C x 2 x 2) computing what the
    3x3 stride-2 kernel ``w`` (O x C x 3 x 3, padding 1) computes on the pixels."""
    if w.ndim != 4 or w.shape[2:] != (3, 3):
        raise ValueError(f"want a 3x3 kernel (O x C x 3 x 3), not shape {w.shape}")
    out, chans = w.shape[:2]
    v = np.zeros((out, 4 * chans, 2, 2), w.dtype)
    for ky, (a, dy) in _TAPS.items():
        for kx, (b, dx) in _TAPS.items():
            for c in range(chans):
                v[:, (2 * dy + dx) * chans + c, a, b] = w[:, c, ky, kx]
    return v


def space_to_depth_model(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` whose first node, a 3x3 stride-2 convolution padded by 1
    on the input ``image`` (1 x 3 x H x W), reads the 2x2-block image instead
    (1 x 12 x H/2 x W/2). Raises ``ValueError`` on any other first layer."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    first = g.node[0]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in first.attribute}
    if (first.op_type != "Conv" or first.input[0] != g.input[0].name
            or list(attrs.get("strides", [])) != [2, 2] or list(attrs.get("pads", [])) != [1, 1, 1, 1]
            or list(attrs.get("dilations", [1, 1])) != [1, 1] or attrs.get("group", 1) != 1):
        raise ValueError("the first node is not a 3x3 convolution of stride 2, padding 1 on the input")
    inits = {t.name: t for t in g.initializer}
    weight = inits[first.input[1]]
    weight.CopyFrom(numpy_helper.from_array(
        space_to_depth_weights(numpy_helper.to_array(weight)), weight.name))
    for a in first.attribute:
        if a.name == "kernel_shape":
            a.ints[:] = [2, 2]
        elif a.name == "strides":
            a.ints[:] = [1, 1]
        elif a.name == "pads":
            a.ints[:] = [1, 1, 0, 0]  # top, left, bottom, right: the block before
    dims = g.input[0].type.tensor_type.shape.dim
    dims[1].dim_value *= 4
    for d, name in zip(dims[2:], ("h2", "w2"), strict=True):
        d.dim_param = name  # half the frame's height and width
    onnx.checker.check_model(m)
    return m


def write_twin(path: Path, out: Path | None = None) -> Path:
    """Write the space-to-depth twin of the detector file ``path``; return where."""
    out = out or space_to_depth_twin(path)
    onnx.save(space_to_depth_model(onnx.load(str(path))), str(out))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", type=Path, help="a detector .onnx (vision/models/dice.onnx)")
    ap.add_argument("out", type=Path, nargs="?", default=None, help="default: MODEL's _s2d twin")
    args = ap.parse_args()
    print(write_twin(args.model, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
