"""``memlab import``: a JSON Lines file into one agent at one taint, checked whole before anything is written.

Each line holds one record, ``{"key": ..., "content": ..., "tags": [...]}`` (``tags`` optional, as are the context
fields ``source`` and ``occurred_at``); blank lines are skipped. The file is read twice: first every line is parsed
(a line that is not JSON, nests too deeply, or names a field twice is bad: JSON would keep the last of two ``key``
fields while a reader sees the first) and validated like a single save, and every bad line is reported as
``FILE:LINE: what is wrong`` with nothing written; then the records are saved through ``Session.memory_save_many``,
one transaction per batch, with a progress bar.

A key already in the importing session's view (``MemoryStore.view`` at the import's taint, reading the import's own
grade and better: a trusted import is not stopped by an untrusted version it would shadow) is where importing the
same file twice would silently save version 2 of every key, so sqlite-utils' habit applies: by default such an
import is refused (exit 2, nothing written, the keys named); ``--replace`` saves a new version only where the record
differs from the version in the view (content or tags: importing an unchanged file again writes nothing);
``--ignore`` skips every key already there. A key twice in one file is saved twice, in the file's order.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memlab import cli_output, tooldefs
from memlab.errors import InvalidArgument, MemlabError

if TYPE_CHECKING:
    from tqdm import tqdm  # the bar comes from cli_output.progress, which imports tqdm only when it runs

__all__ = ["Problem", "ImportReport", "read_records", "parse_line", "check_file", "already_there", "run_import"]

MAX_REPORTED = 20
"""Bad lines listed in a report; the rest are counted."""
_ESCAPED = re.compile("[\udc80-\udcff]")  # a byte that is not UTF-8, as surrogateescape decodes it


@dataclass(frozen=True)
class Problem:
    """One bad line of an import file: its number, what is wrong, and where in it (JSON's column, or the field)."""

    line: int
    message: str
    column: int | None = None
    """1-based, as ``json.JSONDecodeError.colno`` gives it (for a line that is not JSON or not UTF-8)."""
    field: str | None = None
    """The record's field at fault (for a record that is JSON but not a valid save)."""

    def text(self, path: str | Path) -> str:
        """``FILE:LINE: what is wrong (column N)`` or ``(field NAME)``."""
        where = f" (field {self.field})" if self.field is not None else ""
        return f"{path}:{self.line}: {self.message}{where}"


@dataclass(frozen=True)
class ImportReport:
    """What checking an import file found: how many records, how many bad, the first ``MAX_REPORTED`` of them."""

    file: str
    records: int = 0
    bad: int = 0
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        return self.bad == 0

    def lines(self) -> list[str]:
        """The report as ``memlab import`` prints it: each bad line listed, the rest counted, the outcome."""
        shown = [problem.text(self.file) for problem in self.problems]
        if self.bad > len(self.problems):
            shown.append(f"… and {self.bad - len(self.problems)} more")
        noun = "record" if self.bad == 1 else "records"
        return [*shown, f"memlab import: {self.bad} bad {noun}; nothing was imported"]

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON values (``memlab import --json``)."""
        return {
            "file": self.file,
            "records": self.records,
            "bad": self.bad,
            "problems": [dataclasses.asdict(problem) for problem in self.problems],
            "more": self.bad - len(self.problems),
        }


class _BadLine(Exception):
    """A line that cannot be a record: why, and the column or field at fault."""

    def __init__(self, message: str, *, column: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message, self.column, self.field = message, column, field


def read_records(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, parsed record) for every non-blank line; a line that is not a JSON record raises
    InvalidArgument (``FILE:LINE: why``)."""
    for number, line in _lines(path):
        try:
            yield number, parse_line(line)
        except InvalidArgument as error:
            raise InvalidArgument(f"{path}:{number}: {error}") from None


def parse_line(line: str) -> Any:
    """One line's JSON value; a line that is not JSON, nests too deeply, or names a field twice raises
    InvalidArgument.

    Examples:
        >>> parse_line('{"key": "shown", "content": "c", "key": "other"}')
        Traceback (most recent call last):
        ...
        memlab.errors.InvalidArgument: the name 'key' appears twice in one object
    """
    try:
        return _decode(line)
    except _BadLine as bad:
        raise InvalidArgument(bad.message) from None


def _decode(line: str) -> Any:
    # Without its newline: a fault at the end of the line is at its last column, not column 1 of the next.
    line = line.rstrip("\n")
    escaped = _ESCAPED.search(line)
    if escaped is not None:
        raise _BadLine(f"not UTF-8 text (column {escaped.start() + 1})", column=escaped.start() + 1)
    try:
        return json.loads(line, object_pairs_hook=_object)
    except json.JSONDecodeError as error:
        raise _BadLine(f"not JSON ({error.msg}, column {error.colno})", column=error.colno) from None
    except RecursionError:
        raise _BadLine("nested too deeply to be a record") from None


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused when a name appears twice (json keeps the last: a reader sees the first)."""
    record = dict(pairs)
    if len(record) < len(pairs):
        names = [name for name, _ in pairs]
        twice = next(name for index, name in enumerate(names) if name in names[:index])
        raise _BadLine(f"the name {twice!r} appears twice in one object", field=twice)
    return record


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    # Bytes that are not UTF-8 become lone surrogates (never produced by decoding UTF-8): _decode names their line.
    with path.open(encoding="utf-8", errors="surrogateescape") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                yield number, line


def check_file(path: Path) -> ImportReport:
    """Validate every record of ``path`` like a single save; the report lists the bad lines (the first
    ``MAX_REPORTED``) and counts them all."""
    problems: list[Problem] = []
    count = bad = 0
    for number, line in _lines(path):
        count += 1
        try:
            record = _decode(line)
            if not isinstance(record, dict):
                raise _BadLine(f"a record must be an object, not {type(record).__name__}")
            _check_record(record)
        except _BadLine as fault:
            bad += 1
            if len(problems) < MAX_REPORTED:
                problems.append(Problem(number, fault.message, column=fault.column, field=fault.field))
    return ImportReport(str(path), records=count, bad=bad, problems=tuple(problems))


def _check_record(record: dict[str, Any]) -> None:
    """A record bound like a single save; when refused, the message of a single save and the field at fault."""
    try:
        tooldefs.bind("memory_save", record)
    except InvalidArgument as error:
        raise _BadLine(str(error), field=_field_at_fault(record)) from None


def _field_at_fault(record: dict[str, Any]) -> str | None:
    """The field ``Tool.bind`` refused ``record`` for, looked for in the order it checks: unknown, missing, bad."""
    parameters = tooldefs.get("memory_save").parameters
    names = {parameter.name for parameter in parameters}
    unknown = sorted(name for name in record if name not in names)
    missing = sorted(p.name for p in parameters if p.required and record.get(p.name) is None)
    if unknown or missing:
        return (unknown or missing)[0]
    for parameter in parameters:
        try:
            parameter.validate(record.get(parameter.name))
        except InvalidArgument:
            return parameter.name
    return None


def run_import(args: argparse.Namespace) -> int:
    """The ``memlab import`` command; returns the exit status (1: bad records, 2: cannot open or read).

    ``--taint`` has no default: it is the level of every imported memory, and a default of PUBLIC would make
    internal notes readable by every session.
    """
    from memlab.labels import Label
    from memlab.levels import Level
    from memlab.store import MemoryStore

    path = cli_output.input_file(args.file)
    if not path.is_file():
        print(f"memlab import: {path} is not a file", file=sys.stderr)
        return 2
    report = check_file(path)
    if not report.ok and args.json:
        cli_output.print_json(report.to_dict())
        return 1
    if not report.ok:
        print("\n".join(report.lines()), file=sys.stderr)
        return 1
    try:
        taint = Label.parse(args.taint)
        store = cli_output.from_environment(
            args, "db", lambda db: MemoryStore(db, policy=args.policy, analyzer=args.analyzer)
        )
    except MemlabError as error:
        print(f"memlab import: {error}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    with store, cli_output.progress(report.records, path.name, unit="memory") as progress:
        try:
            there = already_there(store, taint, args.agent)
            if args.mode is None and (refusal := _refusal(path, there, taint, args.agent)):
                print(f"memlab import: {refusal}", file=sys.stderr)
                return 2
            session = store.session(taint, args.agent)
            saved = skipped = 0
            batch: list[Any] = []
            for _number, record in read_records(path):
                if _skipped(record, there, args.mode):
                    skipped += 1
                    progress.update(1)
                    continue
                batch.append(record)
                if len(batch) == args.batch_size:
                    saved += _save(session, batch, progress)
            saved += _save(session, batch, progress)
        except MemlabError as error:
            print(f"memlab import: {error}", file=sys.stderr)
            return 2
    elapsed = time.perf_counter() - started
    if args.json:
        shown = session.taint if isinstance(session.taint, Level) else str(session.taint)
        imported = {"imported": saved, "agent": args.agent, "taint": shown, "session": session.id, "seconds": elapsed}
        cli_output.print_json({**imported, "skipped": skipped})
        return 0
    why = {"replace": "unchanged", "ignore": "already there"}.get(args.mode, "")
    kept = f"; {skipped:,} skipped ({why})" if skipped else ""
    said = f"imported {saved:,} memories into agent {args.agent!r} at {taint} (session {session.id}) in {elapsed:.1f} s"
    if cli_output.verbosity(args) >= 0:
        print(said + kept)
    return 0


def already_there(store, taint, agent: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """The keys in the view an import at ``taint`` compares its records with: key -> (content, tags), read as the
    auditor reads a view (no session, no audit row, nothing lowered), at the import's own grade and better."""
    from memlab.labels import Integrity

    view = store.view(taint, agent, floor=Integrity.TRUSTED if taint.trusted else Integrity.UNTRUSTED)
    return {row.key: (row.content, tuple(row.tags)) for row in view.itertuples()}


def _refusal(path: Path, there: dict[str, Any], taint, agent: str) -> str | None:
    """Why an import without ``--replace`` or ``--ignore`` is refused: the keys of ``path`` already in the view."""
    keys = sorted({record["key"] for record in _bound(path) if record["key"] in there})
    if not keys:
        return None
    shown = ", ".join(keys[:5]) + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")
    return (
        f"{len(keys)} key{'s' * (len(keys) != 1)} of {path} already in the view of agent {agent!r} at {taint} "
        f"({shown}): nothing was imported; --replace saves a new version where a record differs, --ignore skips them"
    )


def _bound(path: Path) -> Iterator[dict[str, Any]]:
    for _number, record in read_records(path):
        yield tooldefs.bind("memory_save", record)


def _skipped(record: dict[str, Any], there: dict[str, tuple[str, tuple[str, ...]]], mode: str | None) -> bool:
    """Whether ``--ignore`` (a key already there) or ``--replace`` (a record that would change nothing) skips it."""
    if mode is None or not there:
        return False
    bound = tooldefs.bind("memory_save", record)
    held = there.get(bound["key"])
    if held is None:
        return False
    return mode == "ignore" or held == (bound["content"], tuple(bound["tags"]))


def _save(session, batch: list[Any], progress: tqdm) -> int:
    """Save one batch in one transaction (the results are not kept: an import may hold millions)."""
    if not batch:
        return 0
    saved = len(session.memory_save_many(batch, batch_size=len(batch)))
    progress.update(saved)
    batch.clear()
    return saved
