"""What per-label views cost as the number of labels in use at an agent grows (compartments, docs/storage.md).

One SQLite file store holds ``--memories`` memories of one agent at PUBLIC (words of a small vocabulary). For
each count n of labels in use (1, 2, 4, 8, 16), a fresh copy of it gets n categorised views: sessions at
``CONFIDENTIAL:c1`` ... ``CONFIDENTIAL:cn`` each read once, which registers their view (effective rows and an
FTS5 index filled from the live versions). Then a session at ``CONFIDENTIAL:c1`` saves, gets and searches
``--calls`` times each, and a PUBLIC session saves as often (a PUBLIC save is readable in every view, so it
updates them all). The plain row is the same store and calls at CONFIDENTIAL, without categories. Each measure
is the median (p50) of its calls, in milliseconds; the last column is the time to register the n views.

Usage::

    python benchmarks/bench_labels.py [--memories 2000] [--calls 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from memlab import MemoryStore

WORDS = [f"w{n}" for n in range(400)]
COUNTS = (1, 2, 4, 8, 16)


def _p50(call: Callable[[int], object], calls: int) -> float:
    times = []
    for number in range(calls):
        started = time.perf_counter()
        call(number)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def _content(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=12))


def _template(folder: Path, memories: int) -> Path:
    path = folder / "template.db"
    rng = random.Random(1)
    with MemoryStore(path) as store:
        store.session().memory_save_many({"key": f"k{n}", "content": _content(rng)} for n in range(memories))
    return path


def _measure(template: Path, folder: Path, labels: int | None, calls: int) -> tuple[float, ...]:
    path = folder / f"store-{labels}.db"
    path.write_bytes(template.read_bytes())
    rng = random.Random(2)
    with MemoryStore(path) as store:
        started = time.perf_counter()
        if labels is None:
            taint, register = "CONFIDENTIAL", 0.0
        else:
            taint = "CONFIDENTIAL:c1"
            for number in range(1, labels + 1):
                store.session(taint=f"CONFIDENTIAL:c{number}").memory_get("k0")
            register = (time.perf_counter() - started) * 1000
        session, public = store.session(taint=taint), store.session()
        save = _p50(lambda n: session.memory_save(f"new{n}", _content(rng)), calls)
        public_save = _p50(lambda n: public.memory_save(f"pub{n}", _content(rng)), calls)
        get = _p50(lambda n: session.memory_get(f"k{n}"), calls)
        search = _p50(lambda n: session.memory_search(" ".join(rng.choices(WORDS, k=3))), calls)
    return save, public_save, get, search, register


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        template = _template(folder, args.memories)
        rows = [("plain (CONFIDENTIAL)", _measure(template, folder, None, args.calls))]
        for count in COUNTS:
            print(f"{count} labels in use...", file=sys.stderr)
            rows.append(
                (f"{count} label{'s' if count > 1 else ''} in use", _measure(template, folder, count, args.calls))
            )
    print(f"{args.memories:,} memories at PUBLIC, one agent, one file; p50 of {args.calls} calls each, in ms")
    print()
    print("| views | save at the label | save at PUBLIC | get | search | registering the views |")
    print("|---|---|---|---|---|---|")
    plain = rows[0][1]
    for name, measures in rows:
        cells = [f"{value:.3f} ({value / base:.2f}x)" for value, base in zip(measures[:4], plain[:4], strict=True)]
        print(f"| {name} | {' | '.join(cells)} | {measures[4]:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
