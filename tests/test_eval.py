"""The relevance lab end to end: the runner on the real store, the report, ``memlab eval``."""

from pathlib import Path

import pandas as pd
import pytest

from memlab import InvalidArgument
from memlab.cli import main
from memlab.eval import ALL_ROWS, Results, load_locomo, load_trec, report, run
from memlab.eval.measures import LABELS
from memlab.search.analyzers import names
from memlab.search.ranking import Ranking

PLAIN = Ranking.plain().as_dict()

TINY = Path(__file__).parent / "fixtures" / "trec-tiny"


@pytest.fixture(scope="module")
def tiny():
    return load_trec(TINY)


@pytest.fixture(scope="module")
def tiny_results(tiny):
    return run(tiny, rows=names(), progress=False, workers=1)


def test_every_analyzer_runs_and_is_compared_with_porter(tiny, tiny_results):
    assert list(tiny_results.summary.index) == names()
    assert set(LABELS.values()) <= set(tiny_results.summary.columns)
    assert len(tiny_results.per_query) == len(names()) * len(tiny.queries)
    assert tiny_results.summary.loc["nltk-porter", "analyzer"] == "nltk-porter"
    assert tiny_results.configurations["snowball"] == {
        "analyzer": "snowball",
        "context": False,
        "embedder": None,
        **PLAIN,
    }
    assert tiny_results.summary.loc["porter", "p S@10"] != tiny_results.summary.loc["porter", "p S@10"]  # NaN
    assert set(tiny_results.comparisons) == {"S@10", "nDCG@10", "MRR"}
    assert tiny_results.timings.loc["porter", "index_vs_baseline"] == 1.0


def test_a_hand_checked_query(tiny, tiny_results):
    """The measures come from ir-measures over memlab's own ranking: check one query by hand."""
    from memlab import MemoryStore

    query = tiny.queries[0]
    relevant = set(tiny.qrels[query.id])
    with MemoryStore() as store:
        session = store.session()
        for document in tiny.documents:
            session.memory_save(document.key, document.text, tags=list(document.tags))
        ranked = [hit.memory.key for hit in session.memory_search(query.text, max_results=100)]
    first = next(rank for rank, key in enumerate(ranked, 1) if key in relevant)
    row = tiny_results.per_query.query("row == 'porter' and query == @query.id").iloc[0]
    assert row["MRR"] == pytest.approx(1 / first)
    assert row["S@1"] == (1.0 if first == 1 else 0.0)
    assert row["R@10"] == pytest.approx(len(relevant & set(ranked[:10])) / len(relevant))


def test_unknown_analyzers_fail_before_any_work(tiny):
    with pytest.raises(InvalidArgument, match="unknown analyzer 'porter2'"):
        run(tiny, analyzers=["porter2"], progress=False)


def test_the_report(tiny, tiny_results, tmp_path):
    table = report.measures_table(tiny_results)
    assert list(table.columns) == ["analyzer", "context", *LABELS.values()]
    stemming = report.stemming_table(tiny_results, tiny)
    assert stemming.loc["nltk-porter-martin", "differs from FTS5 porter"] == 0
    assert stemming.loc["none", "words"] == stemming.loc["none", "stems"]
    assert stemming.loc["lancaster", "stems"] <= stemming.loc["porter", "stems"]
    written = report.write(tiny_results, tiny, tmp_path / "out")
    assert sorted(path.name for path in written) == sorted(
        [
            "per_query.csv",
            "summary.csv",
            "by_category.csv",
            "timings.csv",
            "stemming.csv",
            "configurations.json",
            "measures.png",
        ]
    )
    assert (tmp_path / "out" / "measures.png").read_bytes()[:4] == b"\x89PNG"


def test_memlab_eval_on_a_trec_folder(tmp_path, capsys):
    assert (
        main(
            [
                "eval",
                "--collection",
                str(TINY),
                "--analyzers",
                "none,snowball",
                "--workers",
                "1",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "Measures (* p<0.05" in out and "snowball" in out and "porter" in out
    assert (tmp_path / "per_query.csv").exists()
    assert main(["eval", "--collection", str(tmp_path / "missing")]) == 2
    assert "memlab eval:" in capsys.readouterr().err


# The headline of the relevance lab (docs/relevance-lab.md): LoCoMo, categories 1-4, 1,536 questions.
HEADLINE = {
    "porter": {"S@1": 0.402, "S@5": 0.585, "S@10": 0.645, "nDCG@10": 0.475},
    "porter+boost": {"S@1": 0.426, "S@5": 0.605, "S@10": 0.666, "nDCG@10": 0.496},
    "porter+context": {"S@1": 0.467, "S@5": 0.690, "S@10": 0.753, "nDCG@10": 0.578},
    "memlab": {"S@1": 0.503, "S@5": 0.710, "S@10": 0.766, "nDCG@10": 0.605},
    "dense": {"S@1": 0.391, "S@5": 0.626, "S@10": 0.684, "nDCG@10": 0.488},
    "hybrid": {"S@1": 0.514, "S@5": 0.730, "S@10": 0.785, "nDCG@10": 0.615},
}
DENSE_ROWS = ["dense", "hybrid"]  # MiniLM's int8 arithmetic may differ in the last bits between CPUs
CACHED = Path(__file__).parents[1] / "data" / "results" / "locomo"


@pytest.fixture(scope="module")
def locomo_all():
    """Every row on LoCoMo, run afresh through the store (the slowest test of the suite: about two minutes)."""
    return run(load_locomo(), rows=ALL_ROWS, progress=False)


def test_the_rows_reproduce_the_headline_on_locomo(locomo_all):
    summary = locomo_all.summary
    assert list(summary.index[: len(HEADLINE)]) == list(HEADLINE)
    for row, figures in HEADLINE.items():
        for measure, expected in figures.items():
            assert summary.loc[row, measure] == pytest.approx(expected, abs=0.01), (row, measure)
    assert (summary.loc[["porter+boost", "porter+context", "memlab", "hybrid"], "sig S@10"] == "**").all()
    assert locomo_all.configurations["memlab"] == {
        "analyzer": "porter",
        "context": True,
        "embedder": None,
        **Ranking().as_dict(),
    }
    assert locomo_all.skipped == {}


def test_locomo_baseline_is_reproduced_through_the_store(locomo_all):
    """The design brief measured success@10 with plain FTS5: porter 0.640, unicode61 0.595; stemmers +-0.005."""
    success = locomo_all.summary["S@10"]
    assert success["porter"] == pytest.approx(0.640, abs=0.01)
    assert success["none"] == pytest.approx(0.595, abs=0.01)
    assert locomo_all.summary.loc["none", "sig S@10"] == "**"
    stemmers = ["nltk-porter", "nltk-porter-martin", "snowball", "lancaster", "simplemma"]
    assert (success[stemmers] - success["porter"]).abs().max() <= 0.005


def test_the_cached_results_the_notebook_shows_equal_a_fresh_run(locomo_all):
    """Notebook 04 reads data/results/locomo instead of running two minutes: it must be what a run gives.
    (Regenerate with ``memlab eval --all --save data/results/locomo``.)"""
    cached = Results.load(CACHED)
    lexical = ~cached.per_query["row"].isin(DENSE_ROWS)
    pd.testing.assert_frame_equal(
        cached.per_query[lexical],
        locomo_all.per_query[~locomo_all.per_query["row"].isin(DENSE_ROWS)],
        check_dtype=False,
    )
    measures = ["S@1", "S@5", "S@10", "nDCG@10"]
    assert (cached.summary[measures] - locomo_all.summary[measures]).abs().max().max() <= 0.005
    assert cached.configurations == locomo_all.configurations
    assert list(cached.timings.index) == list(locomo_all.timings.index)


def test_rows_that_cannot_run_here_are_skipped_with_the_reason(monkeypatch, tiny):
    from memlab.search import dense

    monkeypatch.setattr(dense, "missing", lambda: ["onnxruntime"])
    results = run(tiny, rows=["porter", "hybrid", "memlab"], progress=False, workers=1)
    assert list(results.summary.index) == ["porter", "memlab"]
    assert results.skipped == {"hybrid": "needs onnxruntime (pip install 'memlab[dense]')"}
