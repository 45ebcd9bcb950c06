"""The TREC-style loader: a folder of ``docs.jsonl``, ``queries.jsonl`` and ``qrels``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memlab import arguments
from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection, CollectionError, Document, Query, checked_key

__all__ = ["load_trec", "TREC_FILES", "TREC_AGENT"]

TREC_FILES = ("docs.jsonl", "queries.jsonl", "qrels")
TREC_AGENT = "main"
_SHOWN = 5  # unknown ids named in an error message
_INTEGER = re.compile(r"[+-]?\d+")


def load_trec(folder: str | Path, *, name: str | None = None) -> Collection:
    """Load a TREC-style folder: ``docs.jsonl``, ``queries.jsonl`` and ``qrels``, all for the agent ``"main"``.

    ``docs.jsonl`` holds one ``{"id", "text"}`` object a line (optional: ``"tags"``, a list of strings;
    ``"source"``, the text the document came from; ``"occurred_at"``, an ISO 8601 date or date-time); the id is
    also the memory key. ``queries.jsonl`` holds ``{"id", "text"}`` objects. ``qrels`` holds
    ``query-id 0 document-id relevance`` lines; relevance <= 0 means not relevant and is dropped. Blank lines are
    skipped (but counted in line numbers). Ids must not contain whitespace, which separates the qrels fields.

    Args:
        folder: The folder holding the three files.
        name: The collection's name; by default the folder's name.

    Returns:
        The collection; queries with no relevant document stay in ``queries`` with no qrels entry.

    Raises:
        CollectionError: a missing file, a malformed line (named by file and line), a duplicate id, a document id
            that is not a valid memory key, or qrels naming unknown documents or queries.

    Examples:
        >>> load_trec("tests/fixtures/trec-tiny").summary()["documents"]
        7
    """
    folder = Path(folder)
    missing = [file for file in TREC_FILES if not (folder / file).is_file()]
    if missing:
        raise CollectionError(
            f"{folder} has no {', '.join(missing)}; a TREC-style collection folder holds {', '.join(TREC_FILES)}"
        )
    documents = []
    for where, doc_id, record in _unique(_json_lines(folder / "docs.jsonl"), "document", _document_id):
        try:
            tags = arguments.tags(record.get("tags"))
            source, occurred_at = (
                arguments.source(record.get("source")),
                arguments.occurred_at(record.get("occurred_at")),
            )
        except InvalidArgument as error:
            raise CollectionError(f"{where}: {error}") from error
        documents.append(Document(doc_id, TREC_AGENT, doc_id, _field(record, "text", where), tags, source, occurred_at))
    queries = [
        Query(query_id, TREC_AGENT, _field(record, "text", where))
        for where, query_id, record in _unique(_json_lines(folder / "queries.jsonl"), "query", _id)
    ]
    qrels = _read_qrels(folder / "qrels", {d.id for d in documents}, {q.id for q in queries})
    return Collection(name or folder.resolve().name, documents, queries, qrels)


def _lines(path: Path) -> Iterator[tuple[str, str]]:
    """Each non-blank line with where it is ("qrels line 3"); bytes are split so U+2028 stays inside JSON."""
    for number, raw in enumerate(path.read_bytes().splitlines(), start=1):
        where = f"{path.name} line {number}"
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise CollectionError(f"{where}: not UTF-8 text ({error.reason})") from error
        if line.strip():
            yield where, line


def _json_lines(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for where, line in _lines(path):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise CollectionError(f"{where}: not valid JSON ({error.msg} at column {error.colno})") from error
        if not isinstance(record, dict):
            raise CollectionError(f"{where}: must be a JSON object, not {type(record).__name__}")
        yield where, record


def _unique(
    records: Iterator[tuple[str, dict[str, Any]]], kind: str, read_id: Callable[[dict[str, Any], str], str]
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    first_seen: dict[str, str] = {}
    for where, record in records:
        record_id = read_id(record, where)
        if record_id in first_seen:
            raise CollectionError(f"{where}: duplicate {kind} id {record_id!r} (first at {first_seen[record_id]})")
        first_seen[record_id] = where
        yield where, record_id, record


def _field(record: dict[str, Any], name: str, where: str) -> str:
    if name not in record:
        raise CollectionError(f'{where}: no "{name}"')
    value = record[name]
    if not isinstance(value, str):
        raise CollectionError(f'{where}: "{name}" must be a string, not {type(value).__name__}')
    if not value.strip():
        raise CollectionError(f'{where}: "{name}" is empty')
    return value


def _id(record: dict[str, Any], where: str) -> str:
    value = _field(record, "id", where)
    if any(char.isspace() for char in value):
        raise CollectionError(f"{where}: id {value!r} contains whitespace, so no qrels line could name it")
    return value


def _document_id(record: dict[str, Any], where: str) -> str:
    """A document id is also its memory key, so it must pass the key rules first."""
    checked_key(_field(record, "id", where), where)
    return _id(record, where)


def _read_qrels(path: Path, documents: set[str], queries: set[str]) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    first_seen: dict[tuple[str, str], str] = {}
    unknown: dict[str, dict[str, None]] = {"document": {}, "query": {}}  # ordered sets
    for where, line in _lines(path):
        fields = line.split()
        if len(fields) != 4:
            raise CollectionError(f"{where}: expected 4 fields 'query-id 0 document-id relevance', found {len(fields)}")
        query_id, _, doc_id, relevance = fields
        if not _INTEGER.fullmatch(relevance):
            raise CollectionError(f"{where}: relevance {relevance!r} is not an integer")
        if (query_id, doc_id) in first_seen:
            raise CollectionError(
                f"{where}: query {query_id!r} and document {doc_id!r} are judged twice "
                f"(first at {first_seen[query_id, doc_id]})"
            )
        first_seen[query_id, doc_id] = where
        if query_id not in queries:
            unknown["query"][query_id] = None
        if doc_id not in documents:
            unknown["document"][doc_id] = None
        if int(relevance) >= 1:
            qrels.setdefault(query_id, {})[doc_id] = int(relevance)
    problems = [
        f"{len(ids)} unknown {kind} id{'s' if len(ids) > 1 else ''} ({', '.join(map(repr, list(ids)[:_SHOWN]))}"
        f"{', ...' if len(ids) > _SHOWN else ''})"
        for kind, ids in unknown.items()
        if ids
    ]
    if problems:
        raise CollectionError(f"{path.name} names {' and '.join(problems)}")
    return qrels
