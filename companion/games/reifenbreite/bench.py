"""Benchmarks of the Um Reifenbreite engine and bots (``companion bench engine|bots``).

Also home of :func:`demo_board`, a long generated notation board with a
start of 4 lanes x 4 rows, cobbles, climbs, descents, a thick line and three
finish lines, used by the bots' tests and by the benchmarks when the standard
board is not installed.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from companion.boards import Board, Course, course_from_dict, parse_board
from companion.games.reifenbreite.race import Level, Race, Settings

# --- a generated test board -----------------------------------------------------

# Segments of the demo road: (columns, token for the 4 lanes, thick lines below lanes).
_SEGMENTS: list[tuple[int, str]] = [
    (10, "."),
    (6, "c2"),
    (2, "."),
    (5, "c1"),
    (8, "."),
    ("line", "B"),  # type: ignore[list-item]
    (6, "."),
    (6, "u2"),
    (4, "u1"),
    (5, "d3"),
    (10, "."),
    ("line", "C"),  # type: ignore[list-item]
    (8, "."),
    (5, "u3"),
    (4, "d2"),
    (12, "."),
    ("line", "A"),  # type: ignore[list-item]
    (14, "."),
]


def demo_board_text(scale: int = 1) -> str:
    """The notation of the demo board (``scale`` repeats the road between the lines)."""
    lanes: list[list[str]] = [[] for _ in range(4)]
    for lane in lanes:
        lane.extend([".o"] * 4)
    for n, tok in _SEGMENTS:
        if n == "line":
            for lane in lanes:
                lane.append(f"|{tok}")
            continue
        for lane in lanes:
            lane.extend([tok] * (n * scale if tok == "." else n))
    columns = sum(1 for t in lanes[0] if not t.startswith("|"))
    # a thick line between lanes b and c over a stretch of the climb after line B
    bar = ["_"] * columns
    first_climb = 4 + sum(n for n, t in _SEGMENTS[:7] if n != "line") * 1
    for c in range(first_climb, first_climb + 4):
        bar[c] = "="
    rows = [" ".join(lanes[0]), " ".join(lanes[1]), " ".join(bar), " ".join(lanes[2]), " ".join(lanes[3])]
    return "\n".join(rows) + "\n"


DEMO_COURSE = {
    "name": "T demo",
    "start": "1",
    "route": ["B", "C", "A"],
    "sprints": [{"line": "B", "points": [11, 8, 5]}, {"line": "C", "points": [7, 5, 3]}],
}


def demo_board(scale: int = 1) -> tuple[Board, Course, str]:
    """The demo board, its course (sprints at B and C, finish A) and its notation text."""
    text = demo_board_text(scale)
    board, _ = parse_board(text, "demo")
    return board, course_from_dict(DEMO_COURSE, "demo course"), text


def standard_or_demo(course: str = "D") -> tuple[Board, Course, str | None]:
    """The standard board and a shipped course if installed, else the demo board (text given)."""
    from companion.boards import BoardError, CourseError, load_board, load_course

    try:
        return load_board("standard"), load_course(course), None
    except (BoardError, CourseError, OSError):
        board, c, text = demo_board()
        return board, c, text


# --- measuring -----------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """One measured figure: its name, median, unit and target."""

    name: str
    median: float
    unit: str
    target: float
    runs: int

    @property
    def ok(self) -> bool:
        return self.median < self.target


def _median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def mid_race(board: Board, course: Course, seed: int = 1, rounds: int = 6) -> Race:
    """A race played by bots for a few rounds: a 16-rider pack in the middle of a race."""
    from companion.games.reifenbreite.bots import BotManager
    from companion.games.reifenbreite.simulate import simulate_race

    managers = {t: BotManager() for t in (2, 3, 4, 5)}
    race, _ = simulate_race(board, course, seed, managers, Settings(level=Level.ADVANCED), stop_round=rounds)
    return race


def destinations_by_roll(race: Race, rider: int, rolls: range = range(2, 13)) -> dict[int, dict[str, int]]:
    """``race.destinations(rider, roll)`` for every roll at once, from one search of the longest roll.

    The positions reachable in exactly ``k`` steps do not depend on the roll,
    so the frontier layers of the longest roll serve every shorter one; the
    finish rule (a rider crossing the finish uses his whole move unless
    blocked) is applied per roll as ``movement.destinations`` does.
    """
    from companion.games.reifenbreite import movement

    r = race.riders[rider]
    assert r.pos is not None
    cm = race.cm
    start = r.pos
    occ = set(race.at) - {start.space}
    layers = movement.frontiers(cm, start, max(rolls), occ)
    started_finished = cm.finished(start)
    out: dict[int, dict[str, int]] = {}
    base: dict[str, int] = {}  # what the layers so far give a longer roll
    for k, layer in enumerate(layers):
        if k > max(rolls):
            break
        if k in rolls:
            found = dict(base)
            for pos in layer:
                found[pos.space] = k
            out[k] = found
        for pos in layer:
            if not started_finished and cm.finished(pos) and movement.can_step(cm, pos, occ):
                continue  # crossed the finish: a longer roll may not stop here
            base[pos.space] = k
    for roll in rolls:
        if roll not in out:  # the road ends (or is blocked) before this roll is used up
            out[roll] = dict(base)
    return out


def destinations_all(race: Race, one_search: bool = False) -> int:
    """Every rider's legal destinations for every roll 2-12, and for each whether his follower could draft.

    The follower (the rider directly behind) could draft a move of ``k``
    spaces to ``d`` when the space behind ``d`` is free and he reaches it in
    at most ``k`` steps (one search from the follower serves every ``d``).
    With ``one_search`` the destinations come from :func:`destinations_by_roll`
    (one search per rider), else from ``race.destinations`` once per roll.
    Returns the number of (destination, draft-check) answers.
    """
    from companion.games.reifenbreite import movement

    n = 0
    at = race.at
    board = race.board
    for rider in race.riders:
        r = race.riders[rider]
        if not r.on_road or r.pos is None:
            continue
        follower_space = board.behind(r.pos.space)
        follower = race.riders[at[follower_space]] if follower_space in at else None
        reach: dict[str, int] = {}
        if follower is not None and follower.pos is not None:
            occ = set(at) - {r.pos.space, follower.pos.space}
            for k, layer in enumerate(movement.frontiers(race.cm, follower.pos, 12, occ)):
                for p in layer:
                    reach.setdefault(p.space, k)
        by_roll = destinations_by_roll(race, rider) if one_search else None
        for roll in range(2, 13):
            dests = by_roll[roll] if by_roll is not None else race.destinations(rider, roll)
            for d, k in dests.items():
                n += 1
                if reach and k > 0:
                    target = board.behind(d)
                    if target is not None and target not in at and reach.get(target, 99) <= k:
                        n += 1
    return n


def bench_engine(out: TextIO, runs: int = 200, races: int = 15) -> list[Figure]:
    """Time the destination search, random races and bot races; print the medians."""
    from companion.games.reifenbreite.bots import BotManager, RandomManager
    from companion.games.reifenbreite.simulate import simulate_race

    board, course, text = standard_or_demo("D")
    where = f"{board.name}, course {course.name}" + (" (demo board: standard not installed)" if text else "")
    print(f"bench engine: {where}", file=out)
    race = mid_race(board, course)
    riders = sum(1 for r in race.riders.values() if r.on_road)
    per = _median_time(lambda: destinations_all(race, one_search=True), runs) / max(riders, 1)
    figs = [Figure("destinations (rolls 2-12 + draft check) per rider, one search", per * 1e6, "us", 200.0, runs)]
    per = _median_time(lambda: destinations_all(race), max(runs // 4, 1)) / max(riders, 1)
    figs.append(Figure("  the same with race.destinations once per roll", per * 1e6, "us", 200.0,
                       max(runs // 4, 1)))

    seeds = iter(range(10_000))

    def random_race() -> None:
        s = next(seeds)
        managers = {t: RandomManager(seed=s * 10 + t) for t in (2, 3, 4, 5)}
        simulate_race(board, course, s, managers, Settings(level=Level.ADVANCED))

    figs.append(Figure("whole race, random legal play", _median_time(random_race, races), "s", 1.0, races))

    def bot_race() -> None:
        s = next(seeds)
        managers = {t: BotManager() for t in (2, 3, 4, 5)}
        simulate_race(board, course, s, managers, Settings(level=Level.ADVANCED))

    figs.append(Figure("whole race, four bot teams", _median_time(bot_race, races), "s", 2.0, races))
    for f in figs:
        val = f"{f.median:.1f} {f.unit}" if f.unit == "us" else f"{f.median:.3f} {f.unit}"
        print(f"{f.name}: median {val} over {f.runs} runs (target < {f.target:g} {f.unit}) "
              f"{'ok' if f.ok else 'SLOW'}", file=out)
    return figs


@dataclass(frozen=True)
class Match:
    """Bots against other managers over many races."""

    label: str
    races: int
    bot_team_mean: float  # mean score of the bot team(s) per race
    other_team_mean: float
    mean_difference: float
    mean_difference_se: float  # its standard error
    bot_win_rate: float  # share of races a bot team has the best total (ties count)
    fair_share: float  # the win rate of equal teams: bot teams / 4


def team_scores(race: Race) -> dict[int, int]:
    """Team totals of a finished race (from its score sheet)."""
    from companion.games.reifenbreite.simulate import team_totals

    return team_totals(race)


def bots_against(opponent: str, bot_teams: int, races: int = 100, seed0: int = 0,
                 level: Level = Level.ADVANCED, course_name: str = "D") -> Match:
    """``bot_teams`` bot teams against ``opponent`` ("random" or "greedy") teams; seats rotate."""
    from companion.games.reifenbreite.bots import BotManager, GreedyManager, Manager, RandomManager
    from companion.games.reifenbreite.simulate import simulate_race

    board, course, _ = standard_or_demo(course_name)
    diffs: list[float] = []
    bot_means: list[float] = []
    other_means: list[float] = []
    wins = 0
    seats = (2, 3, 4, 5)
    for i in range(races):
        s = seed0 + i
        bot_seats = {seats[(i + k) % 4] for k in range(bot_teams)}
        managers: dict[int, Manager] = {}
        for t in seats:
            if t in bot_seats:
                managers[t] = BotManager()
            elif opponent == "greedy":
                managers[t] = GreedyManager()
            else:
                managers[t] = RandomManager(seed=s * 10 + t)
        race, _ = simulate_race(board, course, s, managers, Settings(level=level))
        scores = team_scores(race)
        b = statistics.mean(scores[t] for t in bot_seats)
        o = statistics.mean(scores[t] for t in seats if t not in bot_seats)
        bot_means.append(b)
        other_means.append(o)
        diffs.append(b - o)
        best = max(scores.values())
        wins += any(scores[t] == best for t in bot_seats)
    se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else 0.0
    label = f"{bot_teams} bot team{'s' if bot_teams > 1 else ''} vs {4 - bot_teams} {opponent}"
    return Match(label, races, statistics.mean(bot_means), statistics.mean(other_means),
                 statistics.mean(diffs), se, wins / races, bot_teams / 4)


def bench_bots(out: TextIO, races: int = 100, level: Level = Level.ADVANCED,
               course: str = "D", greedy: bool = True) -> list[Match]:
    """Print how bots fare against random legal play (and against the greedy baseline)."""
    board, c, text = standard_or_demo(course)
    print(f"bench bots: {board.name}, course {c.name}, {level.value} rules, {races} seeded races each"
          + (" (demo board: standard not installed)" if text else ""), file=out)
    matches = []
    plan = [("random", 1), ("random", 3)] + ([("greedy", 1)] if greedy else [])
    for opponent, n in plan:
        m = bots_against(opponent, n, races, level=level, course_name=course)
        matches.append(m)
        print(f"{m.label}: bot team mean {m.bot_team_mean:.1f}, {opponent} team mean {m.other_team_mean:.1f}, "
              f"mean difference {m.mean_difference:+.1f} (+-{m.mean_difference_se:.1f}), a bot team wins "
              f"{100 * m.bot_win_rate:.0f}% (equal teams: {100 * m.fair_share:.0f}%)", file=out, flush=True)
    return matches
