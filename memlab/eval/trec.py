"""The TREC-style loader: a folder of ``docs.jsonl``, ``queries.jsonl`` and ``qrels``."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from memlab import arguments
from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection, CollectionError, Document, Query

__all__ = ["load_trec", "wordless_key", "TREC_FILES", "TREC_AGENT"]

TREC_FILES = ("docs.jsonl", "queries.jsonl", "qrels")
TREC_AGENT = "main"
_SHOWN = 5  # unknown ids named in an error message
_INTEGER = re.compile(r"[+-]?\d+")
# One symbol per hexadecimal digit: none is a letter, a digit or whitespace, none needs quoting in JSON.
_WORDLESS = str.maketrans("0123456789abcdef", "!#$%&*+-.:;=?@^~")


def load_trec(folder: str | Path, *, name: str | None = None) -> Collection:
    """Load a TREC-style folder: ``docs.jsonl``, ``queries.jsonl`` and ``qrels`` (docs/relevance-lab.md's table).

    ``docs.jsonl`` holds one ``{"id", "text"}`` object a line; optional: ``"agent"``, the namespace the document
    is saved in as a memory (default ``"main"``); ``"key"``, its memory key, unique within the agent (by default
    ``wordless_key(id)``, so the id's words are not searchable text); ``"tags"``, a list of strings;
    ``"source"``, the text the document came from; ``"occurred_at"``, an ISO 8601 date or date-time.
    ``queries.jsonl`` holds ``{"id", "text"}`` objects; optional: ``"agent"``, the namespace searched (default
    ``"main"``; it must have documents) and ``"category"``, the kind of question, for per-category results.
    ``qrels`` holds ``query-id 0 document-id relevance`` lines; relevance <= 0 means not relevant and is dropped.
    Blank lines are skipped (but counted in line numbers); a field given as ``null`` is absent. Ids must not
    contain whitespace, which separates the qrels fields.

    Args:
        folder: The folder holding the three files.
        name: The collection's name; by default the folder's name.

    Returns:
        The collection; queries with no relevant document stay in ``queries`` with no qrels entry.

    Raises:
        CollectionError: a missing file, a malformed line (named by file, line and field), a duplicate id, a
            duplicate key within an agent, an id, agent, key or category that is not a valid name, a query in an
            agent with no documents, or qrels naming unknown documents or queries or judging a document of
            another agent relevant.

    Examples:
        >>> load_trec("tests/fixtures/trec-agents").summary()["queries_per_category"]
        {'open-domain': 1, 'single-hop': 4, 'temporal': 2}
    """
    folder = Path(folder)
    missing = [file for file in TREC_FILES if not (folder / file).is_file()]
    if missing:
        raise CollectionError(
            f"{folder} has no {', '.join(missing)}; a TREC-style collection folder holds {', '.join(TREC_FILES)}"
        )
    documents = list(_documents(folder / "docs.jsonl"))
    queries = list(_queries(folder / "queries.jsonl", {document.agent for document in documents}))
    qrels = _read_qrels(
        folder / "qrels",
        {document.id: document.agent for document in documents},
        {query.id: query.agent for query in queries},
    )
    return Collection(name or folder.resolve().name, documents, queries, qrels)


def wordless_key(doc_id: str) -> str:
    """The memory key of a document that names none: made from its id, with no letter or digit in it.

    Every analyzer's query terms are letters and digits (``memlab.search.query.WORD``), so no query can match
    this key, and FTS5's ``unicode61`` and ``porter`` index no term for it (the row's length is its text's):
    the id stays out of the searchable text. It spells 64 bits of the id's SHA-256 in 16 symbols, after ``#``.

    Examples:
        >>> wordless_key("caroline/session-1/3")
        '#.&:@~@~^#%$=^#;^'
    """
    digest = hashlib.sha256(doc_id.encode("utf-8")).hexdigest()[:16]
    return "#" + digest.translate(_WORDLESS)


def _documents(path: Path) -> Iterator[Document]:
    first_key: dict[tuple[str, str], str] = {}
    for where, doc_id, record in _unique(_json_lines(path), "document", _document_id):
        agent = _named(record, "agent", where, arguments.agent, "is not a valid agent name") or TREC_AGENT
        key = _named(record, "key", where, arguments.key, "is not a valid memory key") or wordless_key(doc_id)
        if (agent, key) in first_key:
            raise CollectionError(
                f'{where}: duplicate "key" {key!r} in agent {agent!r} (first at {first_key[agent, key]})'
            )
        first_key[agent, key] = where
        try:
            tags = arguments.tags(record.get("tags"))
            source, occurred_at = (
                arguments.source(record.get("source")),
                arguments.occurred_at(record.get("occurred_at")),
            )
        except InvalidArgument as error:
            raise CollectionError(f"{where}: {error}") from error
        yield Document(doc_id, agent, key, _field(record, "text", where), tags, source, occurred_at)


def _queries(path: Path, agents: set[str]) -> Iterator[Query]:
    for where, query_id, record in _unique(_json_lines(path), "query", _id):
        agent = _named(record, "agent", where, arguments.agent, "is not a valid agent name") or TREC_AGENT
        if agent not in agents:
            raise CollectionError(
                f'{where}: "agent" {agent!r} has no documents in docs.jsonl, so the query could find nothing '
                f"(agents there: {', '.join(sorted(agents)) or 'none'})"
            )
        # A category is a label like a tag: the rules of tags (memlab.arguments) keep it printable and short.
        category = _named(record, "category", where, arguments.tag, "must follow the rules of tags")
        yield Query(query_id, agent, _field(record, "text", where), category)


def _named(
    record: dict[str, Any], name: str, where: str, validate: Callable[[Any], str | None], rule: str
) -> str | None:
    """The optional field ``name`` checked by one of memlab's name rules; None when absent or null."""
    if record.get(name) is None:
        return None
    try:
        return validate(record[name])
    except InvalidArgument as error:
        raise CollectionError(f'{where}: "{name}" {rule}: {error}') from error


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
    """An id that also follows the rules of memory keys (no control or format characters, at most 256)."""
    doc_id = _id(record, where)
    _named(record, "id", where, arguments.key, "must follow the rules of memory keys")
    return doc_id


def _read_qrels(path: Path, documents: dict[str, str], queries: dict[str, str]) -> dict[str, dict[str, int]]:
    """The judgments, relevant ones only; ``documents`` and ``queries`` map each id to its agent."""
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
            if query_id in queries and doc_id in documents and documents[doc_id] != queries[query_id]:
                raise CollectionError(
                    f"{where}: query {query_id!r} of agent {queries[query_id]!r} judges document {doc_id!r} of "
                    f"agent {documents[doc_id]!r} relevant, but a query searches only its own agent's memories"
                )
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
