"""Average the weights of ONNX models of one network (a "model soup").

Two fine-tunes of one model sometimes read better averaged than either alone
(a candidate dice classifier of 2026-11-25 was such an average; docs/dice-history.md,
"Adopted on 2026-11-25")::

    /tmp/trainvenv/bin/python tools/average_onnx.py OUT.onnx A.onnx B.onnx --weight 0.3

gives ``0.3 * A + 0.7 * B`` for every floating-point weight; the graph and the
integer tensors (shapes) are A's. Needs the ``onnx`` package (the training
environment of tools/train_dice.py has it).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper


def average(a: onnx.ModelProto, b: onnx.ModelProto, weight: float) -> onnx.ModelProto:
    """A copy of ``a`` whose float weights are ``weight * a + (1 - weight) * b``.

    Raises ``ValueError`` when the two are not the same network (a weight
    missing from ``b`` or of another shape)."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be within 0..1, not {weight}")
    theirs = {t.name: numpy_helper.to_array(t) for t in b.graph.initializer}
    out = onnx.ModelProto()
    out.CopyFrom(a)
    for t in out.graph.initializer:
        x = numpy_helper.to_array(t)
        y = theirs.get(t.name)
        if y is None or y.shape != x.shape:
            raise ValueError(f"not the same network: weight {t.name!r} differs")
        if x.dtype.kind == "f":
            mixed = (weight * x.astype(np.float64) + (1.0 - weight) * y).astype(x.dtype)
            t.CopyFrom(numpy_helper.from_array(mixed, t.name))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--weight", type=float, default=0.5, help="A's share (B gets the rest)")
    args = ap.parse_args()
    try:
        model = average(onnx.load(str(args.a)), onnx.load(str(args.b)), args.weight)
    except ValueError as e:
        ap.error(str(e))
    onnx.save(model, str(args.out))
    print(f"wrote {args.out}: {args.weight} x {args.a} + {1 - args.weight:g} x {args.b}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
