"""Image files from disk (``vision.image_file``): whole images decode, cut-short JPEGs
and non-images give a clear ``ValueError``."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import image_file
from vision.image_file import MAX_PIXELS, declared_size, jpeg_is_complete, read_image


def _photo() -> np.ndarray:
    rng = np.random.default_rng(3)
    img = cv2.resize(rng.integers(0, 255, (60, 80, 3), dtype=np.uint8), (640, 480))
    cv2.circle(img, (320, 240), 60, (255, 255, 255), -1)
    return img


JPEG_KINDS = {
    "baseline": [],
    "progressive": [cv2.IMWRITE_JPEG_PROGRESSIVE, 1],
    "restart markers": [cv2.IMWRITE_JPEG_RST_INTERVAL, 4],
    "optimized": [cv2.IMWRITE_JPEG_OPTIMIZE, 1, cv2.IMWRITE_JPEG_QUALITY, 98],
}


@pytest.mark.parametrize("kind", sorted(JPEG_KINDS))
def test_whole_jpeg_is_complete_and_every_cut_is_not(kind: str) -> None:
    data = cv2.imencode(".jpg", _photo(), JPEG_KINDS[kind])[1].tobytes()
    assert jpeg_is_complete(data)
    for cut in (3, 200, len(data) // 3, len(data) // 2, len(data) - 2, len(data) - 1):
        assert not jpeg_is_complete(data[:cut]), cut


def test_thumbnail_end_marker_is_not_the_image_end() -> None:
    """An EXIF-like APP1 segment that holds a whole small JPEG (with its own end
    marker) does not make a cut-short main image look complete."""
    thumb = cv2.imencode(".jpg", np.zeros((16, 16, 3), np.uint8))[1].tobytes()
    app1 = b"\xff\xe1" + (len(thumb) + 8).to_bytes(2, "big") + b"Exif\0\0" + thumb
    main = cv2.imencode(".jpg", _photo())[1].tobytes()
    data = main[:2] + app1 + main[2:]
    assert jpeg_is_complete(data)
    assert cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR).shape == (480, 640, 3)
    assert not jpeg_is_complete(data[: len(data) - len(main) // 2])


def test_data_after_the_end_marker_is_allowed(tmp_path: Path) -> None:
    """Phones append a video or maker data after the image (motion photos)."""
    data = cv2.imencode(".jpg", _photo())[1].tobytes() + b"\0\0\0\x18ftypmp42" + bytes(500)
    path = tmp_path / "motion.jpg"
    path.write_bytes(data)
    assert read_image(path).shape == (480, 640, 3)


def test_cut_short_jpeg_file_is_refused(tmp_path: Path) -> None:
    data = cv2.imencode(".jpg", _photo())[1].tobytes()
    path = tmp_path / "half.jpg"
    path.write_bytes(data[: len(data) // 2])
    assert cv2.imread(str(path)) is not None  # OpenCV alone decodes it, grey below
    with pytest.raises(ValueError, match="truncated JPEG"):
        read_image(path)


def test_other_formats_are_left_to_the_decoder(tmp_path: Path) -> None:
    png = cv2.imencode(".png", _photo())[1].tobytes()
    assert jpeg_is_complete(png) and jpeg_is_complete(b"") and jpeg_is_complete(b"\xff")
    (tmp_path / "a.png").write_bytes(png)
    assert read_image(tmp_path / "a.png").shape == (480, 640, 3)
    (tmp_path / "half.png").write_bytes(png[: len(png) // 2])
    with pytest.raises(ValueError, match="not an image OpenCV can decode"):
        read_image(tmp_path / "half.png")
    # A JPEG start followed by no marker structure: the decoder's call.
    assert jpeg_is_complete(b"\xff\xd8garbage")
    (tmp_path / "junk.jpg").write_bytes(b"\xff\xd8garbage")
    with pytest.raises(ValueError, match="not an image"):
        read_image(tmp_path / "junk.jpg")


@pytest.mark.parametrize(("make", "says"), [
    (lambda d: d / "missing.jpg", "no such file"),
    (lambda d: d, "is a directory"),
])
def test_paths_that_are_no_files(tmp_path: Path, make: object, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        read_image(make(tmp_path))  # type: ignore[operator]


def test_a_device_is_refused_not_read_for_ever() -> None:
    """``/dev/zero`` has no end: reading it whole would fill the memory."""
    with pytest.raises(ValueError, match="not a file but a device"):
        read_image("/dev/zero")


def test_too_large_a_file_is_refused_without_reading_it_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = cv2.imencode(".png", _photo())[1].tobytes()
    (tmp_path / "big.png").write_bytes(data)
    monkeypatch.setattr(image_file, "MAX_FILE_BYTES", len(data) - 1)
    with pytest.raises(ValueError, match="file too large"):
        read_image(tmp_path / "big.png")
    monkeypatch.setattr(image_file, "MAX_FILE_BYTES", len(data))
    assert read_image(tmp_path / "big.png").shape == (480, 640, 3)


def test_a_named_pipe_is_read_like_a_file(tmp_path: Path) -> None:
    """``companion dice /dev/stdin`` with a photo piped in."""
    fifo = tmp_path / "photo.fifo"
    os.mkfifo(fifo)
    data = cv2.imencode(".png", _photo())[1].tobytes()
    writer = threading.Thread(target=fifo.write_bytes, args=(data,))
    writer.start()
    img = read_image(fifo)
    writer.join(timeout=10)
    assert np.array_equal(img, _photo())


@pytest.mark.parametrize("kind", sorted(JPEG_KINDS))
def test_declared_size_of_jpeg_and_png(kind: str) -> None:
    img = _photo()[:300, :500]
    assert declared_size(cv2.imencode(".jpg", img, JPEG_KINDS[kind])[1].tobytes()) == (500, 300)
    assert declared_size(cv2.imencode(".png", img)[1].tobytes()) == (500, 300)
    assert declared_size(cv2.imencode(".bmp", img)[1].tobytes()) is None


def test_too_many_pixels_refused_before_decoding(tmp_path: Path) -> None:
    """A small file that declares a huge image (a decompression bomb) is refused from
    its header: decoding 30000 x 30000 pixels would take 2.7 GB."""
    png = bytearray(cv2.imencode(".png", np.zeros((8, 8), np.uint8))[1].tobytes())
    png[16:24] = (30000).to_bytes(4, "big") + (30000).to_bytes(4, "big")
    (tmp_path / "bomb.png").write_bytes(bytes(png))
    with pytest.raises(ValueError, match="image too large: 30000 x 30000 pixels"):
        read_image(tmp_path / "bomb.png")
    jpg = bytearray(cv2.imencode(".jpg", _photo())[1].tobytes())
    sof = jpg.index(b"\xff\xc0")
    jpg[sof + 5:sof + 9] = (10000).to_bytes(2, "big") + (9000).to_bytes(2, "big")
    assert 9000 * 10000 > MAX_PIXELS
    (tmp_path / "bomb.jpg").write_bytes(bytes(jpg))
    with pytest.raises(ValueError, match="image too large: 9000 x 10000 pixels"):
        read_image(tmp_path / "bomb.jpg")
