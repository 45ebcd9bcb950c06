"""memlab.eval.report: a collection's summary line, the measures and stemming tables, and the files a run writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlab.eval.collections import Collection, Document, Query
from memlab.eval.report import analyzer_labels, collection_summary, measures_table, stemming_table, write
from memlab.eval.runner import Results, run
from memlab.eval.trec import load_trec

TINY = Path(__file__).parent / "fixtures" / "trec-tiny"


@pytest.fixture(scope="module")
def results() -> Results:
    return run(load_trec(TINY), rows=["porter", "memlab"], analyzers=["trigram"], workers=1, progress=False)


@pytest.mark.parametrize(
    ("categories", "summary"),
    [
        ([None], "c: 1 documents in 1 agent, 1 query (1 judged: with a relevant document); no categories"),
        (
            ["a", "a", None],
            "c: 1 documents in 1 agent, 3 queries (1 judged: with a relevant document)\n"
            "  categories: a 2 (1 query without one)",
        ),
    ],
)
def test_collection_summary(categories, summary):
    queries = [Query(f"q{n}", "main", "x", category) for n, category in enumerate(categories)]
    collection = Collection("c", [Document("d", "main", "k", "x")], queries, {"q0": {"d": 1}})
    assert collection_summary(collection) == summary


def test_the_measures_table_has_three_decimals_and_marks(results):
    table = measures_table(results)
    assert list(table.columns[:2]) == ["analyzer", "context"]
    assert table.loc["memlab", "analyzer"] == "porter" and table.loc["trigram", "analyzer"] == "trigram"
    value = table.loc["porter", "S@10"]
    assert value.rstrip("*")[-4] == "." and value.rstrip("*") == f"{results.summary.loc['porter', 'S@10']:.3f}"


def test_analyzer_labels_name_the_embedder_of_a_dense_row(results, monkeypatch):
    # Guards: report.analyzer_labels labelling a dense row by its store's analyzer (porter) instead of its embedder.
    described = {**results.configurations["memlab"], "embedder": "minilm", "dense": 1.0}
    monkeypatch.setitem(results.configurations, "memlab", described)
    assert analyzer_labels(results)["memlab"] == "porter+minilm"
    monkeypatch.setitem(results.configurations, "memlab", {**described, "lexical": 0.0})
    assert analyzer_labels(results)["memlab"] == "minilm"


def test_the_stemming_table_leaves_trigram_without_stems(results):
    table = stemming_table(results, load_trec(TINY))
    assert table.loc["porter", "differs from FTS5 porter"] == 0
    assert table.loc["porter", "stems"] < table.loc["porter", "words"]
    assert table["stems"].isna()["trigram"]


def test_write_puts_every_file_in_the_folder(results, tmp_path):
    written = write(results, load_trec(TINY), tmp_path / "out")
    assert {path.name for path in written} == {
        "per_query.csv",
        "summary.csv",
        "timings.csv",
        "stemming.csv",
        "configurations.json",
        "measures.png",
    }
    assert all(path.stat().st_size > 0 for path in written)  # no by_category.csv: tiny's queries have none
    assert (tmp_path / "out" / "measures.png").read_bytes()[:4] == b"\x89PNG"
