"""memlab.eval.trec: the TREC-style loader — docs, queries and qrels — and every refusal naming file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memlab.eval.collections import CollectionError
from memlab.eval.trec import load_trec, wordless_key
from memlab.search.query import words

TINY = Path(__file__).parent / "fixtures" / "trec-tiny"


def folder(tmp_path: Path, docs: list, queries: list, qrels: str) -> Path:
    (tmp_path / "docs.jsonl").write_text("".join(json.dumps(doc) + "\n" for doc in docs))
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps(query) + "\n" for query in queries))
    (tmp_path / "qrels").write_text(qrels)
    return tmp_path


DOCS = [{"id": "d1", "text": "one"}, {"id": "d2", "text": "two", "agent": "bob", "tags": ["x"], "occurred_at": None}]
QUERIES = [{"id": "q1", "text": "one?"}, {"id": "q2", "text": "two?", "agent": "bob", "category": "easy"}]


def test_a_folder_loads_with_defaults_for_what_is_left_out(tmp_path):
    collection = load_trec(folder(tmp_path, DOCS, QUERIES, "q1 0 d1 1\n\nq2 0 d2 0\n"), name="mine")
    first, second = collection.documents
    assert (first.agent, first.key, first.tags, second.agent, second.occurred_at) == (
        "main",
        wordless_key("d1"),
        (),
        "bob",
        None,
    )
    assert collection.qrels == {"q1": {"d1": 1}}  # relevance 0 is dropped
    assert collection.name == "mine" and collection.queries[1].category == "easy"


@pytest.mark.parametrize(
    ("docs", "queries", "qrels", "message"),
    [
        (DOCS + [{"id": "d1", "text": "again"}], QUERIES, "", "docs.jsonl line 3: duplicate document id 'd1'"),
        ([{"id": "d 1", "text": "x"}], [], "", "contains whitespace"),
        ([{"id": "d1"}], [], "", 'docs.jsonl line 1: no "text"'),
        ([{"id": "d1", "text": 3}], [], "", '"text" must be a string, not int'),
        (DOCS, [{"id": "q1", "text": "x", "agent": "eve"}], "", "agents there: bob, main"),
        (DOCS, QUERIES, "q1 0 d1", "qrels line 1: expected 4 fields"),
        (DOCS, QUERIES, "q1 0 d1 high", "relevance 'high' is not an integer"),
        (DOCS, QUERIES, "q1 0 d9 1", "unknown document id"),
        (DOCS, QUERIES, "q1 0 d2 1", "a query searches only its own agent's memories"),
        (DOCS, QUERIES, "q1 0 d1 1\nq1 0 d1 2", "judged twice"),
    ],
)
def test_a_malformed_collection_is_refused_naming_where(tmp_path, docs, queries, qrels, message):
    with pytest.raises(CollectionError, match=message):
        load_trec(folder(tmp_path, docs, queries, qrels))


def test_a_missing_file_is_named(tmp_path):
    (tmp_path / "docs.jsonl").write_text("")
    with pytest.raises(CollectionError, match="has no queries.jsonl, qrels"):
        load_trec(tmp_path)


@pytest.mark.parametrize("doc_id", ["caroline/session-1/3", "d1", "社員", ""])
def test_a_wordless_key_has_no_word_a_query_could_match(doc_id):
    # Guards: trec.wordless_key spelling the digest in hex (its letters and digits then searchable words).
    key = wordless_key(doc_id)
    assert words(key) == [] and len(key) == 17 and key.startswith("#")
    assert key == wordless_key(doc_id) and key != wordless_key(doc_id + "x")


def test_the_fixture_loads():
    assert load_trec(TINY).summary()["documents"] == 7
