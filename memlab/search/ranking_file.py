"""Ranking files: a tuned ``Ranking`` as JSON, with what it was tuned on and the figures it was chosen on.

A file written by ``Ranking.save`` (and by ``memlab eval --tune --save ranking.json``)::

    {"format": "memlab-ranking", "version": 1,
     "ranking": {"key": 1.0, "content": 1.0, "tags": 1.0, "source": 0.5, "when": 1.0,
                 "tag_boost": 2.0, "lexical": 1.0, "dense": 0.0, "fusion_k": 1.0},
     "tuned_on": {"collection": "...", "documents": 7, "queries": 5, "date": "2026-12-01", ...},
     "figures": {...}}

``read`` trusts nothing in it: every one of the nine parameters must be present, nothing else may be, and each
must be a finite number in ``[0, MAX_WEIGHT]``; a file of a newer format version is refused rather than half
understood. Each refusal is a ``RankingFileError`` naming the file and the field. A ranking orders what a
session may see and nothing else, so whatever a file holds cannot widen a session's view.

Examples:
    >>> path = Ranking(tag_boost=4.0).save(tmp / "ranking.json", tuned_on={"collection": "mine"})
    >>> Ranking.load(path).tag_boost
    4.0
    >>> _ = path.write_text('{"format": "memlab-ranking", "version": 99, "ranking": {}}')
    >>> Ranking.load(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    memlab.search.ranking_file.RankingFileError: ...ranking.json: version: format version 99 is newer...
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from memlab.errors import InvalidArgument
from memlab.search.ranking import MAX_WEIGHT, Ranking, _in_range

__all__ = ["FORMAT", "VERSION", "RankingFile", "RankingFileError", "read", "write"]

FORMAT = "memlab-ranking"
VERSION = 1
REQUIRED = ("format", "version", "ranking")
OPTIONAL = ("tuned_on", "figures")
PARAMETERS = tuple(field.name for field in fields(Ranking))


class RankingFileError(InvalidArgument):
    """A ranking file memlab cannot use; ``path`` and ``field`` (``None`` for the file as a whole) say where."""

    def __init__(self, path: Path, field: str | None, problem: str) -> None:
        self.path, self.field = path, field
        super().__init__(f"{path}: {field}: {problem}" if field else f"{path}: {problem}")


@dataclass(frozen=True)
class RankingFile:
    """What a ranking file holds: the ranking, its format version, what it was tuned on and its figures."""

    ranking: Ranking
    version: int
    tuned_on: dict[str, Any] | None
    figures: Any


def write(ranking: Ranking, path: Path, *, tuned_on: dict[str, Any] | None = None, figures: Any = None) -> Path:
    """Write ``ranking`` to ``path`` whole or not at all (a temporary file renamed over it); returns ``path``."""
    if tuned_on is not None and not isinstance(tuned_on, dict):
        raise InvalidArgument(f"tuned_on must be a dict or None, not {type(tuned_on).__name__}")
    document = {"format": FORMAT, "version": VERSION, "ranking": ranking.as_dict()}
    document |= {name: value for name, value in (("tuned_on", tuned_on), ("figures", figures)) if value is not None}
    try:
        text = json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    except (TypeError, ValueError) as error:
        raise InvalidArgument(
            f"cannot write {path}: tuned_on and figures must be plain finite JSON ({error})"
        ) from None
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise InvalidArgument(f"cannot write {path}: {error.strerror}") from None
    return path


def read(path: Path) -> RankingFile:
    """Read and check a ranking file; see the module docstring for what is refused."""
    document = _document(path)
    for name in REQUIRED:
        if name not in document:
            raise RankingFileError(path, name, f"missing; a ranking file holds {', '.join(REQUIRED)}")
    if document["format"] != FORMAT:
        raise RankingFileError(path, "format", f"is {document['format']!r}, not {FORMAT!r}: not a ranking file")
    version = document["version"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise RankingFileError(path, "version", f"must be a positive integer, not {version!r}")
    if version > VERSION:
        raise RankingFileError(
            path, "version", f"format version {version} is newer than this memlab reads ({VERSION}): upgrade memlab"
        )
    unknown = sorted(set(document) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise RankingFileError(
            path, unknown[0], f"unknown field; a ranking file holds {', '.join(REQUIRED + OPTIONAL)}"
        )
    tuned_on = document.get("tuned_on")
    if tuned_on is not None and not isinstance(tuned_on, dict):
        raise RankingFileError(path, "tuned_on", f"must be an object, not {type(tuned_on).__name__}")
    return RankingFile(_ranking(path, document["ranking"]), version, tuned_on, document.get("figures"))


def _document(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RankingFileError(path, None, "no such file") from None
    except UnicodeDecodeError:
        raise RankingFileError(path, None, "not UTF-8 text: not a ranking file") from None
    except OSError as error:
        raise RankingFileError(path, None, f"cannot be read ({error.strerror})") from None
    try:
        document = json.loads(text, object_pairs_hook=lambda pairs: _object(path, pairs))
    except json.JSONDecodeError as error:
        raise RankingFileError(
            path, None, f"not JSON ({error.msg} at line {error.lineno} column {error.colno})"
        ) from None
    except RecursionError:
        raise RankingFileError(path, None, "not a ranking file: JSON nested too deeply") from None
    if not isinstance(document, dict):
        raise RankingFileError(path, None, f"not a ranking file: a JSON object is expected, not {_kind(document)}")
    return document


def _object(path: Path, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # JSON keeps the last of two equal names while a reader of the file sees the first: neither is trusted.
    names = [name for name, _ in pairs]
    for name in names:
        if names.count(name) > 1:
            raise RankingFileError(path, name, "appears twice in one object")
    return dict(pairs)


def _ranking(path: Path, values: Any) -> Ranking:
    if not isinstance(values, dict):
        raise RankingFileError(path, "ranking", f"must be an object of parameters, not {_kind(values)}")
    for name in PARAMETERS:
        if name not in values:
            raise RankingFileError(path, f"ranking.{name}", f"missing; a ranking holds {', '.join(PARAMETERS)}")
    unknown = sorted(set(values) - set(PARAMETERS))
    if unknown:
        raise RankingFileError(
            path, f"ranking.{unknown[0]}", f"unknown parameter; a ranking holds {', '.join(PARAMETERS)}"
        )
    for name in PARAMETERS:
        if not _in_range(values[name]):
            raise RankingFileError(
                path, f"ranking.{name}", f"must be a finite number in [0, {MAX_WEIGHT:g}], not {values[name]!r}"
            )
    try:
        return Ranking(**{name: float(values[name]) for name in PARAMETERS})
    except InvalidArgument as error:
        raise RankingFileError(path, "ranking", str(error)) from None


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")
