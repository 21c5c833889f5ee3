"""The score sheet as the paper pad has it: JSON, CSV, a printable HTML page, a PDF.

All functions take a :class:`companion.scoring.ScoreSheet` (see
:func:`companion.scoring.score_race`):

- :func:`sheet_to_json`: a JSON-ready dict with stable keys (``riders``,
  ``teams``, ``winner``, ``sprints``, ``chase_car``, ``yellow_jersey``, ...);
  :func:`sheet_from_json` reads it back;
- :func:`sheet_to_csv`: one row per rider (the pad's bottom section);
- :func:`sheet_to_html`: a self-contained printable page (inline CSS only);
- :func:`sheet_to_pdf`: the same sheet on one A4 page (fpdf2).

The layout follows the pad: the sprint columns with the first 3 riders across
each sprint line, the finish order ("Fahrer Nr."), sprint and yellow-jersey
points per rider, rider totals, the team section and the chase car records
with the photo-card numbers drawn.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from companion.scoring import (
    ChaseRecord,
    RiderScore,
    ScoreSheet,
    SprintColumn,
    StageResult,
    TeamScore,
)

CSV_COLUMNS = (
    "team",
    "team_name",
    "rider",
    "name",
    "place",
    "place_points",
    "sprint",
    "jersey",
    "total",
    "disqualified",
    "forfeited",
    "team_total",
    "sprint_places",
    "chase_photos",
)


# --- JSON -------------------------------------------------------------------------


def _rider_json(r: RiderScore) -> dict[str, Any]:
    return {
        "team": r.team,
        "name": r.name,
        "place": r.place,
        "place_points": r.place_points,
        "sprint": r.sprint_points,
        "jersey": r.jersey_points,
        "total": r.total,
        "disqualified": r.disqualified,
        "forfeited": r.forfeited,
    }


def _sprint_json(c: SprintColumn) -> dict[str, Any]:
    return {
        "number": c.number,
        "line": c.line,
        "route_index": c.route_index,
        "riders": list(c.riders),
        "points": list(c.points),
        "holder_before": c.holder_before,
        "holder_after": c.holder_after,
        "jersey_bonus": (None if c.jersey_bonus is None else {"rider": c.jersey_bonus[0], "points": c.jersey_bonus[1]}),
    }


def sheet_to_json(sheet: ScoreSheet) -> dict[str, Any]:
    """The sheet as a JSON-ready dict.

    Keys: ``riders`` (``{"21": {"team", "name", "place", "place_points",
    "sprint", "jersey", "total", "disqualified", "forfeited"}}``), ``teams``
    (``{"2": total}``), ``team_names``, ``team_riders``, ``winner`` (a list of
    team numbers: several on a tie), ``finish_order``, ``sprints`` (one object
    per sprint: ``number``, ``line``, ``route_index``, ``riders``, ``points``,
    ``holder_before``, ``holder_after``, ``jersey_bonus``), ``chase_car`` (one
    object per rider: ``rider``, ``uses`` (photo-card numbers per use),
    ``caught``), ``final_photos`` (the two cards drawn after the race, or
    null), ``yellow_jersey`` (``variant``, ``holder``, ``holders`` after each
    sprint).
    """
    return {
        "riders": {str(r.rider): _rider_json(r) for r in sheet.riders},
        "teams": {str(t.team): t.total for t in sheet.teams},
        "team_names": {str(t.team): t.name for t in sheet.teams},
        "team_riders": {str(t.team): list(t.riders) for t in sheet.teams},
        "winner": list(sheet.winners),
        "finish_order": list(sheet.finish_order),
        "sprints": [_sprint_json(c) for c in sheet.sprints],
        "chase_car": [
            {"rider": c.rider, "uses": [list(u) for u in c.uses], "caught": c.caught} for c in sheet.chase_car
        ],
        "final_photos": None if sheet.final_photos is None else list(sheet.final_photos),
        "yellow_jersey": {
            "variant": sheet.jersey_variant,
            "holder": sheet.jersey_holder,
            "holders": [c.holder_after for c in sheet.sprints],
        },
    }


def sheet_from_json(data: Mapping[str, Any]) -> ScoreSheet:
    """Read back what :func:`sheet_to_json` wrote (raises ValueError on a malformed sheet)."""
    try:
        riders = tuple(
            RiderScore(
                rider=int(num),
                team=int(r["team"]),
                place=None if r["place"] is None else int(r["place"]),
                place_points=int(r["place_points"]),
                sprint_points=int(r["sprint"]),
                jersey_points=int(r["jersey"]),
                disqualified=bool(r["disqualified"]),
                name=str(r.get("name", "")),
            )
            for num, r in data["riders"].items()
        )
        names = data.get("team_names", {})
        members = data.get("team_riders", {})
        teams = tuple(
            TeamScore(
                team=int(t),
                riders=tuple(int(x) for x in members.get(t, [r.rider for r in riders if r.team == int(t)])),
                total=int(total),
                name=str(names.get(t, "")),
            )
            for t, total in data["teams"].items()
        )
        sprints = tuple(
            SprintColumn(
                number=int(s["number"]),
                line=str(s["line"]),
                route_index=int(s["route_index"]),
                riders=tuple(int(x) for x in s["riders"]),
                points=tuple(int(x) for x in s["points"]),
                holder_before=s["holder_before"],
                holder_after=s["holder_after"],
                jersey_bonus=(
                    None
                    if s["jersey_bonus"] is None
                    else (int(s["jersey_bonus"]["rider"]), int(s["jersey_bonus"]["points"]))
                ),
            )
            for s in data["sprints"]
        )
        chase = tuple(
            ChaseRecord(
                rider=int(c["rider"]),
                uses=tuple(tuple(int(p) for p in u) for u in c["uses"]),
                caught=bool(c["caught"]),
            )
            for c in data["chase_car"]
        )
        photos = data.get("final_photos")
        jersey = data["yellow_jersey"]
        variant = jersey["variant"]
        if variant not in ("full", "short"):
            raise ValueError(f"yellow_jersey.variant: {variant!r}")
        return ScoreSheet(
            riders=riders,
            teams=teams,
            winners=tuple(int(t) for t in data["winner"]),
            finish_order=tuple(int(r) for r in data["finish_order"]),
            sprints=sprints,
            chase_car=chase,
            final_photos=None if photos is None else (int(photos[0]), int(photos[1])),
            jersey_variant=variant,
            jersey_holder=jersey["holder"],
        )
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ValueError(f"not a score sheet: missing or bad field {exc}") from None


def stage_to_json(stage: StageResult) -> dict[str, Any]:
    """A stage race result as a JSON-ready dict: per team the stage totals and the bonus."""
    return {
        "stages": stage.stages,
        "teams": {
            str(t.team): {
                "name": t.name,
                "stage_totals": list(t.stage_totals),
                "team_points": t.team_points,
                "best_rider": t.best_rider,
                "best_rider_points": t.best_rider_points,
                "bonus": t.bonus,
                "final": t.final,
            }
            for t in stage.teams
        },
        "riders": {str(r): v for r, v in sorted(stage.rider_totals.items())},
        "winner": list(stage.winners),
    }


# --- CSV --------------------------------------------------------------------------


def _uses_text(uses: tuple[tuple[int, ...], ...]) -> str:
    return ";".join(" ".join(str(p) for p in use) for use in uses)


def _sprint_places(sheet: ScoreSheet, rider: int) -> str:
    return " ".join(f"{c.number}:{c.riders.index(rider) + 1}" for c in sheet.sprints if rider in c.riders)


def sheet_to_csv(sheet: ScoreSheet) -> str:
    """One row per rider, team by team, under the header :data:`CSV_COLUMNS`.

    ``place`` is empty for a rider who did not finish; ``disqualified`` is
    ``true``/``false``; ``sprint_places`` lists ``sprint:place`` pairs (``1:1
    2:3``: first at sprint 1, third at sprint 2); ``chase_photos`` the
    photo-card numbers he drew, uses separated by ``;`` (``3;1 6``).
    """
    chase = {c.rider: c for c in sheet.chase_car}
    totals = {t.team: t for t in sheet.teams}
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in sheet.riders:
        team = totals.get(r.team)
        writer.writerow(
            [
                r.team,
                team.name if team else "",
                r.rider,
                r.name,
                "" if r.place is None else r.place,
                r.place_points,
                r.sprint_points,
                r.jersey_points,
                r.total,
                "true" if r.disqualified else "false",
                r.forfeited,
                team.total if team else "",
                _sprint_places(sheet, r.rider),
                _uses_text(chase[r.rider].uses) if r.rider in chase else "",
            ]
        )
    return buf.getvalue()


# --- shared text --------------------------------------------------------------------


def _variant_text(sheet: ScoreSheet) -> str:
    if sheet.jersey_variant == "short":
        return "yellow jersey: short rules (points per round kept)"
    return "yellow jersey: full rules (bonus at the sprints)"


def _winner_text(sheet: ScoreSheet) -> str:
    if not sheet.winners:
        return "-"
    return " and ".join(_team_label(sheet, t) for t in sheet.winners)


def _team_label(sheet: ScoreSheet, team: int) -> str:
    for t in sheet.teams:
        if t.team == team and t.name:
            return f"team {team} ({t.name})"
    return f"team {team}"


def _rider_label(r: RiderScore) -> str:
    return f"{r.rider} {r.name}" if r.name else str(r.rider)


def _ordered_riders(sheet: ScoreSheet) -> list[RiderScore]:
    """Riders as the pad lists them: finish order first, then those who did not finish."""
    by_number = {r.rider: r for r in sheet.riders}
    out = [by_number[n] for n in sheet.finish_order if n in by_number]
    out += sorted((r for r in sheet.riders if r.place is None), key=lambda r: (r.team, r.rider))
    return out


def _photos_text(sheet: ScoreSheet) -> str:
    if sheet.final_photos is None:
        return "not drawn"
    return " and ".join(str(p) for p in sheet.final_photos)


# --- HTML -------------------------------------------------------------------------

_CSS = """
body { font-family: Helvetica, Arial, sans-serif; margin: 1.5em; color: #111; }
h1 { font-size: 1.5em; margin: 0 0 .2em; }
h2 { font-size: 1.05em; margin: 1.2em 0 .4em; border-bottom: 2px solid #111; }
p.meta { margin: 0 0 .8em; color: #333; }
table { border-collapse: collapse; margin-bottom: .5em; font-size: .92em; }
th, td { border: 1px solid #555; padding: .2em .55em; text-align: right; }
th { background: #eee; }
td.l, th.l { text-align: left; }
tr.dq td { color: #a00; }
tr.dq td.x { text-decoration: line-through; }
.jersey { background: #ffe94d; }
.win { font-weight: bold; }
@page { size: A4; margin: 12mm; }
@media print { body { margin: 0; } h2 { break-after: avoid; } table { break-inside: avoid; } }
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _html_sprints(sheet: ScoreSheet) -> str:
    """The sprint columns side by side, as on the pad: places 1-3, the jersey below."""
    if not sheet.sprints:
        return "<p>No sprints in this race.</p>"
    cols = sheet.sprints
    head = "".join(f"<th colspan='2' class='l'>Sprint {_e(c.number)}: line {_e(c.line)}</th>" for c in cols)
    sub = "<th>Fahrer Nr.</th><th>Points</th>" * len(cols)
    rows = []
    for i in range(3):
        cells = []
        for c in cols:
            rider = _e(c.riders[i]) if i < len(c.riders) else ""
            pts = _e(c.points[i]) if i < len(c.points) else ""
            cells.append(f"<td>{rider}</td><td>{pts}</td>")
        rows.append(f"<tr><td>{i + 1}.</td>{''.join(cells)}</tr>")
    jersey = []
    bonus = []
    for c in cols:
        holder = "-" if c.holder_after is None else _e(c.holder_after)
        new = c.holder_after is not None and c.holder_after != c.holder_before
        jersey.append(f"<td class='l' colspan='2'>{holder}{' (new)' if new else ''}</td>")
        if c.jersey_bonus is None:
            bonus.append("<td colspan='2'></td>")
        else:
            bonus.append(f"<td>{_e(c.jersey_bonus[0])}</td><td>{_e(c.jersey_bonus[1])}</td>")
    rows.append(f"<tr class='jersey'><th class='l'>Yellow jersey</th>{''.join(jersey)}</tr>")
    if any(c.jersey_bonus is not None for c in cols):
        rows.append(f"<tr><th class='l'>Jersey bonus</th>{''.join(bonus)}</tr>")
    return f"<table class='sprints'><tr><th>Place</th>{head}</tr><tr><th></th>{sub}</tr>" + "".join(rows) + "</table>"


def _html_riders(sheet: ScoreSheet) -> str:
    rows = []
    for r in _ordered_riders(sheet):
        cls = " class='dq'" if r.disqualified else ""
        jersey = " class='jersey'" if r.rider == sheet.jersey_holder else ""
        note = f"DQ: forfeits {r.forfeited}" if r.disqualified else ""
        rows.append(
            f"<tr{cls}><td>{'-' if r.place is None else _e(r.place)}</td>"
            f"<td{jersey}>{_e(r.rider)}</td><td class='l'>{_e(r.name)}</td>"
            f"<td>{_e(r.team)}</td><td class='x'>{_e(r.place_points)}</td>"
            f"<td class='x'>{_e(r.sprint_points)}</td><td class='x'>{_e(r.jersey_points)}</td>"
            f"<td class='x'>{_e(r.sprint_points + r.jersey_points)}</td>"
            f"<td class='win'>{_e(r.total)}</td><td class='l note'>{_e(note)}</td></tr>"
        )
    return (
        "<table class='riders'><tr><th>Place</th><th>Fahrer Nr.</th><th class='l'>Name</th>"
        "<th>Team</th><th>Place points</th><th>Sprint</th><th>Yellow jersey</th>"
        "<th>Sprint + jersey</th><th>Total</th><th class='l'></th></tr>" + "".join(rows) + "</table>"
    )


def _html_teams(sheet: ScoreSheet) -> str:
    by_number = {r.rider: r for r in sheet.riders}
    rows = []
    for t in sheet.teams:
        parts = ", ".join(
            f"{_e(n)}: {_e(by_number[n].total)}{' (DQ)' if by_number[n].disqualified else ''}"
            for n in t.riders
            if n in by_number
        )
        cls = " class='win'" if t.team in sheet.winners else ""
        rows.append(
            f"<tr{cls}><td>{_e(t.team)}</td><td class='l'>{_e(t.name)}</td>"
            f"<td class='l'>{parts}</td><td>{_e(t.total)}</td></tr>"
        )
    return (
        "<table class='teams'><tr><th>Team</th><th class='l'>Name</th>"
        "<th class='l'>Riders' totals</th><th>Team total</th></tr>" + "".join(rows) + "</table>"
    )


def _html_chase(sheet: ScoreSheet) -> str:
    photos = f"<p>Photo-cards drawn after the race: {_e(_photos_text(sheet))}</p>"
    if not sheet.chase_car:
        return "<p>Nobody hung onto the chase car.</p>" + photos
    rows = []
    for c in sheet.chase_car:
        uses = " | ".join(" ".join(_e(p) for p in use) for use in c.uses)
        verdict = "photographed: disqualified" if c.caught else "not photographed"
        rows.append(
            f"<tr{' class=dq' if c.caught else ''}><td>{_e(c.rider)}</td>"
            f"<td class='l'>{uses}</td><td class='l note'>{_e(verdict)}</td></tr>"
        )
    return (
        "<table class='chase'><tr><th>Fahrer Nr.</th><th class='l'>Photo-cards (per use)</th>"
        "<th class='l'></th></tr>" + "".join(rows) + "</table>" + photos
    )


def sheet_to_html(sheet: ScoreSheet, title: str = "Um Reifenbreite score sheet") -> str:
    """A printable, self-contained HTML page of the sheet (inline CSS, no network assets)."""
    meta = (
        f"Winner: {_e(_winner_text(sheet))}. {_e(_variant_text(sheet))}; "
        f"wearer at the end: {_e('-' if sheet.jersey_holder is None else sheet.jersey_holder)}."
    )
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>\n"
        f"<h1>{_e(title)}</h1><p class='meta'>{meta}</p>\n"
        f"<h2>Sprints</h2>{_html_sprints(sheet)}\n"
        f"<h2>Finish and points</h2>{_html_riders(sheet)}\n"
        f"<h2>Teams</h2>{_html_teams(sheet)}\n"
        f"<h2>Chase car</h2>{_html_chase(sheet)}\n"
        "</body></html>\n"
    )


# --- PDF --------------------------------------------------------------------------


def _latin1(text: object, limit: int = 0) -> str:
    """Text the PDF core fonts can show (latin-1; anything else becomes '?')."""
    s = str(text).encode("latin-1", "replace").decode("latin-1")
    s = "".join(ch if ch.isprintable() else "?" for ch in s)
    if limit and len(s) > limit:
        s = s[: limit - 1] + "~"
    return s


def sheet_to_pdf(sheet: ScoreSheet, path: str | Path, title: str = "Um Reifenbreite score sheet") -> Path:
    """Write the sheet as a one-page A4 PDF to ``path``; returns the path.

    The row height shrinks when a sheet has more lines than fit, so the sheet
    always stays on one page. Text outside latin-1 is shown as '?'.
    """
    from fpdf import FPDF  # fpdf2, a project dependency; imported here to keep imports light

    riders = _ordered_riders(sheet)
    left, top, width, height = 10.0, 10.0, 190.0, 277.0
    sprint_rows = 6 if sheet.sprints else 1
    rows = sprint_rows + (1 + len(riders)) + (1 + len(sheet.teams)) + (2 + len(sheet.chase_car))
    head = 18.0
    gaps = 4 * 6.0 + 3 * 2.0  # section headings and the space between sections
    h = max(2.0, min(5.5, (height - head - gaps) / rows))
    size = h * 1.75  # font size (pt) for a row height in mm

    pdf = FPDF(orientation="P", unit="mm", format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_margins(left, top, left)
    pdf.add_page()

    def fit(text: object, w: float) -> str:
        """``text`` in latin-1, cut to fit a cell ``w`` mm wide in the current font."""
        t = _latin1(text)
        if pdf.get_string_width(t) <= w - 2:
            return t
        while t and pdf.get_string_width(t + "~") > w - 2:
            t = t[:-1]
        return t + "~"

    pdf.set_title(_latin1(title, 120))
    pdf.set_font("Helvetica", "B", 15)
    pdf.cell(width, 8, fit(title, width), new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", "", 9)
    pdf.cell(
        width,
        5,
        fit(
            f"Winner: {_winner_text(sheet)}.  {_variant_text(sheet)}; wearer at the end: "
            f"{'-' if sheet.jersey_holder is None else sheet.jersey_holder}.",
            width,
        ),
        new_x="LMARGIN",
        new_y="NEXT",
    )
    pdf.ln(5)

    def section(name: str) -> None:
        pdf.set_font("Helvetica", "B", min(11.0, size + 1.5))
        pdf.cell(width, 5, name, border="B", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(1)

    def row(cells: list[tuple[float, object, str]], bold: bool = False, fill: bool = False) -> None:
        pdf.set_font("Helvetica", "B" if bold else "", size)
        for w, text, align in cells:
            pdf.cell(w, h, fit(text, w), border=1, align=align, fill=fill)
        pdf.ln(h)

    pdf.set_fill_color(235, 235, 235)

    # Sprints: one column of 3 places per sprint, the jersey below.
    section("Sprints")
    if sheet.sprints:
        n = len(sheet.sprints)
        col = min(62.0, width / n)
        x0 = pdf.get_x()
        y0 = pdf.get_y()
        for k, c in enumerate(sheet.sprints):
            pdf.set_xy(x0 + k * col, y0)
            pdf.set_font("Helvetica", "B", size)
            pdf.cell(col, h, fit(f"Sprint {c.number}: line {c.line}", col), border=1, fill=True)
            pdf.set_font("Helvetica", "", size)
            for i, pts in enumerate(c.points[:3]):
                pdf.set_xy(x0 + k * col, y0 + (i + 1) * h)
                rider = c.riders[i] if i < len(c.riders) else ""
                pdf.cell(col * 0.2, h, f"{i + 1}.", border=1, align="R")
                pdf.cell(col * 0.5, h, fit(rider, col * 0.5), border=1, align="C")
                pdf.cell(col * 0.3, h, str(pts), border=1, align="R")
            for i in range(len(c.points[:3]), 3):
                pdf.set_xy(x0 + k * col, y0 + (i + 1) * h)
                pdf.cell(col, h, "", border=1)
            pdf.set_xy(x0 + k * col, y0 + 4 * h)
            pdf.set_fill_color(255, 233, 77)
            holder = "-" if c.holder_after is None else str(c.holder_after)
            pdf.cell(col, h, fit(f"yellow jersey: {holder}", col), border=1, fill=True)
            pdf.set_fill_color(235, 235, 235)
            pdf.set_xy(x0 + k * col, y0 + 5 * h)
            bonus = "" if c.jersey_bonus is None else f"bonus {c.jersey_bonus[1]} to {c.jersey_bonus[0]}"
            pdf.cell(col, h, fit(bonus, col), border=1)
        pdf.set_xy(x0, y0 + 6 * h)
    else:
        row([(width, "No sprints in this race.", "L")])
    pdf.ln(2)

    # Finish order and points.
    section("Finish and points")
    cols = [15.0, 20.0, 43.0, 14.0, 20.0, 16.0, 16.0, 20.0, 26.0]
    row(
        [
            (cols[0], "Place", "C"),
            (cols[1], "Fahrer Nr.", "C"),
            (cols[2], "Name", "L"),
            (cols[3], "Team", "C"),
            (cols[4], "Place pts", "C"),
            (cols[5], "Sprint", "C"),
            (cols[6], "Jersey", "C"),
            (cols[7], "Total", "C"),
            (cols[8], "", "L"),
        ],
        bold=True,
        fill=True,
    )
    for r in riders:
        row(
            [
                (cols[0], "-" if r.place is None else r.place, "R"),
                (cols[1], r.rider, "C"),
                (cols[2], r.name, "L"),
                (cols[3], r.team, "C"),
                (cols[4], r.place_points, "R"),
                (cols[5], r.sprint_points, "R"),
                (cols[6], r.jersey_points, "R"),
                (cols[7], r.total, "R"),
                (cols[8], f"DQ (-{r.forfeited})" if r.disqualified else "", "L"),
            ]
        )
    pdf.ln(2)

    # Teams.
    section("Teams")
    by_number = {r.rider: r for r in sheet.riders}
    tcols = [14.0, 40.0, 106.0, 30.0]
    row(
        [
            (tcols[0], "Team", "C"),
            (tcols[1], "Name", "L"),
            (tcols[2], "Riders' totals", "L"),
            (tcols[3], "Team total", "C"),
        ],
        bold=True,
        fill=True,
    )
    for t in sheet.teams:
        parts = "  ".join(
            f"{n}: {by_number[n].total}{' DQ' if by_number[n].disqualified else ''}" for n in t.riders if n in by_number
        )
        row(
            [
                (tcols[0], t.team, "C"),
                (tcols[1], t.name, "L"),
                (tcols[2], parts, "L"),
                (tcols[3], f"{t.total}{' *' if t.team in sheet.winners else ''}", "R"),
            ],
            bold=t.team in sheet.winners,
        )
    pdf.ln(2)

    # Chase car.
    section("Chase car")
    ccols = [20.0, 120.0, 50.0]
    row(
        [(ccols[0], "Fahrer Nr.", "C"), (ccols[1], "Photo-cards (per use)", "L"), (ccols[2], "", "L")],
        bold=True,
        fill=True,
    )
    for rec in sheet.chase_car:
        row(
            [
                (ccols[0], rec.rider, "C"),
                (ccols[1], " | ".join(" ".join(str(p) for p in use) for use in rec.uses), "L"),
                (ccols[2], "photographed: DQ" if rec.caught else "not photographed", "L"),
            ]
        )
    row([(width, f"Photo-cards drawn after the race: {_photos_text(sheet)}", "L")])

    out = Path(path)
    pdf.output(str(out))
    return out
