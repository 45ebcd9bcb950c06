"""Many agents in one store: what the folder layout costs per agent, against one agent alone in its own store.

For each number of agents A (``--agents``) the script builds, in a temporary directory, a folder store
(``MemoryStore(path)``: one SQLite file per agent plus ``catalogue.db``) holding A agents × M memories
(``--per-agent``): half PUBLIC, half CONFIDENTIAL, each half loaded with one ``memory_save_many`` call
per agent and level, from the corpus of ``bench_store.py`` (memory ``i`` of agent ``a`` is corpus note
``a*M + i``). Beside it, a "one-agent" store holds exactly the data of one agent of the big store (the
middle one), loaded the same way. It then measures, interleaving the two stores call by call:

* load time and rate (sessions and ``memory_save_many`` of every agent);
* opening the store: ``MemoryStore(path)`` in a fresh Python process (memlab already imported, so the
  import is not timed; the OS page cache is warm — the machine cannot drop it), then a session and the
  first ``memory_get`` of one agent; and the same in-process, repeated;
* single saves of the middle agent (``memory_save``, each its own transaction) vs the one-agent store;
* ``memory_search`` (p50/p95) and ``memory_get`` (p50) of the middle agent at CONFIDENTIAL taint (it sees
  all its memories) vs the one-agent store;
* ``memory_get`` rotating over up to 256 agents, so that every call opens an agent file (the store set to keep
  64 open), vs the one-agent store;
* schema objects (``sqlite_master`` rows of the catalogue and of one agent file) and the total size of
  every file of the store after it is closed;
* at ``--random-agents`` and more agents (default 1,000), a call on a random agent against the same call on an
  agent that is open, interleaved call by call in one run: ``memory_get`` through a session made earlier, and
  a new session then ``memory_get`` (a user arriving). Every agent has a session and one call first (in order),
  so the open files are what a long run of calls leaves (open, and written to since), not the ones the draws will
  ask for; the draws are uniform over every agent. Once with the store's own number of open files and once with
  64 open (the old default), where nearly every random call closes one file and opens another. p50 and mean
  (the mean carries the calls that open a file when the p50 does not).

With ``--file-agents`` (default 10,1000) it does the same for the old single-file layout
(``layout="file"``: every agent in one file, one FTS5 index per agent and level) at ``--file-per-agent``
memories per agent (default 10), and for the folder layout at the same shape, for a before/after
comparison. The single-file layout is not built at 10,000 agents: its schema grows with the agents
(SQLite re-parses it on every connection and schema change), and loading it would take hours.

Usage::

    python benchmarks/bench_agents.py [--agents 10,1000,10000] [--per-agent 100] [--file-agents 10,1000]
                                      [--file-per-agent 10] [--saves 1000] [--queries 300] [--gets 1000]
                                      [--random-agents 1000] [--only-random]

``--bulk N`` measures only one agent's bulk load (N memories, ``memory_save_many`` in batches of 1,000, half
PUBLIC then half CONFIDENTIAL) into a file store and into a folder store, batch by batch interleaved (the order
rotating), each batch timed in wall time and in the calling thread's CPU time (``time.thread_time``: what the
process did, without the time it waited for a core or for the disk): whether the folder's bulk does more work than
the file's, or waits more.

``--only-random`` builds the folder stores of ``--agents`` and measures only the random-agent calls; with
``--profile`` it profiles them instead (``profile_random_gets``: each random get in wall and CPU time, hits and misses
apart, with the closer's queue as the call found it). With
``--store-dir DIR`` (with ``--only-random``) a folder store is built into DIR once and kept, and a later run finds
it there and measures it without building (a 10,000-agent build takes a quarter of an hour): so two versions of
memlab can be measured on the same files. Each run adds its sessions' rows and calls' audit rows to it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import WARMUP_CALLS, Corpus, Note, Timings, environment, interleaved  # noqa: E402

from memlab import Level, MemoryStore, Session  # noqa: E402
from memlab.storage.folder_closer import MAX_PENDING  # noqa: E402

LEVELS = (Level.PUBLIC, Level.CONFIDENTIAL)  # first half of an agent's memories PUBLIC, second half CONFIDENTIAL
ROTATING_AGENTS = 256
COLD_OPENS = 5
WARM_OPENS = 20

# Targets at the largest folder store (10,000 agents × 100 memories).
OPEN_TARGET_MS = 100.0
SAVE_RATE_TARGET = 2_000.0
SAVE_RATIO_TARGET = 1.2  # one-agent store saves/s ÷ big store saves/s
READ_RATIO_TARGET = 1.2  # big store p50 ÷ one-agent store p50
RANDOM_RATIO_TARGET = 2.0  # a get on a random agent ÷ a get on an open one (issue 21), at 1,000 and 10,000 agents
BULK_BATCH = 1_000  # records per memory_save_many transaction in --bulk (bench_floor.py's batches)
OLD_CACHE_SIZE = 64  # the folder store's number of open files before it was sized from the descriptor limit

_COLD_OPEN = """
import json, sys, time
from memlab import MemoryStore
path, agent, key, layout = sys.argv[1:5]
t0 = time.perf_counter()
store = MemoryStore(path, layout=layout)
t1 = time.perf_counter()
session = store.session(taint="CONFIDENTIAL", agent=agent)
t2 = time.perf_counter()
memory = session.memory_get(key)
t3 = time.perf_counter()
assert memory is not None, key
store.close()
print(json.dumps({"open": t1 - t0, "session": t2 - t1, "get": t3 - t2}))
"""


def agent_name(a: int) -> str:
    return f"agent-{a:05d}"


def agent_notes(corpus: Corpus, a: int, per_agent: int) -> list[Note]:
    return list(corpus.notes(a * per_agent, per_agent))


def load_agent(store: MemoryStore, agent: str, notes: Sequence[Note]) -> None:
    """Half the memories at PUBLIC, half at CONFIDENTIAL, one memory_save_many per level."""
    half = len(notes) // 2
    for level, part in zip(LEVELS, (notes[:half], notes[half:]), strict=True):
        session = store.session(taint=level, agent=agent)
        session.memory_save_many([{"key": n.key, "content": n.content, "tags": list(n.tags)} for n in part])


def store_size(path: Path) -> int:
    """Bytes of every file of the store: the folder's files, or the file and its -wal/-shm."""
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def schema_objects(path: Path) -> int:
    conn = sqlite3.connect(str(path))
    try:
        return conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    finally:
        conn.close()


@dataclass
class Result:
    layout: str
    agents: int
    per_agent: int
    load_s: float
    cold_open_ms: float
    cold_first_get_ms: float  # session + first memory_get, after the open, in the fresh process
    warm_open_ms: float
    warm_first_get_ms: float
    saves: Timings
    saves_alone: Timings
    search: Timings
    search_alone: Timings
    get: Timings
    get_alone: Timings
    get_rotating: Timings
    rotating_agents: int
    catalogue_objects: int | None
    agent_objects: int
    alone_objects: int
    size_bytes: int
    alone_size_bytes: int


@dataclass
class RandomResult:
    """Calls on a random agent against the same calls on an open one, interleaved (``random_agent_calls``)."""

    agents: int
    per_agent: int
    cache: str  # the number of open files, as set
    open_files: int  # how many the store kept open
    calls: dict[str, Timings]

    def ratio(self, call: str, mean: bool = False) -> float:
        def figure(name: str) -> float:
            timings = self.calls[name]
            return 1e6 / timings.rate if mean else timings.p50_us

        return figure(f"random {call}") / figure(f"open {call}")


def random_agent_calls(
    path: Path, agents: int, per_agent: int, target: str, target_key: str, cache_size: int | None, gets: int
) -> RandomResult:
    """``memory_get`` and new session + ``memory_get`` on a uniformly drawn agent vs on ``target`` (kept open by
    the calls on it), interleaved; every agent is given a session and one call first, in order."""
    store = MemoryStore(path)
    if cache_size is not None:
        store.storage.cache_size = cache_size  # type: ignore[attr-defined]
    try:
        started = time.perf_counter()
        sessions = []
        for a in range(agents):
            sessions.append(store.session(taint=Level.CONFIDENTIAL, agent=agent_name(a)))
            # A call too: a file's first write after its open starts a new WAL (a sync), once per open; a long run
            # leaves its open files written (the 64-file rows pay that start on nearly every random call).
            sessions[-1].memory_get(f"note-{a * per_agent}")
            if agents >= 1000 and (a + 1) % (agents // 5) == 0:
                print(f"    {a + 1:,} sessions in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        reader = store.session(taint=Level.CONFIDENTIAL, agent=target)
        rng = random.Random(agents * 11 + per_agent)
        # Two draws per item, one for each random call: the second call on the first's agent would find it open.
        draws = [rng.randrange(agents) for _ in range(2 * (gets + WARMUP_CALLS))]
        keyed = [(a, f"note-{a * per_agent + rng.randrange(per_agent)}") for a in draws]
        items = list(zip(keyed[0::2], keyed[1::2], strict=True))
        for a, key in keyed[:20]:
            if sessions[a].memory_get(key) is None:
                raise SystemExit(f"memory_get({key!r}) of {agent_name(a)} found nothing")

        def new_session(agent: str, key: str) -> object:
            return store.session(taint=Level.CONFIDENTIAL, agent=agent).memory_get(key)

        calls: dict[str, Callable[[Any], object]] = {
            "open get": lambda item: reader.memory_get(target_key),
            "random get": lambda item: sessions[item[0][0]].memory_get(item[0][1]),
            "open session+get": lambda item: new_session(target, target_key),
            "random session+get": lambda item: new_session(agent_name(item[1][0]), item[1][1]),
        }
        interleaved(calls, items[:WARMUP_CALLS])
        timings = interleaved(calls, items[WARMUP_CALLS:])
        open_files = len(store.storage._files)  # type: ignore[attr-defined]
        cache = str(store.storage.cache_size) + ("" if cache_size is not None else " (default)")  # type: ignore
    finally:
        store.close()
    return RandomResult(agents, per_agent, cache, open_files, timings)


def profile_random_gets(
    path: Path, agents: int, per_agent: int, target: str, target_key: str, cache_size: int | None, gets: int
) -> None:
    """Where a random agent's get spends its time (``--profile``): each call timed in wall time and in the calling
    thread's CPU time (``time.thread_time``), split by whether the agent's file was open (a hit) or had to be opened
    (a miss), with the closer's queue as the call found it; the open agent's gets interleaved as the baseline."""
    store = MemoryStore(path)
    if cache_size is not None:
        store.storage.cache_size = cache_size  # type: ignore[attr-defined]
    folder = store.storage
    closer = folder._closer  # type: ignore[attr-defined]
    rows: dict[str, list[tuple[float, float, int]]] = {"open": [], "hit": [], "miss": []}
    try:
        sessions = []
        for a in range(agents):
            sessions.append(store.session(taint=Level.CONFIDENTIAL, agent=agent_name(a)))
            sessions[-1].memory_get(f"note-{a * per_agent}")
        reader = store.session(taint=Level.CONFIDENTIAL, agent=target)
        rng = random.Random(agents * 13 + per_agent)
        for n in range(gets + WARMUP_CALLS):
            a = rng.randrange(agents)
            for kind, session, key in (
                ("open", reader, target_key),
                ("random", sessions[a], f"note-{a * per_agent + rng.randrange(per_agent)}"),
            ):
                if kind == "random":
                    kind = "hit" if agent_name(a) in folder._files else "miss"  # type: ignore[attr-defined]
                queued = len(closer._queue)
                wall, cpu = time.perf_counter(), time.thread_time()
                session.memory_get(key)
                cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
                if n >= WARMUP_CALLS:
                    rows[kind].append((wall, cpu, queued))
        open_files = len(folder._files)  # type: ignore[attr-defined]
    finally:
        store.close()
    cache = str(cache_size) if cache_size is not None else f"{open_files} (default)"
    print(f"  profile, {agents:,} agents × {per_agent}, {cache} files open: memory_get, wall and the caller's CPU")
    print(
        f"  {'calls':<6} {'n':>6} {'wall p50':>9} {'wall mean':>10} {'CPU p50':>9} {'CPU mean':>9} {'CPU/wall':>8} "
        f"{'closer busy':>11} {'queue full':>10}"
    )
    for kind, measured in rows.items():
        if not measured:
            continue
        walls, cpus, queues = zip(*measured, strict=True)
        busy, full = sum(q > 0 for q in queues) / len(queues), sum(q >= MAX_PENDING for q in queues) / len(queues)
        print(
            f"  {kind:<6} {len(measured):>6,} {statistics.median(walls) * 1e6:>7.1f}µs "
            f"{statistics.mean(walls) * 1e6:>8.1f}µs {statistics.median(cpus) * 1e6:>7.1f}µs "
            f"{statistics.mean(cpus) * 1e6:>7.1f}µs {sum(cpus) / sum(walls):>8.0%} "
            f"{busy:>11.0%} {full:>10.0%}",
            flush=True,
        )


def bulk_file_and_folder(corpus: Corpus, size: int) -> None:
    """One agent's bulk load into a file store and a folder store, interleaved batch by batch: wall and CPU time."""
    notes = list(corpus.notes(0, size))
    half = size // 2
    batches = [(LEVELS[0], notes[i : min(i + BULK_BATCH, half)]) for i in range(0, half, BULK_BATCH)]
    batches += [(LEVELS[1], notes[i : i + BULK_BATCH]) for i in range(half, size, BULK_BATCH)]
    cpu: dict[str, list[float]] = {"file": [], "folder": []}
    with tempfile.TemporaryDirectory(prefix="memlab-bulk-", dir=os.environ.get("BENCH_TMP")) as tmp:
        stores = {"file": MemoryStore(Path(tmp) / "one.db"), "folder": MemoryStore(Path(tmp) / "folder")}
        sessions = {name: {level: store.session(taint=level) for level in LEVELS} for name, store in stores.items()}

        def load(name: str) -> Callable[[tuple[Level, list[Note]]], object]:
            def call(batch: tuple[Level, list[Note]]) -> object:
                records = [{"key": n.key, "content": n.content, "tags": list(n.tags)} for n in batch[1]]
                started = time.thread_time()
                saved = sessions[name][batch[0]].memory_save_many(records, batch_size=BULK_BATCH)
                cpu[name].append(time.thread_time() - started)
                return saved

            return call

        try:
            wall = interleaved({name: load(name) for name in stores}, batches)
        finally:
            for store in stores.values():
                store.close()
    print(f"\none agent's bulk load, {size:,} memories in {len(batches)} batches of {BULK_BATCH:,}, interleaved")
    columns = ("wall p50 ms", "wall mean ms", "CPU p50 ms", "CPU mean ms", "CPU/wall")
    print(f"{'store':<8} " + " ".join(f"{column:>12}" for column in columns))
    for name in stores:
        mean_cpu = statistics.mean(cpu[name])
        print(
            f"{name:<8} {wall[name].p50_us / 1e3:>12.1f} {1e3 / wall[name].rate:>12.1f} "
            f"{statistics.median(cpu[name]) * 1e3:>12.1f} {mean_cpu * 1e3:>12.1f} {mean_cpu * wall[name].rate:>12.0%}"
        )
    ratio_wall = wall["folder"].p50_us / wall["file"].p50_us
    ratio_cpu = statistics.median(cpu["folder"]) / statistics.median(cpu["file"])
    print(f"folder ÷ file, per batch: wall p50 {ratio_wall:.2f}x, CPU p50 {ratio_cpu:.2f}x")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average {load} at the end")


def cold_open(path: Path, agent: str, key: str, layout: str) -> tuple[float, float]:
    """Median over fresh processes of (open, session + first get), in ms."""
    opens, firsts = [], []
    for _ in range(COLD_OPENS):
        out = subprocess.run(
            [sys.executable, "-c", _COLD_OPEN, str(path), agent, key, layout],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        timing = json.loads(out)
        opens.append(timing["open"] * 1e3)
        firsts.append((timing["session"] + timing["get"]) * 1e3)
    return statistics.median(opens), statistics.median(firsts)


def warm_open(path: Path, agent: str, key: str, layout: str) -> tuple[float, float]:
    opens, firsts = [], []
    for _ in range(WARM_OPENS):
        t0 = time.perf_counter()
        store = MemoryStore(path, layout=layout)
        t1 = time.perf_counter()
        store.session(taint="CONFIDENTIAL", agent=agent).memory_get(key)
        t2 = time.perf_counter()
        store.close()
        opens.append((t1 - t0) * 1e3)
        firsts.append((t2 - t1) * 1e3)
    return statistics.median(opens), statistics.median(firsts)


def build(corpus: Corpus, path: Path, agents: int, per_agent: int, layout: str) -> float:
    """Load ``agents`` × ``per_agent`` memories into a new store at ``path``; the seconds it took."""
    store = MemoryStore(path, layout=layout)
    start = time.perf_counter()
    step = max(1, agents // 10)
    for a in range(agents):
        load_agent(store, agent_name(a), agent_notes(corpus, a, per_agent))
        if (a + 1) % step == 0 and agents >= 1000:
            elapsed = time.perf_counter() - start
            print(
                f"    {a + 1:,} agents in {elapsed:.1f} s ({(a + 1) * per_agent / elapsed:,.0f} memories/s)",
                file=sys.stderr,  # progress: shown, not part of the output benchmarks/record.py keeps
            )
    load_s = time.perf_counter() - start
    store.close()
    print(
        f"  {layout}: loaded {agents:,} agents × {per_agent} = {agents * per_agent:,} memories in {load_s:.1f} s "
        f"({agents * per_agent / load_s:,.0f} memories/s)",
        flush=True,
    )
    return load_s


def bench(corpus: Corpus, agents: int, per_agent: int, layout: str, args: argparse.Namespace, workdir: Path) -> Result:
    suffix = "" if layout == "folder" else ".db"
    path = workdir / f"{layout}-{agents}x{per_agent}{suffix}"
    alone_path = workdir / f"{layout}-alone-{agents}x{per_agent}{suffix}"
    middle = agents // 2
    target = agent_name(middle)
    target_notes = agent_notes(corpus, middle, per_agent)

    load_s = build(corpus, path, agents, per_agent, layout)
    alone = MemoryStore(alone_path, layout=layout)
    load_agent(alone, target, target_notes)
    alone.close()

    size, alone_size = store_size(path), store_size(alone_path)
    if layout == "folder":
        probe = MemoryStore(path)
        agent_file = probe.storage.agent_path(target)  # type: ignore[attr-defined]
        probe.close()
        catalogue_objects: int | None = schema_objects(path / "catalogue.db")
        agent_objects = schema_objects(agent_file)
        alone_objects = schema_objects(alone_path / agent_file.relative_to(path))
    else:
        catalogue_objects = None
        agent_objects = schema_objects(path)
        alone_objects = schema_objects(alone_path)

    key = target_notes[0].key
    cold_open_ms, cold_first_ms = cold_open(path, target, key, layout)
    warm_open_ms, warm_first_ms = warm_open(path, target, key, layout)
    print(
        f"  open: fresh process {cold_open_ms:.1f} ms (+ session and first get {cold_first_ms:.1f} ms); "
        f"in-process {warm_open_ms:.2f} ms (+ {warm_first_ms:.2f} ms)",
        flush=True,
    )

    store, alone = MemoryStore(path, layout=layout), MemoryStore(alone_path, layout=layout)
    writer, alone_writer = store.session(agent=target), alone.session(agent=target)
    reader = store.session(taint=Level.CONFIDENTIAL, agent=target)
    alone_reader = alone.session(taint=Level.CONFIDENTIAL, agent=target)

    extra = list(corpus.notes(10_000_000, args.saves + WARMUP_CALLS, stream=5))

    def saver(session: Session) -> Callable[[Note], object]:
        return lambda note: session.memory_save(note.key, note.content, tags=list(note.tags))

    save_calls = {"store": saver(writer), "alone": saver(alone_writer)}
    interleaved(save_calls, extra[:WARMUP_CALLS])
    saves = interleaved(save_calls, extra[WARMUP_CALLS:])

    queries = corpus.queries(args.queries, stream=2)
    search_calls: dict[str, Callable[[Any], object]] = {
        "store": lambda q: reader.memory_search(q, max_results=10),
        "alone": lambda q: alone_reader.memory_search(q, max_results=10),
    }
    for q in queries[:50]:  # same data, same statistics: the same hits
        mine = [(h.memory.key, round(h.score, 9)) for h in reader.memory_search(q, max_results=10)]
        theirs = [(h.memory.key, round(h.score, 9)) for h in alone_reader.memory_search(q, max_results=10)]
        if mine != theirs:
            raise SystemExit(f"search {q!r}: the agent in the big store and alone disagree: {mine} vs {theirs}")
    interleaved(search_calls, corpus.queries(WARMUP_CALLS, stream=3))
    searches = interleaved(search_calls, queries)

    rng = random.Random(agents * 7 + per_agent)
    keys = [target_notes[rng.randrange(per_agent)].key for _ in range(args.gets + WARMUP_CALLS)]
    get_calls: dict[str, Callable[[Any], object]] = {"store": reader.memory_get, "alone": alone_reader.memory_get}
    for k in keys[:50]:
        if reader.memory_get(k) is None or alone_reader.memory_get(k) is None:
            raise SystemExit(f"memory_get({k!r}) found nothing")
    interleaved(get_calls, keys[:WARMUP_CALLS])
    gets = interleaved(get_calls, keys[WARMUP_CALLS:])

    # A different agent each call: with more agents than the cache holds, every call opens a file.
    store.storage.cache_size = OLD_CACHE_SIZE  # type: ignore[attr-defined]
    rotating = sorted(rng.sample(range(agents), min(agents, ROTATING_AGENTS)))
    rotating_sessions = [store.session(taint=Level.CONFIDENTIAL, agent=agent_name(a)) for a in rotating]
    rotating_items = [
        (
            rotating_sessions[n % len(rotating)],
            f"note-{rotating[n % len(rotating)] * per_agent + rng.randrange(per_agent)}",
        )
        for n in range(args.gets)
    ]
    rotating_calls: dict[str, Callable[[Any], object]] = {"store": lambda item: item[0].memory_get(item[1])}
    for session, k in rotating_items[: len(rotating)]:
        if session.memory_get(k) is None:
            raise SystemExit(f"memory_get({k!r}) of {session.agent} found nothing")
    get_rotating = interleaved(rotating_calls, rotating_items)["store"]
    store.close()
    alone.close()

    return Result(
        layout,
        agents,
        per_agent,
        load_s,
        cold_open_ms,
        cold_first_ms,
        warm_open_ms,
        warm_first_ms,
        saves["store"],
        saves["alone"],
        searches["store"],
        searches["alone"],
        gets["store"],
        gets["alone"],
        get_rotating,
        len(rotating),
        catalogue_objects,
        agent_objects,
        alone_objects,
        size,
        alone_size,
    )


def print_tables(results: list[Result], skipped_file: Sequence[int]) -> None:
    header = (
        f"{'layout':<6} {'agents':>7} {'mem/agt':>7} {'memories':>10} {'load s':>8} {'load /s':>9} "
        f"{'open ms':>8} {'+get ms':>8} {'open ms':>8} {'+get ms':>8} {'schema':>13} {'size MB':>9} {'MB/agent':>8}"
    )
    print("Load, open, schema, size")
    print(f"{'':<52}{'fresh process':^18} {'in-process':^18}")
    print(header)
    print("-" * len(header))
    for r in results:
        schema = f"{r.catalogue_objects}+{r.agent_objects}" if r.catalogue_objects is not None else f"{r.agent_objects}"
        print(
            f"{r.layout:<6} {r.agents:>7,} {r.per_agent:>7} {r.agents * r.per_agent:>10,} {r.load_s:>8.1f} "
            f"{r.agents * r.per_agent / r.load_s:>9,.0f} {r.cold_open_ms:>8.1f} {r.cold_first_get_ms:>8.1f} "
            f"{r.warm_open_ms:>8.2f} {r.warm_first_get_ms:>8.2f} {schema:>13} {r.size_bytes / 1e6:>9.1f} "
            f"{r.size_bytes / 1e6 / r.agents:>8.3f}"
        )
    for agents in skipped_file:
        print(f"{'file':<6} {agents:>7,}  not built: the single-file layout would take hours to load at this size")
    print()
    print("One agent in the big store vs the same agent's data alone in its own store (same layout), interleaved")
    header = (
        f"{'layout':<6} {'agents':>7} {'mem/agt':>7} | {'saves/s':>8} {'alone':>8} {'ratio':>6} | "
        f"{'search p50':>10} {'alone':>8} {'ratio':>6} | {'p95':>8} {'alone':>8} {'ratio':>6} | "
        f"{'get p50':>8} {'alone':>7} {'ratio':>6} | {'rotating':>8} {'ratio':>6}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r.layout:<6} {r.agents:>7,} {r.per_agent:>7} | {r.saves.rate:>8,.0f} {r.saves_alone.rate:>8,.0f} "
            f"{r.saves_alone.rate / r.saves.rate:>5.2f}x | {r.search.p50_us:>8.1f}µs {r.search_alone.p50_us:>6.1f}µs "
            f"{r.search.p50_us / r.search_alone.p50_us:>5.2f}x | "
            f"{r.search.p95_us:>6.1f}µs {r.search_alone.p95_us:>6.1f}µs "
            f"{r.search.p95_us / r.search_alone.p95_us:>5.2f}x | {r.get.p50_us:>6.1f}µs {r.get_alone.p50_us:>5.1f}µs "
            f"{r.get.p50_us / r.get_alone.p50_us:>5.2f}x | {r.get_rotating.p50_us:>6.1f}µs "
            f"{r.get_rotating.p50_us / r.get_alone.p50_us:>5.2f}x"
        )
    print()
    print(
        "saves ratio = alone saves/s ÷ big-store saves/s (>1: the big store is slower);\n"
        "search/get ratio = big store ÷ alone. search and get at CONFIDENTIAL taint (the agent's every memory\n"
        "visible), max_results 10; rotating = memory_get of a different agent each call, over up to\n"
        f"{ROTATING_AGENTS} agents, with {OLD_CACHE_SIZE} files open."
    )
    print()
    print("Targets (folder store at the largest size):")
    folder = [r for r in results if r.layout == "folder"]
    if not folder:
        return
    big = max(folder, key=lambda r: (r.agents * r.per_agent, r.agents))
    checks = [
        (
            f"open (fresh process) < {OPEN_TARGET_MS:.0f} ms",
            f"{big.cold_open_ms:.1f} ms",
            big.cold_open_ms < OPEN_TARGET_MS,
        ),
        (
            f"open + session + first get (fresh process) < {OPEN_TARGET_MS:.0f} ms",
            f"{big.cold_open_ms + big.cold_first_get_ms:.1f} ms",
            big.cold_open_ms + big.cold_first_get_ms < OPEN_TARGET_MS,
        ),
        (f"single saves ≥ {SAVE_RATE_TARGET:,.0f}/s", f"{big.saves.rate:,.0f}/s", big.saves.rate >= SAVE_RATE_TARGET),
        (
            f"single saves within {SAVE_RATIO_TARGET}x of one agent alone",
            f"{big.saves_alone.rate / big.saves.rate:.2f}x",
            big.saves_alone.rate / big.saves.rate <= SAVE_RATIO_TARGET,
        ),
        (
            f"search p50 within {READ_RATIO_TARGET}x of one agent alone",
            f"{big.search.p50_us / big.search_alone.p50_us:.2f}x",
            big.search.p50_us / big.search_alone.p50_us <= READ_RATIO_TARGET,
        ),
        (
            f"get p50 within {READ_RATIO_TARGET}x of one agent alone",
            f"{big.get.p50_us / big.get_alone.p50_us:.2f}x",
            big.get.p50_us / big.get_alone.p50_us <= READ_RATIO_TARGET,
        ),
    ]
    print(f"  at {big.agents:,} agents × {big.per_agent} memories:")
    for what, figure, met in checks:
        print(f"  {what:<62} {figure:>10}  {'met' if met else 'MISSED'}")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="10,1000,10000", help="comma-separated agent counts (default: %(default)s)")
    parser.add_argument("--per-agent", type=int, default=100, help="memories per agent (default: %(default)s)")
    parser.add_argument(
        "--file-agents", default="10,1000", help="agent counts for the single-file layout (default: %(default)s)"
    )
    parser.add_argument(
        "--file-per-agent", type=int, default=10, help="memories per agent there (default: %(default)s)"
    )
    parser.add_argument("--file-max-agents", type=int, default=1000, help="skip the file layout above this")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--saves", type=int, default=1000, help="timed single saves (default: %(default)s)")
    parser.add_argument("--queries", type=int, default=300, help="timed searches (default: %(default)s)")
    parser.add_argument("--gets", type=int, default=1000, help="timed gets (default: %(default)s)")
    parser.add_argument(
        "--random-agents", type=int, default=1000, help="measure random-agent calls from this many agents on"
    )
    parser.add_argument("--only-random", action="store_true", help="build the folder stores, measure random calls")
    parser.add_argument("--bulk", type=int, metavar="N", help="measure only a bulk load of N memories, file vs folder")
    parser.add_argument("--store-dir", type=Path, help="with --only-random: keep the built stores here, reuse them")
    parser.add_argument(
        "--profile", action="store_true", help="with --only-random: profile random gets (hits, misses, the closer)"
    )
    args = parser.parse_args(argv)
    if args.store_dir is not None and not args.only_random:
        parser.error("--store-dir needs --only-random")
    if args.profile and not args.only_random:
        parser.error("--profile needs --only-random")
    counts = [int(s.replace("_", "")) for s in args.agents.split(",") if s.strip()]
    file_counts = [int(s.replace("_", "")) for s in args.file_agents.split(",") if s.strip()]

    print("\n".join(environment()))
    print(
        f"settings:   agents={counts} per-agent={args.per_agent}; file layout agents={file_counts} "
        f"per-agent={args.file_per_agent}; saves={args.saves} queries={args.queries} gets={args.gets} seed={args.seed}"
    )
    corpus = Corpus(args.seed)
    if args.bulk:
        bulk_file_and_folder(corpus, args.bulk)
        return
    results: list[Result] = []
    randoms: list[RandomResult] = []
    skipped = [] if args.only_random else [a for a in file_counts if a > args.file_max_agents]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="memlab-agents-", dir=os.environ.get("BENCH_TMP")) as tmp:
        workdir = Path(tmp)
        for agents in [] if args.only_random else [a for a in file_counts if a <= args.file_max_agents]:
            for layout in ("file", "folder"):
                print(f"\n{layout} layout, {agents:,} agents × {args.file_per_agent}", flush=True)
                results.append(bench(corpus, agents, args.file_per_agent, layout, args, workdir))
        for agents in counts:
            print(f"\nfolder layout, {agents:,} agents × {args.per_agent}", flush=True)
            path = (args.store_dir or workdir) / f"folder-{agents}x{args.per_agent}"
            if args.only_random and (path / "catalogue.db").exists() and args.store_dir is not None:
                print(f"  folder: {agents:,} agents × {args.per_agent} as built before in {path}", flush=True)
            elif args.only_random and args.store_dir is not None:
                partial = path.with_name(path.name + ".partial")  # an interrupted build is never reused
                subprocess.run(["rm", "-rf", str(partial)], check=True)
                build(corpus, partial, agents, args.per_agent, "folder")
                partial.rename(path)
            elif args.only_random:
                build(corpus, path, agents, args.per_agent, "folder")
            else:
                results.append(bench(corpus, agents, args.per_agent, "folder", args, workdir))
            if agents >= args.random_agents and args.profile:
                middle = agents // 2
                key = agent_notes(corpus, middle, args.per_agent)[0].key
                for cache_size in (None, OLD_CACHE_SIZE):
                    profile_random_gets(path, agents, args.per_agent, agent_name(middle), key, cache_size, args.gets)
            elif agents >= args.random_agents:
                middle = agents // 2
                key = agent_notes(corpus, middle, args.per_agent)[0].key
                for cache_size in (None, OLD_CACHE_SIZE):
                    randoms.append(
                        random_agent_calls(path, agents, args.per_agent, agent_name(middle), key, cache_size, args.gets)
                    )
                    print_random(randoms[-1:], header=False)
            for leftover in workdir.iterdir():  # free the disk between sizes
                subprocess.run(["rm", "-rf", str(leftover)], check=True)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\ntotal run time {time.perf_counter() - started:.0f} s; load average {load} at the end\n")
    if results:
        print_tables(results, skipped)
    if randoms:
        print()
        print_random(randoms)


def print_random(results: list[RandomResult], *, header: bool = True) -> None:
    """The random-agent calls against the open agent's: p50 and mean, and their ratios."""
    if header:
        print("A call on a random agent vs the same call on an open agent (folder store), interleaved")
    columns = f"{'agents':>7} {'mem/agt':>7} {'open files':>15} | {'call':<12} {'open p50':>9} {'random':>9} "
    columns += f"{'ratio':>6} | {'open mean':>9} {'random':>9} {'ratio':>6}"
    if header:
        print(columns)
        print("-" * len(columns))
    for r in results:
        for call in ("get", "session+get"):
            opened, drawn = r.calls[f"open {call}"], r.calls[f"random {call}"]
            print(
                f"{r.agents:>7,} {r.per_agent:>7} {r.cache:>15} | {call:<12} {opened.p50_us:>7.1f}µs "
                f"{drawn.p50_us:>7.1f}µs {r.ratio(call):>5.2f}x | {1e6 / opened.rate:>7.1f}µs "
                f"{1e6 / drawn.rate:>7.1f}µs {r.ratio(call, mean=True):>5.2f}x",
                flush=True,
            )
    if not header:
        return
    print()
    print(
        "open = the middle agent, called every other call (its file stays open); random = an agent drawn uniformly\n"
        "(every agent was given a session and a get first, in order); session+get = a new session, then memory_get.\n"
        f"open files: the store's own number (default) and {OLD_CACHE_SIZE}, the old default."
    )
    print()
    print(f"Targets (random-agent get ≤ {RANDOM_RATIO_TARGET}x an open agent's, store's own number of open files):")
    for r in results:
        if "default" in r.cache:
            for figure, mean in (("p50", False), ("mean", True)):
                ratio = r.ratio("get", mean=mean)
                what = f"get {figure} at {r.agents:,} agents × {r.per_agent}"
                print(f"  {what:<62} {ratio:>9.2f}x  {'met' if ratio <= RANDOM_RATIO_TARGET else 'MISSED'}")


if __name__ == "__main__":
    main()
