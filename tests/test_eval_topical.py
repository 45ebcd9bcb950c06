"""memlab.eval.topical: a collection re-tagged with the topical words its questions use."""

from __future__ import annotations

from memlab.eval.collections import Collection, Document, Query
from memlab.eval.topical import retag_topical


def collection() -> Collection:
    documents = [
        Document("d1", "a", "k1", "Caroline paints lakes and sunsets", ("caroline", "session-1")),
        Document("d2", "a", "k2", "Mel runs marathons", ("mel", "session 2")),
    ]
    questions = ["What does Caroline paint?", "Does Caroline paint sunsets?", "Where does Mel run marathons?"]
    questions += [f"Something about week {n}" for n in range(20)]  # "about" then frames a question: never a topic
    queries = [Query(f"q{n}", "a", text) for n, text in enumerate(questions)]
    return Collection("tiny", documents, queries, {"q0": {"d1": 1}})


def test_one_word_tags_become_the_most_asked_words_of_the_text():
    # Guards: topical.retag_topical keeping speakers' names as candidate topics (the name tag then comes back).
    retagged = retag_topical(collection())
    first, second = retagged.documents
    assert first.tags == ("session-1", "sunsets")  # "caroline" is a speaker, "paints" is not a question's word
    assert second.tags == ("session 2", "marathons")  # a tag of several words is kept
    assert retagged.name == "tiny-topical" and retagged.queries == collection().queries
    assert retagged.qrels == collection().qrels


def test_per_memory_bounds_the_topics():
    many = Document("d3", "a", "k3", "Caroline paints sunsets marathons", ("x",))
    base = collection()
    retagged = retag_topical(Collection("c", [*base.documents, many], base.queries, base.qrels), per_memory=1)
    assert len(retagged.documents[-1].tags) == 1
