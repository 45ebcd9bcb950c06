"""Held-out tuning: each half of the agents is answered only with a ranking tuned on the other half."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from memlab import InvalidArgument, MemoryStore, Ranking
from memlab.cli import main
from memlab.eval import Collection, Document, Query, Results, load_trec
from memlab.eval.configurations import Configuration
from memlab.eval.measures import per_query
from memlab.eval.runner import in_order, run_configuration
from memlab.eval.tuning import HELD_OUT, halves, save_ranking, tune
from memlab.search.ranking import read

SMALL_GRID = {"tag_boost": (0.0, 2.0), "source": (0.0, 1.0)}
TINY = Path(__file__).resolve().parent / "fixtures" / "trec-tiny"
ROOT = Path(__file__).resolve().parent.parent
TUNED = Path(__file__).resolve().parent.parent / "data" / "results" / "locomo-tuned"
HYBRID_HELD_OUT_S10 = 0.779  # RRF of memlab's FTS5 ranking and MiniLM, weight and k tuned held-out


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
        expected = per_query(people.qrels, in_order(ranking)).reindex(split[half], fill_value=0.0)
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
    alone = Collection("alone", people.documents[:6], people.queries[:1], {})
    with pytest.raises(InvalidArgument, match="at least two agents, or two queries, to split; 'alone' has 1 agent"):
        tune(alone, progress=False)


def test_a_collection_of_one_agent_is_split_by_its_queries():
    """One agent (a TREC-style folder): each half of the queries answered with the ranking the other chose."""
    tiny = load_trec(TINY)
    assert halves(tiny) == {"first": ["q1", "q2"], "second": ["q3", "q4"]}
    tuned = tune(tiny, grids={"memlab": SMALL_GRID}, progress=False)
    assert tuned.split == "queries" and set(tuned.chosen["memlab"]) == {"first", "second"}
    assert sorted(tuned.held_out.per_query.query("row == @HELD_OUT")["query"]) == ["q1", "q2", "q3", "q4"]


@pytest.fixture(scope="module")
def final(people):
    return tune(people, grids={"memlab": SMALL_GRID}, progress=False, final=True)


def test_the_ranking_to_use_is_tuned_on_all_the_queries(people, final):
    steps = final.trace.query("half == 'all'")
    assert len(steps) and set(final.final) == {"memlab"}
    best = steps["objective"].max()
    used = Configuration("check", ranking=final.final["memlab"], context=True)
    ranking, _, _ = run_configuration(people, used)
    everything = [query.id for query in people.queries]
    table = per_query(people.qrels, in_order(ranking)).reindex(everything, fill_value=0.0)
    assert table["S@10"].mean() + table["nDCG@10"].mean() == pytest.approx(best)


def test_a_saved_ranking_holds_what_it_was_tuned_on_and_its_held_out_figures(people, final, tmp_path):
    path = save_ranking(final, people, tmp_path / "ranking.json")
    saved = read(path)
    assert saved.ranking == Ranking.load(path) == final.final["memlab"]
    assert {k: saved.tuned_on[k] for k in ("collection", "documents", "queries", "agents", "row", "split")} == {
        "collection": "people",
        "documents": 24,
        "queries": 12,
        "agents": 4,
        "row": "memlab",
        "split": "agents",
    }
    assert len(saved.tuned_on["date"]) == 10
    summary = final.held_out.summary
    assert set(saved.figures["held_out"]) == {"porter", "memlab", HELD_OUT}
    for row, figures in saved.figures["held_out"].items():
        assert figures == {m: pytest.approx(summary.loc[row, m], abs=5e-5) for m in ("S@1", "S@5", "S@10", "nDCG@10")}
    # Each half's figures came from the ranking the *other* half chose: the file says which.
    assert saved.figures["halves"]["first"]["answered with"] == final.chosen["memlab"]["second"].as_dict()
    assert saved.figures["halves"]["second"]["answered with"] == final.chosen["memlab"]["first"].as_dict()


def test_a_ranking_not_tuned_on_everything_cannot_be_saved(people, tuned, tmp_path):
    with pytest.raises(InvalidArgument, match="no final ranking of 'memlab' to save: tune\\(..., final=True\\)"):
        save_ranking(tuned, people, tmp_path / "ranking.json")
    assert not list(tmp_path.iterdir())


def test_memlab_eval_tune_saves_a_ranking_file_that_serve_uses(tmp_path, capsys):
    path = tmp_path / "ranking.json"
    assert main(["eval", "--tune", "--rows", "memlab", "--collection", str(TINY), "--save", str(path)]) == 0
    out = capsys.readouterr().out
    assert "each half of the queries answered by the ranking tuned on the other" in out
    saved = read(path)
    assert f"wrote {path}: memlab tuned on all of trec-tiny's queries ({saved.ranking})" in out
    assert saved.tuned_on["collection"] == "trec-tiny" and saved.tuned_on["split"] == "queries"
    assert [p.name for p in tmp_path.iterdir()] == ["ranking.json"]  # a ranking file, not a results folder


def test_a_ranking_file_without_tuning_is_refused_before_anything_runs(tmp_path, capsys):
    assert main(["eval", "--collection", str(TINY), "--save", str(tmp_path / "ranking.json")]) == 2
    assert "--save " in capsys.readouterr().err and not list(tmp_path.iterdir())


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


def test_the_relevance_pages_five_commands_take_a_folder_to_a_tuned_store(tmp_path, monkeypatch, capsys):
    """docs/relevance-lab.md's walk, run as written from a working folder that sees the repository's tests/."""
    page = (ROOT / "docs" / "relevance-lab.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"<!-- commands:tune-your-data -->\n```bash\n(.*?)```", page, re.DOTALL)
    commands = [shlex.split(line) for line in block.splitlines()]
    assert len(commands) == 5 and all(command[0] == "memlab" for command in commands)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    *in_process, serve = commands
    for command in in_process:
        assert main(command[1:]) == 0, (command, capsys.readouterr().err)
    assert serve[:2] == ["memlab", "serve"]  # the host's end of stdin closed at once: the server starts and stops
    served = subprocess.run(
        [sys.executable, "-m", "memlab.cli", *serve[1:]], stdin=subprocess.DEVNULL, capture_output=True, text=True
    )
    assert served.returncode == 0 and "Traceback" not in served.stderr, served.stderr
    ranking = Ranking.load(tmp_path / "ranking.json")
    assert read(tmp_path / "ranking.json").tuned_on["collection"] == "trec-tiny"
    with MemoryStore(tmp_path / "memories", ranking=ranking) as store:
        assert store.ranking == ranking and len(store.session().memory_list()) == 7
