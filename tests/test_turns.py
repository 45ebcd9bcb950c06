"""``locomo-turns``: LoCoMo's dialog turns as memories, its questions judged by their evidence turns."""

import json

import pytest

import memlab.eval
from memlab.cli import main
from memlab.eval import load_collection, load_locomo
from memlab.eval.collections import CollectionError
from memlab.eval.turns import load_locomo_turns


@pytest.fixture(scope="module")
def turns():
    return load_locomo_turns()


def test_each_turn_is_a_memory_of_its_conversations_agent(turns):
    samples = json.loads(open("data/locomo10.json", encoding="utf-8").read())
    first = samples[0]["conversation"]
    document = turns.documents[0]
    assert (document.id, document.agent, document.key) == ("conv-26/D1:1", "conv-26", "D1:1")
    assert document.text == first["session_1"][0]["text"] and document.tags == ("caroline",)
    assert document.source is None and document.occurred_at == "2023-05-08T13:56:00"  # "1:56 pm on 8 May, 2023"
    assert len(turns.documents) == sum(
        len(value) for sample in samples for name, value in sample["conversation"].items() if isinstance(value, list)
    )
    assert {document.agent for document in turns.documents} == {sample["sample_id"] for sample in samples}
    pictured = next(document for document in turns.documents if "[image: " in document.text)
    assert pictured.text.endswith("]")  # a shared image is a turn too: its caption is what can be searched


def test_the_judgments_are_the_questions_evidence_turns(turns):
    # The same questions as the observations' collection, under the same ids; here the evidence turns themselves.
    observations = load_locomo()
    assert [(q.id, q.text, q.category) for q in turns.queries] == [
        (q.id, q.text, q.category) for q in observations.queries
    ]
    assert turns.qrels["conv-26/q0"] == {"conv-26/D1:3": 1}  # "When did Caroline go to the LGBTQ support group?"
    assert turns.qrels["conv-26/q2"] == {"conv-26/D1:9": 1, "conv-26/D1:11": 1}
    ids = {document.id for document in turns.documents}
    assert all(set(judged) <= ids for judged in turns.qrels.values())
    assert turns.summary()["judged_queries"] == 1536  # every question cites a turn; 224 cite no observation


def test_memlab_eval_runs_a_shipped_collection_by_name(monkeypatch, capsys):
    # Guards: --collection read as a folder only ("locomo-turns has no docs.jsonl").
    seen = []
    monkeypatch.setattr(memlab.eval, "run", lambda collection, **_: seen.append(collection) or _stop())
    with pytest.raises(_Stopped):
        main(["eval", "--collection", "locomo-turns"])
    assert seen[0].name == "locomo-turns"
    assert "locomo-turns: 5882 documents in 10 agents, 1536 queries (1536 judged" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["locomo", "locomo-topical", "locomo-turns"])
def test_every_shipped_collection_has_a_name(name):
    assert load_collection(name).name == name


def test_a_name_that_is_neither_a_shipped_collection_nor_a_folder_says_so(tmp_path, capsys):
    message = (
        "unknown collection 'locomo-turn'; known collections: locomo, locomo-topical, locomo-turns, preferences; "
        "nor is it a folder"
    )
    with pytest.raises(CollectionError, match=message):
        load_collection("locomo-turn")
    assert main(["eval", "--collection", "locomo-turn"]) == 2
    assert message in capsys.readouterr().err


class _Stopped(Exception):
    pass


def _stop():
    raise _Stopped


def test_the_derived_collections_label_locomos_categories():
    # Guards: the labels given to a collection named "locomo" only (locomo-turns' table headed 1, 2, 3, 4).
    results = memlab.eval.Results.load("data/results/locomo")
    results.collection = "locomo-turns"
    assert list(results.by_category().columns) == ["1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop"]
