"""Printables: the board at real scale (one sheet, or tiled on A4) and token stickers.

The board is embedded as a raster image (``vision.render`` at ``ppm`` px/mm)
and the ArUco markers are drawn on top of it as vector squares, so they print
sharp and exactly to size: a 40 mm marker measures 40 mm on the paper when
printed at 100 % ("actual size", no "fit to page").
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator

import cv2
import numpy as np
from fpdf import FPDF

from companion.boards import Board
from vision.markers import JERSEYS, RIDERS, STICKER_RATE, TEAM_COLOURS, TEAM_NAMES, marker_cells
from vision.render import render_board

MARGIN_MM = 10.0  # white margin round the full-size sheet and inside A4 tiles
A4 = (210.0, 297.0)
OVERLAP_MM = 12.0  # tiles overlap by this much
RIM_MM = 2.0  # coloured rim round a token sticker
JERSEY_RGB = (240, 210, 30)


def marker_runs(marker_id: int) -> Iterator[tuple[int, int, int]]:
    """The black cells of a marker as horizontal runs: (row, first column, length)."""
    cells = marker_cells(marker_id)
    for r in range(6):
        c = 0
        while c < 6:
            if cells[r, c]:
                start = c
                while c < 6 and cells[r, c]:
                    c += 1
                yield r, start, c - start
            else:
                c += 1


def draw_marker(pdf: FPDF, marker_id: int, x: float, y: float, side: float,
                quiet: float = 0.25) -> None:
    """A marker as vector squares with its white quiet zone (page mm, top-left corner)."""
    q = side * quiet
    pdf.set_fill_color(255, 255, 255)
    pdf.rect(x - q, y - q, side + 2 * q, side + 2 * q, style="F")
    pdf.set_fill_color(0, 0, 0)
    cell = side / 6
    for r, c, n in marker_runs(marker_id):
        pdf.rect(x + c * cell, y + r * cell, n * cell, cell, style="F")


def _png(img: np.ndarray) -> io.BytesIO:
    ok, buf = cv2.imencode(".png", img, [cv2.IMWRITE_PNG_COMPRESSION, 6])
    if not ok:
        raise ValueError("cannot encode the board image")
    return io.BytesIO(buf.tobytes())


def board_pdf(board: Board, out: str, *, tiles: bool = False, ppm: float = 4.0,
              compress: bool = True) -> int:
    """Write the board PDF: one full-size page, then (``tiles``) A4 tiles. Returns the pages."""
    w, h = board.size_mm
    img = render_board(board, ppm)
    png = _png(img)
    pdf = FPDF(unit="mm", format=(w + 2 * MARGIN_MM, h + 2 * MARGIN_MM))
    pdf.set_compression(compress)
    pdf.set_auto_page_break(False)
    pdf.set_title(f"{board.name} (1:1)")
    pdf.add_page()
    pdf.image(png, x=MARGIN_MM, y=MARGIN_MM, w=w, h=h)
    for m in board.markers.values():
        draw_marker(pdf, m.id, MARGIN_MM + m.x_mm, MARGIN_MM + m.y_mm, m.side_mm)
    pdf.set_font("helvetica", size=8)
    pdf.set_text_color(60, 60, 60)
    sides = sorted({m.side_mm for m in board.markers.values()})
    check = (f"scale check: each corner marker is {'/'.join(f'{s:g}' for s in sides)} mm wide"
             if sides else "")
    pdf.text(MARGIN_MM, MARGIN_MM - 3, f"{board.name}  {w:g} x {h:g} mm  print at 100 %  {check}")
    pages = 1
    if tiles:
        pages += _tiles(pdf, board, png, check)
    pdf.output(out)
    return pages


def tile_grid(size_mm: tuple[float, float]) -> tuple[int, int, float, float]:
    """Rows, columns and the step (x, y) of the A4 tiles of a board."""
    aw, ah = A4[0] - 2 * MARGIN_MM, A4[1] - 2 * MARGIN_MM
    sx, sy = aw - OVERLAP_MM, ah - OVERLAP_MM
    cols = max(1, math.ceil((size_mm[0] - OVERLAP_MM) / sx))
    rows = max(1, math.ceil((size_mm[1] - OVERLAP_MM) / sy))
    return rows, cols, sx, sy


def _tiles(pdf: FPDF, board: Board, png: io.BytesIO, check: str) -> int:
    w, h = board.size_mm
    aw, ah = A4[0] - 2 * MARGIN_MM, A4[1] - 2 * MARGIN_MM
    rows, cols, sx, sy = tile_grid(board.size_mm)
    for r in range(rows):
        for c in range(cols):
            pdf.add_page(format=A4)
            x0, y0 = c * sx, r * sy  # board mm at the page's printable top-left
            ox, oy = MARGIN_MM - x0, MARGIN_MM - y0  # board mm -> page mm
            with pdf.rect_clip(x=MARGIN_MM, y=MARGIN_MM, w=aw, h=ah):
                pdf.image(png, x=ox, y=oy, w=w, h=h)
                for m in board.markers.values():
                    draw_marker(pdf, m.id, ox + m.x_mm, oy + m.y_mm, m.side_mm)
            _tile_marks(pdf, r, c, rows, cols, ox, oy, sx, sy, w, h)
            pdf.set_font("helvetica", size=9)
            pdf.set_text_color(0, 0, 0)
            pdf.text(MARGIN_MM, 6, f"{board.name}: row {r + 1} of {rows}, column {c + 1} of "
                     f"{cols}  (R{r + 1}C{c + 1})")
            pdf.set_font("helvetica", size=7)
            pdf.set_text_color(80, 80, 80)
            hint = "cut along the marks on the right and bottom edges; lay this page over the " \
                   "next one, crosses on crosses"
            pdf.text(MARGIN_MM, A4[1] - 4, hint)
            pdf.text(MARGIN_MM, A4[1] - 1.5, check + "  print at 100 %")
    return rows * cols


def _tile_marks(pdf: FPDF, r: int, c: int, rows: int, cols: int, ox: float, oy: float,
                sx: float, sy: float, w: float, h: float) -> None:
    """Crop marks where the next tile takes over, and crosses in the overlap to align them."""
    pdf.set_draw_color(0, 0, 0)
    pdf.set_line_width(0.2)
    top, bottom = MARGIN_MM, A4[1] - MARGIN_MM
    left, right = MARGIN_MM, A4[0] - MARGIN_MM
    if c + 1 < cols:  # the cut on the right: where the next column starts to be its own
        x = ox + (c + 1) * sx
        pdf.line(x, 1, x, top - 1)
        pdf.line(x, bottom + 1, x, A4[1] - 6)
    if r + 1 < rows:
        y = oy + (r + 1) * sy
        pdf.line(1, y, left - 1, y)
        pdf.line(right + 1, y, A4[0] - 1, y)
    # Alignment crosses in the overlap bands (board coordinates, so both pages show them).
    def cross(x: float, y: float) -> None:
        if left <= x <= right and top <= y <= bottom:
            pdf.set_draw_color(255, 255, 255)
            pdf.set_line_width(0.6)
            pdf.line(x - 3, y, x + 3, y)
            pdf.line(x, y - 3, x, y + 3)
            pdf.set_draw_color(0, 0, 0)
            pdf.set_line_width(0.2)
            pdf.line(x - 3, y, x + 3, y)
            pdf.line(x, y - 3, x, y + 3)

    for k in range(1, cols):  # vertical overlap bands
        bx = k * sx + OVERLAP_MM / 2
        for j in range(rows):
            for f in (0.3, 0.7):
                cross(ox + bx, oy + j * sy + f * (A4[1] - 2 * MARGIN_MM))
    for k in range(1, rows):  # horizontal overlap bands
        by = k * sy + OVERLAP_MM / 2
        for i in range(cols):
            for f in (0.3, 0.7):
                cross(ox + i * sx + f * (A4[0] - 2 * MARGIN_MM), oy + by)


def token_sheet_pdf(out: str, *, side_mm: float = 10.0, compress: bool = True) -> int:
    """Round stickers for the 16 riders and the 4 jersey pieces, with their numbers."""
    pdf = FPDF(unit="mm", format=A4)
    pdf.set_compression(compress)
    pdf.set_auto_page_break(False)
    pdf.set_title("Peloton token stickers")
    d = side_mm * STICKER_RATE
    cell_w, cell_h = d + 2 * RIM_MM + 14, d + 2 * RIM_MM + 6
    per_row = max(1, int((A4[0] - 2 * MARGIN_MM) // cell_w))
    ids = list(RIDERS) + list(JERSEYS)
    y_start = MARGIN_MM + 14
    rows_per_page = max(1, int((A4[1] - y_start - MARGIN_MM) // cell_h))
    per_page = per_row * rows_per_page
    pages = 0
    for k, tid in enumerate(ids):
        if k % per_page == 0:
            pdf.add_page()
            pages += 1
            pdf.set_font("helvetica", size=9)
            pdf.set_text_color(0, 0, 0)
            pdf.text(MARGIN_MM, MARGIN_MM, "Peloton token stickers: print at 100 % on sticker "
                     "paper, cut along the circles, one on each rider (number beside it).")
            pdf.text(MARGIN_MM, MARGIN_MM + 5, f"scale check: each marker square is "
                     f"{side_mm:g} mm wide.  Jersey pieces: 20 red, 30 blue, 40 black, 50 green.")
        i = k % per_page
        col, row = i % per_row, i // per_row
        cx = MARGIN_MM + col * cell_w + d / 2 + RIM_MM + 1
        cy = y_start + row * cell_h + d / 2
        team = tid // 10
        b, g, r = JERSEY_RGB if tid in JERSEYS else TEAM_COLOURS[team][::-1]
        # A rim in the team colour (yellow for a jersey piece): the camera finds a token
        # as a white disc inside a darker ring.
        pdf.set_fill_color(r, g, b)
        pdf.set_draw_color(150, 150, 150)
        pdf.set_line_width(0.15)
        pdf.circle(x=cx, y=cy, radius=d / 2 + RIM_MM, style="DF")
        pdf.set_fill_color(255, 255, 255)
        pdf.circle(x=cx, y=cy, radius=d / 2, style="F")
        draw_marker(pdf, tid, cx - side_mm / 2, cy - side_mm / 2, side_mm, quiet=0.0)
        b, g, r = TEAM_COLOURS[team]
        pdf.set_text_color(r, g, b)
        pdf.set_font("helvetica", style="B", size=12)
        label = str(tid)
        pdf.text(cx + d / 2 + RIM_MM + 2, cy + 1.5, label)
        pdf.set_font("helvetica", size=6)
        pdf.text(cx + d / 2 + RIM_MM + 2, cy + 5, ("jersey " if tid in JERSEYS else "") + TEAM_NAMES[team])
    pdf.output(out)
    return pages


def board_page_image(board: Board, ppm: float = 4.0) -> np.ndarray:
    """The image the board PDF embeds (markers included), for checks and previews."""
    return render_board(board, ppm)


def corner_markers_pdf(out: str, *, side_mm: float = 50.0, compress: bool = True) -> int:
    """The four corner markers (ids 0-3) on A4, for an existing board: one page."""
    pdf = FPDF(unit="mm", format=A4)
    pdf.set_compression(compress)
    pdf.set_auto_page_break(False)
    pdf.set_title("Peloton corner markers")
    pdf.add_page()
    pdf.set_font("helvetica", size=9)
    pdf.set_text_color(0, 0, 0)
    pdf.text(MARGIN_MM, MARGIN_MM, "Peloton corner markers: print at 100 %, cut along the "
             "dotted squares (keep the white border), stick near the board's corners.")
    pdf.text(MARGIN_MM, MARGIN_MM + 5, f"scale check: each black square is {side_mm:g} mm wide. "
             "0 top left, 1 top right, 2 bottom right, 3 bottom left.")
    names = {0: "top left", 1: "top right", 2: "bottom right", 3: "bottom left"}
    q = side_mm * 0.25
    cell_w = (A4[0] - 2 * MARGIN_MM) / 2
    cell_h = side_mm + 2 * q + 22
    for k in range(4):
        x = MARGIN_MM + (k % 2) * cell_w + (cell_w - side_mm) / 2
        y = MARGIN_MM + 16 + (k // 2) * cell_h + q
        draw_marker(pdf, k, x, y, side_mm)
        pdf.set_draw_color(120, 120, 120)
        pdf.set_line_width(0.2)
        pdf.set_dash_pattern(dash=1, gap=1)
        pdf.rect(x - q, y - q, side_mm + 2 * q, side_mm + 2 * q, style="D")
        pdf.set_dash_pattern()
        pdf.set_font("helvetica", style="B", size=11)
        pdf.text(x, y + side_mm + q + 6, f"marker {k}: {names[k]}")
        pdf.set_font("helvetica", size=7)
        pdf.text(x, y + side_mm + q + 10, "measure the black square's top-left corner "
                 "(this corner) from the board's top-left")
        # A small arrow to the top-left corner the board file measures.
        pdf.set_draw_color(200, 0, 0)
        pdf.line(x - q - 4, y - q - 4, x - 0.8, y - 0.8)
    pdf.output(out)
    return 1
