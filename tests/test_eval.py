"""The relevance lab end to end: the runner on the real store, the report, ``memlab eval``."""

from pathlib import Path

import pytest

from memlab import InvalidArgument
from memlab.cli import main
from memlab.eval import load_locomo, load_trec, report, run
from memlab.eval.measures import LABELS
from memlab.search.analyzers import names

TINY = Path(__file__).parent / "fixtures" / "trec-tiny"


@pytest.fixture(scope="module")
def tiny():
    return load_trec(TINY)


@pytest.fixture(scope="module")
def tiny_results(tiny):
    return run(tiny, progress=False, workers=1)


def test_every_analyzer_runs_and_is_compared_with_porter(tiny, tiny_results):
    assert list(tiny_results.summary.index) == names()
    assert set(LABELS.values()) <= set(tiny_results.summary.columns)
    assert len(tiny_results.per_query) == len(names()) * len(tiny.queries)
    assert tiny_results.per_query.loc[tiny_results.per_query["analyzer"] == "nltk-porter", "mode"].unique() == [
        "NLTK_EXTENSIONS"
    ]
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
    row = tiny_results.per_query.query("analyzer == 'porter' and query == @query.id").iloc[0]
    assert row["MRR"] == pytest.approx(1 / first)
    assert row["S@1"] == (1.0 if first == 1 else 0.0)
    assert row["R@10"] == pytest.approx(len(relevant & set(ranked[:10])) / len(relevant))


def test_unknown_analyzers_fail_before_any_work(tiny):
    with pytest.raises(InvalidArgument, match="unknown analyzer 'porter2'"):
        run(tiny, analyzers=["porter2"], progress=False)


def test_the_report(tiny, tiny_results, tmp_path):
    table = report.measures_table(tiny_results)
    assert list(table.columns) == ["mode", *LABELS.values()]
    stemming = report.stemming_table(tiny_results, tiny)
    assert stemming.loc["nltk-porter-martin", "differs from FTS5 porter"] == 0
    assert stemming.loc["none", "words"] == stemming.loc["none", "stems"]
    assert stemming.loc["lancaster", "stems"] <= stemming.loc["porter", "stems"]
    written = report.write(tiny_results, tiny, tmp_path / "out")
    assert sorted(path.name for path in written) == sorted(
        ["per_query.csv", "summary.csv", "by_category.csv", "timings.csv", "stemming.csv", "measures.png"]
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


def test_locomo_baseline_is_reproduced_through_the_store():
    """DESIGN.md section 4 measured success@10 with plain FTS5: porter 0.640, unicode61 0.595."""
    results = run(load_locomo(), analyzers=["none", "porter"], progress=False)
    success = results.summary["S@10"]
    assert success["porter"] == pytest.approx(0.640, abs=0.01)
    assert success["none"] == pytest.approx(0.595, abs=0.01)
    assert results.summary.loc["none", "sig S@10"] == "**"
