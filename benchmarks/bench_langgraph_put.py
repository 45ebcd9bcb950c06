"""LangGraph's ``put`` over memlab (``MemlabStore``) against LangGraph's own ``SqliteStore`` (which gates and audits
nothing), in one process, interleaved: issue 37's put target (at most 3x).

Both stores are files in WAL mode with ``synchronous=NORMAL`` (memlab's settings; ``bench_peers.LangGraphPeer``), a
fresh pair in a new temporary directory for each measure; the values are ``bench_store.py``'s notes as
``{"content", "tags"}`` items of one namespace, as ``bench_peers.py`` loads them. Imports, opening and each store's
first put (memlab makes the agent's file there) come before the clock starts: what is timed is puts.

* batch: N items (each N of ``--sizes``) as ``batch`` calls of 1,000 ``PutOp`` each, every put a gated, audited
  ``memory_save`` in memlab, one transaction per batch in both;
* single: ``--singles`` ``put`` calls, each its own transaction, into a store already holding 1,000 items.

Each round measures both stores, one after the other, the first alternating between rounds; ``--repeats`` rounds.
The CPU time (process time) and wall time of the best and the median round are printed, and their ratios.

Usage, from the repository's root::

    python benchmarks/record.py bench_langgraph_put -- python benchmarks/bench_langgraph_put.py
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_peers import LangGraphPeer  # noqa: E402
from bench_store import Corpus, Note, environment  # noqa: E402
from langgraph.store.base import PutOp  # noqa: E402

from memlab import MemoryStore  # noqa: E402
from memlab.integrations.langgraph import MemlabStore  # noqa: E402

TARGET = 3.0
"""Issue 37: a ``MemlabStore`` put costs at most this many times a ``SqliteStore`` put."""
NAMESPACE = ("main",)
BATCH = 1_000
PRELOAD = 1_000  # items already in the store when the single puts are timed


def _value(note: Note) -> dict:
    return {"content": note.content, "tags": list(note.tags)}


def _langgraph(where: Path) -> tuple[Callable[[list[PutOp]], object], Callable[[], None]]:
    peer = LangGraphPeer(where / "langgraph.db")
    return peer.store.batch, peer.close


def _memlab(where: Path) -> tuple[Callable[[list[PutOp]], object], Callable[[], None]]:
    store = MemoryStore(where / "memlab")
    return MemlabStore(store, taint="PUBLIC").batch, store.close


STORES = {"langgraph SqliteStore": _langgraph, "MemlabStore": _memlab}


def _batches(notes: Sequence[Note]) -> list[list[PutOp]]:
    return [[PutOp(NAMESPACE, n.key, _value(n)) for n in notes[s : s + BATCH]] for s in range(0, len(notes), BATCH)]


def _timed(open_store: Callable, preload: Sequence[Note], timed: list[list[PutOp]]) -> tuple[float, float]:
    """CPU and wall seconds of the ``batch`` calls ``timed`` on a new store that holds ``preload`` (put untimed)."""
    with tempfile.TemporaryDirectory(prefix="memlab-put-") as tmp:
        batch, close = open_store(Path(tmp))
        batch([PutOp(NAMESPACE, "warm-up", {"content": "first put", "tags": []})])
        for ops in _batches(preload):
            batch(ops)
        cpu, wall = time.process_time(), time.perf_counter()
        for ops in timed:
            batch(ops)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        close()
    return cpu, wall


def _report(title: str, count: int, rounds: dict[str, list[tuple[float, float]]]) -> float:
    """Print one measure's best and median rounds per store and the ratios; return the best rounds' CPU ratio."""
    print(f"\n{title}")
    print(f"{'store':<22} {'CPU µs/put best':>16} {'median':>8} {'wall µs/put best':>17} {'median':>8}")
    best: dict[str, tuple[float, float]] = {}
    for name, samples in rounds.items():
        cpu = sorted(sample[0] for sample in samples)
        wall = sorted(sample[1] for sample in samples)
        best[name] = (cpu[0], statistics.median(cpu), wall[0], statistics.median(wall))
        figures = [value / count * 1e6 for value in best[name]]
        print(f"{name:<22} {figures[0]:>16.1f} {figures[1]:>8.1f} {figures[2]:>17.1f} {figures[3]:>8.1f}")
    ours, theirs = best["MemlabStore"], best["langgraph SqliteStore"]
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    print(
        f"MemlabStore / SqliteStore: {ratios[0]:.2f}x CPU best, {ratios[1]:.2f}x median; "
        f"{ratios[2]:.2f}x wall best, {ratios[3]:.2f}x median"
    )
    return ratios[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,20000", help="items per batch load (default: %(default)s)")
    parser.add_argument("--singles", type=int, default=1_000, help="single puts timed (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    if not sizes or min(sizes) < 1 or args.singles < 1 or args.repeats < 1:
        parser.error("--sizes, --singles and --repeats must be positive")
    print("\n".join(environment()))
    print(f"settings:   sizes={sizes} batch={BATCH} singles={args.singles} preload={PRELOAD} repeats={args.repeats}")
    corpus = Corpus(0)
    notes = list(corpus.notes(0, max(sizes)))
    singles = [[PutOp(NAMESPACE, n.key, _value(n))] for n in corpus.notes(max(sizes), args.singles)]
    # (title, puts timed, preloaded untimed, the batch calls timed)
    measures = [(f"batch {size:,}", size, [], _batches(notes[:size])) for size in sizes]
    measures.append((f"single {args.singles:,}", args.singles, notes[:PRELOAD], singles))
    verdicts = []
    for title, count, preload, timed in measures:
        rounds: dict[str, list[tuple[float, float]]] = {name: [] for name in STORES}
        for number in range(args.repeats):
            for name in list(STORES) if number % 2 == 0 else list(reversed(STORES)):
                rounds[name].append(_timed(STORES[name], preload, timed))
        shown = f"{title} puts" + (
            f" in batches of {BATCH:,}" if title.startswith("batch") else f", one a call, after {PRELOAD:,}"
        )
        verdicts.append((title, _report(shown, count, rounds)))
    print()
    for title, ratio in verdicts:
        verdict = "met" if ratio <= TARGET else "not met"
        print(
            f"target: MemlabStore put <= {TARGET:g}x SqliteStore's (CPU, best round), {title}: {ratio:.2f}x, {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
