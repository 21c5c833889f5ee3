"""The score sheet formats: JSON, CSV, HTML, PDF."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import pytest

from companion.scoring import (
    ChaseUse,
    RaceResult,
    ScoreSheet,
    SprintResult,
    load_score_table,
    score_race,
    stage_race,
    standard_teams,
)
from companion.sheet import (
    CSV_COLUMNS,
    sheet_from_json,
    sheet_to_csv,
    sheet_to_html,
    sheet_to_json,
    sheet_to_pdf,
    stage_to_json,
)

TEAMS = standard_teams()
HOSTILE = "<script>alert('x')</script> & \"Zoë\" 💥"
ORDER = (31, 43, 22, 51, 33, 21, 23, 24, 32, 34, 41, 42, 44, 52)  # 53, 54 do not finish


@pytest.fixture
def sheet() -> ScoreSheet:
    """A Giro d'Italia with the rulebook's first two sprints and a caught rider (22)."""
    result = RaceResult(
        TEAMS,
        ORDER,
        (
            SprintResult("D", 1, (21, 33, 42), (11, 8, 5)),
            SprintResult("A", 2, (42, 51, 43), (7, 5, 3)),
            SprintResult("B", 3, (31, 22, 23), (5, 4, 2)),
        ),
        chase_uses=(ChaseUse(22, (3,)), ChaseUse(22, (1, 6)), ChaseUse(41, (2,))),
        final_photos=(6, 4),
        team_names={2: "stunt team", 3: "iron team", 4: "kicking team", 5: HOSTILE},
        rider_names={21: HOSTILE},
    )
    return score_race(result, load_score_table())


# --- JSON -------------------------------------------------------------------------


def test_json_has_the_stable_keys(sheet: ScoreSheet) -> None:
    data = sheet_to_json(sheet)
    for key in ("riders", "teams", "winner", "sprints", "chase_car", "yellow_jersey"):
        assert key in data
    assert set(data["riders"]) == {str(r) for rs in TEAMS.values() for r in rs}
    r21 = data["riders"]["21"]
    for key in ("place", "place_points", "sprint", "jersey", "total", "disqualified"):
        assert key in r21
    assert r21 == {
        "team": 2,
        "name": HOSTILE,
        "place": 6,
        "place_points": 26,
        "sprint": 11,
        "jersey": 5,
        "total": 26 + 11 + 5,
        "disqualified": False,
        "forfeited": 0,
    }
    assert data["riders"]["53"]["place"] is None
    assert data["riders"]["22"]["disqualified"] is True
    assert data["riders"]["22"]["total"] == 0
    assert data["teams"] == {str(t.team): t.total for t in sheet.teams}
    assert data["winner"] == list(sheet.winners)
    assert data["sprints"][1]["riders"] == [42, 51, 43]
    assert data["sprints"][1]["points"] == [7, 5, 3]
    assert data["sprints"][1]["holder_after"] == 42
    assert data["chase_car"] == [
        {"rider": 22, "uses": [[3], [1, 6]], "caught": True},
        {"rider": 41, "uses": [[2]], "caught": False},
    ]
    assert data["final_photos"] == [6, 4]
    assert data["yellow_jersey"] == {"variant": "full", "holder": 42, "holders": [21, 42, 42]}
    json.dumps(data)  # JSON-ready


def test_json_round_trip(sheet: ScoreSheet) -> None:
    data = json.loads(json.dumps(sheet_to_json(sheet)))
    assert sheet_from_json(data) == sheet


def test_json_of_a_malformed_sheet_is_refused() -> None:
    with pytest.raises(ValueError, match="score sheet"):
        sheet_from_json({"riders": {}})


def test_stage_json() -> None:
    table = load_score_table()
    sheets = [score_race(RaceResult(TEAMS, ORDER), table)] * 2
    data = stage_to_json(stage_race(sheets))
    assert data["stages"] == 2
    team3 = data["teams"]["3"]
    assert team3["best_rider"] == 31 and team3["best_rider_points"] == 100
    assert team3["final"] == team3["team_points"] + 2 * 100
    json.dumps(data)


# --- CSV --------------------------------------------------------------------------


def test_csv_parses_back(sheet: ScoreSheet) -> None:
    text = sheet_to_csv(sheet)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) == 16
    data = sheet_to_json(sheet)
    for row in rows:
        want = data["riders"][row["rider"]]
        assert int(row["team"]) == want["team"]
        assert (int(row["place"]) if row["place"] else None) == want["place"]
        for col, key in (
            ("place_points", "place_points"),
            ("sprint", "sprint"),
            ("jersey", "jersey"),
            ("total", "total"),
            ("forfeited", "forfeited"),
        ):
            assert int(row[col]) == want[key], (row["rider"], col)
        assert (row["disqualified"] == "true") == want["disqualified"]
        assert int(row["team_total"]) == data["teams"][row["team"]]
    by_rider = {row["rider"]: row for row in rows}
    assert by_rider["21"]["name"] == HOSTILE  # quoted, parsed back intact
    assert by_rider["22"]["chase_photos"] == "3;1 6"
    assert by_rider["41"]["chase_photos"] == "2"
    assert by_rider["42"]["sprint_places"] == "1:3 2:1"
    assert by_rider["53"]["place"] == ""


# --- HTML -------------------------------------------------------------------------


def test_html_is_self_contained_and_shows_the_numbers(sheet: ScoreSheet) -> None:
    page = sheet_to_html(sheet, "Giro d'Italia")
    assert page.startswith("<!DOCTYPE html>")
    assert "<style>" in page
    assert not re.search(r"(src|href)\s*=", page), "no external assets"
    assert "http" not in page and "@import" not in page
    assert "Fahrer Nr." in page
    for r in sheet.riders:
        assert f">{r.rider}<" in page
        assert f">{r.total}<" in page
    for t in sheet.teams:
        assert f">{t.total}<" in page
    for c in sheet.sprints:
        assert f"line {c.line}" in page
        for p in c.points:
            assert f">{p}<" in page
    assert "3 | 1 6" in page  # photo-cards of rider 22's two uses
    assert "6 and 4" in page  # the final photo-cards
    assert "DQ: forfeits" in page
    # The finish order column lists the riders in finishing order.
    positions = [page.index(f"<td>{i + 1}</td><td>{n}<") for i, n in enumerate(ORDER[:5])]
    assert positions == sorted(positions)


def test_html_escapes_hostile_names_and_title(sheet: ScoreSheet) -> None:
    title = "</title><script>alert(1)</script>"
    page = sheet_to_html(sheet, title)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &quot;Zoë&quot;" in page
    assert page.count("<title>") == 1 and page.count("</title>") == 1


# --- PDF --------------------------------------------------------------------------


def _pages(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page\b(?!s)", data))


def test_pdf_is_one_page(sheet: ScoreSheet, tmp_path: Path) -> None:
    out = sheet_to_pdf(sheet, tmp_path / "sheet.pdf", title=HOSTILE)
    data = out.read_bytes()
    assert data.startswith(b"%PDF")
    assert _pages(data) == 1


def test_pdf_stays_on_one_page_when_full(tmp_path: Path) -> None:
    teams = {t: tuple(10 * t + k for k in range(1, 5)) for t in range(1, 10)}
    riders = tuple(r for rs in teams.values() for r in rs)
    result = RaceResult(
        teams,
        riders,
        (SprintResult("B", 1, riders[:3], (11, 8, 5)),),
        chase_uses=tuple(ChaseUse(r, (1, 2)) for r in riders for _ in range(4)),
        final_photos=(1, 6),
        rider_names={r: "W" * 60 for r in riders},
    )
    path = tmp_path / "full.pdf"
    sheet_to_pdf(score_race(result, load_score_table()), str(path), "T" * 300)
    data = path.read_bytes()
    assert data.startswith(b"%PDF")
    assert _pages(data) == 1


def test_pdf_of_an_empty_race(tmp_path: Path) -> None:
    sheet = score_race(RaceResult(TEAMS, ()), load_score_table())
    data = sheet_to_pdf(sheet, tmp_path / "empty.pdf").read_bytes()
    assert data.startswith(b"%PDF") and _pages(data) == 1
