"""memlab against its floor (the same guarantees, written minimally in sqlite3) and against its peers, in one run.

The floor (``FloorStore``) is the least a single-file store for one agent can do and still keep every guarantee a
memlab call gives; it does, per call:

* one ``BEGIN IMMEDIATE ... COMMIT`` (a read too: its audit row is written in the same transaction);
* a save writes a version row (never overwritten: a new version number per key and classification) with a
  random 16-byte salt and ``HMAC-SHA256(salt, content ‖ tags ‖ source ‖ occurred_at)``, and the version's digest
  (sha256 of who, what, when and the commitment) goes into the save's audit row;
* the effective view, materialised: a row (key, taint) -> version for every taint, shadowing as memlab's lattice
  does (the live version at the highest classification <= the taint wins); a save writes only the rows it
  changes;
* one external-content FTS5 index (``porter unicode61``, key, content and tags) per used level, holding exactly
  that level's effective view (made and filled on the first save at its level), so bm25's statistics come from
  the visible versions only; a session at taint T searches the index of the highest used level <= T;
* a search reads the winners' rows through ``effective``, which is the second gate: a version the index returned
  that is not in the session's view fails the call;
* one audit row per call, reads and not-found included, chained: ``hash = sha256(previous hash ‖ fields)`` over a
  fixed length-prefixed byte encoding, the chain head read in the call's transaction;
* triggers refusing an UPDATE or DELETE of the audit, an INSERT over an existing seq, and any change to a version;
* a bulk save: up to 1,000 records per transaction, each versioned, indexed and audited as a single save would be.

It leaves out what no guarantee needs: snippets, the tag boost and the context columns in the index, argument
validation, hooks, policies other than the lattice, several agents per file, delete and purge (not measured).

The systems, built in a temporary directory from the corpus of ``bench_store.py`` (keys ``note-{i}``, level
PUBLIC / INTERNAL / CONFIDENTIAL by ``i % 3``):

* ``floor``; memlab ``file`` (``MemoryStore(path, layout="file")``) and memlab ``folder`` (``MemoryStore(path)``),
  one agent, three sessions (one per level); all three loaded together with ``memory_save_many`` batches of 1,000,
  one level at a time, PUBLIC first, interleaved batch by batch (the bulk figure);
* raw FTS5 over exactly the visible rows: for each taint, ``RawStore`` of ``bench_store.py`` holding only the rows
  that taint may read (``raw_search`` of ``bench_bulk.py``: the same MATCH, ids and scores; "+rows" also reads
  the winners' rows and FTS5 snippets; "+ audited commit" ranks inside the transaction every memlab search makes,
  ``BEGIN IMMEDIATE``, one audit row naming the hits, ``COMMIT``: beside the target, which stays raw FTS5's);
* memlab file with every hit's snippet read (a hit makes its snippet when it is first read, and the tool layer
  reads them all);
* peers over every row (no taint), each skipped, saying so, when its package is missing: sqlite-utils'
  ``Table.search()``, tantivy, bm25s (the builders of ``bench_peers.py``) and LangGraph's ``SqliteStore``
  (``bench_peers.LangGraphPeer``: put, get, search — an unranked filter, no gate, no audit).

Measured, calls interleaved one by one in rotating order after a warm-up of 50 (searches taint by taint, then the
peers: a connection serving every taint would evict one index's cached pages with another's, which the raw stores,
one per taint, would not pay), each figure the median of ``--repeats`` repeats (every repeat takes every
``repeats``-th item): bulk time per memory, single saves (each its
own transaction) per second, get p50 at CONFIDENTIAL (every key visible), search p50 (``max_results=10``) at each
taint, and file size after ``PRAGMA wal_checkpoint(TRUNCATE)``. Targets (ratios memlab ÷ floor, or ÷ raw FTS5 over
the visible rows for search): get <= 1.5x, single save <= 1.2x, bulk <= 1.25x, file <= 1.1x; search <= 1.3x at
10k, <= 1.15x at 100k and above.

Every system is checked before it is timed: gets return the same content, searches at every taint as many hits
as raw FTS5 over the visible rows and none above the taint; a failed check aborts the run.

The read gate (every version a get, list, search or recall returns checked against the session's label, so a
tampered view fails closed): memlab file's get and tag list at CONFIDENTIAL, with the gate and with it replaced by
one that only names the versions, interleaved (``read_gate``); target <= 1.05x.

Usage::

    python benchmarks/bench_floor.py [--sizes 10000,100000] [--repeats 3] [--queries 300] [--gets 1500]
                                     [--saves 600] [--lists 30] [--profile]

``--profile`` adds cProfile's top functions of memlab's get and search (file layout) at every size.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import hmac
import json
import os
import pstats
import random
import secrets
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_bulk import checkpoint_and_size, raw_search, raw_search_rows  # noqa: E402
from bench_peers import LangGraphPeer, build_bm25s, build_sqlite_utils, build_tantivy  # noqa: E402
from bench_store import LEVELS, TAGS, WARMUP_CALLS, Corpus, Note, RawStore, Timings, environment, interleaved  # noqa: E402

from memlab import Level, MemoryStore  # noqa: E402
from memlab.search import match_expression  # noqa: E402

BATCH = 1_000
GET_TARGET = 1.5
SAVE_TARGET = 1.2
BULK_TARGET = 1.25
SIZE_TARGET = 1.1
GATE_TARGET = 1.05


def search_target(size: int) -> float:
    return 1.15 if size >= 100_000 else 1.3


# -- the floor -----------------------------------------------------------------------------------------------


def _encode(fields: Sequence[Any]) -> bytes:
    """Fields as bytes, each length-prefixed (None as its own marker): one fixed encoding for every digest."""
    out = bytearray()
    for value in fields:
        if value is None:
            out += b"\xff\xff\xff\xff"
            continue
        data = value if isinstance(value, bytes) else str(value).encode()
        out += len(data).to_bytes(4, "big")
        out += data
    return bytes(out)


def _sha256(*fields: Any) -> str:
    return hashlib.sha256(_encode(fields)).hexdigest()


_FROZEN = "BEGIN SELECT RAISE(ABORT, 'frozen'); END"
_FLOOR_SCHEMA = f"""
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sessions (id TEXT PRIMARY KEY, agent TEXT NOT NULL, taint TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE versions (id INTEGER PRIMARY KEY, key TEXT NOT NULL, content TEXT NOT NULL, tags TEXT NOT NULL,
    classification INTEGER NOT NULL, version INTEGER NOT NULL, saved_at TEXT NOT NULL, saved_by TEXT NOT NULL,
    source TEXT, occurred_at TEXT, deleted_at TEXT, salt BLOB NOT NULL, commitment TEXT NOT NULL);
CREATE UNIQUE INDEX versions_key ON versions (key, classification, version);
CREATE TABLE effective (key TEXT NOT NULL, taint INTEGER NOT NULL, memory_id INTEGER NOT NULL,
    PRIMARY KEY (key, taint)) WITHOUT ROWID;
CREATE TABLE audit (seq INTEGER PRIMARY KEY, at TEXT NOT NULL, session_id TEXT NOT NULL, agent TEXT NOT NULL,
    taint TEXT NOT NULL, tool TEXT NOT NULL, key TEXT, query TEXT, outcome TEXT NOT NULL, records TEXT NOT NULL,
    digest TEXT, hash TEXT NOT NULL);
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit {_FROZEN};
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit {_FROZEN};
CREATE TRIGGER audit_no_replace BEFORE INSERT ON audit WHEN EXISTS (SELECT 1 FROM audit WHERE seq = NEW.seq)
    {_FROZEN};
CREATE TRIGGER versions_no_delete BEFORE DELETE ON versions {_FROZEN};
CREATE TRIGGER versions_frozen BEFORE UPDATE OF id, key, content, tags, classification, version, saved_at,
    saved_by, source, occurred_at, salt, commitment ON versions {_FROZEN};
"""


@dataclass(frozen=True)
class FloorHit:
    """What a floor search returns per hit: the version and its score."""

    key: str
    content: str
    tags: tuple[str, ...]
    classification: Level
    version: int
    score: float


class FloorStore:
    """The guarantees of a memlab call, written minimally: one file, one agent (see the module's docstring)."""

    AGENT = "main"

    def __init__(self, path: Path) -> None:
        self.conn = sqlite3.connect(str(path), isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA wal_autocheckpoint=10000")  # memlab's setting: a knob, not work
        self.conn.executescript(_FLOOR_SCHEMA)
        self.conn.execute("INSERT INTO meta VALUES ('genesis', ?), ('indexed', '0')", (secrets.token_hex(32),))

    def session(self, taint: Level) -> FloorSession:
        session = FloorSession(self, secrets.token_hex(6), taint)
        self.conn.execute("INSERT INTO sessions VALUES (?, ?, ?, ?)", (session.id, self.AGENT, taint.name, _now()))
        return session

    # In the caller's transaction:

    def _audit(self, rows: list[tuple[Any, ...]]) -> None:
        """Append audit rows (every field but seq and hash), chained from the head read here."""
        head = self.conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
        if head is None:
            head = (0, self.conn.execute("SELECT value FROM meta WHERE name = 'genesis'").fetchone()[0])
        seq, previous = head
        chained = []
        for row in rows:
            seq += 1
            previous = _sha256(previous, seq, *row)
            chained.append((seq, *row, previous))
        self.conn.executemany("INSERT INTO audit VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", chained)

    def _indexed(self) -> int:
        return int(self.conn.execute("SELECT value FROM meta WHERE name = 'indexed'").fetchone()[0])

    def _start_index(self, level: Level, indexed: int) -> int:
        table = f"fts_{level.name.lower()}"
        self.conn.execute(
            f"CREATE VIRTUAL TABLE {table} USING fts5(key, content, tags, content='versions', content_rowid='id', "
            "tokenize='porter unicode61')"
        )
        self.conn.execute(
            f"INSERT INTO {table} (rowid, key, content, tags) SELECT v.id, v.key, v.content, v.tags "
            "FROM effective e JOIN versions v ON v.id = e.memory_id WHERE e.taint = ?",
            (int(level),),
        )
        indexed |= 1 << int(level)
        self.conn.execute("UPDATE meta SET value = ? WHERE name = 'indexed'", (str(indexed),))
        return indexed

    def close(self) -> None:
        self.conn.close()


class FloorSession:
    """A session of the floor's one agent at a fixed taint: save, save_many, get and search, one transaction each."""

    def __init__(self, store: FloorStore, session_id: str, taint: Level) -> None:
        self.store, self.conn, self.id, self.taint = store, store.conn, session_id, taint

    def save(self, note: Note) -> None:
        self.save_many([note])

    def save_many(self, notes: Sequence[Note]) -> None:
        """Save ``notes`` (at most a batch) at this session's taint, in one transaction."""
        level, at, agent = int(self.taint), _now(), self.store.AGENT
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            indexed = self.store._indexed()
            if not indexed & (1 << level):
                indexed = self.store._start_index(self.taint, indexed)
            keys = list(dict.fromkeys(note.key for note in notes))
            live: dict[str, dict[int, int]] = {}
            latest: dict[tuple[str, int], int] = {}
            for key, classification, memory_id, number, deleted_at in conn.execute(
                "SELECT key, classification, id, MAX(version), deleted_at FROM versions "
                "WHERE key IN (SELECT value FROM json_each(?)) GROUP BY key, classification",
                (json.dumps(keys),),
            ):
                latest[key, classification] = number
                if deleted_at is None:
                    live.setdefault(key, {})[classification] = memory_id
            before = {key: dict(levels) for key, levels in live.items()}
            next_id = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM versions").fetchone()[0]
            rows, audits, texts = [], [], {}
            for memory_id, note in enumerate(notes, start=next_id):
                number = latest.get((note.key, level), 0) + 1
                latest[note.key, level] = number
                live.setdefault(note.key, {})[level] = memory_id
                tags, salt = json.dumps(note.tags), secrets.token_bytes(16)
                commitment = hmac.new(salt, _encode((note.content, tags, None, None)), hashlib.sha256).hexdigest()
                digest = _sha256("version", agent, note.key, level, number, at, self.id, commitment)
                rows.append((memory_id, note.key, note.content, tags, level, number, at, self.id, salt, commitment))
                texts[memory_id] = (note.key, note.content, tags)
                ref = f"{note.key}@{self.taint.name}/v{number}"
                audits.append((at, self.id, agent, self.taint.name, "memory_save", note.key, None, "ok", ref, digest))
            conn.executemany(
                "INSERT INTO versions (id, key, content, tags, classification, version, saved_at, saved_by, salt, "
                "commitment) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            upserts, gone, added = [], {}, {}
            for key in keys:
                for taint in Level:
                    if taint < level:
                        continue
                    old, new = _winner(before.get(key, {}), taint), _winner(live[key], taint)
                    if old == new:
                        continue
                    upserts.append((key, int(taint), new))
                    if indexed & (1 << int(taint)):
                        if old is not None:
                            gone.setdefault(taint, []).append((old,))
                        added.setdefault(taint, []).append((new, *texts[new]))
            conn.executemany("INSERT OR REPLACE INTO effective VALUES (?, ?, ?)", upserts)
            for taint, ids in gone.items():
                table = f"fts_{taint.name.lower()}"
                conn.executemany(
                    f"INSERT INTO {table} ({table}, rowid, key, content, tags) "
                    "SELECT 'delete', id, key, content, tags FROM versions WHERE id = ?",
                    ids,
                )
            for taint, values in added.items():
                conn.executemany(
                    f"INSERT INTO fts_{taint.name.lower()} (rowid, key, content, tags) VALUES (?, ?, ?, ?)", values
                )
            self.store._audit([(*row[:8], json.dumps([row[8]]), row[9]) for row in audits])
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def get(self, key: str) -> FloorHit | None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute(
                "SELECT v.key, v.content, v.tags, v.classification, v.version FROM effective e "
                "JOIN versions v ON v.id = e.memory_id WHERE e.key = ? AND e.taint = ?",
                (key, int(self.taint)),
            ).fetchone()
            found = None if row is None else _hit(row, 0.0)
            records = "[]" if found is None else json.dumps([_ref(found)])
            outcome = "ok" if found is not None else "not_found"
            self.store._audit(
                [(_now(), self.id, self.store.AGENT, self.taint.name, "memory_get", key, None, outcome, records, None)]
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return found

    def search(self, query: str, limit: int = 10) -> list[FloorHit]:
        match = match_expression(query)
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            indexed = self.store._indexed()
            used = [level for level in Level if level <= self.taint and indexed & (1 << int(level))]
            hits: list[FloorHit] = []
            if used and match is not None:
                table, view = f"fts_{max(used).name.lower()}", int(max(used))
                ranked = conn.execute(
                    f"SELECT rowid, bm25({table}, 2.0, 1.0, 1.0) AS score FROM {table} WHERE {table} MATCH ? "
                    "ORDER BY score, rowid LIMIT ?",
                    (match, limit),
                ).fetchall()
                if ranked:
                    # The second gate: only versions in the session's view come back, or the call fails.
                    rows = {
                        row[0]: row[1:]
                        for row in conn.execute(
                            "SELECT v.id, v.key, v.content, v.tags, v.classification, v.version FROM versions v "
                            "JOIN effective e ON e.key = v.key AND e.taint = ? AND e.memory_id = v.id "
                            f"WHERE v.id IN ({', '.join('?' * len(ranked))})",
                            (view, *(memory_id for memory_id, _ in ranked)),
                        )
                    }
                    if len(rows) != len(ranked):
                        raise RuntimeError(f"the index {table} returned a version outside its view")
                    hits = [_hit(rows[memory_id], -score) for memory_id, score in ranked]
            records = json.dumps([_ref(hit) for hit in hits])
            event = (_now(), self.id, self.store.AGENT, self.taint.name, "memory_search", None, query, "ok", records)
            self.store._audit([(*event, None)])
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        return hits


def _winner(live: dict[int, int], taint: Level) -> int | None:
    """The version a session at ``taint`` sees: the live one at the highest classification <= taint."""
    readable = [level for level in live if level <= taint]
    return live[max(readable)] if readable else None


def _hit(row: Sequence[Any], score: float) -> FloorHit:
    key, content, tags, classification, number = row
    return FloorHit(key, content, tuple(json.loads(tags)), Level(classification), number, score)


def _ref(hit: FloorHit) -> str:
    return f"{hit.key}@{hit.classification.name}/v{hit.version}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


# -- the run -------------------------------------------------------------------------------------------------


@dataclass
class Result:
    """One measure of one system: its value per repeat (µs per call, MB for sizes)."""

    values: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.values)


@dataclass
class Target:
    """One line of the targets table: memlab against a baseline, and whether the ratio is within the bound."""

    measure: str
    memlab: float
    baseline: float
    against: str
    unit: str
    bound: float

    @property
    def ratio(self) -> float:
        return self.memlab / self.baseline

    @property
    def met(self) -> bool:
        return self.ratio <= self.bound


def repeated(calls: dict[str, Callable[[Any], object]], items: Sequence[Any], repeats: int) -> dict[str, list[Timings]]:
    """``interleaved`` over every ``repeats``-th item, once per repeat: name -> the Timings of each repeat."""
    out: dict[str, list[Timings]] = {name: [] for name in calls}
    for r in range(repeats):
        for name, timings in interleaved(calls, items[r::repeats]).items():
            out[name].append(timings)
    return out


def p50s(timings: list[Timings]) -> Result:
    return Result([t.p50_us for t in timings])


def means(timings: list[Timings]) -> Result:
    return Result([1e6 / t.rate for t in timings])


class Peers:
    """The peers over every row that are installed; ``skipped`` says which are not, and why."""

    def __init__(self, notes: Sequence[Note], where: Path) -> None:
        self.search: dict[str, Callable[[str], list]] = {}
        self.closers: list[Callable[[], None]] = []
        self.paths: dict[str, Path] = {}
        self.skipped: list[str] = []
        self.load_s: dict[str, float] = {}
        builders = {"sqlite-utils": build_sqlite_utils, "tantivy": build_tantivy, "bm25s": build_bm25s}
        for name, build in builders.items():
            place = where / name
            place.mkdir()
            start = time.perf_counter()
            try:
                search, close = build(notes, place)
            except ImportError as error:
                self.skipped.append(f"{name} ({error.name} not installed)")
                continue
            self.load_s[name] = time.perf_counter() - start
            self.search[name], self.paths[name] = search, place
            self.closers.append(close)
        self.langgraph: LangGraphPeer | None = None
        try:
            self.langgraph = LangGraphPeer(where / "langgraph.db")
        except ImportError as error:
            self.skipped.append(f"langgraph ({error.name} not installed)")
        else:
            self.search["langgraph"], self.paths["langgraph"] = self.langgraph.search, where / "langgraph.db"
            self.closers.append(self.langgraph.close)

    def close(self) -> None:
        for close in self.closers:
            close()


def bench_size(corpus: Corpus, size: int, args: argparse.Namespace, workdir: Path) -> tuple[list[Target], list[str]]:
    """Build every system for ``size`` notes and measure; return the targets and the systems' table lines."""
    repeats = args.repeats
    notes = list(corpus.notes(0, size))
    extra = list(corpus.notes(size, args.saves + WARMUP_CALLS))
    queries = corpus.queries(args.queries, stream=2)
    warmup_queries = corpus.queries(WARMUP_CALLS, stream=3)
    rng = random.Random(corpus.seed * 31 + size)
    get_keys = [f"note-{rng.randrange(size)}" for _ in range(args.gets)]
    warmup_keys = [f"note-{rng.randrange(size)}" for _ in range(WARMUP_CALLS)]
    here = workdir / str(size)
    here.mkdir()

    floor = FloorStore(here / "floor.db")
    stores = {"file": MemoryStore(here / "memlab.db", layout="file"), "folder": MemoryStore(here / "memlab")}
    floor_sessions = {level: floor.session(level) for level in LEVELS}
    sessions = {name: {level: store.session(taint=level) for level in LEVELS} for name, store in stores.items()}
    peers = Peers(notes, here)

    def bulk(name: str) -> Callable[[tuple[Level, list[Note]]], object]:
        if name == "floor":
            return lambda batch: floor_sessions[batch[0]].save_many(batch[1])
        if name == "langgraph":
            return lambda batch: peers.langgraph.load(batch[1])  # type: ignore[union-attr]
        return lambda batch: sessions[name][batch[0]].memory_save_many(
            [{"key": n.key, "content": n.content, "tags": list(n.tags)} for n in batch[1]], batch_size=BATCH
        )

    batches = []
    for level in LEVELS:
        of_level = [note for note in notes if note.level == level]
        batches += [(level, of_level[start : start + BATCH]) for start in range(0, len(of_level), BATCH)]
    systems = ["floor", "file", "folder", *(["langgraph"] if peers.langgraph else [])]
    started = time.perf_counter()
    bulk_cpu: dict[str, float] = dict.fromkeys(systems, 0.0)
    loads = repeated({name: _cpu_timed(bulk(name), bulk_cpu, name) for name in systems}, batches, repeats)
    per_memory = {
        name: Result([sum(t.samples) / sum(len(b[1]) for b in batches[r::repeats]) * 1e6 for r, t in enumerate(ts)])
        for name, ts in loads.items()
    }
    print(f"  loaded {size:,} into {', '.join(systems)} (interleaved batches) in {time.perf_counter() - started:.0f} s")
    cpu = ", ".join(f"{name} {bulk_cpu[name] / size * 1e6:.1f}" for name in systems)
    print(f"  bulk CPU µs per memory (process time, SQLite's included; wall is in the table): {cpu}")
    ratios = ", ".join(f"{name} {bulk_cpu[name] / bulk_cpu['floor']:.2f}x" for name in systems)
    print(f"  bulk CPU ÷ floor: {ratios}")

    visible: dict[Level, RawStore] = {}
    for taint in LEVELS:
        visible[taint] = RawStore(here / f"raw-{taint.name}.db")
        visible[taint].load([n for n in notes if n.level <= taint])
    print(f"  peers: {', '.join(peers.search) or 'none'}; skipped: {', '.join(peers.skipped) or 'none'}", flush=True)

    sizes = {
        "floor": checkpoint_and_size([here / "floor.db"]) / 1e6,
        "file": checkpoint_and_size([here / "memlab.db"]) / 1e6,
        "folder": checkpoint_and_size([here / "memlab"]) / 1e6,
        "raw FTS5": checkpoint_and_size([here / "raw-CONFIDENTIAL.db"]) / 1e6,
        **{name: checkpoint_and_size([path]) / 1e6 for name, path in peers.paths.items()},
    }

    check(floor_sessions, sessions, visible, get_keys[:100], queries[:50])

    reader = Level.CONFIDENTIAL
    get_calls: dict[str, Callable[[Any], object]] = {
        "floor": floor_sessions[reader].get,
        "file": sessions["file"][reader].memory_get,
        "folder": sessions["folder"][reader].memory_get,
        "raw FTS5": visible[reader].get_audited,
    }
    if peers.langgraph:
        get_calls["langgraph"] = peers.langgraph.get
    interleaved(get_calls, warmup_keys)
    gets = {name: p50s(ts) for name, ts in repeated(get_calls, get_keys, repeats).items()}
    gate = read_gate(sessions["file"][reader], get_keys, args.lists, repeats)

    # Taint by taint: a connection serving several taints would evict one index's pages with another's, which the
    # raw stores, one per taint, would not pay; then the peers, over every row.
    searches: dict[str, Result] = {}
    groups: list[dict[str, Callable[[Any], object]]] = []
    for taint in LEVELS:
        group: dict[str, Callable[[Any], object]] = {f"floor {taint.name}": floor_sessions[taint].search}
        for name in stores:
            group[f"{name} {taint.name}"] = _memlab_search(sessions[name][taint])
        group[f"file+snippets {taint.name}"] = _memlab_search_read(sessions["file"][taint])
        group[f"raw {taint.name}"] = _raw(visible[taint], raw_search)
        group[f"raw+rows {taint.name}"] = _raw(visible[taint], raw_search_rows)
        group[f"raw+commit {taint.name}"] = _raw(visible[taint], raw_search_audited)
        groups.append(group)
    if peers.search:
        groups.append(peers.search)
    for group in groups:
        interleaved(group, warmup_queries)
        searches |= {name: p50s(ts) for name, ts in repeated(group, queries, repeats).items()}

    save_calls: dict[str, Callable[[Any], object]] = {
        "floor": lambda note: floor_sessions[note.level].save(note),
        **{name: _memlab_save(sessions[name]) for name in stores},
        "raw FTS5": visible[Level.CONFIDENTIAL].save,
    }
    if peers.langgraph:
        save_calls["langgraph"] = peers.langgraph.put
    interleaved(save_calls, extra[:WARMUP_CALLS])
    save_cpu: dict[str, float] = dict.fromkeys(save_calls, 0.0)
    timed_saves = {name: _cpu_timed(call, save_cpu, name) for name, call in save_calls.items()}
    saves = {name: means(ts) for name, ts in repeated(timed_saves, extra[WARMUP_CALLS:], repeats).items()}
    done = len(extra) - WARMUP_CALLS
    cpu = ", ".join(f"{name} {spent / done * 1e6:.0f}" for name, spent in save_cpu.items())
    print(f"  single save CPU µs (process time): {cpu}", flush=True)

    # Last: a trusted floor's view and index, once made, are kept up to date by every later save.
    integrity = integrity_costs(stores["file"], reader, get_keys, queries, repeats)
    profile = profiles(sessions["file"], get_keys, queries) if args.profile else []
    for store in stores.values():
        store.close()
    floor.close()
    peers.close()
    for raw in visible.values():
        raw.close()

    targets = []
    for name in stores:
        targets += [
            Target(f"get p50 ({name})", gets[name].median, gets["floor"].median, "floor", "µs", GET_TARGET),
            Target(f"single save ({name})", saves[name].median, saves["floor"].median, "floor", "µs", SAVE_TARGET),
            Target(
                f"bulk, per memory ({name})",
                per_memory[name].median,
                per_memory["floor"].median,
                "floor",
                "µs",
                BULK_TARGET,
            ),
            Target(f"file size ({name})", sizes[name], sizes["floor"], "floor", "MB", SIZE_TARGET),
        ]
        if name == "file":
            targets += [
                Target(
                    f"{read} p50 (file)",
                    gate[f"{read} gated"].median,
                    gate[f"{read} ungated"].median,
                    "no read gate",
                    "µs",
                    GATE_TARGET,
                )
                for read in ("get", "list")
            ]
        for taint in LEVELS:
            targets.append(
                Target(
                    f"search {taint.name} p50 ({name})",
                    searches[f"{name} {taint.name}"].median,
                    searches[f"raw {taint.name}"].median,
                    "raw FTS5 visible",
                    "µs",
                    search_target(size),
                )
            )
    lines = systems_table(size, per_memory, saves, gets, searches, sizes, peers) + search_ratios(size, searches)
    return targets, lines + integrity + profile


def read_gate(session: Any, keys: Sequence[str], lists: int, repeats: int) -> dict[str, Result]:
    """What the session's read gate costs (every version a read returns checked against the session's label,
    ``Session._check_readable``): p50 of ``memory_get`` over ``keys`` and of ``memory_list`` by each tag in turn
    (``lists`` of them), on ``session`` and on a second session of the same store and taint whose gate checks
    nothing (and so finds nothing untrusted), calls interleaved one by one."""
    ungated = session.store.session(taint=session.taint, agent=session.agent)
    ungated._check_readable = lambda taint, memories: False  # checks nothing, finds nothing untrusted
    tags = [TAGS[i % len(TAGS)] for i in range(lists)]
    calls: dict[str, Callable[[Any], object]] = {"get gated": session.memory_get, "get ungated": ungated.memory_get}
    interleaved(calls, keys[:WARMUP_CALLS])
    out = {name: p50s(ts) for name, ts in repeated(calls, keys, repeats).items()}
    calls = {"list gated": lambda tag: session.memory_list(tag), "list ungated": lambda tag: ungated.memory_list(tag)}
    interleaved(calls, tags[: len(TAGS)])
    return out | {name: p50s(ts) for name, ts in repeated(calls, tags, repeats).items()}


def integrity_costs(store: Any, taint: Level, keys: Sequence[str], queries: Sequence[str], repeats: int) -> list[str]:
    """What a session whose floor is TRUSTED pays against one that reads every grade (the default), on ``store``
    at ``taint`` (every version trusted, so both see the same): its view and index are its own, made on its first
    read (timed once), then get and search p50, calls interleaved one by one; and an untrusted save against a
    trusted one (``lower_integrity``d session), p50 over fresh keys."""
    default = store.session(taint=taint)
    if not hasattr(default, "lower_integrity"):  # a memlab from before integrity (compare_floor.py's base)
        return ["  integrity: not in this memlab"]
    started = time.perf_counter()
    careful = store.session(taint=taint, floor="trusted")
    careful.memory_get(keys[0])
    first = time.perf_counter() - started
    calls = {"get default": default.memory_get, "get floor": careful.memory_get}
    interleaved(calls, keys[:WARMUP_CALLS])
    out = {name: p50s(ts) for name, ts in repeated(calls, keys, repeats).items()}
    calls = {"search default": _memlab_search(default), "search floor": _memlab_search(careful)}
    interleaved(calls, queries[:WARMUP_CALLS])
    out |= {name: p50s(ts) for name, ts in repeated(calls, queries, repeats).items()}
    lowered = store.session(taint=taint)
    lowered.lower_integrity(source="bench:web")
    saves = [f"integrity-bench-{i}" for i in range(2 * WARMUP_CALLS)]
    calls = {
        "save trusted": lambda key: default.memory_save(key, "a trusted note about " + key),
        "save untrusted": lambda key: lowered.memory_save(key, "an untrusted note about " + key),
    }
    interleaved(calls, saves[:WARMUP_CALLS])
    out |= {name: p50s(ts) for name, ts in repeated(calls, saves[WARMUP_CALLS:], repeats).items()}

    def ratio(what: str, base: str) -> str:
        return f"{out[what].median:,.0f} µs ÷ {out[base].median:,.0f} µs = {out[what].median / out[base].median:.2f}x"

    return [
        f"  integrity (file, {taint.name}): a floor-TRUSTED session's first read (its view and index made) "
        f"{first * 1e3:,.0f} ms;",
        f"    get p50 floor TRUSTED ÷ default {ratio('get floor', 'get default')}; "
        f"search p50 {ratio('search floor', 'search default')}",
        f"    save p50 untrusted ÷ trusted {ratio('save untrusted', 'save trusted')}",
    ]


def _memlab_search(session: Any) -> Callable[[str], object]:
    return lambda q: session.memory_search(q, max_results=10)


def _memlab_search_read(session: Any) -> Callable[[str], object]:
    return lambda q: [hit.snippet for hit in session.memory_search(q, max_results=10)]


def raw_search_audited(raw: RawStore, query: str, limit: int = 10) -> list[tuple]:
    """``raw_search`` inside the transaction every memlab search makes: ``BEGIN IMMEDIATE``, the ranking, one audit
    row naming the hits (chained as the floor's: sha256 over the previous hash and the row), ``COMMIT``."""
    conn = raw.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        ranked = raw_search(raw, query, limit)
        records = json.dumps([f"{rowid}" for rowid, _ in ranked])
        head = conn.execute("SELECT seq, message FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
        seq, previous = (0, "") if head is None else (head[0], head[1] or "")
        row = (_now(), "raw", "main", "PUBLIC", "memory_search", None, query, "ok", records, "[]")
        # The chain's hash goes in ``message`` (RawStore's audit has no hash column).
        conn.execute(
            "INSERT INTO audit (at, session_id, agent, taint, tool, key, query, outcome, records, notes, message) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (*row, _sha256(previous, seq + 1, *row)),
        )
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return ranked


def _cpu_timed(call: Callable[[Any], object], spent: dict[str, float], name: str) -> Callable[[Any], object]:
    """``call``, adding the process's CPU time it takes to ``spent[name]`` (SQLite runs in this process, so its
    work is counted; waiting for the disk or for a core is not)."""

    def timed(item: Any) -> object:
        start = time.process_time()
        try:
            return call(item)
        finally:
            spent[name] += time.process_time() - start

    return timed


def _memlab_save(sessions: dict[Level, Any]) -> Callable[[Note], object]:
    return lambda note: sessions[note.level].memory_save(note.key, note.content, tags=list(note.tags))


def _raw(store: RawStore, search: Callable[[RawStore, str], list]) -> Callable[[str], object]:
    return lambda q: search(store, q)


def check(
    floor: dict[Level, FloorSession],
    memlab: dict[str, dict[Level, Any]],
    visible: dict[Level, RawStore],
    keys: Sequence[str],
    queries: Sequence[str],
) -> None:
    """Every system must do the same work: the same content per get, as many hits as raw over the visible rows."""
    for key in keys:
        expected = visible[Level.CONFIDENTIAL].get(key)[2]
        found = [floor[Level.CONFIDENTIAL].get(key).content] + [
            s[Level.CONFIDENTIAL].memory_get(key).content for s in memlab.values()
        ]
        if any(content != expected for content in found):
            raise SystemExit(f"get {key!r}: the systems disagree")
    for query in queries:
        for taint in LEVELS:
            expected = len(raw_search(visible[taint], query))
            hits = {"floor": [(h.key, h.classification) for h in floor[taint].search(query)]}
            for name, s in memlab.items():
                hits[name] = [(h.memory.key, h.memory.classification) for h in s[taint].memory_search(query, 10)]
            for name, found in hits.items():
                if len(found) != expected or any(level > taint for _, level in found):
                    raise SystemExit(f"search {query!r} at {taint.name}: {name} has {len(found)} hits, raw {expected}")


def profiles(sessions: dict[Level, Any], keys: Sequence[str], queries: Sequence[str]) -> list[str]:
    """cProfile's top functions by own time of memlab's get at CONFIDENTIAL and search at PUBLIC, in µs per call."""
    lines = []
    root = str(Path(__file__).resolve().parent.parent) + os.sep
    for what, call, items in (
        ("memory_get at CONFIDENTIAL", sessions[Level.CONFIDENTIAL].memory_get, keys),
        ("memory_search at PUBLIC", _memlab_search(sessions[Level.PUBLIC]), queries),
    ):
        profiler = cProfile.Profile()
        profiler.enable()
        for item in items:
            call(item)
        profiler.disable()
        stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
        total = sum(own for _, _, own, _, _ in stats.values())
        lines += ["", f"profile of {len(items):,} × {what} (memlab file; µs per call, under cProfile):"]
        lines.append(f"  {'own':>7} {'with callees':>12}  function (all: {total / len(items) * 1e6:,.0f} µs a call)")
        top = sorted(stats.items(), key=lambda item: -item[1][2])[:12]
        for (path, line, name), (_, _, own, cumulative, _) in top:
            where = name if path == "~" else f"{path.replace(root, '').split('site-packages/')[-1]}:{line}({name})"
            lines.append(f"  {own / len(items) * 1e6:>7.1f} {cumulative / len(items) * 1e6:>12.1f}  {where}")
    return lines


def systems_table(
    size: int,
    bulk: dict[str, Result],
    saves: dict[str, Result],
    gets: dict[str, Result],
    searches: dict[str, Result],
    sizes: dict[str, float],
    peers: Peers,
) -> list[str]:
    """Every system's medians side by side (peers over every row, so their search is in the CONFIDENTIAL column)."""

    def cell(result: Result | None, width: int = 9) -> str:
        return f"{'—':>{width}}" if result is None else f"{result.median:>{width},.0f}"

    header = (
        f"{'N':>9}  {'system':<24} {'bulk µs':>8} {'save µs':>8} {'get µs':>8} "
        f"{'search PUBLIC':>13} {'INTERNAL':>9} {'CONFIDENTIAL':>12} {'disk MB':>8}"
    )
    lines = [header, "-" * len(header)]
    rows: list[tuple[str, str]] = [
        ("floor", "floor"),
        ("memlab file", "file"),
        ("memlab folder", "folder"),
        ("memlab file, snippets read", "file+snippets"),
        ("raw FTS5 (visible rows)", "raw"),
        ("raw FTS5 +rows, snippets", "raw+rows"),
        ("raw FTS5 + audited commit", "raw+commit"),
    ]
    for label, name in rows:
        on = "raw FTS5" if name == "raw" else name
        search = [searches.get(f"{name} {taint.name}") for taint in LEVELS]
        disk = f"{sizes[on]:>8.1f}" if on in sizes else f"{'—':>8}"
        lines.append(
            f"{size:>9,}  {label:<24} {cell(bulk.get(on), 8)} {cell(saves.get(on), 8)} {cell(gets.get(on), 8)} "
            f"{cell(search[0], 13)} {cell(search[1])} {cell(search[2], 12)} {disk}"
        )
    for name in peers.search:
        lines.append(
            f"{size:>9,}  {name:<24} {cell(bulk.get(name), 8)} {cell(saves.get(name), 8)} {cell(gets.get(name), 8)} "
            f"{cell(None, 13)} {cell(None)} {cell(searches[name], 12)} {sizes[name]:>8.1f}"
        )
    lines += [f"{size:>9,}  {skipped:<24} skipped" for skipped in peers.skipped]
    return lines


def search_ratios(size: int, searches: dict[str, Result]) -> list[str]:
    """memlab's search p50 over each baseline, taint by taint: the target's (raw FTS5 over the visible rows), raw
    FTS5 in the audited transaction every memlab search makes, and the floor (the same guarantees)."""
    header = f"{'N':>9}  {'search p50 ratio':<52} {'PUBLIC':>7} {'INTERNAL':>9} {'CONFIDENTIAL':>12}"
    lines = ["", header, "-" * len(header)]
    baselines = [("raw", "raw FTS5 (the target)"), ("raw+commit", "raw FTS5 + audited commit"), ("floor", "floor")]
    for name in ("file", "file+snippets", "folder"):
        for baseline, label in baselines:
            ratios = [searches[f"{name} {t.name}"].median / searches[f"{baseline} {t.name}"].median for t in LEVELS]
            cells = f"{ratios[0]:>6.2f}x {ratios[1]:>8.2f}x {ratios[2]:>11.2f}x"
            lines.append(f"{size:>9,}  {'memlab ' + name + ' ÷ ' + label:<52} {cells}")
    return lines


def print_targets(results: dict[int, list[Target]]) -> None:
    header = (
        f"{'N':>9}  {'measure':<30} {'memlab':>11} {'against':>11} {'ratio':>7}  {'against is':<17} "
        f"{'target':<9} {'met':<3}"
    )
    print(header)
    print("-" * len(header))
    for size, targets in results.items():
        for t in targets:
            print(
                f"{size:>9,}  {t.measure:<30} {t.memlab:>8,.1f} {t.unit:<2} {t.baseline:>8,.1f} {t.unit:<2} "
                f"{t.ratio:>6.2f}x  {t.against:<17} {'≤ ' + format(t.bound, 'g') + 'x':<9} {'yes' if t.met else 'NO'}"
            )
        print()


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated corpus sizes (default: %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="repeats per measure, medians (default: %(default)s)")
    parser.add_argument("--queries", type=int, default=300, help="timed searches per system (default: %(default)s)")
    parser.add_argument("--gets", type=int, default=1500, help="timed gets per system (default: %(default)s)")
    parser.add_argument("--saves", type=int, default=600, help="timed single saves per system (default: %(default)s)")
    parser.add_argument("--lists", type=int, default=30, help="timed tag lists per gate setting (default: %(default)s)")
    parser.add_argument("--profile", action="store_true", help="profile memlab's get and search at every size")
    args = parser.parse_args(argv)
    args.sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]

    print("\n".join(environment()))
    print(
        "peers:      "
        + ", ".join(f"{p} {_version(p)}" for p in ("tantivy", "bm25s", "langgraph", "langgraph-checkpoint-sqlite"))
    )
    print(
        f"settings:   sizes={args.sizes} repeats={args.repeats} queries={args.queries} gets={args.gets} "
        f"saves={args.saves} seed={args.seed}; batches of {BATCH:,}"
    )
    corpus = Corpus(args.seed)
    targets: dict[int, list[Target]] = {}
    tables: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memlab-floor-", dir=os.environ.get("BENCH_TMP")) as tmp:
        for size in args.sizes:
            print(f"\nN = {size:,}", flush=True)
            targets[size], lines = bench_size(corpus, size, args, Path(tmp))
            tables += [*lines, ""]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\ntotal run time {time.perf_counter() - started:.0f} s; load average {load} at the end\n")
    print("\n".join(tables))
    print("medians of the repeats: bulk = µs per memory (batches of 1,000), save = µs per single save (its own")
    print("transaction), get and search = p50 µs (search max_results 10; peers search every row, so their figure")
    print("is under CONFIDENTIAL, which sees every row); raw FTS5's get and save commit one audit row")
    print("(RawStore.get_audited, save); disk MB after a checkpoint.")
    print("LangGraph's search ignores the query without an embedding index: an unranked filter.\n")
    print_targets(targets)
    met = [t.met for ts in targets.values() for t in ts]
    print(f"targets met: {sum(met)}/{len(met)}")


if __name__ == "__main__":
    main()
