"""memlab.eval.runner: rows run on a collection — per-query measures, the baseline, saving and loading results."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memlab import MemoryStore
from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection
from memlab.eval.runner import Results, load, run, search
from memlab.eval.trec import load_trec

TINY = Path(__file__).parent / "fixtures" / "trec-tiny"


@pytest.fixture(scope="module")
def collection() -> Collection:
    return load_trec(TINY)


@pytest.fixture(scope="module")
def results(collection) -> Results:
    return run(collection, rows=["memlab"], analyzers=["none"], workers=1, progress=False, cache=False)


def test_the_baseline_is_added_and_every_row_answers_every_query(results, collection):
    # Guards: runner.run leaving out the baseline row when it is not asked for (nothing then to compare against).
    assert list(results.summary.index) == ["porter", "memlab", "none"]
    assert len(results.per_query) == 3 * len(collection.queries)
    assert set(results.per_query["query"]) == {query.id for query in collection.queries}
    assert results.baseline == "porter" and set(results.timings.index) == {"porter", "memlab", "none"}
    assert results.configurations["none"]["analyzer"] == "none"


def test_a_saved_run_loads_back_the_same(results, tmp_path):
    results.save(tmp_path)
    loaded = Results.load(tmp_path)
    pd.testing.assert_frame_equal(loaded.summary, results.summary, check_dtype=False)
    assert loaded.configurations == results.configurations


def test_search_answers_each_query_in_its_agents_session(collection):
    with MemoryStore() as store:
        sessions = load(store, collection, context=False)
        ranked = search(store, sessions, collection, depth=3, queries=["q2"])
    assert list(ranked) == ["q2"]
    assert next(iter(ranked["q2"])) == "cook-bread"  # "baking a loaf of bread"
    assert len(ranked["q2"]) <= 3


def test_a_collection_without_queries_or_an_unknown_row_is_refused(collection):
    with pytest.raises(InvalidArgument, match="has no queries"):
        run(Collection("empty", collection.documents, [], {}), workers=1, progress=False)
    with pytest.raises(InvalidArgument, match="nope"):
        run(collection, rows=["nope"], workers=1, progress=False)


def test_a_fused_row_says_which_ranking_carried_its_first_result(tmp_path):
    # Where FTS5 is blind (the preferences collection: its matches are topic words that settle nothing), the dense
    # ranking carries most fused first results; rows that fuse nothing carry none. The share survives save and load.
    # Guards: carried() always "lexical", or the carried column dropped by _tabulate.
    from memlab.eval.preferences import build_preferences

    fused = run(build_preferences(), rows=["memlab", "dense", "hybrid"], workers=1, progress=False, cache=False)
    carried = fused.carried()
    assert list(carried.index) == ["hybrid"] and list(carried.columns) == ["lexical", "dense"]
    assert carried.loc["hybrid"].sum() == pytest.approx(1.0)
    assert carried.loc["hybrid", "dense"] > 0.5
    assert fused.per_query.query("row != 'hybrid'")["carried"].isna().all()
    fused.save(tmp_path)
    pd.testing.assert_frame_equal(Results.load(tmp_path).carried(), carried)
