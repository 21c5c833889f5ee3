"""The declared input shape of an ONNX file, read without the onnx package."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.dice.reader import CLS_MODEL_PATH, MODEL_PATH
from vision.dice.space_to_depth import space_to_depth_twin
from vision.onnx_input import OnnxFormatError, input_shape


def test_the_committed_files_declare_their_inputs() -> None:
    assert input_shape(MODEL_PATH) == (1, 3, "h", "w")
    assert input_shape(space_to_depth_twin(MODEL_PATH)) == (1, 12, "h2", "w2")
    assert input_shape(CLS_MODEL_PATH) == ("n", 3, 48, 48)


@pytest.mark.parametrize("data", [b"", b"not an onnx model at all", b"\x3a\xff\xff\xff\xff",
                                  b"\x08\x07"])
def test_bytes_that_are_no_model_are_a_clear_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "broken.onnx"
    path.write_bytes(data)
    with pytest.raises(OnnxFormatError, match="not an ONNX model"):
        input_shape(path)


def test_a_truncated_model_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "cut.onnx"
    path.write_bytes(MODEL_PATH.read_bytes()[:4000])
    with pytest.raises(ValueError, match="not an ONNX model"):
        input_shape(path)
