"""The Um Reifenbreite rules engine: a race's state, its legal actions, and verdicts.

:class:`Race` holds the state of one race and applies events to it. Every
event gets a :class:`Verdict` naming the rule it applied (a stable id like
``draft.same-surface``) and saying why in plain words. An illegal event is
refused and changes nothing. The engine is deterministic: all chance (the
chance deck, the photo-cards) comes from a ``random.Random`` seeded by the
setup. Rule ids are listed in ``docs/rules.md``.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from companion.boards import (
    Board,
    Course,
    CourseMap,
    Position,
    Surface,
)
from companion.decks import Deck
from companion.games.reifenbreite import movement
from companion.games.reifenbreite.cards import (
    CardError,
    ChanceCard,
    ChanceKind,
    EnergyCard,
    load_chance_cards,
    team_energy_cards,
)
from companion.games.reifenbreite.events import (
    Chance,
    Decline,
    Draft,
    Event,
    Move,
    Photos,
    Place,
    PlacementRoll,
    Roll,
    Setup,
    SwitchLead,
)

TEAM_NAMES = {2: "red", 3: "blue", 4: "black", 5: "green"}


class Level(StrEnum):
    """Which rules are played: each level includes the ones before it."""

    BASIC = "basic"
    ADVANCED = "advanced"
    PROFESSIONAL = "professional"


class Phase(StrEnum):
    """Where the game stands."""

    PLACEMENT_ROLLS = "placement_rolls"
    PLACEMENT = "placement"
    RACE = "race"
    OVER = "over"


class IllegalEventError(ValueError):
    """An event the rules do not allow; carries the rule id and the reason."""

    def __init__(self, rule: str, reason: str) -> None:
        super().__init__(f"{rule}: {reason}")
        self.rule = rule
        self.reason = reason


class SettingsError(ValueError):
    """A settings value that is not allowed."""


@dataclass(frozen=True)
class Settings:
    """Choices a table makes; defaults follow the full rule text and FACTS.md."""

    level: Level = Level.ADVANCED
    first_round_drafting: bool = True  # the short rules' house rule forbids it
    remove_finished: bool = True  # finished riders leave the road at the end of the round
    yellow_jersey: str = "full"  # or "short": 2 points per round worn
    chase_car_limit: int = 4
    chance_deck: str | None = None  # path of a table's own chance deck
    score_table: str | None = None  # path of a table's own finishing-points table

    @classmethod
    def from_dict(cls, level: str, raw: dict[str, Any]) -> Settings:
        """Settings from a setup event (unknown keys are an error)."""
        known = {f for f in cls.__dataclass_fields__} - {"level"}
        extra = set(raw) - known
        if extra:
            raise SettingsError(f"unknown settings {sorted(extra)} (known: {sorted(known)})")
        try:
            lvl = Level(level)
        except ValueError:
            raise SettingsError(f"unknown rules level {level!r}") from None
        out = cls(level=lvl, **raw)
        if out.yellow_jersey not in ("full", "short"):
            raise SettingsError("yellow_jersey must be 'full' or 'short'")
        for name in ("first_round_drafting", "remove_finished"):
            if not isinstance(getattr(out, name), bool):
                raise SettingsError(f"{name} must be true or false")
        if not isinstance(out.chase_car_limit, int) or out.chase_car_limit < 0:
            raise SettingsError("chase_car_limit must be a whole number >= 0")
        return out


@dataclass(frozen=True)
class Verdict:
    """The engine's answer to an event: legal or not, the rule, and why."""

    ok: bool
    rule: str
    reason: str
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used by ``companion replay``."""
        out: dict[str, Any] = {"ok": self.ok, "rule": self.rule, "reason": self.reason}
        out.update(self.details)
        return out


@dataclass
class Rider:
    """One rider's state."""

    number: int
    team: int
    pos: Position | None = None  # None until placed; kept while dismounted (his space)
    round_start: Position | None = None
    moved: bool = False
    fallen: bool = False
    dismounted: bool = False
    finished: int | None = None  # finishing place
    removed: bool = False  # left the road after finishing
    chase_photos: list[tuple[int, ...]] = field(default_factory=list)

    @property
    def on_road(self) -> bool:
        """Whether the rider stands on a space (placed, not dismounted, not removed)."""
        return self.pos is not None and not self.dismounted and not self.removed

    @property
    def star(self) -> bool:
        """Rider 1 of each team is its star."""
        return self.number % 10 == 1


@dataclass
class Team:
    """A team: its riders' numbers and its energy cards."""

    number: int
    riders: tuple[int, ...]
    hand: list[EnergyCard]
    spent: list[EnergyCard] = field(default_factory=list)  # played or lost: can be won back


@dataclass
class PendingMove:
    """A rider has rolled and must now move."""

    rider: int
    steps: int
    breakaway: bool
    roll_total: int


@dataclass
class DraftOffer:
    """The rider directly behind a rider who just moved may draft him."""

    rider: int
    leader: int
    limit: int
    breakaway: bool


@dataclass(frozen=True)
class Prompt:
    """Who must act now, and how."""

    kind: str  # "placement_roll", "place", "roll", "move", "draft_or_roll", "over"
    rider: int | None = None
    team: int | None = None
    text: str = ""
    steps: int | None = None
    leader: int | None = None


def _surface_name(s: Surface) -> str:
    return s.value


class Race:
    """The state of one Um Reifenbreite race; apply events to advance it."""

    def __init__(
        self,
        board: Board,
        course: Course,
        settings: Settings | None = None,
        seed: int = 0,
        teams: tuple[int, ...] = (2, 3, 4, 5),
    ) -> None:
        self.board = board
        self.course = course
        self.cm = CourseMap(board, course)
        self.settings = settings or Settings()
        self.seed = seed
        self.rng = random.Random(seed)
        chance = load_chance_cards(self.settings.chance_deck)
        self.chance_deck: Deck[ChanceCard] = Deck(cards=chance, rng=random.Random(f"chance-{seed}"))
        self.photo_deck: Deck[int] = Deck(cards=[1, 2, 3, 4, 5, 6], rng=random.Random(f"photo-{seed}"))
        self.team_order = tuple(teams)
        self.teams: dict[int, Team] = {}
        self.riders: dict[int, Rider] = {}
        for t in teams:
            numbers = tuple(t * 10 + i for i in range(1, 5))
            self.teams[t] = Team(t, numbers, team_energy_cards(t, short=course.short))
            for n in numbers:
                self.riders[n] = Rider(n, t)
        self.phase = Phase.PLACEMENT_ROLLS
        self.round = 1
        self.at: dict[str, int] = {}  # occupied space -> rider
        self.pending: PendingMove | None = None
        self.offer: DraftOffer | None = None
        self.last_chance: tuple[int, ChanceCard] | None = None
        self.finish_order: list[int] = []
        self.crossings: dict[int, list[int]] = {}  # route index -> riders in crossing order
        self.dismounted_queue: list[int] = []
        self.placement_rolls: dict[int, int] = {}
        self.rolloff: set[int] = set(teams)
        self.placing: list[int] = []  # team order of placement, repeated
        self.placed_count = 0
        self.yellow: int | None = None
        self.jersey_rounds: dict[int, int] = {}
        self.sprints_decided: set[int] = set()
        self.switched_lines: set[int] = set()  # riders who led a switch this round
        self.final_photos: tuple[int, ...] | None = None
        self.events_applied = 0

    # --- construction --------------------------------------------------------

    @classmethod
    def from_setup(cls, setup: Setup) -> Race:
        """A race as a record's setup event describes it."""
        from companion.games.reifenbreite.setup import race_from_setup

        return race_from_setup(setup)

    def start_from_positions(self, positions: dict[int, str], round_: int = 1) -> None:
        """Skip the placement: put riders on given spaces and start the race at ``round_``.

        Riders not named take no part (they count as having left the road).
        """
        for number, rider in self.riders.items():
            space = positions.get(number)
            if space is None:
                rider.removed = True
                continue
            if space not in self.board:
                raise IllegalEventError("setup.position", f"space {space!r} is not on the board")
            if space in self.at:
                raise IllegalEventError(
                    "setup.position", f"{number} and {self.at[space]} cannot both stand on {space}"
                )
            rider.pos = self.cm.position_of(space)
            self.at[space] = number
        unknown = set(positions) - set(self.riders)
        if unknown:
            raise IllegalEventError("setup.position", f"no rider {sorted(unknown)} in this race")
        self.phase = Phase.RACE
        self.round = round_
        self._start_round()

    _SHARED = ("board", "course", "cm", "settings")

    def copy(self) -> Race:
        """An independent copy of the state (for undo and for bots' look-ahead).

        The board, course and settings are immutable and shared with the copy.
        """
        return copy.deepcopy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Race:
        new = Race.__new__(Race)
        memo[id(self)] = new
        for key, value in self.__dict__.items():
            new.__dict__[key] = value if key in self._SHARED else copy.deepcopy(value, memo)
        return new

    # --- queries -------------------------------------------------------------

    @property
    def level(self) -> Level:
        return self.settings.level

    def team_of(self, rider: int) -> Team:
        """The team a rider belongs to."""
        return self.teams[self.riders[rider].team]

    def order_key(self, rider: int) -> tuple[int, float, int]:
        """Sort key of the order of play: farthest ahead first, rightmost first on a tie."""
        r = self.riders[rider]
        assert r.pos is not None
        leg, dist = self.cm.distance(r.pos)
        return (-leg, -dist, -self.board[r.pos.space].lane)

    def active(self, rider: int) -> bool:
        """Whether a rider still has to move this round."""
        r = self.riders[rider]
        return (
            r.on_road and not r.moved and not r.fallen and r.finished is None
        )

    def order_of_play(self) -> list[int]:
        """The riders still to move this round, in the order of play."""
        return sorted((n for n in self.riders if self.active(n)), key=self.order_key)

    def next_roller(self) -> int | None:
        """The rider whose turn it is to roll (ignoring a draft offer)."""
        order = self.order_of_play()
        return order[0] if order else None

    def prompt(self) -> Prompt:
        """Who acts now: what the table should be told."""
        if self.phase is Phase.OVER:
            return Prompt("over", text="the race is over")
        if self.phase is Phase.PLACEMENT_ROLLS:
            team = min(t for t in self.team_order if t in self.rolloff and t not in self.placement_rolls)
            return Prompt("placement_roll", team=team,
                          text=f"team {team} ({TEAM_NAMES[team]}): roll two dice for the placing order")
        if self.phase is Phase.PLACEMENT:
            team = self.placing[self.placed_count]
            return Prompt("place", team=team,
                          text=f"team {team} ({TEAM_NAMES[team]}): place a rider on a start dot")
        if self.pending is not None:
            p = self.pending
            return Prompt("move", rider=p.rider, steps=p.steps,
                          text=f"rider {p.rider}: move up to {p.steps} spaces")
        roller = self.next_roller()
        if self.offer is not None and self.can_draft(self.offer.rider) is None:
            o = self.offer
            return Prompt("draft_or_roll", rider=o.rider, leader=o.leader,
                          text=f"rider {o.rider}: draft {o.leader}, or not (then {roller} rolls)")
        assert roller is not None
        return Prompt("roll", rider=roller, text=f"rider {roller}: roll")

    def token_markers(self) -> dict[int, str]:
        """What the camera should see: marker id -> space of every piece on the road.

        Each rider's token carries his number, but the rider who wears the
        yellow jersey is represented by his team's jersey piece (team x 10):
        his own piece stands beside the board (professional rules).
        """
        out: dict[int, str] = {}
        for space, number in self.at.items():
            marker = number
            if number == self.yellow and self.level is Level.PROFESSIONAL:
                marker = self.riders[number].team * 10
            out[marker] = space
        return out

    def occupied(self) -> set[str]:
        """The spaces riders stand on."""
        return set(self.at)

    def destinations(self, rider: int, steps: int) -> dict[str, int]:
        """The spaces a rider may end on with a move of ``steps`` (space -> spaces taken)."""
        r = self.riders[rider]
        assert r.pos is not None
        found = movement.destinations(self.cm, r.pos, steps, self.at.keys())
        return {p.space: k for p, k in found.items()}

    def draft_target(self, rider: int) -> str | None:
        """The space a drafting rider must reach (directly behind his leader), if there is one."""
        if self.offer is None or self.offer.rider != rider:
            return None
        leader = self.riders[self.offer.leader]
        assert leader.pos is not None
        return self.board.behind(leader.pos.space)

    def can_draft(self, rider: int) -> IllegalEventError | None:
        """None if ``rider`` may draft now, else the error saying why not."""
        try:
            self._check_draft(rider)
        except IllegalEventError as exc:
            return exc
        return None

    def legal_cards(self, rider: int) -> list[EnergyCard]:
        """The energy cards this rider could play now, one at a time."""
        r = self.riders[rider]
        if self.round == 1 or r.pos is None:
            return []
        surface = self.board[r.pos.space].surface
        out = []
        for c in self.team_of(rider).hand:
            if c.owner not in (None, rider):
                continue
            if self.level is not Level.BASIC and surface is Surface.UPHILL and c.mountain:
                continue
            out.append(c)
        return out

    # --- applying events ---------------------------------------------------

    def apply(self, event: Event) -> Verdict:
        """Apply one event; an illegal event is refused with its rule and changes nothing."""
        try:
            verdict = self._dispatch(event)
        except IllegalEventError as exc:
            return Verdict(False, exc.rule, exc.reason)
        self.events_applied += 1
        return verdict

    def _dispatch(self, event: Event) -> Verdict:
        if isinstance(event, Setup):
            raise IllegalEventError("record.setup-twice", "the race is already set up")
        if isinstance(event, Chance):
            return self._chance_check(event)
        if isinstance(event, Photos):
            return self._photos_check(event)
        if self.phase is Phase.OVER:
            raise IllegalEventError("race.over", "the race is over: every rider has finished")
        if isinstance(event, PlacementRoll):
            return self._placement_roll(event)
        if isinstance(event, Place):
            return self._place(event)
        if self.phase is not Phase.RACE:
            raise IllegalEventError(
                "setup.incomplete", "the riders are not all placed yet: the race has not started"
            )
        self.last_chance = None
        if isinstance(event, Roll):
            return self._roll(event)
        if isinstance(event, Move):
            return self._move(event)
        if isinstance(event, Draft):
            return self._draft(event)
        if isinstance(event, Decline):
            return self._decline(event)
        if isinstance(event, SwitchLead):
            return self._switch(event)
        raise IllegalEventError("record.unknown-event", f"no rule handles {event!r}")

    # --- setup: placement ----------------------------------------------------

    def _placement_roll(self, e: PlacementRoll) -> Verdict:
        if self.phase is not Phase.PLACEMENT_ROLLS:
            raise IllegalEventError("setup.placement-roll", "the placing order is already settled")
        if e.team not in self.teams:
            raise IllegalEventError("setup.placement-roll", f"team {e.team} is not in this race")
        if e.team not in self.rolloff:
            raise IllegalEventError(
                "setup.placement-roll", f"team {e.team} is not in the roll-off for first place"
            )
        if e.team in self.placement_rolls:
            raise IllegalEventError("setup.placement-roll", f"team {e.team} has already rolled")
        if len(e.dice) != 2:
            raise IllegalEventError("setup.placement-roll", "each manager rolls two dice")
        self.placement_rolls[e.team] = sum(e.dice)
        if set(self.placement_rolls) != self.rolloff:
            return Verdict(True, "setup.placement-roll", f"team {e.team} rolls {sum(e.dice)}")
        best = max(self.placement_rolls.values())
        top = {t for t, v in self.placement_rolls.items() if v == best}
        if len(top) > 1:
            self.rolloff = top
            self.placement_rolls = {}
            names = ", ".join(str(t) for t in sorted(top))
            return Verdict(True, "setup.placement-tie",
                           f"teams {names} tie with {best}: they roll again")
        first = top.pop()
        i = self.team_order.index(first)
        clockwise = self.team_order[i:] + self.team_order[:i]
        self.placing = list(clockwise) * 4
        self.phase = Phase.PLACEMENT
        return Verdict(True, "setup.placement-order",
                       f"team {first} rolled highest ({best}) and places first; then clockwise: "
                       + ", ".join(str(t) for t in clockwise))

    def _place(self, e: Place) -> Verdict:
        if self.phase is not Phase.PLACEMENT:
            raise IllegalEventError("setup.place", "riders are placed after the placing-order rolls")
        if e.rider not in self.riders:
            raise IllegalEventError("setup.place", f"there is no rider {e.rider} in this race")
        r = self.riders[e.rider]
        team = self.placing[self.placed_count]
        if r.team != team:
            raise IllegalEventError("setup.place-order", f"it is team {team}'s turn to place a rider")
        if r.pos is not None:
            raise IllegalEventError("setup.place", f"{e.rider} is already placed")
        if e.space not in self.board or self.board[e.space].start != self.course.start:
            raise IllegalEventError(
                "setup.start-dot", f"{e.space} is not a start dot of Start {self.course.start}"
            )
        if e.space in self.at:
            raise IllegalEventError("setup.start-dot", f"{e.space} is taken by {self.at[e.space]}")
        lane = self.board[e.space].lane
        for mate in self.teams[team].riders:
            m = self.riders[mate]
            if m.pos is not None and self.board[m.pos.space].lane == lane:
                raise IllegalEventError(
                    "setup.same-lane",
                    f"team {team} already has {mate} in lane {lane}: no team may have two riders "
                    "in one lane",
                )
        r.pos = self.cm.position_of(e.space)
        self.at[e.space] = e.rider
        self.placed_count += 1
        if self.placed_count == len(self.riders):
            self.phase = Phase.RACE
            self._start_round()
            return Verdict(True, "setup.place", f"{e.rider} placed on {e.space}; the race starts")
        return Verdict(True, "setup.place", f"{e.rider} placed on {e.space}")

    # --- the race: rolls -----------------------------------------------------

    def _check_turn(self, rider: int) -> Rider:
        if rider not in self.riders:
            raise IllegalEventError("rider.unknown", f"there is no rider {rider} in this race")
        r = self.riders[rider]
        if r.finished is not None:
            raise IllegalEventError("rider.finished", f"{rider} has already finished")
        if r.removed or r.pos is None:
            raise IllegalEventError("rider.not-racing", f"{rider} is not on the road")
        if r.dismounted:
            raise IllegalEventError(
                "surface.dismounted", f"{rider} has dismounted and comes back after the round"
            )
        if r.fallen:
            raise IllegalEventError("chance.fallen", f"{rider} has fallen and misses this round")
        if r.moved:
            raise IllegalEventError("turn.already-moved", f"{rider} has already moved this round")
        return r

    def _roll(self, e: Roll) -> Verdict:
        if self.pending is not None:
            raise IllegalEventError(
                "turn.must-move", f"{self.pending.rider} has rolled and must move first"
            )
        r = self._check_turn(e.rider)
        assert r.pos is not None
        roller = self.next_roller()
        if roller != e.rider:
            raise IllegalEventError(
                "turn.order",
                f"it is {roller}'s turn, not {e.rider}'s: the rider farthest ahead moves first "
                "(the rightmost on a tie)",
            )
        space = self.board[r.pos.space]
        advanced = self.level is not Level.BASIC
        team = self.team_of(e.rider)
        cards = self._check_cards(e, r, team)
        if e.chase_car:
            self._check_chase(e, r, cards)
        expected = 2 - len(cards) - (1 if e.chase_car else 0)
        if e.chase_car and not e.dice:
            expected = 0
        if len(e.dice) != expected:
            raise IllegalEventError(
                "roll.dice-count",
                f"with {len(cards)} energy card(s){' and the chase car' if e.chase_car else ''} "
                f"{e.rider} rolls {expected} dice, not {len(e.dice)}",
            )
        if e.breakaway and not cards:
            raise IllegalEventError(
                "breakaway.needs-card", "a breakaway is announced with 1 or 2 energy cards"
            )
        total = sum(e.dice) + sum(c.value for c in cards)
        if e.chase_car:
            total = 12 if not e.dice else total + 6
        # --- legal: apply
        self.offer = None
        parts = [f"{e.rider} rolls {'+'.join(map(str, e.dice)) or 'no dice'}"]
        for c in cards:
            team.hand.remove(c)
            team.spent.append(c)
        if cards:
            parts.append("plays " + ", ".join(str(c) for c in cards))
        details: dict[str, Any] = {"total": total}
        if e.chase_car:
            photos = tuple(self.photo_deck.draw_fresh() for _ in range(1 if e.dice else 2))
            r.chase_photos.append(photos)
            parts.append(
                f"hangs onto the chase car ({'1 die + 6' if e.dice else '12 without rolling'}), "
                f"photo-card{'s' if len(photos) > 1 else ''} {', '.join(map(str, photos))}"
            )
            details["photos"] = list(photos)
        steps = total
        modifier = space.modifier if advanced else 0
        chance: ChanceCard | None = None
        if total == 7 and self.round > 1:
            chance = self.chance_deck.draw()
            self.last_chance = (e.rider, chance)
            details["chance"] = chance.id
            details["chance_text"] = chance.text
            parts.append(f"a move of 7 draws chance card {chance.id}: {chance.text.rstrip('.')}")
            outcome = self._apply_chance(r, chance)
            if outcome is not None:
                return Verdict(True, outcome[0], "; ".join(parts + [outcome[1]]), details)
            if chance.kind is ChanceKind.FASTER:
                steps += chance.amount
            elif chance.kind is ChanceKind.SLOWER:
                steps -= chance.amount
        if modifier:
            word = "adds" if modifier > 0 else "subtracts"
            parts.append(
                f"starting on {_surface_name(space.surface)} {space.number} {word} {abs(modifier)}"
            )
            steps += modifier
            if steps <= 0 and modifier < 0:
                self._dismount(r)
                return Verdict(
                    True,
                    f"surface.dismount-{space.surface.value}",
                    "; ".join(parts) + f": {steps} is 0 or less, so {e.rider} dismounts and comes "
                    "back after the round",
                    details,
                )
        steps = max(steps, 0)
        details["steps"] = steps
        self.pending = PendingMove(e.rider, steps, e.breakaway, total)
        if e.breakaway:
            parts.append("announces a breakaway: nobody may draft him")
        rule = "roll.chase-car" if e.chase_car else ("roll.energy" if cards else "roll")
        return Verdict(True, rule, "; ".join(parts) + f": moves up to {steps}", details)

    def _check_cards(self, e: Roll, r: Rider, team: Team) -> list[EnergyCard]:
        cards: list[EnergyCard] = []
        try:
            cards = [EnergyCard.parse(c) for c in e.cards]
        except CardError as exc:
            raise IllegalEventError("energy.unknown-card", str(exc)) from None
        if not cards:
            return cards
        if self.round == 1:
            raise IllegalEventError("energy.first-round", "energy cards may not be used in the first round")
        if len(cards) > 2:
            raise IllegalEventError("energy.too-many", "at most 2 energy cards a turn")
        hand = list(team.hand)
        for c in cards:
            if c.owner is not None and c.owner != e.rider:
                raise IllegalEventError(
                    "energy.wrong-rider",
                    f"card {c} belongs to rider {c.owner}: numbered cards are for their own rider, "
                    "jokers for any rider of the team",
                )
            if c not in hand:
                raise IllegalEventError("energy.not-in-hand", f"team {team.number} has no card {c} left")
            hand.remove(c)
        assert r.pos is not None
        space = self.board[r.pos.space]
        if self.level is not Level.BASIC:
            if space.surface is Surface.COBBLESTONE and len(cards) > 1:
                raise IllegalEventError(
                    "energy.cobblestone", "on cobblestones a rider may use only 1 energy card a turn"
                )
            if space.surface is Surface.UPHILL and any(c.mountain for c in cards):
                raise IllegalEventError(
                    "energy.mountain-shield",
                    "cards with the mountain shield (M) may not be played on a climb",
                )
        return cards

    def _check_chase(self, e: Roll, r: Rider, cards: list[EnergyCard]) -> None:
        if self.level is not Level.PROFESSIONAL:
            raise IllegalEventError("chase.professional", "the chase car is a professional rule")
        if cards:
            raise IllegalEventError(
                "chase.with-cards", "hanging onto the chase car replaces the roll: no energy cards"
            )
        if len(r.chase_photos) >= self.settings.chase_car_limit:
            raise IllegalEventError(
                "chase.limit",
                f"{e.rider} has already hung onto the chase car {len(r.chase_photos)} times "
                f"(at most {self.settings.chase_car_limit} a race)",
            )
        if len(e.dice) > 1:
            raise IllegalEventError(
                "chase.dice", "with the chase car roll 1 die and add 6, or move 12 without rolling"
            )

    def _apply_chance(self, r: Rider, card: ChanceCard) -> tuple[str, str] | None:
        """Apply a chance card; returns (rule, text) when it ends the rider's turn."""
        team = self.teams[r.team]
        if card.kind is ChanceKind.FALL:
            assert r.pos is not None
            fallen = movement.fall_chain(self.cm, self.at, r.pos.space)
            for n in fallen:
                self.riders[n].fallen = True
            r.moved = True
            self._after_action()
            others = [str(n) for n in fallen[1:]]
            text = f"{r.number} falls" + (f", and brings down {', '.join(others)}" if others else "")
            return "chance.fall", text + "; fallen riders stay on the road and miss this round"
        if card.kind is ChanceKind.LOSE_TURN:
            r.moved = True
            self._after_action()
            return "chance.lose-turn", f"{r.number} loses this turn"
        if card.kind is ChanceKind.GAIN_ENERGY:
            own = [c for c in team.spent if c.owner == r.number]
            if own:
                card_back = max(own)
                team.spent.remove(card_back)
                team.hand.append(card_back)
            return None
        if card.kind is ChanceKind.LOSE_ENERGY:
            own = sorted(c for c in team.hand if c.owner == r.number)
            jokers = sorted(c for c in team.hand if c.owner is None)
            lost = own[0] if own else (jokers[0] if jokers else None)
            if lost is not None:
                team.hand.remove(lost)
                team.spent.append(lost)
            return None
        return None

    def _dismount(self, r: Rider) -> None:
        assert r.pos is not None
        del self.at[r.pos.space]
        r.dismounted = True
        r.moved = True
        self.dismounted_queue.append(r.number)
        self._after_action()

    # --- the race: moves and drafts ------------------------------------------

    def _move(self, e: Move) -> Verdict:
        if self.pending is None or self.pending.rider != e.rider:
            who = self.pending.rider if self.pending else self.next_roller()
            raise IllegalEventError(
                "move.not-rolled", f"{e.rider} has not rolled: it is {who}'s turn"
            )
        r = self.riders[e.rider]
        assert r.pos is not None
        steps = self.pending.steps
        dests = movement.destinations(self.cm, r.pos, steps, self.at.keys())
        match = [(p, k) for p, k in dests.items() if p.space == e.to]
        if not match:
            raise IllegalEventError(*self._why_not_reachable(r, e.to, steps))
        pos, taken = max(match, key=lambda pk: (pk[0].leg, pk[1]))
        breakaway = self.pending.breakaway
        self.pending = None
        start = r.pos
        crossed = self._go(r, pos)
        text = f"{e.rider} moves {taken} space{'s' if taken != 1 else ''} from {start.space} to {e.to}"
        text += self._crossing_text(e.rider, crossed)
        self.offer = None
        behind = self.board.behind(start.space)
        if taken > 0 and behind is not None and behind in self.at:
            self.offer = DraftOffer(self.at[behind], e.rider, taken, breakaway)
        self._after_action()
        return Verdict(True, "move", text, {"spaces": taken})

    def _why_not_reachable(self, r: Rider, to: str, steps: int) -> tuple[str, str]:
        assert r.pos is not None
        n = r.number
        if to not in self.board:
            return "move.unknown-space", f"{to!r} is not a space of this board"
        if to in self.at and to != r.pos.space:
            return "move.occupied", f"{to} is taken by {self.at[to]}: one rider a space"
        free = movement.destinations(self.cm, r.pos, steps, ())
        if any(p.space == to for p in free):
            return ("move.blocked",
                    f"{n} cannot reach {to} with {steps}: riders block every way there "
                    "(a rider may not move through an occupied space)")
        found = movement.shortest_path_length(self.cm, r.pos, to, 60, self.at.keys())
        if found is not None:
            k = found[0]
            if k > steps:
                return "move.too-far", f"{to} is {k} spaces away; {n} may move at most {steps}"
            return ("move.finish-whole-move",
                    f"{n} would cross the finish line with fewer than {steps} spaces: a rider who "
                    "crosses the finish uses his whole move")
        return ("move.not-forward",
                f"{n} cannot ride from {r.pos.space} to {to}: riders move straight or diagonally "
                "forward only, never sideways or back, never over a thick line, never off the course")

    def _go(self, r: Rider, pos: Position) -> list[int]:
        """Put a rider on a new position; returns the route lines (indices) he crossed."""
        assert r.pos is not None
        del self.at[r.pos.space]
        old = r.pos
        r.pos = pos
        r.moved = True
        self.at[pos.space] = r.number
        crossed = list(range(old.leg, pos.leg))
        for i in crossed:
            riders = self.crossings.setdefault(i, [])
            if r.number not in riders:  # a rider put back behind a line counts only his first crossing
                riders.append(r.number)
        if self.cm.finished(pos) and r.finished is None:
            self.finish_order.append(r.number)
            r.finished = len(self.finish_order)
        if self.level is Level.PROFESSIONAL:
            for i in crossed:
                self._sprint_update(i)
        return crossed

    def _crossing_text(self, rider: int, crossed: list[int]) -> str:
        out = ""
        for i in crossed:
            line = self.course.route[i]
            place = self.crossings[i].index(rider) + 1
            if i == len(self.course.route) - 1:
                out += f"; crosses the finish line {line} in place {place}"
            elif self.course.sprint_at(i) is not None:
                out += f"; crosses sprint line {line} in place {place}"
            else:
                out += f"; crosses line {line}"
        return out

    def _check_draft(self, rider: int) -> tuple[Rider, Position, int]:
        if self.pending is not None:
            raise IllegalEventError(
                "turn.must-move", f"{self.pending.rider} has rolled and must move first"
            )
        r = self._check_turn(rider)
        assert r.pos is not None
        o = self.offer
        if o is None or o.rider != rider:
            raise IllegalEventError(
                "draft.not-directly-behind",
                f"{rider} may only draft the rider directly ahead of him, right after that rider "
                "moved from the space in front of him",
            )
        leader = self.riders[o.leader]
        assert leader.pos is not None and leader.round_start is not None
        if o.breakaway:
            raise IllegalEventError(
                "draft.breakaway", f"{o.leader} announced a breakaway: nobody may draft him"
            )
        if self.round == 1 and not self.settings.first_round_drafting:
            raise IllegalEventError(
                "draft.first-round", "no drafting in the first round (the table's setting)"
            )
        if self.level is not Level.BASIC:
            assert r.round_start is not None
            mine = self.board[r.round_start.space].surface
            his = self.board[leader.round_start.space].surface
            if mine is not his:
                raise IllegalEventError(
                    "draft.same-surface",
                    f"{rider} starts on {mine.value}, {o.leader} on {his.value}: riders who start "
                    "the round on different road surfaces may not draft",
                )
        target = self.board.behind(leader.pos.space)
        if target is None:
            raise IllegalEventError(
                "draft.same-lane",
                f"there is no space directly behind {o.leader}: {rider} cannot end up in his lane",
            )
        if target in self.at:
            raise IllegalEventError(
                "draft.occupied",
                f"the space directly behind {o.leader} ({target}) is taken by {self.at[target]}",
            )
        found = movement.shortest_path_length(self.cm, r.pos, target, o.limit, self.at.keys())
        if found is None:
            free = movement.shortest_path_length(self.cm, r.pos, target, o.limit, ())
            if free is not None:
                raise IllegalEventError(
                    "draft.blocked",
                    f"{rider} cannot reach {target} behind {o.leader} without riding through a rider",
                )
            longer = movement.shortest_path_length(self.cm, r.pos, target, 60, self.at.keys())
            if longer is not None:
                raise IllegalEventError(
                    "draft.too-far",
                    f"{rider} needs {longer[0]} spaces to reach {target} behind {o.leader}, "
                    f"but {o.leader} moved only {o.limit}: a drafting rider may not move more "
                    "spaces than the rider he follows",
                )
            raise IllegalEventError(
                "draft.inaccessible",
                f"{rider} cannot reach {target} behind {o.leader}: the way there crosses a thick "
                "line or leaves the course",
            )
        return r, found[1], found[0]

    def _draft(self, e: Draft) -> Verdict:
        r, pos, taken = self._check_draft(e.rider)
        if e.to is not None and e.to != pos.space:
            raise IllegalEventError(
                "draft.end-behind",
                f"a drafting rider ends directly behind the rider he drafts: {pos.space}, not {e.to}",
            )
        assert self.offer is not None and r.pos is not None
        leader = self.offer.leader
        start = r.pos
        crossed = self._go(r, pos)
        text = f"{e.rider} drafts {leader}: {taken} space{'s' if taken != 1 else ''} from {start.space} to {pos.space}"
        text += self._crossing_text(e.rider, crossed)
        self.offer = None
        behind = self.board.behind(start.space)
        if taken > 0 and behind is not None and behind in self.at:
            self.offer = DraftOffer(self.at[behind], e.rider, taken, False)
        self._after_action()
        return Verdict(True, "draft", text, {"spaces": taken})

    def _decline(self, e: Decline) -> Verdict:
        if self.offer is None or self.offer.rider != e.rider:
            raise IllegalEventError("draft.no-offer", f"{e.rider} has no one to draft just now")
        leader = self.offer.leader
        self.offer = None
        return Verdict(True, "draft.declined", f"{e.rider} does not draft {leader}")

    # --- professional: switching the lead ------------------------------------

    def _switch(self, e: SwitchLead) -> Verdict:
        if self.level is not Level.PROFESSIONAL:
            raise IllegalEventError("switch.professional", "switching the lead is a professional rule")
        if self.pending is not None:
            raise IllegalEventError("turn.must-move", f"{self.pending.rider} must move first")
        r = self._check_turn(e.rider)
        assert r.pos is not None
        if self.next_roller() != e.rider:
            raise IllegalEventError(
                "switch.turn", f"only the rider whose turn it is may ask to switch ({self.next_roller()})"
            )
        if e.rider in self.switched_lines:
            raise IllegalEventError("switch.once", f"{e.rider} has already switched the lead this round")
        line = movement.line_behind(self.board, self.at, r.pos.space)
        if e.with_rider not in line:
            raise IllegalEventError(
                "switch.not-in-line",
                f"{e.with_rider} is not in the unbroken line directly behind {e.rider}",
            )
        other = self._check_turn(e.with_rider)
        assert other.pos is not None
        if other.pos.leg != r.pos.leg:
            crossed = self.course.route[other.pos.leg]
            raise IllegalEventError(
                "switch.across-line",
                f"{e.rider} is past line {crossed} and {e.with_rider} is not: riders may not change "
                "places across a line of the course (that would carry one over it unrecorded)",
            )
        a, b = r.pos, other.pos
        r.pos, other.pos = b, a
        r.round_start, other.round_start = b, a
        self.at[a.space] = other.number
        self.at[b.space] = r.number
        self.switched_lines.add(other.number)
        self.switched_lines.add(e.rider)
        self.offer = None
        asked = line[: line.index(e.with_rider)]
        refused = f" ({', '.join(map(str, asked))} refused)" if asked else ""
        return Verdict(True, "switch", f"{e.rider} and {e.with_rider} switch places{refused}; "
                       f"{e.with_rider} now leads the line and moves first")

    # --- professional: sprints, jersey, photos ----------------------------------

    def _sprint_update(self, route_index: int) -> None:
        sprint = self.course.sprint_at(route_index)
        if sprint is None or route_index in self.sprints_decided:
            return
        crossed = self.crossings.get(route_index, [])
        if len(crossed) < min(3, len(sprint.points)):
            return
        self.sprints_decided.add(route_index)
        from companion.scoring import yellow_jersey_after_sprint

        points = self.sprint_points()
        self.yellow = yellow_jersey_after_sprint(self.yellow, points, crossed[0], crossed)

    def sprint_points(self) -> dict[int, int]:
        """Sprint points earned so far (without jersey bonus)."""
        out: dict[int, int] = {}
        for i, riders in self.crossings.items():
            sprint = self.course.sprint_at(i)
            if sprint is None:
                continue
            for place, n in enumerate(riders[: len(sprint.points)]):
                out[n] = out.get(n, 0) + sprint.points[place]
        return out

    def _chance_check(self, e: Chance) -> Verdict:
        if self.last_chance is None or self.last_chance[0] != e.rider:
            raise IllegalEventError(
                "chance.not-drawn", f"no chance card was just drawn for {e.rider}"
            )
        card = self.last_chance[1]
        if e.card != card.id:
            raise IllegalEventError(
                "chance.mismatch",
                f"the seeded deck gives {card.id}, the record says {e.card}",
            )
        self.last_chance = None
        return Verdict(True, "chance", f"{e.rider} drew {card.id}: {card.text}")

    def _photos_check(self, e: Photos) -> Verdict:
        if self.final_photos is None:
            raise IllegalEventError("chase.photos-early", "the photo-cards are drawn after the race")
        if tuple(e.cards) != self.final_photos:
            raise IllegalEventError(
                "chase.photos-mismatch",
                f"the seeded deck gives photo-cards {list(self.final_photos)}, the record says "
                f"{list(e.cards)}",
            )
        return Verdict(True, "chase.photos", "photo-cards " + ", ".join(map(str, e.cards)))

    # --- rounds ----------------------------------------------------------------

    def _start_round(self) -> None:
        for r in self.riders.values():
            r.moved = False
            r.fallen = False
            r.round_start = r.pos if r.on_road else None
        self.switched_lines = set()

    def _after_action(self) -> None:
        """End the round when nobody is left to move; end the race when all have finished."""
        if self.pending is not None or any(self.active(n) for n in self.riders):
            return
        self.offer = None
        for n in self.dismounted_queue:
            r = self.riders[n]
            assert r.pos is not None
            back = movement.return_space(self.cm, r.pos, self.at.keys())
            if back is None:
                back = r.pos  # nowhere free: he waits on his own space (cannot happen on real boards)
            r.pos = back
            r.dismounted = False
            self.at[back.space] = n
        self.dismounted_queue = []
        if self.settings.remove_finished:
            for r in self.riders.values():
                if r.finished is not None and not r.removed and r.pos is not None:
                    if self.at.get(r.pos.space) == r.number:
                        del self.at[r.pos.space]
                    r.removed = True
        if self.yellow is not None and self.settings.yellow_jersey == "short":
            self.jersey_rounds[self.yellow] = self.jersey_rounds.get(self.yellow, 0) + 1
        racing = [r for r in self.riders.values() if not r.removed and r.finished is None]
        if not racing:
            self._end_race()
            return
        self.round += 1
        self._start_round()

    def _end_race(self) -> None:
        self.phase = Phase.OVER
        if self.level is Level.PROFESSIONAL:
            from companion.scoring import yellow_jersey_after_sprint

            for i in sorted(self.crossings):
                if self.course.sprint_at(i) is not None and i not in self.sprints_decided:
                    self.sprints_decided.add(i)
                    self.yellow = yellow_jersey_after_sprint(
                        self.yellow, self.sprint_points(), self.crossings[i][0], self.crossings[i]
                    )
            self.final_photos = tuple(self.photo_deck.draw_several_fresh(2))
