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
AGENTS = Path(__file__).parent / "fixtures" / "trec-agents"


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


def test_the_measures_score_the_order_the_store_returned():
    """Every query's measures are those of the order a session's search returned, also where scores nearly tie.

    In trec-agents, ben's four memories carry the tag the question names: the boost (2) outweighs bm25 there,
    their scores differ in the seventh decimal, and ir-measures (trec_eval, scores as 32-bit floats) took them
    for a tie and ranked by document id, putting first a memory the store put third."""
    # Guards: the run handed to ir-measures with the store's scores (``per_query(collection.qrels, ranking)`` in
    # results_of): q7's S@1 was 1 though the store's first hit for it is not relevant.
    from memlab import MemoryStore

    collection = load_trec(AGENTS)
    results = run(collection, rows=["memlab"], progress=False, workers=1)
    measured = results.per_query.query("row == 'memlab'").set_index("query")
    with MemoryStore(ranking=Ranking()) as store:
        for document in collection.documents:
            store.session(agent=document.agent).memory_save_many([document.record(context=True)])
        for query in collection.queries:
            hits = store.session(agent=query.agent).memory_search(query.text, max_results=100)
            ids = {(document.agent, document.key): document.id for document in collection.documents}
            ranked = [ids[query.agent, hit.memory.key] for hit in hits]
            relevant = set(collection.qrels.get(query.id, {}))
            assert measured.loc[query.id, "S@1"] == (1.0 if ranked[:1] and ranked[0] in relevant else 0.0), query.id
            first = next((rank for rank, key in enumerate(ranked, 1) if key in relevant), None)
            assert measured.loc[query.id, "MRR"] == pytest.approx(0.0 if first is None else 1 / first), query.id


def test_unknown_analyzers_fail_before_any_work(tiny):
    with pytest.raises(InvalidArgument, match="unknown analyzer 'porter2'"):
        run(tiny, analyzers=["porter2"], progress=False)


def test_the_report(tiny, tiny_results):
    table = report.measures_table(tiny_results)
    assert list(table.columns) == ["analyzer", "context", *LABELS.values()]
    stemming = report.stemming_table(tiny_results, tiny)
    assert stemming.loc["nltk-porter-martin", "differs from FTS5 porter"] == 0
    assert stemming.loc["none", "words"] == stemming.loc["none", "stems"]
    assert stemming.loc["lancaster", "stems"] <= stemming.loc["porter", "stems"]
    # What report.write puts in a folder: tests/test_eval_report.py.


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


def test_results_per_category_when_queries_carry_categories(tmp_path):
    results = run(load_trec(AGENTS), rows=["porter"], progress=False, workers=1)
    table = results.by_category()
    assert list(table.columns) == ["open-domain", "single-hop", "temporal"]  # q8 has none: it is in no column
    assert table.loc["porter", "single-hop"] == results.per_query.query("category == 'single-hop'")["S@10"].mean()
    written = report.write(results, load_trec(AGENTS), tmp_path / "out")
    assert tmp_path / "out" / "by_category.csv" in written
    assert pd.read_csv(tmp_path / "out" / "by_category.csv", index_col="row").shape == (1, 3)


def eval_output(monkeypatch, capsys, collection: Path) -> tuple[str, str]:
    """What ``memlab eval --collection`` prints before its run starts, and all it prints."""
    import memlab.eval

    before = []

    def run_after_looking(*args, **kwargs):
        before.append(capsys.readouterr().out)
        return run(*args, **kwargs)

    monkeypatch.setattr(memlab.eval, "run", run_after_looking)
    assert main(["eval", "--collection", str(collection), "--rows", "porter,memlab", "--workers", "1"]) == 0
    return before[0], before[0] + capsys.readouterr().out


def test_memlab_eval_prints_the_collections_summary_before_it_runs(monkeypatch, capsys):
    # Guards: the summary printed with the results, after the run (a wrong collection then costs a whole run).
    before, out = eval_output(monkeypatch, capsys, AGENTS)
    assert "trec-agents: 11 documents in 3 agents, 8 queries (8 judged: with a relevant document)" in before
    assert "categories: open-domain 1, single-hop 4, temporal 2 (1 query without one)" in before
    assert "Measures" not in before
    assert "S@10 per query category" in out and "single-hop" in out.split("S@10 per query category")[1]


def test_memlab_eval_prints_no_category_table_without_categories(monkeypatch, capsys):
    # Guards: the per-category table printed whatever the queries carry (it printed "Empty DataFrame").
    before, out = eval_output(monkeypatch, capsys, TINY)
    assert "trec-tiny: 7 documents in 1 agent, 4 queries (4 judged: with a relevant document); no categories" in before
    assert "per query category" not in out and "Empty DataFrame" not in out


def test_memlab_eval_on_a_bad_collection_says_where_and_writes_nothing(tmp_path, capsys):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "docs.jsonl").write_text('{"id": "a", "text": "apples", "agent": "ann"}\n', encoding="utf-8")
    (folder / "queries.jsonl").write_text('{"id": "q1", "text": "fruit", "agent": "bob"}\n', encoding="utf-8")
    (folder / "qrels").write_text("q1 0 a 1\n", encoding="utf-8")
    assert main(["eval", "--collection", str(folder), "--out", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "queries.jsonl line 1: \"agent\" 'bob' has no documents" in err
    assert not (tmp_path / "out").exists()


# The headline of the relevance lab (docs/relevance-lab.md): LoCoMo, categories 1-4, 1,536 questions.
HEADLINE = {
    "porter": {"S@1": 0.402, "S@5": 0.585, "S@10": 0.645, "nDCG@10": 0.475},
    "porter+boost": {"S@1": 0.426, "S@5": 0.605, "S@10": 0.666, "nDCG@10": 0.496},
    "porter+context": {"S@1": 0.467, "S@5": 0.690, "S@10": 0.753, "nDCG@10": 0.578},
    "memlab": {"S@1": 0.503, "S@5": 0.710, "S@10": 0.766, "nDCG@10": 0.605},
    "dense": {"S@1": 0.391, "S@5": 0.626, "S@10": 0.684, "nDCG@10": 0.488},
    "hybrid": {"S@1": 0.529, "S@5": 0.738, "S@10": 0.783, "nDCG@10": 0.625},
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

    monkeypatch.setattr(dense, "missing", lambda name="minilm": ["onnxruntime"])
    results = run(tiny, rows=["porter", "hybrid", "memlab"], progress=False, workers=1)
    assert list(results.summary.index) == ["porter", "memlab"]
    assert results.skipped == {"hybrid": "needs onnxruntime (pip install 'memlab[dense]')"}


def _fts5_over_the_text(collection, weights, *, depth=100):
    """Each query asked of raw sqlite3 FTS5 (``porter unicode61``), one table per agent over its documents' key,
    content and tags (the text the ``porter`` row names), ranked by bm25 with ``weights``: query -> [(id, score)]."""
    import contextlib
    import sqlite3

    from memlab.search.query import match_expression

    answers = {}
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        tables = {}
        for document in collection.documents:
            if document.agent not in tables:
                tables[document.agent] = table = f"agent_{len(tables)}"
                db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5(key, content, tags, tokenize='porter unicode61')")
            db.execute(
                f"INSERT INTO {tables[document.agent]} (key, content, tags) VALUES (?, ?, ?)",
                (document.key, document.text, " ".join(document.tags)),
            )
        ids = {(document.agent, document.key): document.id for document in collection.documents}
        score = ", ".join(str(weight) for weight in weights)
        for query in collection.queries:
            table = tables[query.agent]
            rows = db.execute(
                f"SELECT key, bm25({table}, {score}) AS score FROM {table} WHERE {table} MATCH ? "
                "ORDER BY score, rowid LIMIT ?",
                (match_expression(query.text), depth),
            )
            answers[query.id] = [(ids[query.agent, key], -score) for key, score in rows]
    return answers


@pytest.mark.parametrize("collection", [AGENTS, "locomo"])
def test_the_porter_row_is_fts5s_bm25_over_the_same_text(collection):
    """The baseline is plain FTS5: query by query, the porter row ranks (order and scores) as raw sqlite3 does
    over the text it names. (A column the row weighs 0, like the tag boost's one-word tags, still counted in
    bm25's row length and moved every score.)"""
    from memlab.eval.configurations import CONFIGURATIONS
    from memlab.eval.runner import run_configuration

    collection = load_locomo() if collection == "locomo" else load_trec(collection)
    porter = CONFIGURATIONS.get("porter")
    ranked, _, _ = run_configuration(collection, porter)
    raw = _fts5_over_the_text(collection, porter.ranking.weights()[:3])
    assert porter.ranking.weights()[3:] == (0.0, 0.0) and not porter.context and not porter.ranking.tag_boost
    assert set(ranked) == set(raw)
    for query, answer in raw.items():
        assert list(ranked[query]) == [document for document, _ in answer], query
        assert list(ranked[query].values()) == pytest.approx([score for _, score in answer], rel=1e-12), query
