"""The detector's space-to-depth twin: the same outputs and readings as the plain file;
detector files that take pixel blocks as their input."""

from __future__ import annotations

import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.vision.conftest import six_dice_frame
from vision.dice.reader import MODEL_PATH, DiceReader
from vision.dice.space_to_depth import (
    blocks_blob,
    input_block,
    plain_blob,
    s2d_blob,
    space_to_depth_twin,
)


def test_s2d_blob_stacks_each_2x2_block_as_channels() -> None:
    img = np.random.default_rng(1).integers(0, 256, (8, 12, 3), dtype=np.uint8)
    blob = s2d_blob(img)
    assert blob.shape == (1, 12, 4, 6) and blob.dtype == np.float32
    for dy in (0, 1):
        for dx in (0, 1):
            for c in range(3):
                np.testing.assert_allclose(blob[0, (2 * dy + dx) * 3 + c],
                                           img[dy::2, dx::2, c] / 255.0, atol=1e-7)


def test_blocks_blob_stacks_each_4x4_block_as_channels() -> None:
    img = np.random.default_rng(2).integers(0, 256, (8, 12, 3), dtype=np.uint8)
    blob = blocks_blob(img, 4)
    assert blob.shape == (1, 48, 2, 3) and blob.dtype == np.float32
    for dy in range(4):
        for dx in range(4):
            for c in range(3):
                np.testing.assert_allclose(blob[0, (4 * dy + dx) * 3 + c],
                                           img[dy::4, dx::4, c] / 255.0, atol=1e-7)


def test_a_files_input_is_read_from_the_file(tmp_path: Path) -> None:
    assert input_block(MODEL_PATH) == 1
    assert input_block(space_to_depth_twin(MODEL_PATH)) == 2
    broken = tmp_path / "dice.onnx"
    broken.write_bytes(b"\x08\x07garbage")
    with pytest.raises(ValueError, match="not an ONNX model"):
        DiceReader(broken)


def test_a_file_that_takes_blocks_is_read_with_blocks(tmp_path: Path) -> None:
    # The twin given as the detector file itself: the reader fills its 2x2 blocks
    # as it would a "fast" detector's 4x4 ones, and reads as the twin reader does.
    blocks = tmp_path / "blocks.onnx"
    shutil.copy(space_to_depth_twin(MODEL_PATH), blocks)
    direct, twin = DiceReader(blocks), DiceReader(space_to_depth=True)
    assert direct.input_block == 2 and not direct.space_to_depth and twin.input_block == 2
    img = six_dice_frame(seed=1)
    a, b = direct.read(img), twin.read(img)
    assert [d.value for d in a] == [d.value for d in b]
    assert len([d for d in a if d.value is not None]) >= 4
    with pytest.raises(ValueError, match="no space-to-depth twin"):
        DiceReader(blocks, space_to_depth=True)


@pytest.mark.parametrize("shape", [(480, 640), (256, 384), (96, 160)])
def test_the_committed_twin_gives_the_plain_detectors_outputs(shape: tuple[int, int]) -> None:
    img = six_dice_frame(*shape)
    plain = cv2.dnn.readNetFromONNX(str(MODEL_PATH))
    twin = cv2.dnn.readNetFromONNX(str(space_to_depth_twin(MODEL_PATH)))
    plain.setInput(plain_blob(img))
    twin.setInput(s2d_blob(img))
    a, b = np.asarray(plain.forward()), np.asarray(twin.forward())
    assert a.shape == b.shape
    assert np.abs(a - b).max() < 1e-5  # a detector retrained without its twin fails here


def test_readers_with_and_without_the_twin_read_alike() -> None:
    plain, twin = DiceReader(space_to_depth=False), DiceReader(space_to_depth=True)
    assert not plain.space_to_depth and twin.space_to_depth
    for seed in range(3):
        img = six_dice_frame(seed=seed)
        # Free, and at a known die size (the table's path, its own padded shapes).
        for a, b in ((plain.read(img), twin.read(img)),
                     (plain.read(img, die_px=40, one_size=True),
                      twin.read(img, die_px=40, one_size=True))):
            assert [d.value for d in a] == [d.value for d in b]
            assert len([d for d in a if d.value is not None]) >= 4
            for da, db in zip(a, b, strict=True):
                assert np.allclose(da.center, db.center, atol=0.01)


def test_the_twin_is_used_where_opencvs_new_engine_runs(tmp_path: Path) -> None:
    assert DiceReader().space_to_depth == (int(cv2.__version__.split(".")[0]) >= 5)
    alone = tmp_path / "candidate.onnx"  # a detector file with no twin beside it
    shutil.copy(MODEL_PATH, alone)
    assert not DiceReader(alone).space_to_depth
    with pytest.raises(FileNotFoundError, match="twin not found"):
        DiceReader(alone, space_to_depth=True)


def test_a_twin_of_another_network_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "candidate.onnx"
    shutil.copy(MODEL_PATH, path)
    shutil.copy(MODEL_PATH, space_to_depth_twin(path))  # not rewritten: another input
    with pytest.raises(ValueError, match="not the space-to-depth twin"):
        DiceReader(path, space_to_depth=True)
    assert space_to_depth_twin(Path("m/dice.onnx")) == Path("m/dice_s2d.onnx")
