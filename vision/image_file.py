"""Image files from disk: decoded as BGR with their EXIF orientation applied, or a
clear ``ValueError`` (missing, empty, a directory, not an image, a JPEG cut short).

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


def jpeg_is_complete(data: bytes) -> bool:
    """False if ``data`` is a JPEG that ends before its end-of-image marker.

    Segments are skipped by their lengths (an EXIF thumbnail's own end marker is
    not mistaken for the image's), entropy-coded data up to the next real marker.
    Data after the end marker (a phone's appended video) is allowed. Data that is
    not a JPEG, or whose structure this walk does not follow, is left to the
    decoder: True.
    """
    n = len(data)
    if n < 2 or data[0] != 0xFF or data[1] != _SOI:
        return True
    pos = 2
    while True:
        if pos >= n:
            return False
        if data[pos] != 0xFF:
            return True  # not a marker where one belongs: the decoder judges
        while pos < n and data[pos] == 0xFF:  # fill bytes before a marker
            pos += 1
        if pos >= n:
            return False
        marker = data[pos]
        pos += 1
        if marker == _EOI:
            return True
        if marker in _STANDALONE:
            continue
        if pos + 2 > n:
            return False
        end = pos + int.from_bytes(data[pos:pos + 2], "big")
        if end > n:
            return False
        pos = end
        if marker == _SOS:  # entropy-coded data up to the next marker
            while True:
                pos = data.find(b"\xff", pos)
                if pos < 0 or pos + 1 >= n:
                    return False
                nxt = data[pos + 1]
                if nxt == 0x00 or nxt in _STANDALONE:  # a stuffed 0xFF or a restart
                    pos += 2
                elif nxt == 0xFF:  # fill byte
                    pos += 1
                else:
                    break


def read_image(path: str | Path) -> np.ndarray:
    """The image file at ``path`` as a BGR array, EXIF orientation applied.

    Raises ``ValueError`` with the reason in plain words when it cannot be read
    whole: no such file, a directory, empty, not an image OpenCV decodes, or a
    JPEG cut short.
    """
    p = Path(path)
    if not p.exists():
        raise ValueError("no such file")
    if p.is_dir():
        raise ValueError("is a directory")
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the file ({exc.strerror or exc})") from None
    if not data:
        raise ValueError("empty file")
    if not jpeg_is_complete(data):
        raise ValueError("truncated JPEG: the file ends before the image does")
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if img is None or img.size == 0:
        raise ValueError("not an image OpenCV can decode")
    return img
