"""Team managers for simulated Um Reifenbreite races: random players and bots.

A :class:`Manager` makes every decision a team manager makes at the table:
where to place a rider at the start, which energy cards to play (and whether
to announce a breakaway or hang onto the chase car), where to move after a
roll, whether to draft, and (professional rules) whether to switch the lead.
The dice are not the manager's: :mod:`companion.games.reifenbreite.simulate`
rolls them.

- :class:`RandomManager` picks uniformly among the legal choices (seeded).
- :class:`BotManager` plays sensibly and fast (a few hundred microseconds a
  decision, no look-ahead copies of the race); ``docs/bots.md`` explains how.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from itertools import combinations
from typing import Protocol

from companion.boards import CourseMap, Position, Surface
from companion.games.reifenbreite import movement
from companion.games.reifenbreite.cards import EnergyCard
from companion.games.reifenbreite.race import Level, Race


@dataclass(frozen=True)
class RollChoice:
    """How a rider rolls: energy cards, breakaway, chase car (1 die + 6, or 12 with no dice)."""

    cards: tuple[str, ...] = ()
    breakaway: bool = False
    chase_car: bool = False
    chase_die: bool = True  # with the chase car: roll 1 die and add 6 (else move 12, 2 photo-cards)


class Manager(Protocol):
    """A team manager: every decision of the game but the dice."""

    def place(self, race: Race, team: int) -> tuple[int, str]:
        """Which rider of ``team`` to place, and on which start dot."""
        ...

    def roll(self, race: Race, rider: int) -> RollChoice:
        """How ``rider`` rolls (it is his turn)."""
        ...

    def move(self, race: Race, rider: int, steps: int, destinations: dict[str, int]) -> str:
        """Where ``rider`` ends his move; ``destinations`` are the legal spaces (-> spaces taken)."""
        ...

    def draft(self, race: Race, rider: int, leader: int) -> bool:
        """Whether ``rider`` drafts ``leader`` (the draft is legal)."""
        ...

    def switch_lead(self, race: Race, rider: int) -> int | None:
        """Professional rules: the rider of the line behind ``rider`` to switch places with, or None."""
        ...


# --- legal choices, shared by both managers ------------------------------------


def legal_places(race: Race, team: int) -> tuple[list[int], list[str]]:
    """The team's unplaced riders and the start dots it may use (free, in a lane it has no rider in)."""
    riders = [n for n in race.teams[team].riders if race.riders[n].pos is None]
    lanes = {race.board[r.pos.space].lane for n in race.teams[team].riders
             if (r := race.riders[n]).pos is not None}
    dots = [s.id for s in race.board.start_spaces(race.course.start)
            if s.id not in race.at and s.lane not in lanes]
    return riders, dots


def max_cards(race: Race, rider: int) -> int:
    """How many energy cards ``rider`` may play now (0 in the first round, 1 on cobbles)."""
    r = race.riders[rider]
    if race.round == 1 or r.pos is None:
        return 0
    if race.level is not Level.BASIC and race.board[r.pos.space].surface is Surface.COBBLESTONE:
        return 1
    return 2


def chase_car_allowed(race: Race, rider: int) -> bool:
    """Whether ``rider`` may still hang onto the chase car (professional rules, under the limit)."""
    return (race.level is Level.PROFESSIONAL
            and len(race.riders[rider].chase_photos) < race.settings.chase_car_limit)


def legal_roll_choices(race: Race, rider: int) -> list[RollChoice]:
    """Every legal way for ``rider`` to roll now (card combinations by name)."""
    legal = sorted(race.legal_cards(rider), key=str)
    names = sorted({str(c) for c in legal})
    combos: list[tuple[str, ...]] = [(n,) for n in names]
    if max_cards(race, rider) >= 2:
        pairs = {tuple(sorted((str(a), str(b)))) for a, b in combinations(legal, 2)}
        combos.extend(sorted(pairs))
    out = [RollChoice()]
    for c in combos:
        out.append(RollChoice(c))
        out.append(RollChoice(c, breakaway=True))
    if chase_car_allowed(race, rider):
        out.append(RollChoice(chase_car=True, chase_die=True))
        out.append(RollChoice(chase_car=True, chase_die=False))
    return out


def switch_candidates(race: Race, rider: int) -> list[int]:
    """The riders ``rider`` may switch the lead with now (professional rules).

    Riders on another leg (a finish or sprint line lies between them) are left
    out: the engine lets them switch, but the switch carries one rider over the
    line unrecorded and sends the other back to cross it a second time, so the
    crossing order (sprint places) goes wrong. See the xfail test in
    ``tests/companion/games/test_properties.py``.
    """
    r = race.riders[rider]
    if race.level is not Level.PROFESSIONAL or r.pos is None or rider in race.switched_lines:
        return []
    if race.pending is not None or race.next_roller() != rider:
        return []
    line = movement.line_behind(race.board, race.at, r.pos.space)
    leg = r.pos.leg
    return [n for n in line if race.active(n) and (p := race.riders[n].pos) is not None and p.leg == leg]


class RandomManager:
    """Uniformly random legal choices, from its own seeded generator."""

    def __init__(self, seed: int | str = 0) -> None:
        self.rng = random.Random(seed)

    def place(self, race: Race, team: int) -> tuple[int, str]:
        riders, dots = legal_places(race, team)
        return self.rng.choice(riders), self.rng.choice(dots)

    def roll(self, race: Race, rider: int) -> RollChoice:
        return self.rng.choice(legal_roll_choices(race, rider))

    def move(self, race: Race, rider: int, steps: int, destinations: dict[str, int]) -> str:
        return self.rng.choice(sorted(destinations))

    def draft(self, race: Race, rider: int, leader: int) -> bool:
        return self.rng.random() < 0.5

    def switch_lead(self, race: Race, rider: int) -> int | None:
        options: list[int | None] = [None, *switch_candidates(race, rider)]
        return self.rng.choice(options)


class GreedyManager:
    """A simple baseline: always the farthest space, plays cards as soon as it may, drafts a long move.

    No team play, no breakaways, no chase car. The bots are measured against it
    (``companion bench bots``) as well as against random play.
    """

    def place(self, race: Race, team: int) -> tuple[int, str]:
        riders, dots = legal_places(race, team)
        return riders[0], dots[0]

    def roll(self, race: Race, rider: int) -> RollChoice:
        legal = sorted(race.legal_cards(rider), key=lambda c: (-c.value, str(c)))
        return RollChoice(tuple(str(c) for c in legal[: max_cards(race, rider)]))

    def move(self, race: Race, rider: int, steps: int, destinations: dict[str, int]) -> str:
        r = race.riders[rider]
        assert r.pos is not None
        found = movement.destinations(race.cm, r.pos, steps, race.at.keys())
        best = max(found.items(), key=lambda pk: (race.cm.distance(pk[0]), pk[1], pk[0].space))
        return best[0].space if best[0].space in destinations else min(destinations)

    def draft(self, race: Race, rider: int, leader: int) -> bool:
        return race.offer is not None and race.offer.limit >= 7

    def switch_lead(self, race: Race, rider: int) -> int | None:
        return None


# --- the bots --------------------------------------------------------------------


def _two_dice() -> dict[int, float]:
    out: dict[int, float] = {}
    for a in range(1, 7):
        for b in range(1, 7):
            out[a + b] = out.get(a + b, 0.0) + 1 / 36
    return out


_TWO_DICE = _two_dice()


def expected_roll(modifier: int) -> float:
    """Expected spaces of a 2-dice roll started on a space with ``modifier`` (0 on a dismount)."""
    return sum(p * max(0, s + modifier) for s, p in _TWO_DICE.items())


class Geometry:
    """Distances along a course in spaces: where every position and every route line lies."""

    def __init__(self, cm: CourseMap) -> None:
        self.cm = cm
        self.dist: list[dict[str, float]] = []
        self.offset: list[float] = []
        total = 0.0
        for k, spaces in enumerate(cm.leg_spaces):
            d = {s: cm.distance(Position(s, k))[1] for s in spaces}
            self.dist.append(d)
            self.offset.append(total)
            total += (max(d.values()) if d else 0.0) + 1.0

    def x(self, pos: Position) -> float:
        """How far along the course a position is, in spaces from the start."""
        return self.offset[pos.leg] + self.dist[pos.leg].get(pos.space, 0.0)

    def line_x(self, route_index: int) -> float:
        """Where the route's line number ``route_index`` lies (the first space past it)."""
        return self.offset[min(route_index + 1, len(self.offset) - 1)]

    @property
    def finish_x(self) -> float:
        return self.line_x(len(self.cm.course.route) - 1)


@dataclass(frozen=True)
class BotStyle:
    """The weights of the bot's move choice (in spaces of progress) and its draft margin."""

    window: float = 2.5  # how many spaces short of the farthest move the bot considers
    surface: float = 0.6  # per point of the next space's modifier (cobbles, climbs, descents)
    mate_draft: float = 1.0  # a teammate behind can draft this move
    mate_draft_gain: float = 0.8  # ... per space his draft beats his expected roll
    rival_draft_gain: float = 0.5  # an opponent behind could draft: per space he gains
    wheel: float = 1.2  # ending directly behind a rider (a draft next round)
    wheel_mate: float = 0.6  # ... who is a teammate
    lead_star: float = 2.0  # ending directly ahead of the own star (he can draft next round)
    lead_mate: float = 0.8  # ... of another teammate
    draft_margin: float = -0.5  # draft when the draft gains at least expected roll + margin
    push_slack: int = 1  # spend cards this many turns earlier than strictly needed to use them all
    sprint_reach: float = 13.0  # play own cards for a sprint this many spaces before its line
    sprint_field: int = 2  # ... when at most this many riders more than the open places are ahead
    breakaway: bool = True  # announce a breakaway when playing cards with an opponent on the wheel
    spend_asap: bool = False  # play the best cards whenever allowed (any rider takes the jokers)
    star_reserve: int = 0  # with spend_asap: cards the star keeps for the finish
    pro_spend_early: bool = False  # professional: play cards whenever a sprint is still open
    early_sprint: bool = False  # professional: helpers spend their own cards on the road to the first sprint
    chase_rank: int = 13  # hang onto the chase car only when placed this far back (little to lose)


#: The default style: the star saves his cards (and the jokers) for the finish, breakaways.
DEFAULT_STYLE = BotStyle()
#: Professional rules: the sprints come first, and the spaces a card wins are kept to the
#: finish, so the bot plays its cards as soon as it may and announces no breakaways
#: (measured against the greedy baseline: see docs/bots.md).
PRO_STYLE = BotStyle(spend_asap=True, breakaway=False)


class BotManager:
    """A sensible team manager: drafts when it pays, rides for the star, times its cards.

    ``chase_car`` (professional rules) lets the bot hang onto the chase car
    with a rider who has few points to lose, at most ``chase_limit`` times a
    rider. ``style`` fixes the weights and the card plan; by default
    :data:`DEFAULT_STYLE` (the star saves his cards for the finish) or, under
    the professional rules, :data:`PRO_STYLE` (cards early, for the sprints).
    See ``docs/bots.md``.
    """

    def __init__(self, chase_car: bool = True, chase_limit: int = 2, style: BotStyle | None = None) -> None:
        self.chase_car = chase_car
        self.chase_limit = chase_limit
        self.style = style  # None: BotStyle() or, under the professional rules, PRO_STYLE
        self._geo: Geometry | None = None

    # --- helpers ------------------------------------------------------------

    def style_for(self, race: Race) -> BotStyle:
        """The bot's style: the one given, else the default for the race's rules level."""
        if self.style is not None:
            return self.style
        return PRO_STYLE if race.level is Level.PROFESSIONAL else DEFAULT_STYLE

    def geo(self, race: Race) -> Geometry:
        if self._geo is None or self._geo.cm is not race.cm:
            self._geo = Geometry(race.cm)
        return self._geo

    def _modifier(self, race: Race, space: str) -> int:
        if race.level is Level.BASIC:
            return 0
        return race.board[space].modifier

    @staticmethod
    def _star(race: Race, team: int) -> int:
        return race.teams[team].riders[0]

    def _racing(self, race: Race, rider: int) -> bool:
        r = race.riders[rider]
        return r.finished is None and not r.removed and r.pos is not None

    def _rank(self, race: Race, rider: int) -> int:
        """1 + the riders ahead of ``rider`` (finished riders count)."""
        geo = self.geo(race)
        r = race.riders[rider]
        assert r.pos is not None
        me = geo.x(r.pos)
        ahead = len(race.finish_order)
        for o in race.riders.values():
            if o.number != rider and o.finished is None and not o.removed and o.pos is not None:
                if geo.x(o.pos) > me:
                    ahead += 1
        return ahead + 1

    def _open_sprint(self, race: Race, rider: int) -> tuple[float, int] | None:
        """(distance to, places left) of the next sprint line with places still open.

        Sprints score only under the professional rules.
        """
        if race.level is not Level.PROFESSIONAL:
            return None
        r = race.riders[rider]
        assert r.pos is not None
        geo = self.geo(race)
        for k in range(r.pos.leg, len(race.course.route) - 1):
            s = race.course.sprint_at(k)
            if s is None:
                continue
            left = len(s.points) - len(race.crossings.get(k, []))
            if left > 0:
                return geo.line_x(k) - geo.x(r.pos), left
        return None

    # --- placement ------------------------------------------------------------

    def place(self, race: Race, team: int) -> tuple[int, str]:
        riders, dots = legal_places(race, team)
        rider = riders[0]  # the star first: he takes the best dot
        star = self._star(race, team)
        if rider != star:
            # a helper: the best dot, preferring a lane next to the star's (to share draft lines)
            s = race.riders[star].pos
            star_lane = race.board[s.space].lane if s is not None else None
            rank = {d: i for i, d in enumerate(dots)}
            if star_lane is not None:
                dots = sorted(dots, key=lambda d: rank[d] + (0 if abs(race.board[d].lane - star_lane) == 1 else 1.5))
        return rider, dots[0]

    # --- rolling ----------------------------------------------------------------

    def _turns_to_finish(self, race: Race, rider: int, cards: bool = True) -> float:
        r = race.riders[rider]
        assert r.pos is not None
        geo = self.geo(race)
        per_turn = (11.5 if cards else 7.0) + self._modifier(race, r.pos.space)
        return max(0.0, geo.finish_x - geo.x(r.pos)) / max(4.0, per_turn)

    def _cards_to_play(self, race: Race, rider: int) -> list[EnergyCard]:
        n_max = max_cards(race, rider)
        if n_max == 0:
            return []
        legal = sorted(race.legal_cards(rider), key=lambda c: -c.value)
        if not legal:
            return []
        r = race.riders[rider]
        assert r.pos is not None
        geo = self.geo(race)
        team = race.riders[rider].team
        star = self._star(race, team)
        to_finish = geo.finish_x - geo.x(r.pos)
        mod = self._modifier(race, r.pos.space)
        own = [c for c in legal if c.owner == rider]
        jokers = [c for c in legal if c.owner is None]
        st = self.style_for(race)
        if rider == star or not self._racing(race, star) or st.spend_asap:
            spare = len(jokers)
        else:
            # jokers are the star's; the others get those he cannot play before he finishes
            hand = race.teams[team].hand
            star_cards = sum(1 for c in hand if c.owner in (None, star))
            star_turns = math.ceil(self._turns_to_finish(race, star))
            spare = max(0, star_cards - 2 * star_turns)
        pool = own + jokers[:spare]
        pool.sort(key=lambda c: (-c.value, c.owner is None))  # own cards before jokers
        if not pool:
            return []
        if st.spend_asap:
            if rider == star and to_finish > 13 - mod:
                pool = pool[: max(0, len(pool) - st.star_reserve)]  # the star keeps a few for the finish
            return pool[:n_max]
        # the final push: spend the cards while there are turns to spend them in
        turns_left = math.ceil(self._turns_to_finish(race, rider))
        if to_finish <= 13 - mod or len(pool) >= n_max * max(1, turns_left - st.push_slack):
            return pool[:n_max]
        # professional: the sprints come before the finish and the spaces a card wins are kept
        if st.pro_spend_early and race.level is Level.PROFESSIONAL and self._open_sprint(race, rider):
            return pool[:n_max]
        # a sprint with places open (professional rules), when the rider is among the contenders
        sprint = self._open_sprint(race, rider)
        if sprint is not None:
            dist, left = sprint
            contender = self._rank(race, rider) <= len(race.finish_order) + left + st.sprint_field
            if 0 < dist <= st.sprint_reach - mod and contender:
                return own[:n_max]
        # professional: the helpers ride for the first sprint with their own cards
        if (st.early_sprint and rider != star and sprint is not None and race.course.sprints
                and not race.crossings.get(race.course.sprints[0].leg)):
            return own[:n_max]
        # a steep climb: a card saves a dismount
        if mod <= -3 and own and rider != star:
            return own[:1]
        return []

    def roll(self, race: Race, rider: int) -> RollChoice:
        cards = self._cards_to_play(race, rider)
        r = race.riders[rider]
        assert r.pos is not None
        behind = race.board.behind(r.pos.space)
        follower = race.at.get(behind) if behind is not None else None
        if cards:
            # a breakaway keeps an opponent directly behind from drafting a carded move
            breakaway = (self.style_for(race).breakaway and follower is not None
                         and race.riders[follower].team != r.team)
            return RollChoice(tuple(str(c) for c in cards), breakaway=breakaway)
        if self.chase_car and self._want_chase_car(race, rider):
            return RollChoice(chase_car=True, chase_die=True)
        return RollChoice()

    def _want_chase_car(self, race: Race, rider: int) -> bool:
        """Hang on with a rider who has few points to lose, late in the race, a few times only."""
        if not chase_car_allowed(race, rider):
            return False
        r = race.riders[rider]
        if len(r.chase_photos) >= self.chase_limit or r.pos is None:
            return False
        geo = self.geo(race)
        to_finish = geo.finish_x - geo.x(r.pos)
        if to_finish > 30 or self._modifier(race, r.pos.space) < -2:
            return False
        # a rider placed far back risks little: the photo costs him his few points
        return self._rank(race, rider) >= self.style_for(race).chase_rank

    # --- moving ---------------------------------------------------------------

    def move(self, race: Race, rider: int, steps: int, destinations: dict[str, int]) -> str:
        r = race.riders[rider]
        assert r.pos is not None and r.round_start is not None
        geo = self.geo(race)
        board = race.board
        start = r.pos
        found = movement.destinations(race.cm, start, steps, race.at.keys())
        best_of: dict[str, tuple[Position, int]] = {}
        for p, k in found.items():
            if p.space not in destinations:
                continue
            old = best_of.get(p.space)
            if old is None or (p.leg, k) > (old[0].leg, old[1]):
                best_of[p.space] = (p, k)
        if not best_of:
            return min(destinations)
        x0 = geo.x(start)
        finish = geo.finish_x
        cands = sorted(best_of.items(), key=lambda kv: (-geo.x(kv[1][0]), kv[0]))
        top = geo.x(cands[0][1][0])
        if top >= finish:
            return cands[0][0]  # crossing the finish: as far as possible
        sprint = self._open_sprint(race, rider)
        if sprint is not None and top >= x0 + sprint[0]:
            return cands[0][0]  # crossing an open sprint line: as far as possible
        cands = [c for c in cands if geo.x(c[1][0]) >= top - self.style_for(race).window][:10]
        # the rider directly behind my start may draft me: can he reach the space behind my end?
        behind_start = board.behind(start.space)
        follower = race.at.get(behind_start) if behind_start is not None else None
        reach: dict[str, int] = {}
        f_team_mate = False
        f_expect = 7.0
        advanced = race.level is not Level.BASIC
        if follower is not None and race.active(follower) and not (
                race.pending is not None and race.pending.breakaway):
            fr = race.riders[follower]
            assert fr.pos is not None and fr.round_start is not None
            same = not advanced or board[fr.round_start.space].surface is board[r.round_start.space].surface
            if same:
                occ = set(race.at) - {start.space}
                for k_layer, layer in enumerate(movement.frontiers(race.cm, fr.pos, steps, occ)):
                    for p in layer:
                        reach.setdefault(p.space, k_layer)
                f_team_mate = fr.team == r.team
                f_expect = expected_roll(self._modifier(race, fr.pos.space))
        team = r.team
        star = self._star(race, team)
        st = self.style_for(race)
        best_space, best_score = cands[0][0], float("-inf")
        for space, (pos, k) in cands:
            score = geo.x(pos) - x0
            if advanced:
                score += st.surface * board[space].modifier  # the next roll starts here
            target = board.behind(space)
            if reach and target is not None and target not in race.at and reach.get(target, 99) <= k:
                gain = k - f_expect
                if f_team_mate:
                    score += st.mate_draft + max(0.0, gain) * st.mate_draft_gain
                else:
                    score -= max(0.0, gain) * st.rival_draft_gain
            ahead = board.ahead(space)
            if ahead is not None and ahead in race.at:
                o = race.riders[race.at[ahead]]
                if not advanced or board[ahead].surface is board[space].surface:
                    score += st.wheel + (st.wheel_mate if o.team == team else 0.0)
            if target is not None and target in race.at and target != start.space:
                o = race.riders[race.at[target]]
                if o.team == team and o.finished is None:
                    score += st.lead_star if o.number == star else st.lead_mate
            if score > best_score:
                best_space, best_score = space, score
        return best_space

    # --- drafting ------------------------------------------------------------------

    def draft(self, race: Race, rider: int, leader: int) -> bool:
        r = race.riders[rider]
        target = race.draft_target(rider)
        if target is None or r.pos is None:
            return False
        geo = self.geo(race)
        leg = r.pos.leg
        lp = race.riders[leader].pos
        if lp is not None:
            leg = lp.leg
        tpos = Position(target, leg)
        if not race.cm.on_course(tpos):
            tpos = Position(target, r.pos.leg)
        if not race.cm.on_course(tpos):
            return True
        gain = geo.x(tpos) - geo.x(r.pos)
        mod = self._modifier(race, r.pos.space)
        expect = expected_roll(mod)
        cards = self._cards_to_play(race, rider)
        if cards:
            expect += sum(c.value - 3.5 for c in cards) * 0.5  # a draft saves the cards for later
        bonus = 0.0
        if race.riders[leader].team == r.team:
            bonus += 1.0
        behind = race.board.behind(r.pos.space)
        if behind is not None and behind in race.at:
            mate = race.riders[race.at[behind]]
            if mate.team == r.team and race.active(mate.number):
                bonus += 1.5  # the chain goes on: my teammate drafts me
        if self._modifier(race, target) > 0 and advanced(race):
            bonus += 0.5
        return gain + bonus >= expect + self.style_for(race).draft_margin

    # --- switching the lead ------------------------------------------------------------

    def switch_lead(self, race: Race, rider: int) -> int | None:
        """The star lets a teammate directly behind him take the lead (and the roll)."""
        options = switch_candidates(race, rider)
        if not options:
            return None
        r = race.riders[rider]
        first = race.riders[options[0]]
        if r.number != self._star(race, r.team) or first.team != r.team:
            return None
        assert r.pos is not None
        geo = self.geo(race)
        if geo.finish_x - geo.x(r.pos) < 25:
            return None  # near the finish the star rolls (and plays) himself
        return first.number


def advanced(race: Race) -> bool:
    """Whether the road surfaces count (advanced or professional rules)."""
    return race.level is not Level.BASIC
