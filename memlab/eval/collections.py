"""Test collections for the relevance lab: documents to load as memories, queries to run, relevance judgments.

Two sources: the LoCoMo benchmark bundled at ``data/locomo10.json`` (``load_locomo``) and a TREC-style folder
of ``docs.jsonl``, ``queries.jsonl`` and ``qrels`` (``load_trec``).
"""

from __future__ import annotations

import datetime
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memlab import arguments
from memlab.errors import InvalidArgument

__all__ = ["CollectionError", "Document", "Query", "Collection", "load_locomo", "load_trec"]

LOCOMO_PATH = Path("data") / "locomo10.json"
LOCOMO_CATEGORIES = (1, 2, 3, 4)
TREC_FILES = ("docs.jsonl", "queries.jsonl", "qrels")
TREC_AGENT = "main"
_SHOWN = 5  # unknown ids named in an error message

# LoCoMo's dialog ids look like "D1:3", but some are not clean. In questions' evidence: "D8:6; D9:17" and
# "D9:1 D4:4 D4:6" (several ids in one string; four questions), "D:11:26" (a stray colon), "D30:05" (a leading
# zero) and a bare "D". In observations: ten cite a list of ids and five cite several in one string
# ("D26:14, D26:34, D26:42"). So each string is split on ';', ',' and whitespace, each piece is read as
# D<session>:<turn> with the stray colon allowed and the numbers normalised ("D30:05" then matches an
# observation; no observation cites D11:26), and a piece that is no dialog id (the bare "D") is dropped.
_DIA_SEPARATORS = re.compile(r"[;,\s]+")
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_SESSION = re.compile(r"session_(\d+)_observation")
_DIALOG_SESSION = re.compile(r"session_(\d+)")
LOCOMO_AROUND = 2
_INTEGER = re.compile(r"[+-]?\d+")


class CollectionError(InvalidArgument):
    """A collection's files are missing or malformed."""


@dataclass(frozen=True)
class Document:
    """One memory, saved before the queries run.

    Attributes:
        id: Unique within the collection; qrels name documents by it.
        agent: The memory namespace the document is loaded into.
        key: The memory key (a valid memlab key, unique within the agent).
        text: The memory's content.
        tags: The memory's tags.
        source: The message(s) the memory was taken from, if the collection has them.
        occurred_at: When what it says happened (ISO 8601), if the collection knows.
    """

    id: str
    agent: str
    key: str
    text: str
    tags: tuple[str, ...] = ()
    source: str | None = None
    occurred_at: str | None = None

    def record(self, *, context: bool = True) -> dict[str, Any]:
        """The ``memory_save`` arguments that save this document (with its context, unless ``context=False``)."""
        record: dict[str, Any] = {"key": self.key, "content": self.text, "tags": list(self.tags)}
        if context:
            record |= {
                name: value for name, value in (("source", self.source), ("occurred_at", self.occurred_at)) if value
            }
        return record


@dataclass(frozen=True)
class Query:
    """One search to run.

    Attributes:
        id: Unique within the collection; qrels name queries by it.
        agent: The memory namespace the query is run against.
        text: The query, in natural language.
        category: The kind of question, for per-category results (LoCoMo's "1" to "5"), or None.
    """

    id: str
    agent: str
    text: str
    category: str | None = None


@dataclass
class Collection:
    """Documents, queries and judgments, ready for an evaluation run.

    Attributes:
        name: What the collection is called in results.
        documents: The memories, in file order.
        queries: The queries, in file order; a query may have no relevant document (see the loaders).
        qrels: Query id -> {document id: relevance >= 1}; only queries with a relevant document have an entry.
    """

    name: str
    documents: list[Document]
    queries: list[Query]
    qrels: dict[str, dict[str, int]]

    def summary(self) -> dict[str, Any]:
        """Count what the collection holds.

        Returns:
            ``documents``, ``queries``, ``agents`` (distinct namespaces), ``queries_per_category`` (category ->
            count, uncategorised queries left out), ``judged_queries`` (queries with a relevant document) and
            ``judged_pairs`` (query-document pairs with relevance >= 1).

        Examples:
            >>> load_trec("tests/fixtures/trec-tiny").summary()["judged_pairs"]
            6
        """
        categories = Counter(query.category for query in self.queries if query.category is not None)
        return {
            "documents": len(self.documents),
            "queries": len(self.queries),
            "agents": len({item.agent for item in [*self.documents, *self.queries]}),
            "queries_per_category": dict(sorted(categories.items())),
            "judged_queries": len(self.qrels),
            "judged_pairs": sum(len(judged) for judged in self.qrels.values()),
        }


def load_locomo(
    path: str | Path = LOCOMO_PATH, *, categories: Iterable[int] = LOCOMO_CATEGORIES, around: int = LOCOMO_AROUND
) -> Collection:
    """Load LoCoMo: each sample's observations as one agent's memories, its questions as queries.

    A document is one observation, keyed ``"{speaker}/session-{N}/{i}"`` (speaker lower-cased, spaces as '-';
    ``i`` counts from 1 in that speaker's list for session N), with id ``"{sample_id}/{key}"`` and tags
    ``(speaker, "session-N")``. Its context is what a host saving it would know: ``source`` is the dialog
    turn(s) it cites and the ``around`` turns either side of each (``"Speaker: text"`` per turn, with an
    image's caption), ``occurred_at`` the session's date and time.

    A query is a question of the chosen categories that cites at least one dialog id as evidence, with id
    ``"{sample_id}/q{index in the sample's qa list}"``. An observation is relevant (1) to a question when it cites a
    dialog id of the question's evidence. The bundled file gives 2,541 documents and 1,536 queries of categories
    1-4, of which 224 cite only dialog turns that no observation cites: they stay in ``queries`` with no qrels
    entry, so measures count them as failures rather than dropping them.

    Args:
        path: The LoCoMo JSON file; by default ``data/locomo10.json`` relative to the working directory.
        categories: The question categories to keep (1-5; 5 is adversarial, meant to be unanswerable).
        around: How many dialog turns either side of a cited turn go into its ``source``.

    Returns:
        The collection, named ``"locomo"``.

    Raises:
        CollectionError: the file is missing, is not JSON, or is not laid out like LoCoMo.
        InvalidArgument: a category outside 1-5.

    Examples:
        >>> load_locomo().summary()["queries_per_category"]
        {'1': 282, '2': 321, '3': 92, '4': 841}
    """
    wanted = set(categories)
    if not wanted or not wanted <= {1, 2, 3, 4, 5}:
        raise InvalidArgument(f"categories must be some of 1, 2, 3, 4, 5, not {sorted(wanted, key=str)}")
    documents: list[Document] = []
    queries: list[Query] = []
    qrels: dict[str, dict[str, int]] = {}
    for sample in _read_locomo(Path(path)):
        agent = sample["sample_id"]
        citing: dict[str, list[str]] = {}  # dialog id -> ids of the observations citing it
        dialog = _Dialog(sample.get("conversation", {}), around)
        for document, dia_ids in _observations(agent, sample["observation"], dialog):
            documents.append(document)
            for dia_id in dia_ids:
                citing.setdefault(dia_id, []).append(document.id)
        for index, item in enumerate(sample["qa"]):
            evidence = _dia_ids(item.get("evidence", []))
            if item["category"] not in wanted or not evidence:
                continue
            query = Query(f"{agent}/q{index}", agent, item["question"], str(item["category"]))
            queries.append(query)
            relevant = {doc_id: 1 for dia_id in sorted(evidence) for doc_id in citing.get(dia_id, [])}
            if relevant:
                qrels[query.id] = relevant
    return Collection("locomo", documents, queries, qrels)


def _read_locomo(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise CollectionError(
            f"no LoCoMo file at {path}; it is expected at {LOCOMO_PATH} under the project root "
            "(run from there, or pass the path)"
        )
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CollectionError(f"{path} is not a LoCoMo file: {error}") from error
    expected = {"sample_id", "observation", "qa"}
    if not isinstance(samples, list) or not all(isinstance(s, dict) and expected <= s.keys() for s in samples):
        raise CollectionError(f"{path} is not a LoCoMo file: expected a list of samples with {sorted(expected)}")
    return samples


class _Dialog:
    """A LoCoMo conversation's turns in order, and its sessions' dates, for the observations' context."""

    def __init__(self, conversation: dict[str, Any], around: int) -> None:
        self.around = around
        self.turns: dict[str, str] = {}
        self.order: list[str] = []
        self.dates: dict[int, str] = {}
        for name, value in conversation.items():
            session = _DIALOG_SESSION.fullmatch(name)
            if session is None or not isinstance(value, list):
                continue
            for turn in value:
                for dia_id in sorted(_dia_ids(turn.get("dia_id", ""))):
                    caption = f" [image: {turn['blip_caption']}]" if turn.get("blip_caption") else ""
                    self.turns[dia_id] = f"{turn.get('speaker', '?')}: {turn.get('text', '')}{caption}"
                    self.order.append(dia_id)
            when = _session_date(conversation.get(f"{name}_date_time"))
            if when is not None:
                self.dates[int(session[1])] = when
        self.position = {dia_id: index for index, dia_id in enumerate(self.order)}

    def source(self, dia_ids: set[str]) -> str | None:
        """The cited turns in dialog order, then the turns around them (each once)."""
        cited = sorted((d for d in dia_ids if d in self.position), key=self.position.__getitem__)
        nearby = [
            self.order[index]
            for dia_id in cited
            for index in range(
                max(0, self.position[dia_id] - self.around),
                min(len(self.order), self.position[dia_id] + self.around + 1),
            )
        ]
        shown = list(dict.fromkeys([*cited, *nearby]))
        return " ".join(self.turns[dia_id] for dia_id in shown) or None


def _session_date(text: Any) -> str | None:
    """LoCoMo's "1:56 pm on 8 May, 2023" as ISO 8601; None when absent or unreadable."""
    try:
        return datetime.datetime.strptime(str(text).strip(), "%I:%M %p on %d %B, %Y").isoformat()
    except ValueError:
        return None


def _observations(agent: str, observation: dict[str, Any], dialog: _Dialog) -> Iterator[tuple[Document, set[str]]]:
    for session_name, by_speaker in observation.items():
        session = _SESSION.fullmatch(session_name)
        if session is None:
            raise CollectionError(f"sample {agent}: unexpected observation entry {session_name!r}")
        session_tag = f"session-{int(session[1])}"
        for speaker, observed in by_speaker.items():
            speaker_tag = speaker.strip().lower().replace(" ", "-")
            for number, (text, cited) in enumerate(observed, start=1):
                key = _checked_key(f"{speaker_tag}/{session_tag}/{number}", f"sample {agent}")
                dia_ids = _dia_ids(cited)
                yield (
                    Document(
                        f"{agent}/{key}",
                        agent,
                        key,
                        text,
                        (speaker_tag, session_tag),
                        dialog.source(dia_ids),
                        dialog.dates.get(int(session[1])),
                    ),
                    dia_ids,
                )


def _dia_ids(value: str | list[str]) -> set[str]:
    """The clean dialog ids in one evidence string or a list of them (see the note above ``_DIA_SEPARATORS``)."""
    found = set()
    for text in [value] if isinstance(value, str) else value:
        for piece in _DIA_SEPARATORS.split(text):
            match = _DIA_ID.fullmatch(piece)
            if match:
                found.add(f"D{int(match[1])}:{int(match[2])}")
    return found


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
    _checked_key(_field(record, "id", where), where)
    return _id(record, where)


def _checked_key(key: str, where: str) -> str:
    try:
        return arguments.key(key)
    except InvalidArgument as error:
        raise CollectionError(f"{where}: document id is not a valid memory key: {error}") from error


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
