"""Printables at real scale: page sizes, marker sizes and places in the PDF, the raster."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from companion.boards import parse_board
from companion.cli import main
from vision.markers import detect, to_gray
from vision.printables import (
    MARGIN_MM,
    board_page_image,
    board_pdf,
    marker_runs,
    tile_grid,
    token_sheet_pdf,
)

K = 72 / 25.4  # pt per mm
BOARD, _ = parse_board("""
.o  .o  .   c3  c3  .   .   u2 |A .
.o  .o  .   c3  .   .   .   u2 |A .
.o  .o  .   c3  c3  .   .   d1 |A .
""", name="print board")


def _pages(pdf: bytes) -> list[tuple[tuple[float, float], list[tuple[float, float, float, float]]]]:
    """(page size mm, rects in mm as x, y, w, h from the top left) of an uncompressed PDF."""
    text = pdf.decode("latin-1")
    boxes = [(float(w) / K, float(h) / K) for w, h in
             re.findall(r"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", text)]
    streams = re.findall(r"stream\r?\n(.*?)endstream", text, re.S)
    content = [s for s in streams if " re" in s or "BT" in s]
    out = []
    for (w, h), s in zip(boxes, content, strict=False):
        rects = [(float(x) / K, h - float(y) / K, float(rw) / K, -float(rh) / K)
                 for x, y, rw, rh in re.findall(
                     r"(-?[\d.]+) (-?[\d.]+) (-?[\d.]+) (-?[\d.]+) re f", s)]
        out.append(((w, h), rects))
    return out


def test_board_sheet_at_real_scale(tmp_path: Path) -> None:
    out = tmp_path / "board.pdf"
    assert board_pdf(BOARD, str(out), compress=False) == 1
    (size, rects), = _pages(out.read_bytes())
    w, h = BOARD.size_mm
    assert size == pytest.approx((w + 2 * MARGIN_MM, h + 2 * MARGIN_MM), abs=0.05)
    for m in BOARD.markers.values():
        # The marker's top row is one black run across the whole marker: side x side / 6.
        top = [r for r in rects if abs(r[0] - (MARGIN_MM + m.x_mm)) < 0.02
               and abs(r[1] - (MARGIN_MM + m.y_mm)) < 0.02 and abs(r[3] - m.side_mm / 6) < 0.02]
        assert top and top[0][2] == pytest.approx(m.side_mm, abs=0.02)
        # Its black cells span exactly side x side.
        cells = [r for r in rects if MARGIN_MM + m.x_mm - 0.01 <= r[0]
                 and r[0] + r[2] <= MARGIN_MM + m.x_mm + m.side_mm + 0.01
                 and MARGIN_MM + m.y_mm - 0.01 <= r[1]
                 and r[1] + r[3] <= MARGIN_MM + m.y_mm + m.side_mm + 0.01]
        assert len(cells) == sum(1 for _ in marker_runs(m.id))


def test_a_40_mm_marker_measures_40_mm(tmp_path: Path) -> None:
    from dataclasses import replace

    from companion.boards import Marker

    big = replace(BOARD, markers={i: Marker(i, m.x_mm - 5, m.y_mm - 5, 40.0)
                                  for i, m in BOARD.markers.items()})
    out = tmp_path / "b40.pdf"
    board_pdf(big, str(out), compress=False)
    (_, rects), = _pages(out.read_bytes())
    m = big.markers[0]
    row = [r for r in rects if abs(r[0] - (MARGIN_MM + m.x_mm)) < 0.02
           and abs(r[1] - (MARGIN_MM + m.y_mm)) < 0.02 and abs(r[3] - 40 / 6) < 0.02]
    assert row and row[0][2] == pytest.approx(40.0, abs=0.02)


def test_tiles_on_a4(tmp_path: Path) -> None:
    out = tmp_path / "tiles.pdf"
    rows, cols, _, _ = tile_grid(BOARD.size_mm)
    n = board_pdf(BOARD, str(out), tiles=True, compress=False)
    assert n == 1 + rows * cols and rows * cols >= 3
    pages = _pages(out.read_bytes())
    assert len(pages) == n
    for size, _ in pages[1:]:
        assert size == pytest.approx((210.0, 297.0), abs=0.05)
    text = out.read_bytes().decode("latin-1")
    assert f"row 1 of {rows}, column 1 of {cols}" in text
    assert f"row {rows} of {rows}, column {cols} of {cols}" in text


def test_the_printed_raster_shows_the_markers_in_place() -> None:
    ppm = 4.0
    img = board_page_image(BOARD, ppm)
    seen = {d.id: d for d in detect(to_gray(img))}
    assert set(seen) >= {0, 1, 2, 3}
    for mid, m in BOARD.markers.items():
        want = np.array(m.corners_mm()) * ppm - 0.5
        assert np.max(np.abs(seen[mid].corners - want)) < 1.0


@pytest.mark.parametrize("side", [10.0, 14.0])
def test_token_sheet(tmp_path: Path, side: float) -> None:
    out = tmp_path / "tokens.pdf"
    assert token_sheet_pdf(str(out), side_mm=side, compress=False) == 1
    (size, rects), = _pages(out.read_bytes())
    assert size == pytest.approx((210.0, 297.0), abs=0.05)
    squares = [r for r in rects if abs(r[2] - side) < 0.02 and abs(r[3] - side) < 0.02]
    assert len(squares) == 20  # 16 riders and 4 jersey pieces, each on its white square
    text = out.read_bytes().decode("latin-1")
    for n in (21, 34, 44, 54, 20, 50):
        assert f"({n})" in text


def test_print_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from companion.boards import board_to_dict

    bf = tmp_path / "b.json"
    bf.write_text(json.dumps(board_to_dict(BOARD)))
    assert main(["board", "print", str(bf), "--out", str(tmp_path / "b.pdf"), "--tiles"]) == 0
    assert (tmp_path / "b.pdf").read_bytes().startswith(b"%PDF")
    assert main(["tokens", "print", "--out", str(tmp_path / "t.pdf"), "--side-mm", "12"]) == 0
    assert (tmp_path / "t.pdf").read_bytes().startswith(b"%PDF")
    assert main(["board", "print", str(tmp_path / "nope.json"), "--out", "x.pdf"]) == 2
    assert "no such board file" in capsys.readouterr().err


def test_corner_markers_sheet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vision.printables import corner_markers_pdf

    out = tmp_path / "m.pdf"
    corner_markers_pdf(str(out), side_mm=50.0, compress=False)
    (size, rects), = _pages(out.read_bytes())
    assert size == pytest.approx((210.0, 297.0), abs=0.05)
    rows = [r for r in rects if abs(r[2] - 50.0) < 0.02 and abs(r[3] - 50 / 6) < 0.02]
    assert len(rows) >= 4  # every marker's top row is one 50 mm run
    for r in rects:
        assert 0 <= r[0] and r[0] + r[2] <= 210 and 0 <= r[1] and r[1] + r[3] <= 297
    assert main(["board", "markers", "--out", str(out), "--side-mm", "60"]) == 0
    assert main(["board", "markers", "--out", str(out), "--side-mm", "90"]) == 2
    assert "between 20 and 60" in capsys.readouterr().err
