"""The close-up passes (``DiceReader._with_large_dice``): a large die found at half
scale replaces what the main pass proposed inside its face only when the classifier
takes it for a die. The detector's and classifier's outputs are scripted here."""

from __future__ import annotations

import numpy as np
import pytest

import vision.dice.reader as reader_module
from vision.dice.reader import DiceReader

# Three dice of ~40 px packed together in the main pass (frame pixels = detector
# pixels: a 640x480 frame is not scaled), and what the half-scale pass may see there:
# the whole pack as one die of ~110 px (its own pixels are half the frame's).
PACK = [(300.0, 330.0), (342.0, 332.0), (302.0, 372.0)]
BLOB = (160.0, 176.0, 55.0)  # at half scale: centre (320, 352), 110 px in the frame


def _row(value: int | None, not_die: float = 0.0) -> np.ndarray:
    """A classifier row: "1".."6", "unreadable", "not a die"."""
    row = np.zeros(8, np.float32)
    row[7] = not_die
    row[(value - 1) if value else 6] = 1.0 - not_die
    return row


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> DiceReader:
    reader = DiceReader()
    reader.views = 1
    probs = np.full(7, 1 / 7)
    passes = iter([
        [(x, y, 40.0, 0.8, probs) for x, y in PACK],  # main pass
        [(*BLOB, 0.6, probs)],  # half scale
        [],  # quarter scale
    ])
    monkeypatch.setattr(reader, "_forward", lambda img, level=0: np.zeros((11, 1, 1)))
    monkeypatch.setattr(reader, "_proposals", lambda out, w, h, threshold=None: next(passes))
    monkeypatch.setattr(reader_module, "edge_width", lambda crop, margin=5: 1.0)
    return reader


def _read_with(reader: DiceReader, monkeypatch: pytest.MonkeyPatch,
               blob_row: np.ndarray) -> list[tuple[int, int, int | None]]:
    """Read a blank frame with the pack's dice read "3" and the blob read ``blob_row``
    (the last crop: the close-up proposals come after the main pass's)."""
    def classify(crops: list[np.ndarray]) -> np.ndarray:
        return np.stack([_row(3)] * (len(crops) - 1) + [blob_row])

    monkeypatch.setattr(reader, "_classify", classify)
    frame = np.full((480, 640, 3), 200, np.uint8)
    return [(round(d.center[0]), round(d.center[1]), d.value) for d in reader.read(frame)]


def test_pack_taken_for_one_large_die_keeps_its_dice(
        scripted: DiceReader, monkeypatch: pytest.MonkeyPatch) -> None:
    """The half-scale pass sees a pack of touching dice as one large die; the
    classifier says it is none: the dice of the main pass are reported, not dropped."""
    seen = _read_with(scripted, monkeypatch, _row(5, not_die=0.9))
    assert sorted(seen) == sorted((round(x), round(y), 3) for x, y in PACK)


def test_a_real_close_up_die_replaces_its_pips(
        scripted: DiceReader, monkeypatch: pytest.MonkeyPatch) -> None:
    """The large die is a die (its "pips" were the main pass's proposals): only it
    is reported."""
    seen = _read_with(scripted, monkeypatch, _row(5))
    assert seen == [(320, 352, 5)]
