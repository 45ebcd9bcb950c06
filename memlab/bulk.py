"""``memlab import``: a JSON Lines file into one agent at one taint, checked whole before anything is written.

Each line holds one record, ``{"key": ..., "content": ..., "tags": [...]}`` (``tags`` optional, as are the context
fields ``source`` and ``occurred_at``); blank lines are skipped. The file is read twice: first every line is parsed
(a line that is not JSON, nests too deeply, or names a field twice is bad: JSON would keep the last of two ``key``
fields while a reader sees the first) and validated like a single save, and every bad line is reported as
``FILE:LINE: what is wrong`` with nothing written; then the records are saved through ``Session.memory_save_many``,
one transaction per batch, with a progress bar.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from memlab import cli_output, tooldefs
from memlab.errors import InvalidArgument, MemlabError

__all__ = ["read_records", "parse_line", "check_file", "run_import"]

MAX_REPORTED = 20


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
        return json.loads(line, object_pairs_hook=_object)
    except json.JSONDecodeError as error:
        raise InvalidArgument(f"not JSON ({error.msg}, column {error.colno})") from None
    except RecursionError:
        raise InvalidArgument("nested too deeply to be a record") from None


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object, refused when a name appears twice (json keeps the last: a reader sees the first)."""
    record = dict(pairs)
    if len(record) < len(pairs):
        names = [name for name, _ in pairs]
        twice = next(name for index, name in enumerate(names) if name in names[:index])
        raise InvalidArgument(f"the name {twice!r} appears twice in one object")
    return record


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open(encoding="utf-8", errors="strict") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                yield number, line


def check_file(path: Path) -> tuple[int, list[str]]:
    """Validate every record of ``path``; return how many there are and the problems (``FILE:LINE: ...``)."""
    problems: list[str] = []
    count = 0
    try:
        for number, line in _lines(path):
            count += 1
            try:
                record = parse_line(line)
                if not isinstance(record, dict):
                    raise InvalidArgument(f"a record must be an object, not {type(record).__name__}")
                tooldefs.bind("memory_save", record)
            except InvalidArgument as error:
                problems.append(f"{path}:{number}: {error}")
    except UnicodeDecodeError as error:  # the file is not text: there are no lines to go on with
        problems.append(f"{path}: not UTF-8 text (byte {error.start})")
    return count, problems


def run_import(args: argparse.Namespace) -> int:
    """The ``memlab import`` command; returns the exit status (1: bad records, 2: cannot open or read).

    ``--taint`` has no default: it is the level of every imported memory, and a default of PUBLIC would make
    internal notes readable by every session.
    """
    from memlab.levels import Level
    from memlab.store import MemoryStore

    path = cli_output.input_file(args.file)
    if not path.is_file():
        print(f"memlab import: {path} is not a file", file=sys.stderr)
        return 2
    count, problems = check_file(path)
    if problems and args.json:
        cli_output.print_json({"file": str(path), "records": count, "bad": len(problems), "problems": problems})
        return 1
    if problems:
        for problem in problems[:MAX_REPORTED]:
            print(problem, file=sys.stderr)
        more = f" (and {len(problems) - MAX_REPORTED} more)" if len(problems) > MAX_REPORTED else ""
        print(f"memlab import: {len(problems)} bad records{more}; nothing was imported", file=sys.stderr)
        return 1
    try:
        taint = Level.parse(args.taint)
        store = cli_output.from_environment(
            args, "db", lambda db: MemoryStore(db, policy=args.policy, analyzer=args.analyzer)
        )
    except MemlabError as error:
        print(f"memlab import: {error}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    with store, cli_output.progress(count, path.name, unit="memory") as progress:
        try:
            session = store.session(taint, args.agent)
            saved = 0
            batch: list[Any] = []
            for _number, record in read_records(path):
                batch.append(record)
                if len(batch) == args.batch_size:
                    saved += _save(session, batch, progress)
            saved += _save(session, batch, progress)
        except MemlabError as error:
            print(f"memlab import: {error}", file=sys.stderr)
            return 2
    elapsed = time.perf_counter() - started
    if args.json:
        imported = {"imported": saved, "agent": args.agent, "taint": taint, "session": session.id, "seconds": elapsed}
        cli_output.print_json(imported)
        return 0
    print(
        f"imported {saved:,} memories into agent {args.agent!r} at {taint.name} "
        f"(session {session.id}) in {elapsed:.1f} s"
    )
    return 0


def _save(session, batch: list[Any], progress: tqdm) -> int:
    """Save one batch in one transaction (the results are not kept: an import may hold millions)."""
    if not batch:
        return 0
    saved = len(session.memory_save_many(batch, batch_size=len(batch)))
    progress.update(saved)
    batch.clear()
    return saved
