"""Benchmark memlab against raw ``sqlite3`` doing the equivalent work on the same data.

For each size N the script builds two file databases in a temporary directory from the same
deterministic corpus (N memories of ~30 words drawn from a Zipf-distributed pseudo-word vocabulary,
keys ``note-{i}``, levels PUBLIC/INTERNAL/CONFIDENTIAL by ``i % 3``, one or two tags each):

* memlab: loaded through real ``memory_save`` calls from three sessions (one per level);
* raw: one plain ``memories`` table (index on ``key``) plus one FTS5 table over all rows
  (``tokenize='porter unicode61'``, no level separation), loaded with ``executemany`` in batches.

It then measures, interleaving memlab and raw call by call so drift hits both alike:

* single saves on the file database, each its own transaction (WAL, ``synchronous=NORMAL``);
* ``memory_get`` against a raw indexed lookup, and against a lookup that also appends and commits
  one audit row (every memlab read appends an audit event);
* ``memory_search`` at PUBLIC and at CONFIDENTIAL taint against one raw ``MATCH ... ORDER BY bm25``
  over the single table, with the same MATCH expression (``memlab.search.match_expression``).

Usage::

    python benchmarks/bench_store.py [--sizes 10000,100000] [--seed 0] [--queries 300] [--saves 3000] [--gets 3000]

Every timed call is checked afterwards for sameness (gets return the same content, CONFIDENTIAL searches
as many hits as raw, no search returns a memory above its session's taint); a failed check aborts the run.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import memlab
from memlab import Level, MemoryStore, Session
from memlab.search import match_expression
from memlab.search.query import STOPWORDS

VOCABULARY_SIZE = 20_000
ZIPF_EXPONENT = 1.1
WORDS_PER_MEMORY = 30
LEVELS = (Level.PUBLIC, Level.INTERNAL, Level.CONFIDENTIAL)
TAGS = ("work", "personal", "project", "travel", "health", "finance", "family", "ideas")
RAW_BATCH = 1_000
WARMUP_CALLS = 50

# Targets: memlab saves/s at least SAVE_RATE_TARGET; memlab/raw latency ratios at most the others.
SAVE_RATE_TARGET = 2_000.0
GET_RATIO_TARGET = 3.0
SEARCH_RATIO_TARGETS = {Level.PUBLIC: 2.0, Level.CONFIDENTIAL: 3.0}

_CONSONANTS = "bcdfghjklmnprstvz"
_VOWELS = "aeiou"


# -- the corpus ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Note:
    """One memory of the corpus."""

    key: str
    content: str
    tags: tuple[str, ...]
    level: Level


class Corpus:
    """A seeded pseudo-word vocabulary with Zipf frequencies, and the notes and queries drawn from it."""

    def __init__(self, seed: int, size: int = VOCABULARY_SIZE, exponent: float = ZIPF_EXPONENT) -> None:
        rng = random.Random(seed)
        words: dict[str, None] = {}
        while len(words) < size:
            word = "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(rng.randint(2, 4)))
            if rng.random() < 0.5:
                word += rng.choice(_CONSONANTS)
            if word not in STOPWORDS and word != "note":
                words[word] = None
        # Index = frequency rank (0 = most common); the order of insertion is already random.
        self.words: list[str] = list(words)
        self.cum_weights = list(itertools.accumulate(1.0 / (rank + 1) ** exponent for rank in range(size)))
        self.seed = seed

    def zipf_words(self, rng: random.Random, k: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cum_weights, k=k)

    def notes(self, start: int, count: int, stream: int = 1) -> Iterator[Note]:
        """Notes ``start .. start+count-1``; note i depends only on the seed, the stream and i."""
        for i in range(start, start + count):
            rng = random.Random(self.seed * 1_000_003 + stream * 7_919 + i)
            content = " ".join(self.zipf_words(rng, WORDS_PER_MEMORY + rng.randint(-5, 5)))
            tags = tuple(rng.sample(TAGS, rng.randint(1, 2)))
            yield Note(f"note-{i}", content, tags, LEVELS[i % 3])

    def queries(self, count: int, stream: int) -> list[str]:
        """1-3 word queries; each word is common (rank < 100), mid (100-2,000) or rare (2,000+) with equal odds."""
        rng = random.Random(self.seed * 1_000_003 + stream)
        buckets = ((0, 100), (100, 2_000), (2_000, len(self.words)))
        queries = []
        for _ in range(count):
            words = []
            for _ in range(rng.randint(1, 3)):
                low, high = rng.choice(buckets)
                words.append(self.words[rng.randrange(low, high)])
            queries.append(" ".join(words))
        return queries


# -- the raw sqlite3 baseline ---------------------------------------------------------------------------


class RawStore:
    """The same data as plain sqlite3: one table, one index on key, one FTS5 table over every row."""

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(str(path), isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.executescript(
            """
            CREATE TABLE memories (id INTEGER PRIMARY KEY, key TEXT NOT NULL, content TEXT NOT NULL,
                                   tags TEXT NOT NULL, level INTEGER NOT NULL, saved_at TEXT NOT NULL);
            CREATE INDEX memories_key ON memories (key);
            CREATE VIRTUAL TABLE f USING fts5(key, content, tags, content='memories', content_rowid='id',
                                              tokenize='porter unicode61');
            CREATE TABLE audit (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, session_id TEXT NOT NULL,
                                agent TEXT NOT NULL, taint TEXT NOT NULL, tool TEXT NOT NULL, key TEXT,
                                query TEXT, outcome TEXT NOT NULL, records TEXT, notes TEXT, message TEXT);
            """
        )
        self.next_id = 1

    def _rows(self, notes: Sequence[Note]) -> list[tuple[int, str, str, str, int, str]]:
        now = _now()
        rows = [
            (self.next_id + n, note.key, note.content, json.dumps(list(note.tags)), int(note.level), now)
            for n, note in enumerate(notes)
        ]
        self.next_id += len(notes)
        return rows

    def load(self, notes: Sequence[Note]) -> None:
        """Bulk load: executemany in batches of RAW_BATCH rows, one transaction per batch."""
        for start in range(0, len(notes), RAW_BATCH):
            rows = self._rows(notes[start : start + RAW_BATCH])
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.executemany("INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?)", rows)
            self.conn.executemany(
                "INSERT INTO f (rowid, key, content, tags) VALUES (?, ?, ?, ?)", [row[:4] for row in rows]
            )
            self.conn.execute("COMMIT")

    def save(self, note: Note) -> None:
        """One row and its FTS entry, committed on its own."""
        (row,) = self._rows([note])
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute("INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?)", row)
        self.conn.execute("INSERT INTO f (rowid, key, content, tags) VALUES (?, ?, ?, ?)", row[:4])
        self.conn.execute("COMMIT")

    def get(self, key: str) -> tuple | None:
        return self.conn.execute(
            "SELECT id, key, content, tags, level, saved_at FROM memories WHERE key = ?", (key,)
        ).fetchone()

    def get_audited(self, key: str) -> tuple | None:
        """The lookup plus what memlab adds to every read: one audit row, committed."""
        row = self.get(key)
        records = json.dumps([f"{key}@{Level(row[4]).name}/v1"] if row is not None else [])
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.execute(
            "INSERT INTO audit (at, session_id, agent, taint, tool, key, query, outcome, records, notes, message) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (_now(), "raw", "main", "CONFIDENTIAL", "memory_get", key, None, "ok", records, "[]", None),
        )
        self.conn.execute("COMMIT")
        return row

    def search(self, query: str, limit: int = 10) -> list[tuple]:
        match = match_expression(query)
        if match is None:
            return []
        return self.conn.execute(
            "SELECT rowid, bm25(f) FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT ?", (match, limit)
        ).fetchall()

    def close(self) -> None:
        self.conn.close()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


# -- measuring -----------------------------------------------------------------------------------------


@dataclass
class Timings:
    """Per-call durations in seconds."""

    samples: list[float] = field(default_factory=list)

    def percentile(self, p: float) -> float:
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered)) - 1))]

    @property
    def p50_us(self) -> float:
        return statistics.median(self.samples) * 1e6

    @property
    def p95_us(self) -> float:
        return self.percentile(95) * 1e6

    @property
    def rate(self) -> float:
        return len(self.samples) / sum(self.samples)


def loaded(corpus: Corpus, size: int, workdir: Path, **options: Any) -> tuple[RawStore, MemoryStore, Session]:
    """The corpus's first ``size`` notes in raw sqlite3 and in a memlab store (``options``: ``MemoryStore``'s), saved
    by one PUBLIC session with ``memory_save_many``: the raw store, the memlab store and that session."""
    notes = list(corpus.notes(0, size))
    raw = RawStore(workdir / f"raw-{size}.db")
    raw.load(notes)
    store = MemoryStore(workdir / f"memlab-{size}", **options)
    session = store.session()
    session.memory_save_many({"key": note.key, "content": note.content, "tags": list(note.tags)} for note in notes)
    return raw, store, session


def searching(store: MemoryStore, session: Session, ranking: Any) -> Callable[[str], object]:
    """A search of ``session`` under ``ranking``, set on ``store`` before each call (so calls under several rankings
    can be timed interleaved)."""

    def search(query: str) -> object:
        store.ranking = ranking
        return session.memory_search(query)

    return search


def interleaved(calls: dict[str, Callable[[Any], object]], items: Sequence[Any]) -> dict[str, Timings]:
    """Time every call on every item, alternating the calls item by item (the order rotates each item)."""
    names = list(calls)
    timings = {name: Timings() for name in names}
    clock = time.perf_counter
    for n, item in enumerate(items):
        for name in names[n % len(names) :] + names[: n % len(names)]:
            call = calls[name]
            start = clock()
            call(item)
            timings[name].samples.append(clock() - start)
    return timings


@dataclass
class Row:
    """One line of the results table."""

    measure: str
    memlab: float
    raw: float
    unit: str
    target: str = ""
    met: bool | None = None

    @property
    def ratio(self) -> float:
        return self.memlab / self.raw


def ratio_row(measure: str, memlab: float, raw: float, bound: float | None, unit: str = "µs") -> Row:
    if bound is None:
        return Row(measure, memlab, raw, unit)
    return Row(measure, memlab, raw, unit, f"ratio ≤ {bound:g}x", memlab / raw <= bound)


def bench_size(corpus: Corpus, size: int, args: argparse.Namespace, workdir: Path) -> list[Row]:
    """Build both databases for ``size`` notes and measure every operation; print progress as it goes."""
    notes = list(corpus.notes(0, size))
    extra = list(corpus.notes(size, args.saves + WARMUP_CALLS))
    queries = corpus.queries(args.queries, stream=2)
    warmup_queries = corpus.queries(WARMUP_CALLS, stream=3)
    rng = random.Random(corpus.seed * 31 + size)
    get_keys = [f"note-{rng.randrange(size)}" for _ in range(args.gets)]
    warmup_keys = [f"note-{rng.randrange(size)}" for _ in range(WARMUP_CALLS)]

    # memlab, through the real API: three sessions, one per level, one transaction per save.
    store = MemoryStore(workdir / f"memlab-{size}.db", layout="folder")  # the layout its recorded runs measured
    sessions = {level: store.session(taint=level, agent="main") for level in LEVELS}
    start = time.perf_counter()
    for note in notes:
        sessions[note.level].memory_save(note.key, note.content, tags=list(note.tags))
    memlab_load = time.perf_counter() - start
    print(f"  memlab: loaded {size:,} via memory_save in {memlab_load:.1f} s ({size / memlab_load:,.0f} saves/s)")

    raw = RawStore(workdir / f"raw-{size}.db")
    start = time.perf_counter()
    raw.load(notes)
    raw_load = time.perf_counter() - start
    print(f"  raw:    loaded {size:,} via executemany ×{RAW_BATCH} in {raw_load:.1f} s ({size / raw_load:,.0f} rows/s)")

    def memlab_save(note: Note) -> None:
        sessions[note.level].memory_save(note.key, note.content, tags=list(note.tags))

    save_calls: dict[str, Callable[[Any], object]] = {"memlab": memlab_save, "raw": raw.save}
    interleaved(save_calls, extra[:WARMUP_CALLS])
    saves = interleaved(save_calls, extra[WARMUP_CALLS:])

    reader = sessions[Level.CONFIDENTIAL]  # sees every key, so every get is a hit, as in the raw lookup
    get_calls: dict[str, Callable[[Any], object]] = {
        "memlab": reader.memory_get,
        "raw": raw.get,
        "raw+audit": raw.get_audited,
    }
    check_gets(reader, raw, get_keys[:100])
    interleaved(get_calls, warmup_keys)
    gets = interleaved(get_calls, get_keys)

    public, confidential = sessions[Level.PUBLIC], sessions[Level.CONFIDENTIAL]
    search_calls: dict[str, Callable[[Any], object]] = {
        "PUBLIC": lambda q: public.memory_search(q, max_results=10),
        "CONFIDENTIAL": lambda q: confidential.memory_search(q, max_results=10),
        "raw": lambda q: raw.search(q, 10),
    }
    interleaved(search_calls, warmup_queries)
    searches = interleaved(search_calls, queries)
    check_searches(sessions, raw, queries[:50])
    hits = sum(1 for q in queries if raw.search(q, 10))
    print(f"  {hits}/{len(queries)} queries have a raw hit; mean query length {_mean_words(queries):.1f} words")
    print(
        f"  db sizes: memlab {_db_size(workdir / f'memlab-{size}.db'):.1f} MB, "
        f"raw {_db_size(workdir / f'raw-{size}.db'):.1f} MB"
    )
    store.close()
    raw.close()

    m, r = saves["memlab"], saves["raw"]
    rows = [
        Row("load via API (saves/s)", size / memlab_load, size / raw_load, "/s"),
        Row(
            f"single save, {len(m.samples):,} × own txn (saves/s)",
            m.rate,
            r.rate,
            "/s",
            f"memlab ≥ {SAVE_RATE_TARGET:,.0f}/s",
            m.rate >= SAVE_RATE_TARGET,
        ),
        ratio_row("single save p50", m.p50_us, r.p50_us, None),
        ratio_row("single save p95", m.p95_us, r.p95_us, None),
        ratio_row("get p50 vs indexed lookup", gets["memlab"].p50_us, gets["raw"].p50_us, GET_RATIO_TARGET),
        ratio_row("get p95 vs indexed lookup", gets["memlab"].p95_us, gets["raw"].p95_us, GET_RATIO_TARGET),
        ratio_row("get p50 vs lookup+audit commit", gets["memlab"].p50_us, gets["raw+audit"].p50_us, None),
        ratio_row("get p95 vs lookup+audit commit", gets["memlab"].p95_us, gets["raw+audit"].p95_us, None),
    ]
    for level, bound in SEARCH_RATIO_TARGETS.items():
        t = searches[level.name]
        rows.append(ratio_row(f"search {level.name} p50", t.p50_us, searches["raw"].p50_us, bound))
        rows.append(ratio_row(f"search {level.name} p95", t.p95_us, searches["raw"].p95_us, bound))
    return rows


def check_gets(reader: Session, raw: RawStore, keys: Sequence[str]) -> None:
    """Both sides must return the same content, or the comparison means nothing."""
    for key in keys:
        memory, row = reader.memory_get(key), raw.get(key)
        if memory is None or row is None or memory.content != row[2]:
            raise SystemExit(f"memory_get({key!r}) disagrees with the raw lookup: {memory} vs {row}")


def check_searches(sessions: dict[Level, Session], raw: RawStore, queries: Sequence[str]) -> None:
    """memlab must find as many results as raw (top 10) and never a memory above the session's taint."""
    for query in queries:
        expected = len(raw.search(query, 10))
        confidential = sessions[Level.CONFIDENTIAL].memory_search(query, max_results=10)
        if len(confidential) != expected:
            raise SystemExit(f"search {query!r}: {len(confidential)} hits at CONFIDENTIAL, raw has {expected}")
        for level, session in sessions.items():
            leaked = [
                hit.memory.key
                for hit in session.memory_search(query, max_results=10)
                if hit.memory.classification > level
            ]
            if leaked:
                raise SystemExit(f"search {query!r} at {level.name} returned memories above it: {leaked[:3]}")


def _mean_words(queries: Sequence[str]) -> float:
    return statistics.fmean(len(q.split()) for q in queries)


def _db_size(path: Path) -> float:
    """MB of a database file and its -wal/-shm, or of every file of a folder store."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*")) / 1e6


# -- output --------------------------------------------------------------------------------------------


def environment() -> list[str]:
    return [
        f"date:       {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        f"python:     {sys.version.split()[0]} ({platform.python_implementation()}) on {platform.platform()}",
        f"sqlite:     {sqlite3.sqlite_version} (sqlite-utils {_version('sqlite-utils')}, memlab {_version('memlab')})",
        f"cpus:       {os.cpu_count()} (load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at start)",
        f"memlab:     {Path(memlab.__file__).parent} (source sha256 {_source_digest()})",
    ]


def _source_digest() -> str:
    """A fingerprint of the memlab source measured, since the package is installed editable."""
    digest = hashlib.sha256()
    for path in sorted(Path(memlab.__file__).parent.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "?"


def _fmt(value: float, unit: str) -> str:
    if unit == "/s":
        return f"{value:,.0f}/s"
    return f"{value:,.1f} {unit}"


def print_table(results: dict[int, list[Row]], *, widths: tuple[int, int, int] = (7, 38, 18)) -> None:
    """The rows of every size as a table; ``widths`` of the size, measure and target columns."""
    size_width, measure_width, target_width = widths
    header = (
        f"{'N':>{size_width}}  {'measure':<{measure_width}} {'memlab':>12} {'raw':>12} {'memlab/raw':>10}  "
        f"{'target':<{target_width}} {'met':<3}"
    )
    print(header)
    print("-" * len(header))
    for size, rows in results.items():
        for row in rows:
            met = "" if row.met is None else ("yes" if row.met else "NO")
            print(
                f"{size:>{size_width},}  {row.measure:<{measure_width}} {_fmt(row.memlab, row.unit):>12} "
                f"{_fmt(row.raw, row.unit):>12} {row.ratio:>9.2f}x  {row.target:<{target_width}} {met:<3}"
            )
        print()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default: %(default)s)")
    parser.add_argument("--queries", type=int, default=300, help="timed searches per size (default: %(default)s)")
    parser.add_argument("--saves", type=int, default=3000, help="timed single saves per size (default: %(default)s)")
    parser.add_argument("--gets", type=int, default=3000, help="timed gets per size (default: %(default)s)")
    args = parser.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]

    print("\n".join(environment()))
    print(
        f"settings:   sizes={sizes} seed={args.seed} queries={args.queries} saves={args.saves} gets={args.gets}; "
        f"vocabulary {VOCABULARY_SIZE:,} words, Zipf s={ZIPF_EXPONENT}, ~{WORDS_PER_MEMORY} words/memory"
    )
    corpus = Corpus(args.seed)
    results: dict[int, list[Row]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memlab-bench-") as tmp:
        workdir = Path(tmp)
        for size in sizes:
            print(f"\nN = {size:,}")
            results[size] = bench_size(corpus, size, args, workdir)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\ntotal run time {time.perf_counter() - started:.0f} s; load average {load} at the end\n")
    print_table(results)
    print("latencies are per call (perf_counter), memlab and raw interleaved call by call after a warm-up;")
    print("get = memlab at CONFIDENTIAL taint (every key visible); search = max_results 10, same MATCH expression.")
    met = [row.met for rows in results.values() for row in rows if row.met is not None]
    print(f"targets met: {sum(met)}/{len(met)}")


if __name__ == "__main__":
    main()
