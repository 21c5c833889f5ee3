"""simulate_race, the `companion simulate` command and the bench helpers."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from companion.boards import load_board, load_course
from companion.cli import main
from companion.games.reifenbreite import Level, Move, Race, Settings, Setup
from companion.games.reifenbreite.bench import demo_board, destinations_by_roll, mid_race
from companion.games.reifenbreite.bots import BotManager, Manager, RandomManager, RollChoice
from companion.games.reifenbreite.simulate import SimulationError, simulate_race
from companion.record import read_record, replay, start_race

TEAMS = (2, 3, 4, 5)


def bots() -> dict[int, Manager]:
    return {t: BotManager() for t in TEAMS}


@pytest.mark.parametrize("course", ["A", "B", "C", "D"])
def test_bots_finish_every_course_deterministically(course: str) -> None:
    board, c = load_board("standard"), load_course(course)
    race, events = simulate_race(board, c, 11, bots(), Settings(level=Level.PROFESSIONAL), course_name=course)
    assert race.phase.value == "over"
    assert sorted(race.finish_order) == sorted(race.riders)
    assert isinstance(events[0], Setup)
    race2, events2 = simulate_race(board, c, 11, bots(), Settings(level=Level.PROFESSIONAL), course_name=course)
    assert events2 == events
    assert race2.finish_order == race.finish_order


class StandStill(RandomManager):
    """Never moves a space: the race cannot end."""

    def move(self, race: Race, rider: int, steps: int, destinations: dict[str, int]) -> str:
        r = race.riders[rider]
        assert r.pos is not None
        return r.pos.space

    def draft(self, race: Race, rider: int, leader: int) -> bool:
        return False


def test_a_stuck_race_stops_with_a_clear_error() -> None:
    board, course, _ = demo_board()
    with pytest.raises(SimulationError, match="has not ended after 5 rounds"):
        simulate_race(board, course, 1, {t: StandStill(t) for t in TEAMS}, max_rounds=5)


class Cheat(BotManager):
    def roll(self, race: Race, rider: int) -> RollChoice:
        return RollChoice(cards=("J-6M", "J-6M", "J-5"))


def test_an_illegal_decision_is_an_error_not_a_silent_skip() -> None:
    board, course, _ = demo_board()
    with pytest.raises(SimulationError, match="refused"):
        simulate_race(board, course, 1, {t: Cheat() for t in TEAMS})


def test_demo_board_record_replays(tmp_path: Path) -> None:
    from companion.record import write_record

    board, course, text = demo_board()
    managers: dict[int, Manager] = {2: BotManager(), 3: RandomManager(3), 4: BotManager(), 5: RandomManager(5)}
    race, events = simulate_race(board, course, 4, managers, Settings(level=Level.PROFESSIONAL), board_text=text)
    path = tmp_path / "race.jsonl"
    write_record(path, events)
    entries = read_record(path)
    again = start_race(entries)
    assert all(v["ok"] for v in replay(entries, again))
    assert again.finish_order == race.finish_order
    assert again.final_photos == race.final_photos


def run_cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()


def test_simulate_json_prints_one_score_sheet(tmp_path: Path) -> None:
    record = tmp_path / "sim.jsonl"
    code, out = run_cli("simulate", "--json", "--course", "D", "--seed", "5", "--level", "professional",
                        "--record", str(record))
    assert code == 0
    assert len(out.strip().splitlines()) == 1
    sheet = json.loads(out)
    assert set(sheet["riders"]) == {str(t * 10 + i) for t in TEAMS for i in range(1, 5)}
    for r in sheet["riders"].values():
        assert {"place", "sprint", "jersey", "total"} <= set(r)
    assert {int(t) for t in sheet["teams"]} == set(TEAMS)
    assert sum(sheet["teams"].values()) == sum(r["total"] for r in sheet["riders"].values())
    assert sheet["managers"] == {"2": "bot", "3": "bot", "4": "bot", "5": "bot"}
    # the record replays with every verdict ok, to the same sheet
    code, out = run_cli("replay", "--json", str(record))
    lines = [json.loads(line) for line in out.splitlines()]
    assert all(v["ok"] for v in lines[:-1])
    assert lines[-1]["score"]["teams"] == sheet["teams"]


def test_simulate_with_random_teams_and_text_output() -> None:
    code, out = run_cli("simulate", "--course", "A", "--seed", "2", "--random", "3,4")
    assert code == 0
    assert "team 3 (random)" in out and "team 2 (bot)" in out
    code, out = run_cli("simulate", "--json", "--course", "B", "--seed", "2", "--bots", "5")
    assert json.loads(out)["managers"] == {"2": "random", "3": "random", "4": "random", "5": "bot"}


@pytest.mark.parametrize("argv", [
    ["simulate", "--bots", "2,7"],
    ["simulate", "--random", "x"],
    ["simulate", "--course", "Z"],
])
def test_simulate_user_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("companion: ")


def test_destinations_by_roll_equals_the_engine() -> None:
    board, course = load_board("standard"), load_course("D")
    for rounds in (3, 12):
        race = mid_race(board, course, seed=rounds, rounds=rounds)
        for n, r in race.riders.items():
            if not r.on_road:
                continue
            found = destinations_by_roll(race, n)
            for roll in range(2, 13):
                assert found[roll] == race.destinations(n, roll)


def test_moves_in_the_record_use_the_managers_choice() -> None:
    board, course, text = demo_board()
    _, events = simulate_race(board, course, 3, bots(), board_text=text)
    assert any(isinstance(e, Move) for e in events)
