"""Replay fusion rules on the rankings a store's two inputs gave, per query, without re-running the store.

Usage, from the repository's root (``memlab[dense]`` installed)::

    python benchmarks/replay_fusion.py collect locomo locomo-topical locomo-turns preferences --to /tmp/rankings
    python benchmarks/replay_fusion.py replay /tmp/rankings
    python benchmarks/replay_fusion.py tune /tmp/rankings

``collect`` runs a collection's ``memlab`` row (FTS5, the lexical default) and ``dense`` row (MiniLM alone) at
the depth ``memlab eval`` reads (100: the fusion reads each input that deep when asked for 100) and keeps each
query's two rankings, with the ``hybrid`` row's run to check the replay against the store. ``replay`` prints,
for every rule in ``RULES``, S@10 and nDCG@10 on each half of the agents (``memlab.eval.tuning.halves``): a
rule is chosen on one half and read on the other; ``tune`` replays ``memlab eval --tune``'s hybrid grid on
LoCoMo's halves for the rules. The rules are functions of the two rankings only, as the store's fusion is
(``memlab.search.fusion``, which the rule now calls).
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections.abc import Callable
from pathlib import Path

from memlab.eval import load_collection
from memlab.eval.configurations import CONFIGURATIONS
from memlab.eval.measures import per_query
from memlab.eval.runner import run_configuration
from memlab.eval.trec import load_trec
from memlab.eval.tuning import halves
from memlab.search.fusion import contributions
from memlab.search.fusion import standardized as z_of
from memlab.search.ranking import Ranking

Run = dict[str, float]  # document id -> score, best first (as the store ranked them)


def collect(names: list[str], folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        collection = load_trec(name) if Path(name).is_dir() else load_collection(name)
        kept = {"qrels": collection.qrels, "halves": halves(collection)}
        for row in ("memlab", "dense", "hybrid"):
            run, _, _ = run_configuration(collection, CONFIGURATIONS.get(row), depth=100)
            kept[row] = run  # query -> {document: score}, best first
        (folder / f"{Path(name).name}.pickle").write_bytes(pickle.dumps(kept))
        print(f"{name}: {len(kept['memlab'])} queries kept", file=sys.stderr)


def rrf(lexical: Run, dense: Run, lexical_weight: float, dense_weight: float, k: float) -> Run:
    """The store's fusion given the dense weight: ties keep FTS5's order, then the dense order."""
    scores: dict[str, float] = {}
    for weight, ranked in ((lexical_weight, lexical), (dense_weight, dense)):
        for rank, key in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
    return {key: scores[key] for key in sorted(scores, key=lambda key: -scores[key])}


def agreement_top10(lexical: Run, dense: Run, lexical_depth: int | None = None, dense_depth: int = 10) -> float:
    """The rule before: the share of the dense ranking's top ten that FTS5 matched (read ``lexical_depth`` deep;
    a store read 50 when asked for 10, 100 when asked for 100), of as many as could be."""
    found = set(list(lexical)[:lexical_depth])
    top = list(dense)[:dense_depth]
    possible = min(len(top), len(found))
    return 1.0 if possible == 0 else sum(key in found for key in top) / possible


def agreement_weighted(lexical: Run, dense: Run, k: float = 1.0, dense_depth: int | None = None) -> float:
    """The rule now (``memlab.storage.vectors._agreement``): FTS5's matches among the dense ranks, each weighed
    ``1 / (k + rank)``, as a share of the weight of as many first ranks as FTS5 matched keys."""
    found, keys = set(lexical), list(dense)[:dense_depth]
    possible = sum(1 / (k + rank) for rank in range(1, min(len(keys), len(found)) + 1))
    if possible == 0:
        return 1.0
    return min(1.0, sum(1 / (k + rank) for rank, key in enumerate(keys, start=1) if key in found) / possible)


def cut(run: Run, depth: int) -> Run:
    return dict(list(run.items())[:depth])


def standardized(lexical: Run, dense: Run, weight: float, floor: bool = True) -> Run:
    """The store's fusion now (``memlab.search.fusion.contributions``, fusion_k 0) with dense weight ``weight``; with
    ``floor=False`` a memory a ranking did not return counts as its mean (z 0) rather than its lowest."""
    ranking = Ranking(dense=weight, fusion_k=0.0)
    if floor:
        fused = contributions(list(lexical.items()), list(dense.items()), ranking)
        return {key: sum(parts) for key, parts in fused.items()}
    (lz, _), (dz, _) = z_of(list(lexical.items())), z_of(list(dense.items()))
    keys = list(dict.fromkeys([*lexical, *dense]))
    scores = {key: lz.get(key, 0.0) + weight * dz.get(key, 0.0) for key in keys}
    return {key: scores[key] for key in sorted(keys, key=lambda key: -scores[key])}


Rule = Callable[[Run, Run], Run]
NOW = "standardized scores, dense 0.6 (now)"
BEFORE = "RRF 1 / 0.75 x weighted agreement, k 1 (before)"
RULES: dict[str, Rule] = {
    NOW: lambda lexical, dense: standardized(lexical, dense, 0.6),
    **{
        f"standardized scores, dense {weight}": lambda lexical, dense, weight=weight: standardized(
            lexical, dense, weight
        )
        for weight in (0.3, 0.4, 0.5, 0.7, 0.8, 1.0)
    },
    "standardized, an unreturned memory at z 0": lambda lexical, dense: standardized(lexical, dense, 0.6, False),
    "memlab (FTS5 alone)": lambda lexical, dense: lexical,
    "dense alone": lambda lexical, dense: dense,
    "RRF 1 / 0.75, k 1 (plain)": lambda lexical, dense: rrf(lexical, dense, 1, 0.75, 1),
    "RRF 1 / 0.75, k 60": lambda lexical, dense: rrf(lexical, dense, 1, 0.75, 60),
    "x agreement@10, read 100 deep (before, asked for 100)": lambda lexical, dense: rrf(
        lexical, dense, 1, 0.75 * agreement_top10(lexical, dense), 1
    ),
    "x agreement@10, read 50 deep (before, asked for 10)": lambda lexical, dense: rrf(
        cut(lexical, 50), cut(dense, 50), 1, 0.75 * agreement_top10(cut(lexical, 50), dense), 1
    ),
    "x agreement@10 against FTS5's top 10": lambda lexical, dense: rrf(
        lexical, dense, 1, 0.75 * agreement_top10(lexical, dense, 10), 1
    ),
    "x agreement@20": lambda lexical, dense: rrf(
        lexical, dense, 1, 0.75 * agreement_top10(lexical, dense, None, 20), 1
    ),
    "x agreement@10 squared": lambda lexical, dense: rrf(
        lexical, dense, 1, 0.75 * agreement_top10(lexical, dense) ** 2, 1
    ),
    "x weighted agreement of the top 10": lambda lexical, dense: rrf(
        lexical, dense, 1, 0.75 * agreement_weighted(lexical, dense, 1, 10), 1
    ),
    BEFORE: lambda lexical, dense: rrf(lexical, dense, 1, 0.75 * agreement_weighted(lexical, dense), 1),
}


def measure(qrels: dict, runs: dict[str, Run], queries: list[str]) -> tuple[float, float]:
    """Means over ``queries`` as ``memlab eval`` takes them: each run in its order (``runner.in_order``), cut at
    100, unjudged queries 0."""
    cut = {query: {key: 100.0 - rank for rank, key in enumerate(list(runs[query])[:100])} for query in queries}
    table = per_query({query: qrels[query] for query in queries if query in qrels}, cut)
    table = table.reindex(queries, fill_value=0.0)
    return float(table["S@10"].mean()), float(table["nDCG@10"].mean())


def replay(folder: Path, rules: dict[str, Rule]) -> None:
    for path in sorted(folder.glob("*.pickle")):
        kept = pickle.loads(path.read_bytes())
        asked = list(kept["memlab"])  # every query asked (memlab eval's means count the unjudged as 0)
        fused = {query: rules[NOW](kept["memlab"][query], kept["dense"][query]) for query in asked}
        same = sum(list(fused[query])[:10] == list(kept["hybrid"][query])[:10] for query in asked)
        print(
            f"\n{path.stem}: {len(asked)} queries; the replayed rule now gives the top 10 of the store's "
            f"hybrid row (when collected) on {same}"
        )
        print(f"{'rule (S@10 / nDCG@10)':58} {'all':>16} {'first half':>16} {'second half':>16}")
        for name, rule in rules.items():
            runs = {query: rule(kept["memlab"][query], kept["dense"][query]) for query in asked}
            cells = []
            for queries in (asked, *[kept["halves"][half] for half in ("first", "second")]):
                s10, ndcg = measure(kept["qrels"], runs, queries)
                cells.append(f"{s10:.3f} / {ndcg:.3f}")
            print(f"{name:58} {cells[0]:>16} {cells[1]:>16} {cells[2]:>16}")


TUNED_RULES: dict[str, Callable[[Run, Run, float, float], Run]] = {
    "x agreement@10, read 100 deep (before)": lambda lexical, dense, weight, k: rrf(
        lexical, dense, 1, weight * agreement_top10(lexical, dense), k
    ),
    "x weighted agreement (before)": lambda lexical, dense, weight, k: rrf(
        lexical, dense, 1, weight * agreement_weighted(lexical, dense, k), k
    ),
    "standardized scores (now; k unused)": lambda lexical, dense, weight, k: standardized(lexical, dense, weight),
}


def tune(folder: Path, collection: str = "locomo") -> None:
    """The hybrid's dense weight and k chosen on each half by the whole grid of ``memlab eval --tune`` (its
    objective: S@10 + nDCG@10 of the top 10), each half answered with the other half's choice."""
    from memlab.eval.tuning import HYBRID_GRID

    kept = pickle.loads((folder / f"{collection}.pickle").read_bytes())
    other = {"first": "second", "second": "first"}
    for name, rule in TUNED_RULES.items():
        chosen = {}
        for half, queries in kept["halves"].items():
            scored = {}
            for weight in HYBRID_GRID["dense"]:
                for k in HYBRID_GRID["fusion_k"]:
                    runs = {q: cut(rule(kept["memlab"][q], kept["dense"][q], weight, k), 10) for q in queries}
                    scored[weight, k] = sum(measure(kept["qrels"], runs, queries))
            chosen[half] = max(scored, key=scored.__getitem__)  # the first best, in grid order
        runs = {
            q: rule(kept["memlab"][q], kept["dense"][q], *chosen[other[half]])
            for half, queries in kept["halves"].items()
            for q in queries
        }
        s10, ndcg = measure(kept["qrels"], runs, list(kept["memlab"]))
        print(
            f"{collection}, {name}: first half answered with dense, k = {chosen['second']}, second with "
            f"{chosen['first']}; held-out S@10 / nDCG@10 {s10:.3f} / {ndcg:.3f}"
        )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    gather = commands.add_parser("collect")
    gather.add_argument("collections", nargs="+")
    gather.add_argument("--to", type=Path, required=True)
    again = commands.add_parser("replay")
    again.add_argument("folder", type=Path)
    tuning = commands.add_parser("tune")
    tuning.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.command == "collect":
        collect(args.collections, args.to)
    elif args.command == "tune":
        tune(args.folder)
    else:
        replay(args.folder, RULES)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
