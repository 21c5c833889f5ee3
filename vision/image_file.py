"""Image files from disk: decoded as BGR with their EXIF orientation applied, or a
clear ``ValueError`` (missing, empty, a directory or device, not an image, a JPEG
cut short, too large a file, too many pixels).

A JPEG cut short in transfer still decodes in OpenCV (libjpeg fills the rest grey
and only warns on stderr), so a reader would report the dice of the part that
arrived as if that were the whole photo. :func:`jpeg_is_complete` walks the
file's segments to its end-of-image marker to tell.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

_SOI, _EOI, _SOS = 0xD8, 0xD9, 0xDA
#: Markers without a length field: TEM and the restart markers RST0..RST7.
_STANDALONE = {0x01, *range(0xD0, 0xD8)}
#: Start-of-frame markers (they hold the image's size): C0..CF but DHT, JPG, DAC.
_SOF = set(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_PNG = b"\x89PNG\r\n\x1a\n"

#: Larger images are refused before decoding (a 1 MB PNG can declare 30000 x 30000
#: pixels: 2.7 GB decoded). Cameras give 12 MP, phones up to ~50 MP.
MAX_PIXELS = 50_000_000
#: Larger files are refused without reading them whole (a 50-megapixel PNG of 8-bit
#: colour is at most ~150 MB; reading ``/dev/zero`` or a file still growing would
#: never end).
MAX_FILE_BYTES = 256 * 1024 * 1024


def _walk_jpeg(data: bytes) -> tuple[str, tuple[int, int] | None]:
    """Follow a JPEG's segments: ("complete" | "cut" | "unknown", (w, h) from its
    start-of-frame segment if one was passed)."""
    n = len(data)
    size = None
    pos = 2
    while True:
        if pos >= n:
            return "cut", size
        if data[pos] != 0xFF:
            return "unknown", size  # not a marker where one belongs: the decoder judges
        while pos < n and data[pos] == 0xFF:  # fill bytes before a marker
            pos += 1
        if pos >= n:
            return "cut", size
        marker = data[pos]
        pos += 1
        if marker == _EOI:
            return "complete", size
        if marker in _STANDALONE:
            continue
        if pos + 2 > n:
            return "cut", size
        end = pos + int.from_bytes(data[pos:pos + 2], "big")
        if end > n:
            return "cut", size
        if marker in _SOF and end - pos >= 7:
            size = (int.from_bytes(data[pos + 5:pos + 7], "big"),
                    int.from_bytes(data[pos + 3:pos + 5], "big"))
        pos = end
        if marker == _SOS:  # entropy-coded data up to the next marker
            while True:
                pos = data.find(b"\xff", pos)
                if pos < 0 or pos + 1 >= n:
                    return "cut", size
                nxt = data[pos + 1]
                if nxt == 0x00 or nxt in _STANDALONE:  # a stuffed 0xFF or a restart
                    pos += 2
                elif nxt == 0xFF:  # fill byte
                    pos += 1
                else:
                    break


def _is_jpeg(data: bytes) -> bool:
    return len(data) >= 2 and data[0] == 0xFF and data[1] == _SOI


def _inspect(data: bytes) -> tuple[bool, tuple[int, int] | None]:
    """(whether ``data`` is a JPEG cut short, the size its header declares): one walk
    of a JPEG's segments gives both."""
    if _is_jpeg(data):
        state, size = _walk_jpeg(data)
        return state == "cut", size
    return False, _png_size(data)


def jpeg_is_complete(data: bytes) -> bool:
    """False if ``data`` is a JPEG that ends before its end-of-image marker.

    Segments are skipped by their lengths (an EXIF thumbnail's own end marker is
    not mistaken for the image's), entropy-coded data up to the next real marker.
    Data after the end marker (a phone's appended video) is allowed. Data that is
    not a JPEG, or whose structure this walk does not follow, is left to the
    decoder: True.
    """
    return not _inspect(data)[0]


def declared_size(data: bytes) -> tuple[int, int] | None:
    """The (width, height) a JPEG or PNG file declares in its header, before any
    decoding; None for other formats or when the header does not say."""
    return _inspect(data)[1]


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[:8] == _PNG and data[12:16] == b"IHDR" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    return None


def read_image(path: str | Path) -> np.ndarray:
    """The image file at ``path`` as a BGR array, EXIF orientation applied.

    Raises ``ValueError`` with the reason in plain words when it cannot be read
    whole: no such file, a directory, a device (``/dev/zero`` would be read for
    ever), empty, over :data:`MAX_FILE_BYTES`, not an image OpenCV decodes, a
    JPEG cut short, or a JPEG or PNG over :data:`MAX_PIXELS` (checked before
    decoding). A named pipe is read like a file (``companion dice /dev/stdin``).
    """
    p = Path(path)
    if not p.exists():
        raise ValueError("no such file")
    if p.is_dir():
        raise ValueError("is a directory")
    if p.is_char_device() or p.is_block_device() or p.is_socket():
        raise ValueError("not a file but a device or socket")
    try:
        with p.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"cannot read the file ({exc.strerror or exc})") from None
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"file too large: over {MAX_FILE_BYTES // (1024 * 1024)} MB")
    if not data:
        raise ValueError("empty file")
    cut, size = _inspect(data)
    if cut:
        raise ValueError("truncated JPEG: the file ends before the image does")
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise ValueError(f"image too large: {size[0]} x {size[1]} pixels "
                         f"(at most {MAX_PIXELS // 1_000_000} megapixels)")
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if img is None or img.size == 0:
        raise ValueError("not an image OpenCV can decode")
    return img
