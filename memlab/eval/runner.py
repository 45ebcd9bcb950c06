"""The experiment: every analyzer indexes the same memories through the real store and answers the same queries.

For each analyzer a fresh in-memory ``MemoryStore(analyzer=...)`` is loaded with the collection's documents
through ``Session.memory_save_many`` (each agent's memories in its own namespace, as an agent's automatic
extraction would save them; versioned, indexed and audited as single saves would be), and every query is
asked with ``Session.memory_search`` in its own agent's namespace. The rankings are scored with ir-measures
and every analyzer is compared with the baseline (``porter``, FTS5's built-in) by a paired randomization test.

On LoCoMo (about a minute; one process per analyzer)::

    results = run(load_locomo(), analyzers=["none", "porter", "snowball"])
    results.summary

The same on the tiny TREC fixture (the baseline comes first):

>>> tiny = run(load_trec("tests/fixtures/trec-tiny"), analyzers=["none", "snowball"], progress=False, workers=1)
>>> tiny.summary["MRR"].round(2).to_dict()
{'porter': 0.71, 'none': 1.0, 'snowball': 0.71}
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field

import pandas as pd
from tqdm.auto import tqdm

from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection, load_locomo
from memlab.eval.measures import LABELS, compare, per_query
from memlab.search import analyzers as registry
from memlab.store import MemoryStore

__all__ = ["Results", "run", "run_analyzer", "SIGNIFICANCE_MEASURES"]

# The measures the summary tests for significance against the baseline.
SIGNIFICANCE_MEASURES = ("S@10", "nDCG@10", "MRR")


@dataclass
class Results:
    """What an experiment produced, as DataFrames."""

    collection: str
    baseline: str
    per_query: pd.DataFrame
    """One row per analyzer and query: analyzer, mode, query, category, then every measure."""
    summary: pd.DataFrame
    """One row per analyzer: every measure's mean, p-values and marks against the baseline."""
    comparisons: dict[str, pd.DataFrame] = field(default_factory=dict)
    """Per measure in ``SIGNIFICANCE_MEASURES``: mean, bootstrap CI, p-value, wins/losses per analyzer."""
    timings: pd.DataFrame = field(default_factory=pd.DataFrame)
    """Per analyzer: seconds to index and to search, and indexing time relative to the baseline."""

    def by_category(self, measure: str = "S@10") -> pd.DataFrame:
        """Mean of ``measure`` per analyzer (rows) and query category (columns)."""
        table = self.per_query.pivot_table(
            index="analyzer", columns="category", values=measure, aggfunc="mean", sort=False
        )
        return table[sorted(table.columns, key=str)]


def run_analyzer(
    collection: Collection, analyzer: str, *, depth: int = 100, postgres: str | None = None
) -> tuple[dict[str, dict[str, float]], float, float]:
    """Index ``collection`` with one analyzer and run its queries.

    Args:
        postgres: a PostgreSQL URL: index in a throwaway schema there (dropped afterwards) instead of in an
            in-memory SQLite store.
    Returns:
        The run (query id -> {document id: score}), seconds spent indexing, seconds spent searching.
    """
    documents = {(document.agent, document.key): document.id for document in collection.documents}
    storage = None
    if postgres is not None:
        from memlab.storage.postgres import PostgresStorage

        storage = PostgresStorage(postgres, analyzer=analyzer, schema=f"memlab_eval_{uuid.uuid4().hex[:12]}")
    try:
        return _run_queries(collection, MemoryStore(analyzer=analyzer, storage=storage), documents, depth)
    finally:
        if storage is not None:
            storage.drop()


def _run_queries(
    collection: Collection, store: MemoryStore, documents: dict[tuple[str, str], str], depth: int
) -> tuple[dict[str, dict[str, float]], float, float]:
    with store:
        sessions = {}
        started = time.perf_counter()
        by_agent: dict[str, list[dict]] = {}
        for document in collection.documents:
            by_agent.setdefault(document.agent, []).append(
                {"key": document.key, "content": document.text, "tags": list(document.tags)}
            )
        for agent, records in by_agent.items():
            sessions[agent] = store.session(agent=agent)
            sessions[agent].memory_save_many(records)
        indexed = time.perf_counter() - started
        started = time.perf_counter()
        ranking = {}
        for query in collection.queries:
            session = sessions.get(query.agent) or store.session(agent=query.agent)
            hits = session.memory_search(query.text, max_results=depth)
            ranking[query.id] = {documents[query.agent, hit.memory.key]: hit.score for hit in hits}
        searched = time.perf_counter() - started
    return ranking, indexed, searched


def run(
    collection: Collection | None = None,
    *,
    analyzers: Sequence[str] | None = None,
    baseline: str = "porter",
    depth: int = 100,
    progress: bool = True,
    workers: int | None = None,
    postgres: str | None = None,
) -> Results:
    """Compare analyzers on a collection (LoCoMo by default).

    Args:
        collection: what to index and ask; ``load_locomo()`` when None.
        analyzers: registry names; every registered analyzer when None. The baseline is added if missing.
        baseline: the analyzer every other is tested against.
        depth: how many results each query keeps (MAP and MRR look this deep; the cap of memory_search is 100).
        progress: show a progress bar.
        workers: processes running analyzers side by side (default: one per core, at most one per analyzer).
        postgres: a PostgreSQL URL: every analyzer indexes in a throwaway schema there (``PostgresStorage``:
            ``porter`` and ``snowball`` are its ``english`` configuration, ``none`` its ``simple``).
    Raises:
        InvalidArgument: an unknown analyzer name.
    """
    collection = collection if collection is not None else load_locomo()
    names = list(analyzers) if analyzers is not None else registry.names()
    for name in names:
        registry.get(name)  # unknown names fail before any work
    if baseline not in names:
        names.insert(0, baseline)
    if not collection.queries:
        raise InvalidArgument(f"collection {collection.name!r} has no queries")
    workers = min(workers or os.cpu_count() or 1, len(names))
    with ProcessPoolExecutor(workers) if workers > 1 else _InProcess() as pool:
        futures = {pool.submit(run_analyzer, collection, name, depth=depth, postgres=postgres): name for name in names}
        done = {}
        for future in tqdm(as_completed(futures), total=len(futures), desc=collection.name, disable=not progress):
            done[futures[future]] = future.result()
    frames, timings = {}, []
    categories = {query.id: query.category for query in collection.queries}
    order = [query.id for query in collection.queries]
    for name in names:  # in the order asked, whatever order the workers finished in
        ranking, indexed, searched = done[name]
        frames[name] = per_query(collection.qrels, ranking).reindex(order, fill_value=0.0)
        timings.append({"analyzer": name, "index_seconds": indexed, "search_seconds": searched})
    timing = pd.DataFrame(timings).set_index("analyzer")
    timing["index_vs_baseline"] = timing["index_seconds"] / timing.loc[baseline, "index_seconds"]
    long = pd.concat(
        [
            frame.rename_axis("query")
            .reset_index()
            .assign(analyzer=name, mode=registry.get(name).mode or "", category=lambda f: f["query"].map(categories))
            for name, frame in frames.items()
        ],
        ignore_index=True,
    )
    measures = list(LABELS.values())
    long = long[["analyzer", "mode", "query", "category", *measures]]
    comparisons = {measure: compare(frames, baseline, measure=measure) for measure in SIGNIFICANCE_MEASURES}
    summary = long.groupby("analyzer", sort=False)[measures].mean()
    for measure, table in comparisons.items():
        summary[f"p {measure}"] = table["p_value"]
        summary[f"sig {measure}"] = table["sig"]
    summary.insert(0, "mode", [registry.get(name).mode or "" for name in summary.index])
    return Results(collection.name, baseline, long, summary, comparisons, timing)


class _InProcess(Executor):
    """An executor that runs each task at once, in this process (one worker: no pickling, easy debugging)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to the caller through future.result(), as a pool would
            future.set_exception(error)
        return future
