"""Building a race from a record's setup event: board, course, settings, teams, hands."""

from __future__ import annotations

from pathlib import Path

from companion.boards import (
    BoardError,
    Course,
    CourseError,
    course_from_dict,
    load_board,
    load_course,
    parse_board,
)
from companion.games.reifenbreite.cards import CardError, EnergyCard
from companion.games.reifenbreite.events import Setup
from companion.games.reifenbreite.race import (
    IllegalEventError,
    Race,
    Settings,
    SettingsError,
)


class SetupError(ValueError):
    """A setup that cannot start a race: wrong board, course, settings or positions."""


def _course(spec: str | dict[str, object], base: Path | None) -> Course:
    if isinstance(spec, dict):
        return course_from_dict(spec, "setup.course")
    p = Path(spec)
    if base is not None and not p.is_absolute() and (base / p).exists():
        p = base / p
    return load_course(p if p.exists() else spec)


def race_from_setup(setup: Setup, base: Path | None = None) -> Race:
    """A race as the setup event describes it; ``base`` resolves relative file names."""
    try:
        if setup.board_text is not None:
            board, shown = parse_board(setup.board_text, "setup.board_text")
        else:
            bp = Path(setup.board)
            if base is not None and not bp.is_absolute() and (base / bp).exists():
                bp = base / bp
            board = load_board(bp if bp.exists() else setup.board)
            shown = {}
        course = _course(setup.course, base)
        settings = Settings.from_dict(setup.level, dict(setup.settings))
        race = Race(board, course, settings, seed=setup.seed, teams=tuple(setup.teams))
    except (BoardError, CourseError, SettingsError, CardError) as exc:
        raise SetupError(str(exc)) from None
    if setup.hands is not None:
        for team, names in setup.hands.items():
            if team not in race.teams:
                raise SetupError(f"'hands' names team {team}, which is not in the race")
            try:
                race.teams[team].hand = [EnergyCard.parse(n) for n in names]
            except CardError as exc:
                raise SetupError(str(exc)) from None
    positions = setup.positions if setup.positions is not None else (shown or None)
    if positions is not None:
        try:
            race.start_from_positions(positions, setup.round)
        except (IllegalEventError, CourseError) as exc:
            raise SetupError(str(exc)) from None
    return race
