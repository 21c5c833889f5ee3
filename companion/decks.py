"""Digital decks (chance cards, photo-cards, road and grade cards): seeded and logged.

A :class:`Deck` draws from a shuffled stack; drawn cards are laid aside and
the laid-aside cards are reshuffled into a new stack when it runs out, as the
rules say of the chance cards. Every draw is logged, so a record can show
what was drawn and a replay with the same seed draws the same cards.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass
class Deck(Generic[T]):
    """A seeded deck of cards of any type."""

    cards: Sequence[T]
    rng: random.Random
    stack: list[T] = field(default_factory=list)
    laid_aside: list[T] = field(default_factory=list)
    log: list[T] = field(default_factory=list)
    reshuffles: int = 0

    def __post_init__(self) -> None:
        if not self.cards:
            raise ValueError("a deck needs at least one card")
        if not self.stack and not self.laid_aside:
            self.stack = list(self.cards)
            self.rng.shuffle(self.stack)

    @classmethod
    def seeded(cls, cards: Sequence[T], seed: int | str) -> Deck[T]:
        """A freshly shuffled deck whose order follows from ``seed``."""
        return cls(cards=list(cards), rng=random.Random(seed))

    def draw(self) -> T:
        """Draw the top card; it is laid aside. An empty stack is reshuffled from the laid-aside cards."""
        if not self.stack:
            self.stack = self.laid_aside
            self.laid_aside = []
            self.rng.shuffle(self.stack)
            self.reshuffles += 1
        card = self.stack.pop()
        self.laid_aside.append(card)
        self.log.append(card)
        return card

    def draw_fresh(self) -> T:
        """Reshuffle the whole deck, then draw one card and put it back (the photo-cards)."""
        card = self.rng.choice(list(self.cards))
        self.log.append(card)
        return card

    def draw_several_fresh(self, n: int) -> list[T]:
        """Reshuffle the whole deck and draw ``n`` different cards, putting them back after."""
        cards = self.rng.sample(list(self.cards), n)
        self.log.extend(cards)
        return cards

    def copy(self) -> Deck[T]:
        """An independent copy (same order, same random state)."""
        rng = random.Random()
        rng.setstate(self.rng.getstate())
        return Deck(
            cards=self.cards,
            rng=rng,
            stack=list(self.stack),
            laid_aside=list(self.laid_aside),
            log=list(self.log),
            reshuffles=self.reshuffles,
        )
