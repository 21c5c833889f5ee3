"""The `companion` command: the one composition root.

Every subcommand is registered here; its work lives in the package that owns
it (``companion`` for rules and records, ``vision`` for the camera side).
This is the only module of ``companion`` that may import ``vision``,
``firmware`` and ``web``, and it does so lazily inside the handlers so that
``companion --help`` stays fast.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

Handler = Callable[[argparse.Namespace], int]


class CliError(Exception):
    """An error the user can fix; printed as one line, exit status 2."""


# --- rules and records -------------------------------------------------------


def _add_rules_commands(sub: argparse._SubParsersAction) -> None:
    _add_record_commands(sub)
    _add_board_commands(sub)
    _add_simulate_command(sub)


def _add_simulate_command(sub: argparse._SubParsersAction) -> None:
    sim = sub.add_parser("simulate", help="play a whole Um Reifenbreite race with bots; print the score sheet")
    sim.add_argument("--json", action="store_true", help="print the score sheet as one JSON object")
    sim.add_argument("--course", default="D", help="course A-D or a course file (default D)")
    sim.add_argument("--seed", type=int, default=1, help="seed of the dice and the decks (default 1)")
    sim.add_argument("--level", choices=["basic", "advanced", "professional"], default="professional",
                     help="rules level (default professional: sprints, yellow jersey and chase car count)")
    sim.add_argument("--board", default="standard", help="board name or file (default standard)")
    sim.add_argument("--record", metavar="FILE", help="write the game record (JSON Lines) to FILE")
    who = sim.add_mutually_exclusive_group()
    who.add_argument("--bots", metavar="TEAMS", help="teams managed by bots, e.g. 2,3 (the others play randomly)")
    who.add_argument("--random", metavar="TEAMS", help="teams that play random legal moves, e.g. 3")
    sim.set_defaults(handler=_run_simulate)


def _teams_arg(text: str, option: str) -> set[int]:
    try:
        teams = {int(t) for t in text.split(",") if t.strip()}
    except ValueError:
        raise CliError(f"{option} takes team numbers 2-5 separated by commas, not {text!r}") from None
    if not teams <= {2, 3, 4, 5}:
        raise CliError(f"{option}: the teams are 2, 3, 4 and 5, not {text!r}")
    return teams


def _run_simulate(args: argparse.Namespace) -> int:
    import json

    from companion.boards import BoardError, CourseError, load_board, load_course
    from companion.games.reifenbreite import Level, Settings
    from companion.games.reifenbreite.bots import BotManager, Manager, RandomManager
    from companion.games.reifenbreite.simulate import SimulationError, score_sheet_json, simulate_race
    from companion.record import write_record

    bots = {2, 3, 4, 5}
    if args.bots is not None:
        bots = _teams_arg(args.bots, "--bots")
    elif args.random is not None:
        bots -= _teams_arg(args.random, "--random")
    try:
        board = load_board(args.board)
        course = load_course(args.course)
    except (BoardError, CourseError) as exc:
        raise CliError(str(exc)) from None
    managers: dict[int, Manager] = {
        t: BotManager() if t in bots else RandomManager(seed=args.seed * 10 + t) for t in (2, 3, 4, 5)
    }
    try:
        race, events = simulate_race(board, course, args.seed, managers, Settings(level=Level(args.level)),
                                     board_name=args.board, course_name=args.course)
    except (SimulationError, CourseError) as exc:
        raise CliError(str(exc)) from None
    if args.record:
        try:
            write_record(args.record, events)
        except OSError as exc:
            raise CliError(f"{args.record}: cannot write the record ({exc.strerror or exc})") from None
    sheet = score_sheet_json(race)
    info = {"course": course.name, "seed": args.seed, "level": args.level, "rounds": race.round,
            "managers": {str(t): "bot" if t in bots else "random" for t in sorted(managers)}}
    if args.json:
        print(json.dumps({**info, **sheet}))
        return 0
    print(f"{course.name}, {args.level} rules, seed {args.seed}: {race.round} rounds")
    riders = sheet["riders"]
    if isinstance(riders, dict):
        by_number = {int(n): r for n, r in riders.items()}
    else:
        by_number = {int(r["rider"]): r for r in riders}
    for place, n in enumerate(race.finish_order, 1):
        r = by_number.get(n, {})
        print(f"{place:>3}. {n}  (team {race.riders[n].team}, {info['managers'][str(race.riders[n].team)]}): "
              f"{r.get('total', 0)} points")
    teams = sheet["teams"]
    totals = teams if isinstance(teams, dict) else {str(t["team"]): t["total"] for t in teams}
    for t, total in sorted(totals.items(), key=lambda kv: -int(kv[1])):
        print(f"team {t} ({info['managers'][str(t)]}): {total}")
    return 0


def _board_subparsers(sub: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """The subcommands of `companion board`: created on first use, then shared."""
    board_sub: argparse._SubParsersAction | None = getattr(sub, "_board_subparsers", None)
    if board_sub is None:
        board_parser = sub.add_parser("board", help="board files: build, print")
        board_sub = board_parser.add_subparsers(dest="board_command", metavar="WHAT")
        board_sub.required = True
        setattr(sub, "_board_subparsers", board_sub)  # noqa: B010
    return board_sub


def _add_board_commands(sub: argparse._SubParsersAction) -> None:
    build = _board_subparsers(sub).add_parser(
        "build", help="build a board file from a compact description (docs/board-builder.md)"
    )
    build.add_argument("description", metavar="DESCRIPTION", help="a board description (JSON)")
    build.add_argument("--out", metavar="BOARD.json", required=True, help="the board file to write")
    build.set_defaults(handler=_run_board_build)
    _add_board_print_command(sub)


def _run_board_build(args: argparse.Namespace) -> int:
    from companion.boards import BoardError
    from companion.boards.builder import build_board_file, write_board

    try:
        board = build_board_file(args.description)
        write_board(board, args.out)
    except BoardError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"{args.out}: cannot write the board ({exc.strerror or exc})") from None
    lanes = 1 + max(s.lane for s in board.spaces.values())
    print(
        f"{args.out}: {board.name!r}, {len(board.spaces)} spaces, {lanes} lanes, "
        f"{board.size_mm[0]:g} x {board.size_mm[1]:g} mm, starts {', '.join(board.starts())}, "
        f"lines {', '.join(board.lines())}"
    )
    return 0


def _add_record_commands(sub: argparse._SubParsersAction) -> None:
    replay = sub.add_parser(
        "replay", help="check a game record: a verdict per event, then the score sheet"
    )
    replay.add_argument("record", metavar="RECORD", help="a game record (JSON Lines)")
    replay.add_argument("--json", action="store_true", help="one JSON object per line")
    replay.set_defaults(handler=_run_replay)
    sheet = sub.add_parser("sheet", help="the score sheet of a game record (JSON, CSV, HTML, PDF)")
    sheet.add_argument("record", metavar="RECORD")
    sheet.add_argument("--format", choices=["json", "csv", "html", "pdf"], default="json")
    sheet.add_argument("--out", metavar="FILE", help="write to FILE (required for pdf)")
    sheet.set_defaults(handler=_run_sheet)
    stage = sub.add_parser("stage", help="a stage race: add up the sheets of its stages (one record each)")
    stage.add_argument("records", nargs="+", metavar="RECORD", help="the records of the stages, in order")
    stage.add_argument("--json", action="store_true", help="print the result as one JSON object")
    stage.set_defaults(handler=_run_stage)


def _replayed(path: str) -> tuple[object, list[dict[str, object]]]:
    from companion.record import RecordError, read_record_lenient, replay, start_race

    try:
        entries = read_record_lenient(path)
        race = start_race(entries, Path(path).parent)
    except RecordError as exc:
        raise CliError(str(exc)) from exc
    return race, list(replay(entries, race))


def _run_replay(args: argparse.Namespace) -> int:
    import json

    from companion.games.reifenbreite.result import race_sheet
    from companion.sheet import sheet_to_json

    race, verdicts = _replayed(args.record)
    for v in verdicts:
        if args.json:
            print(json.dumps(v))
        else:
            mark = "ok     " if v["ok"] else "ILLEGAL"
            print(f"{v['seq']:>5} {mark} {v['rule']}: {v['reason']}")
    score = sheet_to_json(race_sheet(race))  # type: ignore[arg-type]
    if args.json:
        print(json.dumps({"score": score}))
    else:
        teams = ", ".join(f"team {t}: {p}" for t, p in score["teams"].items())
        print(f"score: {teams}")
    return 0


def _run_stage(args: argparse.Namespace) -> int:
    import json

    from companion.games.reifenbreite.result import race_sheet
    from companion.scoring import stage_race
    from companion.sheet import stage_to_json

    sheets = [race_sheet(_replayed(path)[0]) for path in args.records]  # type: ignore[arg-type]
    try:
        result = stage_to_json(stage_race(sheets))
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"stage race over {result['stages']} stages")
    for team, t in result["teams"].items():
        print(f"team {team}: stages {t['stage_totals']} = {t['team_points']}, best rider {t['best_rider']} "
              f"({t['best_rider_points']}) x {result['stages']} = {t['bonus']}: final {t['final']}")
    return 0


def _run_sheet(args: argparse.Namespace) -> int:
    import json

    from companion.games.reifenbreite.result import race_sheet
    from companion.sheet import sheet_to_csv, sheet_to_html, sheet_to_json, sheet_to_pdf

    race, _ = _replayed(args.record)
    sheet = race_sheet(race)  # type: ignore[arg-type]
    if args.format == "pdf":
        if not args.out:
            raise CliError("--format pdf needs --out FILE")
        sheet_to_pdf(sheet, args.out)
        return 0
    if args.format == "json":
        text = json.dumps(sheet_to_json(sheet), indent=2) + "\n"
    elif args.format == "csv":
        text = sheet_to_csv(sheet)
    else:
        text = sheet_to_html(sheet, title=f"{race.course.name}")  # type: ignore[attr-defined]
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


# --- vision ------------------------------------------------------------------


def _add_vision_commands(sub: argparse._SubParsersAction) -> None:
    dice = sub.add_parser("dice", help="read the dice in images (top faces; null = unclear)")
    dice.add_argument("images", nargs="+", metavar="IMAGE")
    dice.add_argument("--json", action="store_true", help="one JSON object per line and image")
    dice.add_argument("--roi", default=None, metavar="X,Y,W,H",
                      help="read only this region (pixels), e.g. the dice tray")
    dice.add_argument("--die-px", type=float, default=None, metavar="PX",
                      help="the dice's top-face side in pixels, where known (small dice)")
    dice.add_argument("--annotate", default=None, metavar="DIR",
                      help="also write each image with its readings drawn to DIR/NAME.dice.jpg")
    dice.add_argument("--settle", type=int, default=None, metavar="N",
                      help="the images are consecutive frames: add a last line with the first "
                           "roll seen alike (same dice, same places) in N frames in a row")
    dice.add_argument("--expect", type=int, default=None, metavar="K",
                      help="with --settle: the number of dice rolled (a roll of another "
                           "count is reported as a problem)")
    dice.set_defaults(handler=_run_dice)
    _add_locate_command(sub)


def _run_dice(args: argparse.Namespace) -> int:
    from vision.dice.run import dice_command

    roi = None
    if args.roi is not None:
        try:
            x, y, w, h = (int(v) for v in args.roi.split(","))
        except ValueError:
            raise CliError(f"--roi wants X,Y,W,H in pixels, not {args.roi!r}") from None
        if w <= 0 or h <= 0:
            raise CliError(f"--roi {args.roi}: width and height must be > 0")
        roi = (x, y, w, h)
    if args.die_px is not None and not (math.isfinite(args.die_px) and args.die_px > 0):
        raise CliError(f"--die-px must be a positive number of pixels, not {args.die_px:g}")
    if args.settle is not None and args.settle < 1:
        raise CliError(f"--settle wants a number of frames >= 1, not {args.settle}")
    if args.expect is not None and (args.settle is None or args.expect < 1):
        raise CliError("--expect wants --settle and a number of dice >= 1")
    annotate_dir = _output_dir(args.annotate, "--annotate")
    try:
        return dice_command(args.images, sys.stdout, as_json=args.json, roi=roi,
                            die_px=args.die_px, annotate_dir=annotate_dir,
                            settle=args.settle, expected=args.expect)
    except FileNotFoundError as exc:
        raise CliError(str(exc)) from exc


def _output_dir(path: str | None, option: str) -> Path | None:
    """The folder an option names, made if missing; a CliError if it cannot be."""
    if path is None:
        return None
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"{option} {path}: cannot make that folder ({exc.strerror})") from None
    return folder


def _add_locate_command(sub: argparse._SubParsersAction) -> None:
    locate = sub.add_parser("locate", help="find the board and the rider tokens in images")
    locate.add_argument("images", nargs="+", metavar="IMAGE")
    locate.add_argument("--board", required=True, help="board file, or a shipped board name")
    locate.add_argument("--json", action="store_true", help="one JSON object per line and image")
    locate.add_argument("--riders", default=None, metavar="21,22,...",
                        help="the tokens on the table: those not seen are listed as missing")
    locate.add_argument("--side-mm", type=float, default=10.0, help="token marker side (mm)")
    locate.add_argument("--height-mm", type=float, default=0.0,
                        help="height of the stickers above the board (on top of the riders)")
    locate.add_argument("--dice", action="store_true",
                        help="also read the dice, in the board's dice area where it has one")
    locate.add_argument("--dice-rolled", type=int, default=None, metavar="K",
                        help="the number of dice the game rolls (2 in Um Reifenbreite, else 1): "
                             "where fewer are seen the dice area is searched harder; implies --dice")
    locate.set_defaults(handler=_run_locate)
    tokens = sub.add_parser("tokens", help="rider token stickers")
    tokens_sub = tokens.add_subparsers(dest="tokens_command", metavar="WHAT")
    tokens_sub.required = True
    tprint = tokens_sub.add_parser("print", help="a PDF sheet of round token stickers")
    tprint.add_argument("--out", required=True, metavar="FILE.pdf")
    tprint.add_argument("--side-mm", type=float, default=10.0, help="marker side (mm)")
    tprint.set_defaults(handler=_run_tokens_print)


def _load_board_arg(name: str) -> object:
    from companion.boards import BoardError, load_board

    try:
        return load_board(name)
    except BoardError as exc:
        raise CliError(str(exc)) from None


def _run_locate(args: argparse.Namespace) -> int:
    from vision.locate import locate_files

    board = _load_board_arg(args.board)
    expected = None
    if args.riders:
        try:
            expected = [int(t) for t in args.riders.replace(" ", "").split(",") if t]
        except ValueError:
            raise CliError(f"--riders: not a list of numbers: {args.riders!r}") from None
    if not 2 <= args.side_mm <= 60:
        raise CliError("--side-mm must be between 2 and 60")
    if not 0 <= args.height_mm <= 100:
        raise CliError("--height-mm must be between 0 and 100")
    if args.dice_rolled is not None and not 1 <= args.dice_rolled <= 6:
        raise CliError("--dice-rolled must be between 1 and 6")
    return locate_files(args.images, board, sys.stdout, expected=expected,  # type: ignore[arg-type]
                        side_mm=args.side_mm, height_mm=args.height_mm, err=sys.stderr,
                        as_json=args.json, dice=args.dice or args.dice_rolled is not None,
                        dice_rolled=args.dice_rolled)


def _run_tokens_print(args: argparse.Namespace) -> int:
    from vision.printables import token_sheet_pdf

    if not 4 <= args.side_mm <= 40:
        raise CliError("--side-mm must be between 4 and 40")
    try:
        pages = token_sheet_pdf(args.out, side_mm=args.side_mm)
    except OSError as exc:
        raise CliError(f"{args.out}: cannot write ({exc.strerror or exc})") from None
    print(f"{args.out}: {pages} page(s) of token stickers, markers {args.side_mm:g} mm")
    return 0


def _add_board_print_command(sub: argparse._SubParsersAction) -> None:
    bprint = _board_subparsers(sub).add_parser(
        "print", help="a PDF of the board at real scale (one sheet, or tiled on A4 with --tiles)")
    bprint.add_argument("board", metavar="BOARD", help="board file, or a shipped board name")
    bprint.add_argument("--out", required=True, metavar="FILE.pdf")
    bprint.add_argument("--tiles", action="store_true", help="also tile it over A4 pages")
    bprint.set_defaults(handler=_run_board_print)
    marks = _board_subparsers(sub).add_parser(
        "markers", help="a PDF of the four corner markers, for a board you already have")
    marks.add_argument("--out", required=True, metavar="FILE.pdf")
    marks.add_argument("--side-mm", type=float, default=50.0, help="marker side (mm)")
    marks.set_defaults(handler=_run_board_markers)


def _run_board_markers(args: argparse.Namespace) -> int:
    from vision.printables import corner_markers_pdf

    if not 20 <= args.side_mm <= 60:
        raise CliError("--side-mm must be between 20 and 60 (four markers on one A4 page)")
    try:
        corner_markers_pdf(args.out, side_mm=args.side_mm)
    except OSError as exc:
        raise CliError(f"{args.out}: cannot write ({exc.strerror or exc})") from None
    print(f"{args.out}: corner markers 0-3, {args.side_mm:g} mm")
    return 0


def _run_board_print(args: argparse.Namespace) -> int:
    from vision.printables import board_pdf

    board = _load_board_arg(args.board)
    try:
        pages = board_pdf(board, args.out, tiles=args.tiles)  # type: ignore[arg-type]
    except OSError as exc:
        raise CliError(f"{args.out}: cannot write ({exc.strerror or exc})") from None
    print(f"{args.out}: {pages} page(s)")
    return 0


# --- benchmarks --------------------------------------------------------------


def _add_bench_commands(bench_sub: argparse._SubParsersAction) -> None:
    vis = bench_sub.add_parser("vision", help="board and token localisation on synthetic frames")
    vis.add_argument("--scenes", type=int, default=200)
    vis.add_argument("--seed", type=int, default=0)
    vis.add_argument("--board", default=None, help="board (default: standard, else generated)")
    vis.add_argument("--side-mm", type=float, default=10.0, help="token marker side (mm)")
    vis.add_argument("--height-mm", type=float, default=0.0,
                     help="riders' height: stickers this far above the board (compensated)")
    vis.add_argument("--hide-corner", action="store_true",
                     help="a hand over one corner marker in every scene (board fitted on three)")
    vis.add_argument("--dice-touching", action="store_true",
                     help="the two dice lie face to face in every scene")
    vis.add_argument("--dice-cocked", action="store_true",
                     help="the second die of every scene rests cocked, on an edge (it must "
                          "be reported unreadable or not at all)")
    vis.add_argument("--plain-sides", action="store_true",
                     help="the flat dice's side faces drawn without pips, as before "
                          "2026-11-29 (comparable with older figures)")
    vis.add_argument("--no-tilt-check", action="store_true",
                     help="the dice read without the table's check for cocked dice")
    vis.add_argument("--dice-not-told", action="store_true",
                     help="the dice reader is not told how many dice were rolled (no search "
                          "for a missing one)")
    vis.add_argument("--json", action="store_true", help="the figures as one JSON object")
    vis.set_defaults(handler=_run_bench_vision)
    dice = bench_sub.add_parser("dice", help="dice reader accuracy and speed on labelled sets")
    dice.add_argument("--data", default=None, help="dir of SET/images + SET/labels "
                      "(default: ../shared/data/dice or $PELOTON_DICE_DATA)")
    dice.add_argument("--split", choices=["heldout", "dev", "val", "all"], default="heldout",
                      help="heldout (the estimate), dev, its val part, or all")
    dice.add_argument("--json", action="store_true", help="one JSON object per set")
    dice.add_argument("--resize", default=None, metavar="WxH",
                      help="make every image a frame of this size first (scaled to fit, dice "
                           "kept square), e.g. 2028x1520 (camera-frame timing)")
    dice.add_argument("--known-size", action="store_true",
                      help="tell the reader each image's die size (the median labelled box), "
                      "as the table knows it from the board")
    dice.add_argument("--die-px", type=float, default=None, metavar="N",
                      help="shrink every image so its median labelled die is N px, and read "
                      "it as the table reads its dice area (told the size, one set): how "
                      "small may the dice be in the camera's frame")
    dice.add_argument("--errors", default=None, metavar="DIR",
                      help="draw every image not read exactly right, with its labels, "
                      "into DIR/SET/NAME.jpg")
    dice.add_argument("--threads", type=int, default=1, metavar="N",
                      help="OpenCV threads (default 1: the targets are for one core; a Pi 4 "
                      "has 4)")
    dice.add_argument("--label-fixes", nargs="?", const="default", default=None, metavar="FILE",
                      help="score against the labels as corrected by a fix file (no FILE: "
                      "the project's own, vision/dice/label_fixes.json; docs/dice.md)")
    dice.set_defaults(handler=_run_bench_dice)
    engine = bench_sub.add_parser("engine", help="rules engine speed: destinations, random races, bot races")
    engine.add_argument("--runs", type=int, default=200, help="repetitions of the destination search")
    engine.add_argument("--races", type=int, default=15, help="races per race figure")
    engine.set_defaults(handler=_run_bench_engine)
    bots = bench_sub.add_parser("bots", help="bots against random legal play over seeded races")
    bots.add_argument("--races", type=int, default=100)
    bots.add_argument("--level", choices=["basic", "advanced", "professional"], default="advanced")
    bots.add_argument("--course", default="D", help="course A-D (default D)")
    bots.add_argument("--no-greedy", action="store_true", help="skip the match against the greedy baseline")
    bots.set_defaults(handler=_run_bench_bots)


def _run_bench_dice(args: argparse.Namespace) -> int:
    from vision.dice.data import default_data_dir
    from vision.dice.run import bench_command

    data = Path(args.data) if args.data else default_data_dir()
    resize = None
    if args.resize:
        try:
            w, h = (int(v) for v in args.resize.lower().split("x"))
        except ValueError as exc:
            raise CliError(f"--resize wants WxH, e.g. 2028x1520, not {args.resize!r}") from exc
        if min(w, h) < 1:
            raise CliError(f"--resize wants a positive width and height, not {args.resize!r}")
        resize = (w, h)
    if args.die_px is not None and not 4 <= args.die_px <= 1000:
        raise CliError(f"--die-px wants a die size of 4 to 1000 px, not {args.die_px:g}")
    if args.die_px is not None and resize is not None:
        raise CliError("--die-px and --resize do not go together: the one shrinks the "
                       "photos' dice, the other makes camera-size frames of them")
    if not 1 <= args.threads <= 64:
        raise CliError(f"--threads wants 1 to 64 threads, not {args.threads}")
    errors_dir = _output_dir(args.errors, "--errors")
    fixes = None
    if args.label_fixes is not None:
        from vision.dice.label_fixes import DEFAULT_FIXES
        fixes = DEFAULT_FIXES if args.label_fixes == "default" else Path(args.label_fixes)
    try:
        return bench_command(data, args.split, sys.stdout, as_json=args.json, resize=resize,
                             errors_dir=errors_dir, known_size=args.known_size,
                             die_to=args.die_px, threads=args.threads, label_fixes=fixes)
    except (ValueError, FileNotFoundError) as exc:
        raise CliError(str(exc)) from exc


def _run_bench_vision(args: argparse.Namespace) -> int:
    from vision.bench import bench_vision

    if args.scenes < 1:
        raise CliError("--scenes must be at least 1")
    board = _load_board_arg(args.board) if args.board else None
    bench_vision(sys.stdout, scenes=args.scenes, seed=args.seed, board=board,  # type: ignore[arg-type]
                 side_mm=args.side_mm, height_mm=args.height_mm, as_json=args.json,
                 hide_corner=args.hide_corner, dice_touching=args.dice_touching,
                 dice_told=not args.dice_not_told, dice_cocked=args.dice_cocked,
                 tilt_check=not args.no_tilt_check,
                 plain_sides=args.plain_sides)
    return 0


def _run_bench_engine(args: argparse.Namespace) -> int:
    from companion.games.reifenbreite.bench import bench_engine

    if args.runs < 1 or args.races < 1:
        raise CliError("--runs and --races must be at least 1")
    bench_engine(sys.stdout, runs=args.runs, races=args.races)
    return 0


def _run_bench_bots(args: argparse.Namespace) -> int:
    from companion.games.reifenbreite import Level
    from companion.games.reifenbreite.bench import bench_bots

    if args.races < 1:
        raise CliError("--races must be at least 1")
    bench_bots(sys.stdout, races=args.races, level=Level(args.level), course=args.course,
               greedy=not args.no_greedy)
    return 0


# --- entry point ---------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser of the `companion` command."""
    parser = argparse.ArgumentParser(
        prog="companion",
        description="Peloton, the table companion for cycling board games.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _add_rules_commands(sub)
    _add_vision_commands(sub)
    bench = sub.add_parser("bench", help="speed and accuracy benchmarks (print medians)")
    bench_sub = bench.add_subparsers(dest="bench", metavar="WHAT")
    bench_sub.required = True
    _add_bench_commands(bench_sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the `companion` command; returns the exit status."""
    # The camera work runs on one core per frame (OpenCV is told so where it runs); keep
    # numpy's BLAS to one thread too: its threads only fight over the core on the small
    # products of the token fit (vision.token_fit). Set before numpy is first imported.
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        return handler(args)
    except CliError as exc:
        print(f"companion: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
