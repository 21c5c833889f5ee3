"""How dim a frame is (``vision.exposure``), and the dice reader brightening dim frames."""

from __future__ import annotations

from collections import Counter

import numpy as np

from vision.dice.reader import DiceReader
from vision.dice.synth import scene
from vision.exposure import TARGET_LEVEL, bright_level, dim_gain


def test_bright_level_is_the_bright_end_of_the_channels_mean() -> None:
    rng = np.random.default_rng(0)
    img = rng.integers(0, 256, (480, 640, 3), dtype=np.uint8)
    sample = img[::8, ::8].mean(axis=2)
    assert abs(bright_level(img) - float(np.percentile(sample, 99.5))) < 1e-9
    grey = img[..., 1]
    assert abs(bright_level(grey) - float(np.percentile(grey[::8, ::8], 99.5))) < 1e-9
    assert bright_level(np.zeros((0, 0, 3), np.uint8)) == 0.0


def test_a_dark_table_with_a_white_die_is_not_dim() -> None:
    """The bright end, not the median: a dark cloth with light dice is exposed well."""
    img = np.full((480, 640, 3), 40, np.uint8)
    img[200:260, 300:360] = 235  # one white die
    assert bright_level(img) > 200
    assert dim_gain(img, 170.0) == 1.0


def test_dim_gain_brings_a_dim_frame_back_at_most_fourfold() -> None:
    img = np.full((480, 640, 3), 60, np.uint8)
    img[::4, ::4] = 200
    dim = (img * 0.4).astype(np.uint8)  # 80 at the bright end
    assert abs(dim_gain(dim, 170.0) - TARGET_LEVEL / 80.0) < 1e-6
    assert dim_gain(img, 170.0) == 1.0  # bright enough
    assert dim_gain((img * 0.1).astype(np.uint8), 170.0) == 4.0  # capped
    assert dim_gain(np.zeros((480, 640, 3), np.uint8), 170.0) == 1.0  # black: nothing to gain


# measured right of 90 dice (30 scenes of 3, 24-40 px, every colour) scaled to 0.3 of
# their brightness: 70 brightened, 61 not; none wrong either way
def test_dim_frames_are_brightened_before_reading() -> None:
    """A frame exposed too short (every pixel at 0.3 of its level) is brightened by
    the reader (``dim_below``), which then reads more of its dice, none wrong."""
    def read(reader: DiceReader) -> Counter[str]:
        rng = np.random.default_rng(7)
        c: Counter[str] = Counter()
        for _ in range(30):
            img, dice = scene(rng, 480, 640, n_dice=3, size_range=(24, 40), unreadable_rate=0.0)
            img = (img.astype(np.float32) * 0.3).astype(np.uint8)
            seen = reader.read(img)
            for d in dice:
                near = [s for s in seen
                        if abs(s.center[0] - d.cx) < d.size / 2 and abs(s.center[1] - d.cy) < d.size / 2]
                value = near[0].value if near else None
                c["right" if value == d.value else "wrong" if value is not None else "other"] += 1
        return c

    brightened = read(DiceReader())
    as_is = DiceReader()
    as_is.dim_below = 0.0
    plain = read(as_is)
    assert brightened["wrong"] == 0, brightened
    assert brightened["right"] >= plain["right"] + 5, (brightened, plain)
