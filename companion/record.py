"""The game record: JSON Lines of events, read with line numbers, and replayed.

The format is documented in ``docs/record.md``. :func:`read_record` parses a
record and reports a malformed line with its number; :func:`replay` applies
the events to a fresh race and yields one verdict per event: an illegal
event is reported and not applied, and replay goes on with the next.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
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


@dataclass(frozen=True)
class BadLine:
    """A line of a record that is not a well-formed event (kept, so nothing is lost)."""

    seq: int
    line: int
    error: str


def _parse_line(text: str, lineno: int, count: int) -> Entry | BadLine:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        return BadLine(count, lineno, f"line {lineno}: not valid JSON ({exc.msg}, column {exc.colno})")
    seq = raw.get("seq", count) if isinstance(raw, dict) else count
    if isinstance(seq, bool) or not isinstance(seq, int):
        return BadLine(count, lineno, f"line {lineno}: 'seq' must be a whole number")
    try:
        return Entry(seq, lineno, event_from_dict(raw))
    except EventFormatError as exc:
        return BadLine(seq, lineno, f"line {lineno}: {exc}")


def parse_lines_lenient(lines: Iterable[str], source: str = "<record>") -> list[Entry | BadLine]:
    """Parse record lines, keeping malformed ones as :class:`BadLine` (the setup must be good)."""
    out: list[Entry | BadLine] = []
    for lineno, text in enumerate(lines, 1):
        if text.strip():
            out.append(_parse_line(text, lineno, len(out) + 1))
    if not out:
        raise RecordError("the record is empty", None, source)
    first = out[0]
    if isinstance(first, BadLine):
        raise RecordError(first.error.split(": ", 1)[1], first.line, source)
    if not isinstance(first.event, Setup):
        raise RecordError("a record starts with a 'setup' event", first.line, source)
    for e in out[1:]:
        if isinstance(e, Entry) and isinstance(e.event, Setup):
            raise RecordError("a record has only one 'setup' event", e.line, source)
    return out


def parse_lines(lines: Iterable[str], source: str = "<record>") -> list[Entry]:
    """Parse record lines; blank lines are skipped, anything malformed raises :class:`RecordError`."""
    out: list[Entry] = []
    for item in parse_lines_lenient(lines, source):
        if isinstance(item, BadLine):
            raise RecordError(item.error.split(": ", 1)[1], item.line, source)
        out.append(item)
    return out


def _read_text(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError("no such record file", None, str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"cannot read the record ({exc})", None, str(path)) from None


def read_record(path: str | Path) -> list[Entry]:
    """Read a record file; a malformed line raises :class:`RecordError` with its number."""
    return parse_lines(_read_text(path).splitlines(), str(path))


def read_record_lenient(path: str | Path) -> list[Entry | BadLine]:
    """Read a record file, keeping malformed lines as :class:`BadLine`."""
    return parse_lines_lenient(_read_text(path).splitlines(), str(path))


def start_race(entries: Sequence[Entry | BadLine], base: Path | None = None) -> Race:
    """The race a record's setup describes."""
    first = entries[0]
    assert isinstance(first, Entry) and isinstance(first.event, Setup)
    try:
        return race_from_setup(first.event, base)
    except SetupError as exc:
        raise RecordError(f"bad setup: {exc}", first.line) from None


def replay(entries: Sequence[Entry | BadLine], race: Race) -> Iterator[dict[str, Any]]:
    """Apply events after the setup; yield ``{"seq", "ok", "rule", "reason", ...}`` for each.

    A malformed line is reported (rule ``record.malformed``, with its line
    number) and skipped; an illegal event is reported and not applied.
    """
    yield {"seq": entries[0].seq, "ok": True, "rule": "setup",
           "reason": f"{race.course.name} on {race.board.name}, {race.settings.level.value} rules, "
                     f"seed {race.seed}, teams {', '.join(map(str, race.team_order))}"}
    for entry in entries[1:]:
        if isinstance(entry, BadLine):
            yield {"seq": entry.seq, "ok": False, "rule": "record.malformed", "reason": entry.error}
            continue
        verdict = race.apply(entry.event)
        yield {"seq": entry.seq, **verdict.to_dict()}


def write_record(path: str | Path, events: Iterable[Event]) -> None:
    """Write events as a record, one JSON object a line, numbered."""
    with open(path, "w", encoding="utf-8") as f:
        for seq, ev in enumerate(events, 1):
            f.write(json.dumps({"seq": seq, **event_to_dict(ev)}) + "\n")
