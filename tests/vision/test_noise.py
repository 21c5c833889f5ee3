"""The noise estimate (``vision.noise.noise_sigma``): known noise added to images with
structure is measured, structure alone is not."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.noise import noise_sigma


def _scene(h: int, w: int) -> np.ndarray:
    """Smooth shading, sharp-edged shapes and text: structure, little noise."""
    rng = np.random.default_rng(2)
    img = cv2.resize(rng.integers(60, 200, (6, 8, 3), dtype=np.uint8), (w, h),
                     interpolation=cv2.INTER_CUBIC)
    for _ in range(12):
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        cv2.rectangle(img, (x, y), (x + w // 10, y + h // 12), (240, 240, 240), -1)
        cv2.putText(img, "41 51", (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (20, 20, 20), 2)
    return img


@pytest.mark.parametrize("shape", [(480, 640), (1520, 2028)])
@pytest.mark.parametrize("sigma", [0.0, 4.0, 8.0, 16.0, 30.0])
def test_added_noise_is_measured(shape: tuple[int, int], sigma: float) -> None:
    img = _scene(*shape).astype(np.float32)
    noisy = img + np.random.default_rng(5).normal(0, sigma, (*shape, 1))  # grey noise
    got = noise_sigma(np.clip(noisy, 0, 255).astype(np.uint8))
    # the structure adds a little; clipping at 0 and 255 takes a little away
    assert sigma - 0.1 * sigma - 0.3 <= got <= sigma + 2.0, got


def test_grey_and_tiny_images() -> None:
    grey = np.random.default_rng(1).normal(100, 10, (200, 300)).clip(0, 255).astype(np.uint8)
    assert 9.0 <= noise_sigma(grey) <= 11.0
    assert noise_sigma(np.zeros((2, 50, 3), np.uint8)) == 0.0
    assert noise_sigma(np.full((50, 50, 3), 7, np.uint8)) == 0.0


def test_band_sampling_of_large_frames_agrees_with_the_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Large frames are measured on bands of rows; the result is the whole frame's."""
    from vision import noise as noise_module

    img = (_scene(1520, 2028).astype(np.float32)
           + np.random.default_rng(3).normal(0, 6, (1520, 2028, 3)))
    img = np.clip(img, 0, 255).astype(np.uint8)
    banded = noise_sigma(img)
    monkeypatch.setattr(noise_module, "_MAX_PIXELS", 10**9)
    whole = noise_sigma(img)
    assert abs(banded - whole) < 0.15 * whole
