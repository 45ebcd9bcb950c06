"""Choosing a ranking by held-out evidence: tune on one half of the agents, report on the other, both ways.

``tune`` splits the collection's agents in two halves in file order (on LoCoMo: conversations 0-4 and 5-9),
searches the ranking parameters on each half by coordinate ascent over ``GRID`` (one parameter at a time, the
best value kept, until a round changes nothing), and then answers each half's queries with the ranking tuned on
the *other* half. The result's ``held_out`` table therefore holds no figure measured on the queries that chose
its parameters; the figures of a ranking on its own tuning half exist only in ``trace``, labelled as such.

    tuned = tune(load_locomo())
    tuned.held_out.summary                       # porter, memlab's default, memlab tuned (held-out)
    tuned.chosen                                 # the ranking each half chose
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import pandas as pd
from tqdm.auto import tqdm

from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection
from memlab.eval.measures import per_query
from memlab.eval.runner import CONFIGURATIONS, Configuration, Results, load, results_of, run_configuration, search
from memlab.search.ranking import Ranking
from memlab.store import MemoryStore

__all__ = ["GRID", "Tuned", "halves", "tune"]

# The values coordinate ascent tries for each parameter (the others held where they are).
GRID: dict[str, tuple[float, ...]] = {
    "tag_boost": (0.0, 0.5, 1.0, 2.0, 4.0),
    "source": (0.0, 0.25, 0.5, 1.0, 2.0),
    "when": (0.0, 0.25, 0.5, 1.0),
    "key": (0.0, 1.0, 2.0),
    "tags": (0.0, 1.0, 2.0),
}
OBJECTIVE = ("S@10", "nDCG@10")  # maximised: the sum of their means over the tuning half's queries
TUNING_DEPTH = 10  # the objective looks at the top 10 only
HELD_OUT = "memlab tuned (held-out)"


@dataclass
class Tuned:
    """What ``tune`` found.

    Attributes:
        chosen: half name -> the ranking tuned on that half (and used on the other).
        held_out: porter, memlab's default and the tuned row, each query answered by a ranking tuned on the
            other half; compared with porter like any ``run``.
        trace: every ranking tried, on its tuning half: half, round, parameter, value, objective.
    """

    chosen: dict[str, Ranking]
    held_out: Results
    trace: pd.DataFrame


def halves(collection: Collection) -> dict[str, list[str]]:
    """The query ids of each half of the agents, in file order: ``{"first": [...], "second": [...]}``."""
    agents = list(dict.fromkeys(document.agent for document in collection.documents))
    if len(agents) < 2:
        raise InvalidArgument(f"tuning needs at least two agents to split; {collection.name!r} has {len(agents)}")
    first = set(agents[: len(agents) // 2])
    split: dict[str, list[str]] = {"first": [], "second": []}
    for query in collection.queries:
        split["first" if query.agent in first else "second"].append(query.id)
    return split


def _objective(collection: Collection, run: dict[str, dict[str, float]], queries: Sequence[str]) -> float:
    table = per_query(collection.qrels, run).reindex(list(queries), fill_value=0.0)
    return float(sum(table[measure].mean() for measure in OBJECTIVE))


def _ascend(
    collection: Collection, queries: list[str], analyzer: str, start: Ranking, grid: Mapping[str, Sequence[float]]
) -> tuple[Ranking, list[dict[str, object]]]:
    """Coordinate ascent from ``start`` on ``queries``: the best ranking found and every step tried."""
    with MemoryStore(analyzer=analyzer) as store:
        sessions = load(store, collection, context=True)
        scores: dict[Ranking, float] = {}

        def score(ranking: Ranking) -> float:
            if ranking not in scores:
                store.ranking = ranking
                scores[ranking] = _objective(
                    collection, search(store, sessions, collection, depth=TUNING_DEPTH, queries=queries), queries
                )
            return scores[ranking]

        best, trace, changed, round_number = start, [], True, 0
        while changed and round_number < 4:
            changed, round_number = False, round_number + 1
            for parameter, values in grid.items():
                for value in values:
                    candidate = dataclasses.replace(best, **{parameter: value})
                    trace.append(
                        {"round": round_number, "parameter": parameter, "value": value, "objective": score(candidate)}
                    )
                winner = max((dataclasses.replace(best, **{parameter: v}) for v in values), key=score)
                if score(winner) > score(best) + 1e-9:
                    best, changed = winner, True
    return best, trace


def tune(
    collection: Collection,
    *,
    analyzer: str = "porter",
    grid: Mapping[str, Sequence[float]] = GRID,
    progress: bool = True,
    workers: int | None = None,
) -> Tuned:
    """Tune the ranking on each half of the agents and report each half with the other half's choice.

    Raises:
        InvalidArgument: a grid parameter that is not a ``Ranking`` field, or fewer than two agents.
    """
    unknown = sorted(set(grid) - {f.name for f in dataclasses.fields(Ranking)})
    if unknown:
        raise InvalidArgument(f"the grid names no Ranking parameter {', '.join(unknown)}")
    split = halves(collection)
    with ProcessPoolExecutor(min(workers or 2, 2)) as pool:
        futures = {
            half: pool.submit(_ascend, collection, queries, analyzer, Ranking(), grid)
            for half, queries in split.items()
        }
        porter = pool.submit(run_configuration, collection, CONFIGURATIONS["porter"])
        default = pool.submit(run_configuration, collection, CONFIGURATIONS["memlab"])
        found = {half: future.result() for half, future in tqdm(futures.items(), desc="tuning", disable=not progress)}
        done = {"porter": porter.result(), "memlab": default.result()}
    chosen = {half: ranking for half, (ranking, _) in found.items()}
    other = {"first": "second", "second": "first"}
    combined: dict[str, dict[str, float]] = {}
    indexed = searched = 0.0
    for half, queries in split.items():
        tuned_row = Configuration(HELD_OUT, analyzer=analyzer, ranking=chosen[other[half]], context=True)
        ranking, index_seconds, search_seconds = run_configuration(collection, tuned_row, queries=queries)
        combined |= ranking
        indexed, searched = indexed + index_seconds, searched + search_seconds
    done[HELD_OUT] = (combined, indexed / 2, searched)
    rows = [
        CONFIGURATIONS["porter"],
        CONFIGURATIONS["memlab"],
        Configuration(HELD_OUT, analyzer=analyzer, context=True),
    ]
    held_out = results_of(collection, rows, done, "porter")
    held_out.configurations[HELD_OUT] = {
        "analyzer": analyzer,
        "context": True,
        **{f"used on the {half} half (tuned on the {other[half]})": chosen[other[half]].as_dict() for half in split},
    }
    trace = pd.DataFrame(
        [{"half": half, **step} for half, (_, steps) in found.items() for step in steps],
        columns=["half", "round", "parameter", "value", "objective"],
    )
    return Tuned(chosen, held_out, trace)
