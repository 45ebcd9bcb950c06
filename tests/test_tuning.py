"""Held-out tuning: each half of the agents is answered only with a ranking tuned on the other half."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from memlab import InvalidArgument
from memlab.cli import main
from memlab.eval import Collection, Document, Query, Results, load_trec
from memlab.eval.configurations import Configuration
from memlab.eval.measures import per_query
from memlab.eval.runner import run_configuration
from memlab.eval.tuning import HELD_OUT, halves, tune

SMALL_GRID = {"tag_boost": (0.0, 2.0), "source": (0.0, 1.0)}
TUNED = Path(__file__).resolve().parent.parent / "data" / "results" / "locomo-tuned"
HYBRID_HELD_OUT_S10 = 0.783  # RRF of memlab's FTS5 ranking and MiniLM, weight and k tuned held-out


def _collection() -> Collection:
    """Four agents; in each, the answer is the memory tagged with the person the question names, and its
    source holds the question's other word."""
    documents, queries, qrels = [], [], {}
    for agent in ("a1", "a2", "b1", "b2"):
        for person, other in (("ann", "bob"), ("bob", "ann")):
            for topic in ("tea", "jazz", "chess"):
                key = f"{person}-{topic}"
                text = f"{person} and {other} talked about {topic}"
                documents.append(
                    Document(f"{agent}/{key}", agent, key, text, (person,), f"{person}: I like {topic} on weekends")
                )
        for number, (person, topic) in enumerate([("ann", "tea"), ("bob", "jazz"), ("ann", "chess")]):
            query = Query(f"{agent}/q{number}", agent, f"What does {person} like on weekends, {topic}?")
            queries.append(query)
            qrels[query.id] = {f"{agent}/{person}-{topic}": 1}
    return Collection("people", documents, queries, qrels)


@pytest.fixture(scope="module")
def people():
    return _collection()


@pytest.fixture(scope="module")
def tuned(people):
    return tune(people, grids={"memlab": SMALL_GRID}, progress=False)


def test_halves_split_the_agents_in_file_order(people):
    assert halves(people) == {
        "first": [f"{agent}/q{n}" for agent in ("a1", "a2") for n in range(3)],
        "second": [f"{agent}/q{n}" for agent in ("b1", "b2") for n in range(3)],
    }


def test_each_half_is_reported_with_the_ranking_tuned_on_the_other(people, tuned):
    split = halves(people)
    for half, other in (("first", "second"), ("second", "first")):
        row = Configuration("check", ranking=tuned.chosen["memlab"][other], context=True)
        ranking, _, _ = run_configuration(people, row, queries=split[half])
        expected = per_query(people.qrels, ranking).reindex(split[half], fill_value=0.0)
        reported = tuned.held_out.per_query.query("row == @HELD_OUT").set_index("query").loc[split[half]]
        pd.testing.assert_frame_equal(reported[expected.columns], expected, check_names=False)
    assert list(tuned.held_out.summary.index) == ["porter", "memlab", HELD_OUT]
    recorded = tuned.held_out.configurations[HELD_OUT]
    assert recorded["used on the second half (tuned on the first)"] == tuned.chosen["memlab"]["first"].as_dict()


def test_the_trace_holds_tuning_figures_labelled_by_half(tuned):
    assert set(tuned.trace["half"]) == {"first", "second"} and set(tuned.trace["row"]) == {"memlab"}
    assert set(tuned.trace["parameter"]) == set(SMALL_GRID)
    assert tuned.trace["objective"].between(0, 2).all()


def test_tuning_refuses_what_it_cannot_do(people):
    with pytest.raises(InvalidArgument, match="names no Ranking parameter colour"):
        tune(people, grids={"memlab": {"colour": (1.0,)}}, progress=False)
    with pytest.raises(InvalidArgument, match="cannot tune 'porter'"):
        tune(people, rows=["porter"], progress=False)
    with pytest.raises(InvalidArgument, match="at least two agents"):
        tune(load_trec("tests/fixtures/trec-tiny"), progress=False)


def test_memlab_eval_tune_reproduces_the_held_out_figures_on_locomo(tmp_path, capsys):
    """The held-out row of docs/relevance-lab.md: tuned on conversations 0-4, reported on 5-9, and the reverse."""
    assert main(["eval", "--tune", "--out", str(tmp_path), "--save", str(tmp_path / "saved")]) == 0
    out = capsys.readouterr().out
    assert "memlab, tuned on the first half: Ranking(" in out and "hybrid, tuned on the second half: Ranking(" in out
    summary = pd.read_csv(tmp_path / "summary.csv", index_col=0)
    fts = summary.loc[HELD_OUT]
    assert fts["S@10"] == pytest.approx(0.763, abs=0.01)
    assert fts["S@1"] == pytest.approx(0.503, abs=0.01)
    assert fts["nDCG@10"] == pytest.approx(0.604, abs=0.01)
    hybrid = summary.loc["hybrid tuned (held-out)"]
    assert hybrid["S@10"] == pytest.approx(HYBRID_HELD_OUT_S10, abs=0.01)
    # data/results/locomo-tuned feeds the tuning table of docs/relevance-lab.md (tools/tables.py): it must be what
    # this run saved (regenerate with memlab eval --tune --save data/results/locomo-tuned).
    fresh, committed = Results.load(tmp_path / "saved"), Results.load(TUNED)
    lexical = ~fresh.per_query["row"].str.startswith("hybrid")  # ONNX scores may differ in the last bits
    chosen = {row: about for row, about in fresh.configurations.items() if not row.startswith("hybrid")}
    assert chosen == {row: committed.configurations[row] for row in chosen}  # the rankings each half chose
    pd.testing.assert_frame_equal(
        committed.per_query[lexical].reset_index(drop=True),
        fresh.per_query[lexical].reset_index(drop=True),
        check_dtype=False,
    )
    measures = ["S@1", "S@5", "S@10", "nDCG@10"]
    assert (committed.summary[measures] - fresh.summary[measures]).abs().max().max() <= 0.005
