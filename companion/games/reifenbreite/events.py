"""The events of an Um Reifenbreite game, as typed values and as JSON records.

Each event is a frozen dataclass with a ``type`` tag; :func:`event_from_dict`
reads one from a record line and raises :class:`EventFormatError` (a
``ValueError``) when the line is not a well-formed event. Whether an event is
*legal* is the engine's business (``companion.games.reifenbreite.race``).
The record format is documented in ``docs/record.md``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any


class EventFormatError(ValueError):
    """A record entry that is not a well-formed event."""


@dataclass(frozen=True)
class Setup:
    """The first event of a record: the game, its rules, board, course, teams and seed."""

    seed: int
    board: str = "standard"
    course: str | dict[str, Any] = "D"
    board_text: str | None = None
    level: str = "advanced"
    teams: tuple[int, ...] = (2, 3, 4, 5)
    settings: dict[str, Any] = field(default_factory=dict)
    positions: dict[int, str] | None = None  # start from a position instead of placing
    round: int = 1
    hands: dict[int, list[str]] | None = None  # energy cards per team, when not the full set
    type: str = "setup"


@dataclass(frozen=True)
class PlacementRoll:
    """A team manager's roll for the placing order."""

    team: int
    dice: tuple[int, ...]
    type: str = "placement_roll"


@dataclass(frozen=True)
class Place:
    """A rider placed on a start dot."""

    rider: int
    space: str
    type: str = "place"


@dataclass(frozen=True)
class Roll:
    """A rider's roll: dice, energy cards played, breakaway, chase car."""

    rider: int
    dice: tuple[int, ...]
    cards: tuple[str, ...] = ()
    breakaway: bool = False
    chase_car: bool = False
    type: str = "roll"


@dataclass(frozen=True)
class Chance:
    """The chance card drawn after a roll of 7 (written by the engine; checked on replay)."""

    rider: int
    card: str
    type: str = "chance"


@dataclass(frozen=True)
class Move:
    """A rider moved by his roll to a space."""

    rider: int
    to: str
    type: str = "move"


@dataclass(frozen=True)
class Draft:
    """A rider drafts the rider directly ahead of him."""

    rider: int
    to: str | None = None
    type: str = "draft"


@dataclass(frozen=True)
class Decline:
    """A rider does not draft (implied by any other event when left out)."""

    rider: int
    type: str = "decline"


@dataclass(frozen=True)
class SwitchLead:
    """Professional rules: the front rider of an unbroken line changes places with one behind."""

    rider: int
    with_rider: int
    type: str = "switch"


@dataclass(frozen=True)
class Photos:
    """Professional rules: the two photo-cards drawn after the race (checked on replay)."""

    cards: tuple[int, ...]
    type: str = "photos"


Event = Setup | PlacementRoll | Place | Roll | Chance | Move | Draft | Decline | SwitchLead | Photos

_TYPES: dict[str, type] = {
    "setup": Setup,
    "placement_roll": PlacementRoll,
    "place": Place,
    "roll": Roll,
    "chance": Chance,
    "move": Move,
    "draft": Draft,
    "decline": Decline,
    "switch": SwitchLead,
    "photos": Photos,
}


def _int(raw: dict[str, Any], key: str, lo: int | None = None, hi: int | None = None) -> int:
    v = raw.get(key)
    if isinstance(v, bool) or not isinstance(v, int):
        raise EventFormatError(f"'{key}' must be a whole number, not {v!r}")
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise EventFormatError(f"'{key}' must be between {lo} and {hi}, not {v}")
    return v


def _str(raw: dict[str, Any], key: str, optional: bool = False) -> str | None:
    v = raw.get(key)
    if v is None and optional:
        return None
    if not isinstance(v, str) or not v:
        raise EventFormatError(f"'{key}' must be a non-empty string, not {v!r}")
    return v


def _dice(raw: dict[str, Any], key: str = "dice", required: bool = True) -> tuple[int, ...]:
    v = raw.get(key, None if required else [])
    if not isinstance(v, list) or len(v) > 2:
        raise EventFormatError(f"'{key}' must be a list of at most 2 dice, not {v!r}")
    for d in v:
        if isinstance(d, bool) or not isinstance(d, int) or not 1 <= d <= 6:
            raise EventFormatError(f"a die shows 1 to 6, not {d!r}")
    return tuple(v)


def event_from_dict(raw: Any) -> Event:
    """Read one event from its JSON form."""
    if not isinstance(raw, dict):
        raise EventFormatError("an event must be a JSON object")
    kind = raw.get("type")
    if kind not in _TYPES:
        raise EventFormatError(f"unknown event type {kind!r} (one of {', '.join(_TYPES)})")
    known = {f.name for f in fields(_TYPES[kind])} | {"seq", "type", "time", "note",
                                                               "evidence", "with"}
    extra = set(raw) - known
    if extra:
        raise EventFormatError(f"unknown fields {sorted(extra)} in a {kind!r} event")
    if kind == "setup":
        seed = _int(raw, "seed")
        teams = raw.get("teams", [2, 3, 4, 5])
        if (not isinstance(teams, list) or not 1 <= len(teams) <= 4
                or len(set(map(str, teams))) != len(teams)
                or not all(isinstance(t, int) and not isinstance(t, bool) and 2 <= t <= 5
                           for t in teams)):
            raise EventFormatError("'teams' must list 1 to 4 different teams out of 2, 3, 4, 5")
        settings = raw.get("settings", {})
        if not isinstance(settings, dict):
            raise EventFormatError("'settings' must be an object")
        positions = raw.get("positions")
        if positions is not None:
            if not isinstance(positions, dict) or not all(
                isinstance(v, str) for v in positions.values()
            ):
                raise EventFormatError("'positions' must map rider numbers to space ids")
            try:
                positions = {int(k): v for k, v in positions.items()}
            except ValueError:
                raise EventFormatError("'positions' keys must be rider numbers") from None
        hands = raw.get("hands")
        if hands is not None:
            if not isinstance(hands, dict) or not all(isinstance(v, list) for v in hands.values()):
                raise EventFormatError("'hands' must map teams to lists of energy cards")
            try:
                hands = {int(k): [str(c) for c in v] for k, v in hands.items()}
            except ValueError:
                raise EventFormatError("'hands' keys must be team numbers") from None
        course = raw.get("course", "D")
        if not isinstance(course, str | dict):
            raise EventFormatError("'course' must be a course name, a path or a course object")
        level = raw.get("level", "advanced")
        if level not in ("basic", "advanced", "professional"):
            raise EventFormatError("'level' must be basic, advanced or professional")
        rnd = raw.get("round", 1)
        if isinstance(rnd, bool) or not isinstance(rnd, int) or rnd < 1:
            raise EventFormatError("'round' must be a whole number >= 1")
        return Setup(
            seed=seed,
            board=_str(raw, "board", optional=True) or "standard",
            course=course,
            board_text=_str(raw, "board_text", optional=True),
            level=level,
            teams=tuple(teams),
            settings=settings,
            positions=positions,
            round=rnd,
            hands=hands,
        )
    if kind == "placement_roll":
        return PlacementRoll(team=_int(raw, "team", 2, 5), dice=_dice(raw))
    if kind == "place":
        return Place(rider=_int(raw, "rider", 10, 99), space=_str(raw, "space") or "")
    if kind == "roll":
        cards = raw.get("cards", [])
        if not isinstance(cards, list) or not all(isinstance(c, str) for c in cards):
            raise EventFormatError("'cards' must be a list of energy card names")
        for k in ("breakaway", "chase_car"):
            if not isinstance(raw.get(k, False), bool):
                raise EventFormatError(f"'{k}' must be true or false")
        return Roll(
            rider=_int(raw, "rider", 10, 99),
            dice=_dice(raw, required=False),
            cards=tuple(cards),
            breakaway=raw.get("breakaway", False),
            chase_car=raw.get("chase_car", False),
        )
    if kind == "chance":
        return Chance(rider=_int(raw, "rider", 10, 99), card=_str(raw, "card") or "")
    if kind == "move":
        return Move(rider=_int(raw, "rider", 10, 99), to=_str(raw, "to") or "")
    if kind == "draft":
        return Draft(rider=_int(raw, "rider", 10, 99), to=_str(raw, "to", optional=True))
    if kind == "decline":
        return Decline(rider=_int(raw, "rider", 10, 99))
    if kind == "switch":
        raw2 = dict(raw)
        raw2["with_rider"] = raw.get("with", raw.get("with_rider"))
        return SwitchLead(rider=_int(raw, "rider", 10, 99), with_rider=_int(raw2, "with_rider", 10, 99))
    cards = raw.get("cards")
    if not isinstance(cards, list) or not all(isinstance(c, int) and not isinstance(c, bool)
                                              for c in cards):
        raise EventFormatError("'cards' must list the photo-card numbers")
    return Photos(cards=tuple(cards))


def event_to_dict(event: Event) -> dict[str, Any]:
    """The JSON form of an event (without defaults that say nothing)."""
    raw = asdict(event)
    out: dict[str, Any] = {"type": raw.pop("type")}
    if isinstance(event, SwitchLead):
        raw["with"] = raw.pop("with_rider")
    for k, v in raw.items():
        if v in (None, (), [], {}, False) and k not in ("dice", "seed"):
            continue
        if isinstance(v, tuple):
            v = list(v)
        if k in ("positions", "hands") and isinstance(v, dict):
            v = {str(a): b for a, b in v.items()}
        out[k] = v
    return out
