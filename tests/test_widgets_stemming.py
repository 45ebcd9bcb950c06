"""memlab.widgets.stemming: each analyzer's terms for a text, and its top results on a collection."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlab.errors import InvalidArgument
from memlab.eval.trec import load_trec
from memlab.widgets.stemming import StemmingLab, analyze_table, indexed_session, results_html, top_results

TINY = Path(__file__).parent / "fixtures" / "trec-tiny"


@pytest.fixture(scope="module")
def tiny():
    return load_trec(TINY)


def test_analyze_table_has_a_row_per_distinct_word_and_a_column_per_analyzer():
    table = analyze_table("Running runs, running!", ["porter", "none"])
    assert table.index.tolist() == ["running", "runs"]
    assert table.loc["running"].tolist() == ["run", "running"]
    assert analyze_table("what is my name", ["porter"], query=True).index.tolist() == ["name"]
    assert analyze_table("", ["porter"]).empty
    with pytest.raises(InvalidArgument):
        analyze_table("x", ["no-such-analyzer"])


def test_top_results_judge_a_collection_query_and_not_a_free_one(tiny):
    # Guards: stemming._relevant_keys matching any query (a free query's results then marked not relevant).
    judged = top_results(tiny, "baking a loaf of bread", ["porter"], k=2)["porter"]
    assert judged["key"].iloc[0] == "cook-bread" and bool(judged["relevant"].iloc[0]) is True
    free = top_results(tiny, "bread", ["porter"], k=2)["porter"]
    assert free["relevant"].isna().all()
    assert "<mark>" in free["highlighted"].iloc[0]
    assert "✔" in results_html(top_results(tiny, "baking a loaf of bread", ["porter"]))


def test_an_index_is_built_once_per_collection_and_analyzer(tiny):
    assert indexed_session(tiny, "porter") is indexed_session(tiny, "porter")
    assert indexed_session(tiny, "none") is not indexed_session(tiny, "porter")
    with pytest.raises(InvalidArgument, match="no documents for agent 'bob'"):
        indexed_session(tiny, "porter", agent="bob")


def test_the_lab_shows_terms_and_results(tiny):
    lab = StemmingLab(tiny, analyzers=["none", "porter"])
    lab.question.value = lab.question.options[1][1]
    assert lab.query.value == tiny.queries[0].text
    lab.run_button.click()
    assert "<b>query terms</b>" in lab.terms.value and "run-" in lab.results.value
