"""The experiment: each configuration indexes the same memories through the real store and answers the same queries.

A configuration (``Configuration``) is one row of the results: an analyzer, a ranking (column weights and the
tag boost, ``memlab.search.ranking``), whether the memories carry their context (``source``, ``occurred_at``)
and which retriever answers (FTS5, or a dense or hybrid one: ``memlab.search.dense``). For each, a fresh
in-memory ``MemoryStore`` is loaded with the collection's documents through ``Session.memory_save_many`` (each
agent's memories in its own namespace, versioned, indexed and audited as single saves would be), and every
query is asked with ``Session.memory_search`` in its own agent's namespace. The rankings are scored with
ir-measures and every row is compared with the baseline (``porter``: FTS5's porter on the memories' text, the
plain ranking) by a paired randomization test.

On LoCoMo (minutes on 2 cores, the README says how many; one process per group of rows; the dense rows' vectors
come from the embedding cache and the bundled warm file when they hold them)::

    results = run(load_locomo())                 # the named rows: porter, +boost, +context, memlab, dense, hybrid
    results = run(load_locomo(), rows=ALL_ROWS)  # and every analyzer (dense and hybrid need memlab[dense])

Analyzers alone, on the tiny TREC fixture (the baseline comes first):

Examples:
    >>> tiny = run(load_trec("tests/fixtures/trec-tiny"), analyzers=["none", "snowball"], progress=False, workers=1)
    >>> tiny.summary["MRR"].round(2).to_dict()
    {'porter': 0.71, 'none': 1.0, 'snowball': 0.71}
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import multiprocessing
import os
import queue
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

from memlab.arguments import MAX_RESULTS_CAP
from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection
from memlab.eval.configurations import Configuration, rows_of
from memlab.eval.locomo import category_label, load_locomo
from memlab.eval.measures import LABELS, compare, per_query
from memlab.search.fusion import CARRIERS, carried, contributions
from memlab.search.ranking import Ranking
from memlab.store import MemoryStore

__all__ = [
    "Results",
    "run",
    "run_configuration",
    "run_group",
    "SIGNIFICANCE_MEASURES",
]

# The measures the summary tests for significance against the baseline.
SIGNIFICANCE_MEASURES = ("S@10", "nDCG@10", "MRR")
# Read-only layers of the embedding cache: vectors of the bundled LoCoMo's documents (tools/embed_locomo.py).
# Found by text digest, so they serve any collection that has the same texts and nothing else.
WARM = (Path("data") / "locomo10.embeddings.npz",)


@dataclass
class Results:
    """What an experiment produced, as DataFrames."""

    collection: str
    baseline: str
    per_query: pd.DataFrame
    """One row per configuration and query: row, analyzer, query, category, then every measure."""
    summary: pd.DataFrame
    """One row per configuration: analyzer, context, every measure's mean, p-values and marks against the baseline."""
    comparisons: dict[str, pd.DataFrame] = field(default_factory=dict)
    """Per measure in ``SIGNIFICANCE_MEASURES``: mean, bootstrap CI, p-value, wins/losses per row."""
    timings: pd.DataFrame = field(default_factory=pd.DataFrame)
    """Per row: seconds to index, seconds to search, milliseconds per query, indexing time against the baseline."""
    configurations: dict[str, dict[str, object]] = field(default_factory=dict)
    """Per row: what produced it (``Configuration.describe``)."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Rows asked for that could not run here, and why (a dense row without ``memlab[dense]``)."""

    def by_category(self, measure: str = "S@10") -> pd.DataFrame:
        """Mean of ``measure`` per row and query category (columns), over the queries that carry a category;
        an empty frame when none does. LoCoMo's numbered categories are labelled with their kind (``2 temporal``)."""
        table = self.per_query.pivot_table(index="row", columns="category", values=measure, aggfunc="mean", sort=False)
        table = table[sorted(table.columns, key=str)]
        return table.rename(columns=category_label) if self.collection.startswith("locomo") else table

    def carried(self) -> pd.DataFrame:
        """Per fused row (a hybrid), the share of its queries whose first result each ranking carried (``lexical``,
        ``dense``: ``memlab.search.fusion.carried``), over the queries that found anything; empty without one."""
        fused = self.per_query.dropna(subset=["carried"])
        if fused.empty:
            return pd.DataFrame()
        table = pd.crosstab(fused["row"], fused["carried"], normalize="index")
        return table.reindex(columns=list(CARRIERS), fill_value=0.0).rename_axis(None, axis=1)

    def save(self, folder: str | Path) -> list[Path]:
        """Keep what ``load`` needs to give these results back: the per-query measures (gzipped CSV), the
        timings and what each row was; summary and comparisons are recomputed from them."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        files = [folder / "per_query.csv.gz", folder / "timings.csv", folder / "run.json"]
        self.per_query.to_csv(files[0], index=False, compression={"method": "gzip", "mtime": 0})
        self.timings.to_csv(files[1])
        about = {"collection": self.collection, "baseline": self.baseline, "configurations": self.configurations}
        files[2].write_text(json.dumps(about, indent=2) + "\n", encoding="utf-8")
        return files

    @classmethod
    def load(cls, folder: str | Path) -> Results:
        """Results saved by ``save``.

        Examples:
            >>> cached = Results.load("data/results/locomo")
            >>> cached.summary.loc["memlab", "S@10"].round(3)
            np.float64(0.766)
        """
        folder = Path(folder)
        about = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        per_query = pd.read_csv(folder / "per_query.csv.gz", dtype={"query": str, "category": str})
        timings = pd.read_csv(folder / "timings.csv", index_col="row")
        return _tabulate(about["collection"], about["baseline"], per_query, timings, about["configurations"])


def cached_embedder(embedder: str | None, cache: str | Path | bool = True):
    """``embedder`` through the embedding cache (``cache``: a folder, True for the default one, False for none)
    and, for MiniLM, the bundled LoCoMo's warm vectors; None stays None."""
    if embedder is None or cache is False:
        return embedder
    from memlab.search.embedding_cache import cached

    warm = [path for path in WARM if path.exists()] if embedder == "minilm" else []  # the shipped vectors are MiniLM's
    return cached(embedder, None if cache is True else cache, warm=warm)


def run_configuration(
    collection: Collection,
    configuration: Configuration,
    *,
    depth: int = 100,
    queries: Iterable[str] | None = None,
    postgres: str | None = None,
    cache: str | Path | bool = True,
) -> tuple[dict[str, dict[str, float]], float, float]:
    """Index ``collection`` as ``configuration`` says and run its queries (only ``queries``, by id, if given).

    Returns:
        The run (query id -> {document id: score}), seconds spent indexing, seconds spent searching.
    """
    done = run_group(collection, [configuration], depth=depth, queries=queries, postgres=postgres, cache=cache)
    return done[configuration.name][:3]


def run_group(
    collection: Collection,
    configurations: Sequence[Configuration],
    *,
    depth: int = 100,
    queries: Iterable[str] | None = None,
    postgres: str | None = None,
    notify: Callable[[str], object] | None = None,
    cache: str | Path | bool = True,
) -> dict[str, tuple[dict[str, dict[str, float]], float, float]]:
    """Rows that share a store (``Configuration.store_key``): load it once, then run the queries under each ranking;
    ``notify(row)`` as each row is done (progress, from a worker process too: a manager queue's ``put``).

    With ``postgres`` (a PostgreSQL URL) the store is a throwaway schema there, dropped afterwards, ranked by
    PostgreSQL's own ``ts_rank`` (``memlab.storage.postgres``): the rows' rankings do not apply there. A dense
    row's embedder goes through the embedding cache (``cache``: a folder, True for the default one, False for
    none) and the bundled LoCoMo's warm vectors (``WARM``).

    Returns:
        Per row: the run (query id -> {document id: score}), seconds spent indexing (the shared load), seconds
        spent searching.
    """
    analyzer, context, embedder, boosted = configurations[0].store_key
    if any(row.store_key != configurations[0].store_key for row in configurations):
        raise InvalidArgument("a group's rows must share analyzer, context, embedder and whether they boost tags")
    embedder = cached_embedder(embedder, cache)
    done = {}
    with MemoryStore.throwaway(postgres, analyzer=analyzer, embedder=embedder, index_tag_words=boosted) as store:
        started = time.perf_counter()
        sessions = load(store, collection, context=context)
        indexed = time.perf_counter() - started
        for row in configurations:
            if postgres is None:
                store.ranking = row.ranking
            forget = getattr(store.embedder, "forget", None)
            if forget is not None:
                forget()  # each row pays for its queries' vectors (the model's, or the cache's when it has them)
            started = time.perf_counter()
            ranking = search(store, sessions, collection, depth=depth, queries=queries)
            done[row.name] = (ranking, indexed, time.perf_counter() - started)
            if postgres is None and row.ranking.uses_dense and row.ranking.lexical > 0:
                done[row.name] += (carried_by(store, sessions, collection, row, depth=depth, queries=queries),)
            if notify is not None:
                notify(row.name)
    return done


def carried_by(
    store: MemoryStore,
    sessions: dict,
    collection: Collection,
    row: Configuration,
    *,
    depth: int,
    queries: Iterable[str] | None = None,
) -> dict[str, str | None]:
    """Which ranking carried a fused row's first result, per query (``memlab.search.fusion.carried``): its two
    inputs asked again on the same store, as deep as the store reads them to fuse (FTS5 alone with the row's weights,
    the dense ranking alone), and fused as the store fuses them. Not timed with the row."""
    lexical_only = dataclasses.replace(row.ranking, dense=0.0)
    inputs = []
    for ranking in (lexical_only, Ranking.dense_only()):
        store.ranking = ranking
        inputs.append(search(store, sessions, collection, depth=max(depth, MAX_RESULTS_CAP), queries=queries))
    store.ranking = row.ranking
    lexical, dense = inputs
    return {
        query: carried(contributions(list(lexical[query].items()), list(dense[query].items()), row.ranking))
        for query in lexical
    }


def load(store: MemoryStore, collection: Collection, *, context: bool) -> dict:
    """Save every document into its agent's namespace in ``store``; return a session per agent."""
    by_agent: dict[str, list[dict]] = {}
    for document in collection.documents:
        by_agent.setdefault(document.agent, []).append(document.record(context=context))
    sessions = {}
    for agent, records in by_agent.items():
        sessions[agent] = store.session(agent=agent)
        sessions[agent].memory_save_many(records)
    return sessions


def search(
    store: MemoryStore, sessions: dict, collection: Collection, *, depth: int, queries: Iterable[str] | None = None
) -> dict[str, dict[str, float]]:
    """Ask the collection's queries (or those named) in their agents' sessions: query id -> {document id: score}."""
    documents = {(document.agent, document.key): document.id for document in collection.documents}
    wanted = None if queries is None else set(queries)
    ranking = {}
    for query in collection.queries:
        if wanted is not None and query.id not in wanted:
            continue
        session = sessions.get(query.agent) or store.session(agent=query.agent)
        hits = session.memory_search(query.text, max_results=depth)
        ranking[query.id] = {documents[query.agent, hit.memory.key]: hit.score for hit in hits}
    return ranking


def run(
    collection: Collection | None = None,
    *,
    rows: Sequence[str | Configuration] | None = None,
    analyzers: Sequence[str] | None = None,
    baseline: str = "porter",
    depth: int = 100,
    progress: bool = True,
    workers: int | None = None,
    postgres: str | None = None,
    cache: str | Path | bool = True,
) -> Results:
    """Compare configurations on a collection (LoCoMo by default).

    Args:
        collection: what to index and ask; ``load_locomo()`` when None.
        rows: configurations, by name (``CONFIGURATIONS``, or an analyzer's name) or as objects; the default
            rows when neither ``rows`` nor ``analyzers`` is given.
        analyzers: analyzers to add as rows, each on the text with the plain ranking (``Ranking.plain()``).
        baseline: the row every other is tested against (the named row ``porter`` is added if missing).
        depth: how many results each query keeps (MAP and MRR look this deep; the cap of memory_search is 100).
        progress: show a progress bar, one step per row.
        workers: processes running rows side by side (default: one per core, at most one per row).
        postgres: a PostgreSQL URL: every row indexes in a throwaway schema there, ranked by PostgreSQL's
            ``ts_rank`` (``porter`` and ``snowball`` are its ``english`` configuration, ``none`` its ``simple``).
        cache: where the dense rows keep their vectors (``memlab.search.embedding_cache``): a folder, True for
            ``default_folder()`` (``MEMLAB_CACHE``, else ``~/.cache/memlab``), False to embed everything afresh.
    Raises:
        InvalidArgument: an unknown row or analyzer, or a collection without queries.
    """
    collection = collection if collection is not None else load_locomo()
    configurations = rows_of(rows, analyzers)
    if baseline not in [row.name for row in configurations]:
        configurations.insert(0, rows_of([baseline], None)[0])
    if not collection.queries:
        raise InvalidArgument(f"collection {collection.name!r} has no queries")
    skipped = {row.name: reason for row in configurations if (reason := row.unavailable()) is not None}
    if baseline in skipped:
        raise InvalidArgument(f"the baseline {baseline!r} cannot run here: it {skipped[baseline]}")
    configurations = [row for row in configurations if row.name not in skipped]
    groups: dict[tuple[str, bool, str | None, bool], list[Configuration]] = {}
    for row in configurations:
        groups.setdefault(row.store_key, []).append(row)
    workers = min(workers or os.cpu_count() or 1, len(groups))
    with (
        ProcessPoolExecutor(workers) if workers > 1 else _InProcess() as pool,
        multiprocessing.Manager() if workers > 1 else contextlib.nullcontext() as manager,
        tqdm(total=len(configurations), desc=collection.name, unit="row", disable=not progress) as bar,
    ):
        rows_done = manager.Queue() if manager is not None else queue.SimpleQueue()
        # The slowest groups (a dense model to run) first, so that no worker is left with one at the end.
        order = sorted(groups.values(), key=lambda group: group[0].embedder is None)
        futures = [
            pool.submit(run_group, collection, group, depth=depth, postgres=postgres, notify=rows_done.put, cache=cache)
            for group in order
        ]
        done = _gather(futures, rows_done, bar)
    results = results_of(collection, configurations, done, baseline)
    results.skipped = skipped
    return results


def _gather(futures: list[Future], rows_done, bar) -> dict:
    """Every group's runs, one step of ``bar`` per row as its worker reports it (not per group: a group of rows
    sharing a store finishes them one after another)."""
    done: dict = {}
    pending = set(futures)
    while pending:
        finished, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
        with contextlib.suppress(queue.Empty):
            while True:
                rows_done.get_nowait()
                bar.update(1)
        for future in finished:
            done |= future.result()
    return done


def results_of(
    collection: Collection,
    configurations: Sequence[Configuration],
    done: dict[str, tuple[dict[str, dict[str, float]], float, float]],
    baseline: str,
) -> Results:
    """Score each row's run, compare it with the baseline and tabulate (rows in the order of ``configurations``)."""
    frames, timings = [], []
    categories = {query.id: query.category for query in collection.queries}
    order = [query.id for query in collection.queries if query.id in done[configurations[0].name][0]]
    for row in configurations:
        ranking, indexed, searched, *fused = done[row.name]
        frame = per_query(collection.qrels, in_order(ranking))
        frame = frame.reindex(order, fill_value=0.0).rename_axis("query").reset_index()
        frame["carried"] = frame["query"].map(fused[0]) if fused else None
        frames.append(frame.assign(row=row.name, analyzer=row.analyzer, category=frame["query"].map(categories)))
        timings.append(
            {
                "row": row.name,
                "index_seconds": indexed,
                "search_seconds": searched,
                "ms_per_query": 1000 * searched / max(1, len(order)),
            }
        )
    timing = pd.DataFrame(timings).set_index("row")
    timing["index_vs_baseline"] = timing["index_seconds"] / timing.loc[baseline, "index_seconds"]
    described = {row.name: row.describe() for row in configurations}
    return _tabulate(collection.name, baseline, pd.concat(frames, ignore_index=True), timing, described)


def in_order(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """A store's run scored by its order (the first of n documents n, the next n - 1, ...), for the measures.

    ``search`` keeps each query's documents in the order the session returned them, with the store's scores;
    ir-measures reads scores as 32-bit floats and ranks ties by document id, so scores that differ in the
    seventh digit (a tag boost of 2 over bm25 near 0) would be measured in another order than the store's."""
    return {query: {doc: float(len(found) - rank) for rank, doc in enumerate(found)} for query, found in run.items()}


def _tabulate(
    collection: str,
    baseline: str,
    long: pd.DataFrame,
    timings: pd.DataFrame,
    configurations: dict[str, dict[str, object]],
) -> Results:
    """Results from per-query measures: means per row, and every row compared with the baseline."""
    measures = list(LABELS.values())
    if "carried" not in long:  # results saved before the fusion said which ranking carried it
        long = long.assign(carried=None)
    carried = long["carried"].astype(object)
    long = long.assign(carried=carried.where(carried.notna(), None))  # None where not fused, read back or fresh
    long = long[["row", "analyzer", "query", "category", "carried", *measures]]
    rows = list(dict.fromkeys(long["row"]))
    frames = {name: long[long["row"] == name].set_index("query")[measures] for name in rows}
    comparisons = {measure: compare(frames, baseline, measure=measure) for measure in SIGNIFICANCE_MEASURES}
    summary = long.groupby("row", sort=False)[measures].mean()
    for measure, table in comparisons.items():
        summary[f"p {measure}"] = table["p_value"]
        summary[f"sig {measure}"] = table["sig"]
    summary.insert(0, "analyzer", [configurations[name]["analyzer"] for name in rows])
    summary.insert(1, "context", ["yes" if configurations[name]["context"] else "no" for name in rows])
    return Results(collection, baseline, long, summary, comparisons, timings, configurations)


class _InProcess(Executor):
    """An executor that runs each task at once, in this process (one worker: no pickling, easy debugging)."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as error:  # handed to the caller through future.result(), as a pool would
            future.set_exception(error)
        return future
