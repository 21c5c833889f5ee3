"""Energy cards and chance cards of Um Reifenbreite (data in ``data/``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

DATA_DIR = Path(__file__).parent / "data"
_CARD = re.compile(r"^(?P<owner>J|\d{2})-(?P<value>[56])(?P<m>M?)$")


class CardError(ValueError):
    """A card name or a card data file that cannot be used."""


@dataclass(frozen=True, order=True)
class EnergyCard:
    """An energy card: ``21-6M`` (rider 21, worth 6, mountain shield) or ``J-5`` (a joker)."""

    owner: int | None  # rider number, None for a joker
    value: int
    mountain: bool = False

    @classmethod
    def parse(cls, name: str) -> EnergyCard:
        """Read a card name like ``21-6M`` or ``J-5``."""
        m = _CARD.match(name.strip()) if isinstance(name, str) else None
        if not m:
            raise CardError(f"{name!r} is not an energy card (like '21-6M' or 'J-5')")
        owner = None if m["owner"] == "J" else int(m["owner"])
        return cls(owner, int(m["value"]), bool(m["m"]))

    @property
    def joker(self) -> bool:
        """Whether any rider of the team may play it."""
        return self.owner is None

    def __str__(self) -> str:
        who = "J" if self.owner is None else str(self.owner)
        return f"{who}-{self.value}{'M' if self.mountain else ''}"


def team_energy_cards(team: int, short: bool = False) -> list[EnergyCard]:
    """The energy cards a team starts with (14, or the first 7 on a short course)."""
    data = json.loads((DATA_DIR / "energy_cards.json").read_text(encoding="utf-8"))
    names: list[str] = data["cards"]
    if short:
        names = names[: int(data["short_count"])]
    cards = []
    for name in names:
        name = re.sub(r"R(\d)", lambda m: f"{team}{m[1]}", name)
        cards.append(EnergyCard.parse(name))
    return cards


class ChanceKind(StrEnum):
    """What a chance card does."""

    FALL = "fall"
    LOSE_TURN = "lose_turn"
    GAIN_ENERGY = "gain_energy"
    LOSE_ENERGY = "lose_energy"
    FASTER = "faster"
    SLOWER = "slower"


@dataclass(frozen=True)
class ChanceCard:
    """One chance card of the deck."""

    id: str
    kind: ChanceKind
    text: str
    amount: int = 0


def load_chance_cards(path: str | Path | None = None) -> list[ChanceCard]:
    """The chance deck: the shipped default, or a table's own file."""
    p = Path(path) if path is not None else DATA_DIR / "chance_cards.json"
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        raw_cards = data["cards"]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise CardError(f"{p}: cannot read the chance deck ({exc})") from None
    cards = []
    seen: set[str] = set()
    for i, raw in enumerate(raw_cards):
        try:
            kind = ChanceKind(raw["kind"])
            card = ChanceCard(str(raw["id"]), kind, str(raw.get("text", "")), int(raw.get("amount", 0)))
        except (KeyError, TypeError, ValueError) as exc:
            raise CardError(f"{p}: card {i + 1} is not a chance card ({exc})") from None
        if card.id in seen:
            raise CardError(f"{p}: card id {card.id!r} is used twice")
        if kind in (ChanceKind.FASTER, ChanceKind.SLOWER) and card.amount <= 0:
            raise CardError(f"{p}: card {card.id!r} needs a positive 'amount'")
        seen.add(card.id)
        cards.append(card)
    if not cards:
        raise CardError(f"{p}: the chance deck is empty")
    return cards
