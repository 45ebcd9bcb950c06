"""What every ``memlab`` command shares: exit codes, JSON on standard output, progress only on a terminal, a
closed pipe ending quietly, defaults from the environment and ``-`` for standard input."""

from __future__ import annotations

import argparse
import dataclasses
import enum
import functools
import json
import math
import os
import shutil
import sys
import tempfile
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from memlab.errors import InvalidArgument, MemlabError
from memlab.labels import Label

__all__ = [
    "EXIT_CODES",
    "exit_codes_text",
    "HelpFormatter",
    "Names",
    "print_json",
    "jsonable",
    "progress",
    "quiet_on_closed_pipe",
    "from_environment",
    "defaults_from_environment",
    "StandardInput",
    "input_file",
    "verbosity",
    "note",
    "detail",
]

EXIT_CODES = {
    0: "ok",
    1: "the check failed: verify found the store broken, check found a leak where none was expected, "
    "import found bad records, get found no memory under the key",
    2: "usage (a bad flag or value), a refused store, or an import of keys already there without --replace or "
    "--ignore: nothing was written",
    141: "standard output was closed early (memlab ... | head): output stopped quietly, as SIGPIPE ends a program",
}
"""The exit status of every command and what it means (the help's epilog and docs/reference.md show this)."""

T = TypeVar("T")


def exit_codes_text() -> str:
    """The exit codes as the help's epilog prints them.

    Examples:
        >>> print(exit_codes_text().splitlines()[1])
          0    ok
    """
    rows = (
        textwrap.fill(meaning, 100, initial_indent=f"  {code:<4} ", subsequent_indent=" " * 7)
        for code, meaning in EXIT_CODES.items()
    )
    return "exit status:\n" + "\n".join(rows)


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """The help as written (description and epilog keep their lines), flag help never split inside a hyphenated
    name (``shadow-after-match``)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)


class Names(Sequence[str]):
    """Allowed values read from a registry when first needed (help, or checking a value), not when the parser is
    built: what they come from may be slow to import (``memlab.check`` loads pandas), and ``memlab serve`` must not
    pay for it. A value may list several, comma-separated."""

    def __init__(self, read: Callable[[], Sequence[str]]) -> None:
        self._read = read

    @functools.cached_property
    def _names(self) -> tuple[str, ...]:
        return tuple(self._read())

    def __getitem__(self, index):  # type: ignore[override]
        return self._names[index]

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and all(part in self._names for part in value.split(","))


def jsonable(value: Any) -> Any:
    """``value`` as JSON values: objects through their ``as_dict``/``to_dict``, dataclasses field by field, tables
    as records, levels and labels as written, paths as text, NaN and missing cells as null.

    Examples:
        >>> from memlab.levels import Level
        >>> jsonable({"taint": Level.INTERNAL, "label": Label.parse("confidential:hr"), "score": float("nan")})
        {'taint': 'INTERNAL', 'label': 'CONFIDENTIAL:hr', 'score': None}
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, Label):
        return str(value)  # as the audit and the CLI write it: CONFIDENTIAL, CONFIDENTIAL:hr
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(name): jsonable(item) for name, item in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(item) for item in value]
    for method in ("as_dict", "to_dict"):
        if callable(getattr(value, method, None)) and not _is_frame(value):
            return jsonable(getattr(value, method)())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {field.name: jsonable(getattr(value, field.name)) for field in dataclasses.fields(value)}
    if _is_frame(value):
        # pandas writes its own scalars (numpy numbers, NA, timestamps) as JSON; the records are read back.
        named = any(name is not None for name in value.index.names)  # a row label (eval's "row") is a field
        frame = value.reset_index() if named else value
        return json.loads(frame.to_json(orient="records", date_format="iso"))
    if hasattr(value, "item"):  # a numpy scalar
        return jsonable(value.item())
    return str(value)


def _is_frame(value: Any) -> bool:
    return type(value).__name__ == "DataFrame" and hasattr(value, "to_json")


def print_json(document: Any) -> None:
    """Print ``document`` as one JSON document on standard output (the only thing a ``--json`` run prints there)."""
    print(json.dumps(jsonable(document), indent=2, ensure_ascii=False, allow_nan=False))


QUIET = False
"""Set by ``-q`` for the run: no progress bar, no notes (``main`` sets it from the command's flags)."""


def progress(total: int, description: str, unit: str = "it"):
    """A progress bar on standard error when it is a terminal and ``-q`` was not given; nothing (no ``\\r`` in a
    log) otherwise."""
    from tqdm.auto import tqdm

    shown = sys.stderr.isatty() and not QUIET
    return tqdm(total=total, desc=description, unit=unit, file=sys.stderr, disable=not shown)


def verbosity(args: argparse.Namespace) -> int:
    """How much a command says beside its result: -1 with ``-q`` (errors only), 0 by default, 1 or more with
    ``-v`` (``-vv``: more).

    Examples:
        >>> verbosity(argparse.Namespace(quiet=False, verbose=2)), verbosity(argparse.Namespace(quiet=True, verbose=0))
        (2, -1)
    """
    return -1 if getattr(args, "quiet", False) else getattr(args, "verbose", 0)


def note(args: argparse.Namespace, message: str) -> None:
    """``memlab COMMAND: message`` on standard error, unless ``-q``: what a person should know beside the result."""
    if verbosity(args) >= 0:
        print(f"memlab {args.command}: {message}", file=sys.stderr)


def detail(args: argparse.Namespace, message: str) -> None:
    """``memlab COMMAND: message`` on standard error with ``-v`` only: how the result came about."""
    if verbosity(args) > 0:
        print(f"memlab {args.command}: {message}", file=sys.stderr)


def quiet_on_closed_pipe(command: Callable[..., int]) -> Callable[..., int]:
    """Wrap a command so that a reader closing standard output early (``memlab ... | head -1``) ends it quietly
    with status 141, as SIGPIPE ends other programs, instead of a BrokenPipeError traceback."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> int:
        try:
            try:
                status = command(*args, **kwargs)
            finally:  # also after --help's SystemExit: a closed pipe shows here, not in the interpreter's last flush
                sys.stdout.flush()
        except BrokenPipeError:
            _discard_stdout()
            return 141
        return status

    return run


def _discard_stdout() -> None:
    """Point standard output at the null device, so the interpreter's last flush of what is buffered succeeds."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (a test's capture): nothing left to flush
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, descriptor)
    os.close(null)


def defaults_from_environment(args: argparse.Namespace, error: Callable[[str], object]) -> None:
    """Fill the flags left out from the environment variables their command names (``args.environment``: flag
    -> (variable, fallback)), noting where each came from in ``args.origins``; a flag given wins.

    A variable set but empty is refused (``error``: the command's usage error, exit 2): an empty MEMLAB_DB must
    not quietly become an in-memory store. A flag neither given nor set, without a fallback, is refused too.
    """
    args.origins = {}
    for flag, (variable, fallback) in getattr(args, "environment", {}).items():
        if getattr(args, flag) is not None:
            continue
        value = os.environ.get(variable)
        if value is not None and not value.strip():
            error(f"{variable} is set but empty: name a value or unset it")
        if value is not None:
            setattr(args, flag, value)
            args.origins[flag] = variable
        elif fallback is not None:
            setattr(args, flag, fallback)
        else:
            error(f"{_flag_name(flag)} is required (or set {variable})")


def _flag_name(flag: str) -> str:
    return "the store path" if flag == "path" else f"--{flag.replace('_', '-')}"


def from_environment(args: argparse.Namespace, flag: str, use: Callable[[Any], T]) -> T:
    """``use(args.<flag>)``; when it refuses a value taken from the environment, the error names the variable.

    Examples:
        >>> from memlab.levels import Level
        >>> args = argparse.Namespace(taint="SECRET", origins={"taint": "MEMLAB_TAINT"})
        >>> from_environment(args, "taint", Level.parse)
        Traceback (most recent call last):
        ...
        memlab.errors.InvalidArgument: unknown level 'SECRET'; expected one of ... (MEMLAB_TAINT='SECRET')
    """
    value = getattr(args, flag)
    try:
        return use(value)
    except MemlabError as error:
        variable = getattr(args, "origins", {}).get(flag)
        if variable is None:
            raise
        raise InvalidArgument(f"{error} ({variable}={value!r})") from None


class StandardInput:
    """``-`` as an input file: standard input, copied once to a temporary file (an import reads its file twice:
    checked whole, then saved), named ``<stdin>`` in messages; the copy is removed when this object goes."""

    name = "<stdin>"

    def __init__(self) -> None:
        self._copy: Any = None

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return "StandardInput()"

    def is_file(self) -> bool:
        return True

    def open(self, mode: str = "r", **options: Any):
        """A new stream over what standard input held (text unless ``mode`` says ``b``)."""
        if self._copy is None:
            self._copy = tempfile.NamedTemporaryFile(prefix="memlab-stdin-", suffix=".jsonl")
            source = getattr(sys.stdin, "buffer", None)
            if source is not None:
                shutil.copyfileobj(source, self._copy)
            else:  # a text stream without bytes beneath (a test's StringIO)
                self._copy.write(sys.stdin.read().encode("utf-8"))
            self._copy.flush()
        return open(self._copy.name, mode, **options)


def input_file(name: str | Path | StandardInput) -> Path | StandardInput:
    """The input a command names: ``-`` is standard input, anything else a path."""
    if isinstance(name, StandardInput | Path):
        return name
    return StandardInput() if name == "-" else Path(name)
