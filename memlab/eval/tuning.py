"""Choosing a ranking by held-out evidence: tune on one half of the agents, report on the other, both ways.

``tune`` splits the collection's agents in two halves in file order (on LoCoMo: conversations 0-4 and 5-9; a
collection of one agent splits its queries instead, in file order), searches the ranking parameters on each half
by coordinate ascent over ``GRID`` (one parameter at a time, the best value kept, until a round changes nothing),
and then answers each half's queries with the ranking tuned on the *other* half. The result's ``held_out``
table therefore holds no figure measured on the queries that chose its parameters; the figures of a ranking
on its own tuning half exist only in ``trace``, labelled as such.

The ranking to *use* (``tune(..., final=True)``, ``save_ranking``; ``memlab eval --tune --save ranking.json``) is
found by the same ascent on all the queries, and is saved with the held-out figures: they are the evidence of
what this tuning procedure gains on queries it did not see, which is the claim a tuned ranking makes.

    tuned = tune(load_locomo(), rows=["memlab", "hybrid"])
    tuned.held_out.summary      # porter; memlab, memlab tuned (held-out); hybrid, hybrid tuned (held-out)
    tuned.chosen["memlab"]      # the ranking each half chose
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection
from memlab.eval.configurations import CONFIGURATIONS, Configuration
from memlab.eval.measures import per_query
from memlab.eval.runner import Results, cached_embedder, in_order, load, results_of, run_configuration, search
from memlab.search.ranking import Ranking
from memlab.store import MemoryStore

__all__ = ["GRID", "Tuned", "halves", "save_ranking", "tune"]

# The values coordinate ascent tries for each parameter (the others held where they are), per tunable row.
GRID: dict[str, tuple[float, ...]] = {
    "tag_boost": (0.0, 0.5, 1.0, 2.0, 4.0),
    "source": (0.0, 0.25, 0.5, 1.0, 2.0),
    "when": (0.0, 0.25, 0.5, 1.0),
    "key": (0.0, 1.0, 2.0),
    "tags": (0.0, 1.0, 2.0),
}
# fusion_k 0 is standardized score fusion (the default), above 0 reciprocal rank fusion (memlab.search.fusion).
HYBRID_GRID: dict[str, tuple[float, ...]] = {
    "dense": (0.25, 0.5, 0.75, 1.0, 1.5),
    "fusion_k": (0.0, 1.0, 2.0, 5.0, 10.0),
}
GRIDS = {"memlab": GRID, "hybrid": HYBRID_GRID}
FIGURES = ("S@1", "S@5", "S@10", "nDCG@10")  # what a saved ranking file reports of each row
OBJECTIVE = ("S@10", "nDCG@10")  # maximised: the sum of their means over the tuning half's queries
TUNING_DEPTH = 10  # the objective looks at the top 10 only


def held_out_name(row: str) -> str:
    """The name of a row's held-out tuned result: ``"memlab tuned (held-out)"``."""
    return f"{row} tuned (held-out)"


HELD_OUT = held_out_name("memlab")


@dataclass
class Tuned:
    """What ``tune`` found.

    Attributes:
        chosen: row -> half name -> the ranking tuned on that half (and used on the other).
        held_out: porter, then per tuned row its defaults and its tuned version, each query answered by a
            ranking tuned on the other half; compared with porter like any ``run``.
        trace: every ranking tried, on its tuning half: row, half, round, parameter, value, objective.
        final: row -> the ranking tuned on all the queries (``tune(..., final=True)``; else empty); the half
            name ``"all"`` in ``trace``.
        split: how the halves were made: ``"agents"``, or ``"queries"`` for a collection of one agent.
    """

    chosen: dict[str, dict[str, Ranking]]
    held_out: Results
    trace: pd.DataFrame
    final: dict[str, Ranking] = field(default_factory=dict)
    split: str = "agents"


def halves(collection: Collection) -> dict[str, list[str]]:
    """The query ids of each half of the agents, in file order: ``{"first": [...], "second": [...]}``; with one
    agent, of each half of its queries (a query is then held out from its half's tuning, its memories are not)."""
    agents = list(dict.fromkeys(document.agent for document in collection.documents))
    if len(agents) < 2:
        ids = [query.id for query in collection.queries]
        if len(ids) < 2:
            raise InvalidArgument(
                f"tuning needs at least two agents, or two queries, to split; {collection.name!r} has "
                f"{len(agents)} agent(s) and {len(ids)} quer{'y' if len(ids) == 1 else 'ies'}"
            )
        return {"first": ids[: len(ids) // 2], "second": ids[len(ids) // 2 :]}
    first = set(agents[: len(agents) // 2])
    split: dict[str, list[str]] = {"first": [], "second": []}
    for query in collection.queries:
        split["first" if query.agent in first else "second"].append(query.id)
    return split


def _objective(collection: Collection, run: dict[str, dict[str, float]], queries: Sequence[str]) -> float:
    table = per_query(collection.qrels, in_order(run)).reindex(list(queries), fill_value=0.0)
    return float(sum(table[measure].mean() for measure in OBJECTIVE))


def _ascend(
    collection: Collection, queries: list[str], row: Configuration, grid: Mapping[str, Sequence[float]]
) -> tuple[Ranking, list[dict[str, object]]]:
    """Coordinate ascent from ``row``'s ranking on ``queries``: the best ranking found and every step tried."""
    with MemoryStore(analyzer=row.analyzer, embedder=cached_embedder(row.embedder)) as store:
        sessions = load(store, collection, context=row.context)
        scores: dict[Ranking, float] = {}

        def score(ranking: Ranking) -> float:
            if ranking not in scores:
                store.ranking = ranking
                found = search(store, sessions, collection, depth=TUNING_DEPTH, queries=queries)
                scores[ranking] = _objective(collection, found, queries)
            return scores[ranking]

        best, trace, changed, round_number = row.ranking, [], True, 0
        while changed and round_number < 4:
            changed, round_number = False, round_number + 1
            for parameter, values in grid.items():
                candidates = [dataclasses.replace(best, **{parameter: value}) for value in values]
                for value, candidate in zip(values, candidates, strict=True):
                    trace.append(
                        {"round": round_number, "parameter": parameter, "value": value, "objective": score(candidate)}
                    )
                winner = max(candidates, key=score)
                if score(winner) > score(best) + 1e-9:
                    best, changed = winner, True
    return best, trace


def tune(
    collection: Collection,
    *,
    rows: Sequence[str] = ("memlab",),
    grids: Mapping[str, Mapping[str, Sequence[float]]] | None = None,
    progress: bool = True,
    workers: int | None = None,
    final: bool = False,
) -> Tuned:
    """Tune each named row's ranking on each half of the agents and report each half with the other's choice.

    Args:
        rows: named rows (``CONFIGURATIONS``) to tune, from their rankings: ``memlab`` (column weights and boost)
            and ``hybrid`` (RRF weight and k; needs ``memlab[dense]``).
        grids: per row, the values to try per parameter (``GRIDS`` by default).
        final: also tune each row on all the queries (``Tuned.final``: the ranking to use; ``save_ranking``).
    Raises:
        InvalidArgument: an unknown row, a grid parameter that is not a ``Ranking`` field, a row that cannot
            run here, or fewer than two agents.
    """
    grids = {**GRIDS, **(grids or {})}
    tuned_rows = []
    for name in rows:
        if name not in CONFIGURATIONS or name not in grids:
            raise InvalidArgument(f"cannot tune {name!r}; the tunable rows are {', '.join(GRIDS)}")
        unknown = sorted(set(grids[name]) - {f.name for f in dataclasses.fields(Ranking)})
        if unknown:
            raise InvalidArgument(f"the grid of {name!r} names no Ranking parameter {', '.join(unknown)}")
        reason = CONFIGURATIONS.get(name).unavailable()
        if reason is not None:
            raise InvalidArgument(f"cannot tune {name!r} here: it {reason}")
        tuned_rows.append(CONFIGURATIONS.get(name))
    split = halves(collection)
    other = {"first": "second", "second": "first"}
    with ProcessPoolExecutor(min(workers or 2, 2)) as pool:
        ascents = {
            (row.name, half): pool.submit(_ascend, collection, queries, row, grids[row.name])
            for row in tuned_rows
            for half, queries in split.items()
        }
        if final:
            everything = [query.id for query in collection.queries]
            ascents |= {
                (row.name, "all"): pool.submit(_ascend, collection, everything, row, grids[row.name])
                for row in tuned_rows
            }
        defaults = {
            row.name: pool.submit(run_configuration, collection, row)
            for row in [CONFIGURATIONS.get("porter"), *tuned_rows]
        }
        found = {task: future.result() for task, future in tqdm(ascents.items(), desc="tuning", disable=not progress)}
        done = {name: future.result() for name, future in defaults.items()}
    chosen = {row.name: {half: found[row.name, half][0] for half in split} for row in tuned_rows}
    configurations = [CONFIGURATIONS.get("porter")]
    for row in tuned_rows:
        combined: dict[str, dict[str, float]] = {}
        indexed = searched = 0.0
        for half, queries in split.items():
            used = dataclasses.replace(row, name=held_out_name(row.name), ranking=chosen[row.name][other[half]])
            ranking, index_seconds, search_seconds = run_configuration(collection, used, queries=queries)
            combined |= ranking
            indexed, searched = indexed + index_seconds, searched + search_seconds
        done[held_out_name(row.name)] = (combined, indexed / 2, searched)
        configurations += [row, dataclasses.replace(row, name=held_out_name(row.name))]
    held_out = results_of(collection, configurations, done, "porter")
    for row in tuned_rows:
        held_out.configurations[held_out_name(row.name)] = {
            **{k: v for k, v in row.describe().items() if k in ("analyzer", "context", "embedder")},
            **{
                f"used on the {half} half (tuned on the {other[half]})": chosen[row.name][other[half]].as_dict()
                for half in split
            },
        }
    trace = pd.DataFrame(
        [{"row": name, "half": half, **step} for (name, half), (_, steps) in found.items() for step in steps],
        columns=["row", "half", "round", "parameter", "value", "objective"],
    )
    finals = {name: found[name, "all"][0] for name, half in found if half == "all"}
    agents = {document.agent for document in collection.documents}
    return Tuned(chosen, held_out, trace, finals, "agents" if len(agents) > 1 else "queries")


def save_ranking(tuned: Tuned, collection: Collection, path: str | Path, row: str = "memlab") -> Path:
    """Write ``row``'s final ranking (``tune(..., final=True)``) to a ranking file ``Ranking.load`` reads, with
    what it was tuned on and its held-out figures: porter, the row's defaults and its tuned version, each half's
    queries answered with the ranking tuned on the other half.

    Raises:
        InvalidArgument: ``row`` was not tuned, or not with ``final=True``.
    """
    if row not in tuned.final:
        raise InvalidArgument(
            f"no final ranking of {row!r} to save: tune(..., final=True) with {row!r} among the rows"
            + (f" (tuned: {', '.join(tuned.final)})" if tuned.final else "")
        )
    counts = {name: value for name, value in collection.summary().items() if isinstance(value, int)}
    tuned_on = {
        "collection": collection.name,
        **counts,
        "row": row,
        "split": tuned.split,
        "date": datetime.datetime.now(datetime.UTC).date().isoformat(),
    }
    summary = tuned.held_out.summary
    rows = [name for name in ("porter", row, held_out_name(row)) if name in summary.index]
    figures = {
        "objective": " + ".join(OBJECTIVE) + f", mean over the tuning queries, top {TUNING_DEPTH}",
        "held_out": {name: {m: round(float(summary.loc[name, m]), 4) for m in FIGURES} for name in rows},
        "halves": {
            half: {"queries": len(queries), "answered with": tuned.chosen[row][other].as_dict()}
            for (half, queries), other in zip(halves(collection).items(), ("second", "first"), strict=True)
        },
    }
    return tuned.final[row].save(path, tuned_on=tuned_on, figures=_plain(figures))


def _plain(value: Any) -> Any:
    # A measure of no query is NaN, which JSON cannot hold: it is written as null.
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return None if isinstance(value, float) and value != value else value
