"""The game record: JSON Lines of events, read with line numbers, and replayed.

The format is documented in ``docs/record.md``. :func:`read_record` parses a
record and reports a malformed line with its number; :func:`replay` applies
the events to a fresh race and yields one verdict per event: an illegal
event is reported and not applied, and replay goes on with the next.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from companion.games.reifenbreite import (
    Event,
    EventFormatError,
    Race,
    Setup,
    SetupError,
    event_from_dict,
    event_to_dict,
)
from companion.games.reifenbreite.setup import race_from_setup


class RecordError(ValueError):
    """A record that cannot be read: names the line and what is wrong."""

    def __init__(self, message: str, line: int | None = None, source: str = "") -> None:
        where = source
        if line is not None:
            where = f"{source}: line {line}" if source else f"line {line}"
        super().__init__(f"{where}: {message}" if where else message)
        self.line = line


@dataclass(frozen=True)
class Entry:
    """One line of a record: its sequence number, line number and event."""

    seq: int
    line: int
    event: Event


def parse_lines(lines: Iterable[str], source: str = "<record>") -> list[Entry]:
    """Parse record lines; blank lines are skipped, anything malformed raises :class:`RecordError`."""
    out: list[Entry] = []
    for lineno, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RecordError(f"not valid JSON ({exc.msg}, column {exc.colno})", lineno, source) from None
        try:
            event = event_from_dict(raw)
        except EventFormatError as exc:
            raise RecordError(str(exc), lineno, source) from None
        seq = raw.get("seq", len(out) + 1) if isinstance(raw, dict) else len(out) + 1
        if isinstance(seq, bool) or not isinstance(seq, int):
            raise RecordError("'seq' must be a whole number", lineno, source)
        out.append(Entry(seq, lineno, event))
    if not out:
        raise RecordError("the record is empty", None, source)
    if not isinstance(out[0].event, Setup):
        raise RecordError("a record starts with a 'setup' event", out[0].line, source)
    for e in out[1:]:
        if isinstance(e.event, Setup):
            raise RecordError("a record has only one 'setup' event", e.line, source)
    return out


def read_record(path: str | Path) -> list[Entry]:
    """Read a record file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError("no such record file", None, str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"cannot read the record ({exc})", None, str(path)) from None
    return parse_lines(text.splitlines(), str(path))


def start_race(entries: list[Entry], base: Path | None = None) -> Race:
    """The race a record's setup describes."""
    setup = entries[0].event
    assert isinstance(setup, Setup)
    try:
        return race_from_setup(setup, base)
    except SetupError as exc:
        raise RecordError(f"bad setup: {exc}", entries[0].line) from None


def replay(entries: list[Entry], race: Race) -> Iterator[dict[str, Any]]:
    """Apply events after the setup; yield ``{"seq", "ok", "rule", "reason", ...}`` for each."""
    yield {"seq": entries[0].seq, "ok": True, "rule": "setup",
           "reason": f"{race.course.name} on {race.board.name}, {race.settings.level.value} rules, "
                     f"seed {race.seed}, teams {', '.join(map(str, race.team_order))}"}
    for entry in entries[1:]:
        verdict = race.apply(entry.event)
        yield {"seq": entry.seq, **verdict.to_dict()}


def write_record(path: str | Path, events: Iterable[Event]) -> None:
    """Write events as a record, one JSON object a line, numbered."""
    with open(path, "w", encoding="utf-8") as f:
        for seq, ev in enumerate(events, 1):
            f.write(json.dumps({"seq": seq, **event_to_dict(ev)}) + "\n")
