"""The declared shape of an ONNX file's first input, read from the file itself.

OpenCV's dnn module does not tell a network's input shape, and OpenCV 5 runs a
network on an input of the wrong depth without a word (reading past the blob:
a crash, or outputs from garbage), so a file's input cannot safely be found by
trying. This reads it from the file's protobuf instead, with nothing but the
standard library (the ``onnx`` package is a training tool, not a dependency):
``ModelProto.graph`` (field 7) -> ``GraphProto.input`` (11) ->
``ValueInfoProto.type`` (2) -> ``TypeProto.tensor_type`` (1) -> ``shape`` (2)
-> ``dim`` (1) -> ``dim_value`` (1) or ``dim_param`` (2).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

#: A dimension: its size, or the name of a size left free (``"h"``).
Dim = int | str

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


class OnnxFormatError(ValueError):
    """The bytes are not an ONNX model with a declared tensor input."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise OnnxFormatError("truncated or malformed varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7


def _fields(buf: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """The (field number, wire type, value) of each field of one message;
    length-delimited values as their bytes."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        value: int | bytes
        if wire == _VARINT:
            value, pos = _varint(buf, pos)
        elif wire == _LEN:
            n, pos = _varint(buf, pos)
            if pos + n > len(buf):
                raise OnnxFormatError("a field runs past the end of its message")
            value, pos = buf[pos:pos + n], pos + n
        elif wire in (_I64, _I32):
            n = 8 if wire == _I64 else 4
            value, pos = int.from_bytes(buf[pos:pos + n], "little"), pos + n
        else:
            raise OnnxFormatError(f"unknown protobuf wire type {wire}")
        yield field, wire, value


def _first(buf: bytes, field: int) -> bytes:
    for f, wire, value in _fields(buf):
        if f == field and wire == _LEN:
            assert isinstance(value, bytes)
            return value
    raise OnnxFormatError(f"no field {field} where an ONNX model has one")


def input_shape(path: Path) -> tuple[Dim, ...]:
    """The declared shape of the ONNX file ``path``'s first graph input, e.g.
    ``(1, 3, "h", "w")``; :class:`OnnxFormatError` (a ``ValueError``) if the file is
    not such a model, ``OSError`` if it cannot be read."""
    data = Path(path).read_bytes()
    try:
        graph = _first(data, 7)
        value_info = _first(graph, 11)
        shape = _first(_first(_first(value_info, 2), 1), 2)
        dims: list[Dim] = []
        for f, _, dim in _fields(shape):
            if f != 1 or not isinstance(dim, bytes):
                continue
            size: Dim = "?"
            for g, _, v in _fields(dim):
                if g == 1 and isinstance(v, int):
                    size = v
                elif g == 2 and isinstance(v, bytes):
                    size = v.decode("utf-8", "replace")
            dims.append(size)
    except OnnxFormatError as exc:
        raise OnnxFormatError(f"{path} is not an ONNX model with a tensor input ({exc})") from exc
    return tuple(dims)
