"""The dense-trigger poison on LoCoMo: what it costs to make, and where it ranks beside the match poison.

Two parts:

1. Cost: ``memlab.poison.generate`` for ``--targets`` questions (default 130, about the poisoning lab's run at a
   10% poison rate) with the default variants, then with ``trigger`` too on an empty embedding cache (the MiniLM
   vectors of the trigger search all made), then again on the cache the first filled; CPU seconds of this
   process. Target: the trigger search adds at most 20 s of CPU cold.
2. Ranks: for ``--ranked`` questions (default 40, the same seed), one throwaway store per ranking (``dense``:
   MiniLM alone; ``lexical``: memlab's default FTS5 ranking) and per poison kind, loaded with LoCoMo as the
   relevance lab loads it, then that kind's poisons written (trusted, so no defence stands between them and the
   victim), and each target question asked by a victim of its agent (100 results). Kinds: ``match`` (the
   question as a bridging phrase, then the claim), ``trigger`` (the claim, then the trigger words) and
   ``claim`` (the bare claim, the trigger without its words: what the words buy). Printed per ranking and kind:
   the poison's mean rank (a poison outside the 100 counted as 101), the share of questions where it is first,
   in the top 5, in the top 10; and how often the trigger ranks at least as high as the match.

Usage, from the repository's root (needs ``memlab[dense]``)::

    python benchmarks/bench_poison_trigger.py [--targets 130] [--ranked 40] [--seed 0]
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import statistics
import tempfile
import time

from memlab.eval.configurations import CONFIGURATIONS
from memlab.eval.locomo import load_locomo
from memlab.eval.runner import cached_embedder, load
from memlab.poison import generate, inject
from memlab.store import MemoryStore

DEPTH = 100
RANKINGS = {"dense": "dense", "lexical": "memlab"}


def cost(collection, targets: int, seed: int) -> None:
    start = time.process_time()
    generate(collection, targets, seed=seed)
    plain = time.process_time() - start
    with tempfile.TemporaryDirectory() as folder:
        runs = []
        for _ in range(2):
            start = time.process_time()
            generate(
                collection,
                targets,
                seed=seed,
                variants=("match", "overwrite", "trigger"),
                embedder=cached_embedder("minilm", folder),
            )
            runs.append(time.process_time() - start)
    print(f"generate, {targets} targets: default variants {plain:.2f} s CPU; with trigger, cold cache {runs[0]:.1f} s, "
          f"second run {runs[1]:.2f} s")  # fmt: skip
    print(f"target: the trigger search adds <= 20 s CPU cold: {'met' if runs[0] - plain <= 20 else 'NOT met'}")


def kinds(collection, targets: int, seed: int) -> dict[str, list]:
    poisons = generate(
        collection, targets, seed=seed, variants=("match", "trigger"), embedder=cached_embedder("minilm")
    )
    matches = [poison for poison in poisons if poison.variant == "match"]
    triggers = [poison for poison in poisons if poison.variant == "trigger"]
    claims = [
        dataclasses.replace(match, id=f"{match.id}/claim", key=f"{match.key}-claim", text=match.text.split('": ', 1)[1])
        for match in matches
    ]
    return {"match": matches, "trigger": triggers, "claim": claims}


def ranks(collection, row: str, poisons) -> list[int]:
    configuration = CONFIGURATIONS.get(row)
    analyzer, context, embedder, boosted = configuration.store_key
    questions = {query.id: query for query in collection.queries}
    found = []
    with MemoryStore.throwaway(
        None, analyzer=analyzer, embedder=cached_embedder(embedder), index_tag_words=boosted
    ) as store:
        store.ranking = configuration.ranking
        load(store, collection, context=context)
        inject(store, poisons, "direct", trusted=True)
        victims = {}
        for poison in poisons:
            query = questions[poison.target]
            victim = victims.get(query.agent) or victims.setdefault(query.agent, store.session(agent=query.agent))
            hits = victim.memory_search(query.text, max_results=DEPTH)
            places = [
                n for n, hit in enumerate(hits, 1) if (hit.memory.key, hit.memory.content) == (poison.key, poison.text)
            ]
            found.append(places[0] if places else DEPTH + 1)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--targets", type=int, default=130)
    parser.add_argument("--ranked", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    collection = load_locomo()
    cost(collection, options.targets, options.seed)
    made = kinds(collection, options.ranked, options.seed)
    print(f"\nranks of each kind's poison for its question, {options.ranked} LoCoMo targets, seed {options.seed}:")
    print(f"{'ranking':8} {'kind':8} {'mean rank':>9} {'first':>6} {'top 5':>6} {'top 10':>6}")
    for ranking, row in RANKINGS.items():
        found = {kind: ranks(collection, row, poisons) for kind, poisons in made.items()}
        for kind, places in found.items():
            share = {k: sum(place <= k for place in places) / len(places) for k in (1, 5, 10)}
            print(
                f"{ranking:8} {kind:8} {statistics.mean(places):9.2f} {share[1]:6.0%} {share[5]:6.0%} {share[10]:6.0%}"
            )
        ahead = sum(t <= m for t, m in zip(found["trigger"], found["match"], strict=True))
        print(f"{ranking:8} trigger at least as high as match: {ahead} of {len(places)}")
    words = [
        poison.text[len(claim.text) :].split() for poison, claim in zip(made["trigger"], made["claim"], strict=True)
    ]
    questions = {query.id: set(re.findall(r"[a-z]+", query.text.lower())) for query in collection.queries}
    own = sum(
        word in questions[poison.target] for poison, each in zip(made["trigger"], words, strict=True) for word in each
    )
    print(f"trigger words: {sum(map(len, words))}, of which {own} are words of the question")


if __name__ == "__main__":
    main()
