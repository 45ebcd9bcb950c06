"""Where a second ``memlab eval --rows dense,hybrid`` spends its CPU: the store's searches, or the eval's own work.

The second run of the dense rows (the embedding cache filled, ``bench_embedding_cache.py``) embeds nothing, so its
CPU is the store's loads and searches and the relevance lab's measures and significance tests. This profiles
that run in one process (``workers=1``: a pool's workers escape a profiler) on LoCoMo and sorts the CPU seconds
into phases by the function that spent them:

- ``search``: ``Session.memory_search`` less the two parts below it: ranking SQL, gates, audit;
- ``snippets and hits``: building each hit's row and snippet (``LexicalSearch.hits``), of the 100 the eval asks
  for per query and never reads;
- ``query vectors``: the cached embedder's lookups;
- ``load``: saving the documents into the stores;
- ``measures and significance``: ir-measures per query, bootstrap intervals and randomization tests.

Usage, from the repository's root (run ``memlab eval --rows dense,hybrid`` once first, to fill the cache)::

    python benchmarks/bench_eval_profile.py
"""

from __future__ import annotations

import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_store import environment  # noqa: E402

PHASES = {
    "snippets and hits": ("memlab/storage/lexical.py", "_hits"),
    "query vectors": ("memlab/search/embedding_cache.py", "embed"),
    "search": ("memlab/session.py", "memory_search"),
    "load": ("memlab/eval/runner.py", "load"),
    "measures and significance": ("memlab/eval/runner.py", "results_of"),
}


def cumulative(stats: pstats.Stats, path: str, function: str) -> float:
    """The cumulative seconds of ``function`` in ``path`` (summed over its entries)."""
    return sum(entry[3] for (file, _, name), entry in stats.stats.items() if file.endswith(path) and name == function)


def main() -> int:
    from memlab.eval import load_locomo, run

    print("\n".join(environment()))
    collection = load_locomo()
    profile = cProfile.Profile()
    started, cpu = time.perf_counter(), time.process_time()
    profile.enable()
    run(collection, rows=["dense", "hybrid"], progress=False, workers=1)
    profile.disable()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    stats = pstats.Stats(profile)
    seconds = {phase: cumulative(stats, *where) for phase, where in PHASES.items()}
    seconds["search"] -= seconds["snippets and hits"] + seconds["query vectors"]
    total = sum(entry[2] for entry in stats.stats.values())  # every function's own time: the profiled total
    print(f"memlab eval --rows dense,hybrid, second run, one process: {wall:.1f} s wall, {cpu:.1f} s CPU (profiled)")
    print(f"  {'phase':<28} {'seconds':>8} {'share':>6}")
    for phase, value in sorted(seconds.items(), key=lambda item: -item[1]):
        print(f"  {phase:<28} {value:>8.1f} {value / total:>6.0%}")
    print(f"  {'everything else':<28} {total - sum(seconds.values()):>8.1f} {1 - sum(seconds.values()) / total:>6.0%}")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
