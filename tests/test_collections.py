"""Collections: LoCoMo's counts pinned, the tiny TREC-style fixture, and a clear error for each kind of bad file."""

import json
from collections import Counter
from pathlib import Path

import pytest

from memlab import InvalidArgument, arguments
from memlab.eval import CollectionError, Document, Query, load_locomo, load_trec

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT / "data" / "locomo10.json"
TREC_TINY = Path(__file__).resolve().parent / "fixtures" / "trec-tiny"


@pytest.fixture(scope="module")
def locomo():
    return load_locomo(LOCOMO)


def test_locomo_counts(locomo):
    assert locomo.name == "locomo"
    assert locomo.summary() == {
        "documents": 2541,
        "queries": 1536,
        "agents": 10,
        "queries_per_category": {"1": 282, "2": 321, "3": 92, "4": 841},
        "judged_queries": 1312,
        "judged_pairs": 2103,
    }


def test_locomo_loads_from_the_working_directory_by_default(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert load_locomo().summary()["documents"] == 2541


def test_locomo_has_one_agent_per_sample(locomo):
    agents = sorted({document.agent for document in locomo.documents})
    assert agents == [f"conv-{n}" for n in (26, 30, 41, 42, 43, 44, 47, 48, 49, 50)]
    assert {query.agent for query in locomo.queries} == set(agents)


def test_locomo_keys_are_unique_per_agent_and_valid(locomo):
    per_agent = Counter((document.agent, document.key) for document in locomo.documents)
    assert max(per_agent.values()) == 1
    assert len({document.id for document in locomo.documents}) == len(locomo.documents)
    for document in locomo.documents:
        assert arguments.key(document.key) == document.key
        assert document.id == f"{document.agent}/{document.key}"
        assert arguments.tags(list(document.tags)) == document.tags


def test_locomo_tags_are_speaker_and_session(locomo):
    for document in locomo.documents:
        speaker, session, _ = document.key.split("/")
        assert document.tags == (speaker, session)


def test_locomo_qrels_name_known_queries_and_documents(locomo):
    queries = {query.id: query for query in locomo.queries}
    documents = {document.id: document for document in locomo.documents}
    for query_id, judged in locomo.qrels.items():
        assert judged and set(judged.values()) == {1}
        assert all(documents[doc_id].agent == queries[query_id].agent for doc_id in judged)


def test_locomo_questions_citing_no_observation_stay_unjudged(locomo):
    # 224 questions cite only dialog turns that no observation cites; they stay, so measures count them as misses.
    unjudged = [query for query in locomo.queries if query.id not in locomo.qrels]
    assert len(unjudged) == 224
    assert Counter(query.category for query in unjudged) == {"1": 9, "2": 34, "3": 13, "4": 168}


def test_locomo_hand_checked_example(locomo):
    query = next(query for query in locomo.queries if query.id == "conv-26/q0")
    assert query == Query("conv-26/q0", "conv-26", "When did Caroline go to the LGBTQ support group?", "2")
    assert locomo.qrels["conv-26/q0"] == {"conv-26/caroline/session-1/1": 1}
    document = next(document for document in locomo.documents if document.id == "conv-26/caroline/session-1/1")
    assert document == Document(
        "conv-26/caroline/session-1/1",
        "conv-26",
        "caroline/session-1/1",
        "Caroline attended an LGBTQ support group recently and found the transgender stories inspiring.",
        ("caroline", "session-1"),
        document.source,
        "2023-05-08T13:56:00",  # session 1: "1:56 pm on 8 May, 2023"
    )
    # The cited turn D1:3 first, then D1:1-D1:5 around it (D1:3 once), as "Speaker: text".
    turns = document.source.split(" Caroline: ") if document.source else []
    assert document.source.startswith("Caroline: I went to a LGBTQ support group yesterday and it was so powerful.")
    assert document.source.count("I went to a LGBTQ support group") == 1 and len(turns) == 3
    assert document.source.endswith("[image: a photo of a dog walking past a wall with a painting of a woman]")
    assert document.record(context=False) == {
        "key": document.key,
        "content": document.text,
        "tags": list(document.tags),
    }


def test_locomo_context_is_around_turns_wide(locomo):
    narrow = load_locomo(LOCOMO, around=0)
    assert all(len(n.source) <= len(w.source) for n, w in zip(narrow.documents, locomo.documents, strict=True))
    first = narrow.documents[0]
    assert first.source == "Caroline: I went to a LGBTQ support group yesterday and it was so powerful."
    assert all(document.source and document.occurred_at for document in locomo.documents)


@pytest.mark.parametrize(
    ("query_id", "relevant"),
    [
        # "D8:6; D9:17": two ids in one string
        ("conv-26/q37", {"conv-26/melanie/session-8/2", "conv-26/melanie/session-9/3"}),
        # "D9:1 D4:4 D4:6": ids separated by spaces
        ("conv-49/q31", {"conv-49/evan/session-4/2", "conv-49/evan/session-4/3", "conv-49/sam/session-9/1"}),
        # "D30:05": a leading zero
        ("conv-50/q69", {"conv-50/dave/session-30/2"}),
        # ["D1:18", "D", "D1:20"]: the bare "D" is dropped
        ("conv-42/q88", {"conv-42/joanna/session-1/5"}),
    ],
)
def test_locomo_malformed_evidence_is_repaired(locomo, query_id, relevant):
    assert set(locomo.qrels[query_id]) == relevant


def test_locomo_observation_citing_several_turns_in_one_string(locomo):
    # Deborah's 5th observation of session 22 cites "D22:21, D22:23"; "Where did Deborah get her cats?" cites D22:23.
    assert "conv-48/deborah/session-22/5" in locomo.qrels["conv-48/q62"]
    # Dave's 4th observation of session 12 cites "D12:12, D12:14, D12:16"; question 93 cites D12:14 alone.
    assert locomo.qrels["conv-50/q93"] == {"conv-50/dave/session-12/4": 1}


def test_locomo_other_categories():
    adversarial = load_locomo(LOCOMO, categories=(5,))
    assert adversarial.summary()["queries_per_category"] == {"5": 446}
    assert load_locomo(LOCOMO, categories=[3]).summary()["queries"] == 92


@pytest.mark.parametrize("categories", [(), (0,), (1, 6)])
def test_locomo_rejects_unknown_categories(categories):
    with pytest.raises(InvalidArgument, match="categories must be some of 1, 2, 3, 4, 5"):
        load_locomo(LOCOMO, categories=categories)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no LoCoMo file at"),
        ("{not json", "is not a LoCoMo file"),
        ('{"sample_id": "x"}', "expected a list of samples"),
        ('[{"sample_id": "x", "qa": []}]', "expected a list of samples"),
        ('[{"sample_id": "x", "qa": [], "observation": {"session_one": {}}}]', "unexpected observation entry"),
    ],
)
def test_locomo_bad_file(tmp_path, content, message):
    path = tmp_path / "locomo.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(CollectionError, match=message) as raised:
        load_locomo(path)
    assert str(path) in str(raised.value) or "sample x" in str(raised.value)


def test_locomo_missing_file_says_where_it_is_expected(tmp_path):
    with pytest.raises(CollectionError) as raised:
        load_locomo(tmp_path / "nowhere.json")
    assert "data/locomo10.json" in str(raised.value) and "pass the path" in str(raised.value)
    assert raised.value.code == "invalid_argument"


def test_trec_tiny_fixture():
    collection = load_trec(TREC_TINY)
    assert collection.name == "trec-tiny"
    assert collection.summary() == {
        "documents": 7,
        "queries": 4,
        "agents": 1,
        "queries_per_category": {},
        "judged_queries": 4,
        "judged_pairs": 6,
    }
    assert collection.qrels["q1"] == {"run-morning": 2, "run-marathon": 1}  # "run-shoes 0" is dropped
    assert collection.documents[4] == Document(
        "run-marathon",
        "main",
        "run-marathon",
        "The marathon runner ate dried apricots she had cooked into bars during the long run.",
        ("running", "cooking"),
    )
    assert collection.documents[5].tags == ()
    assert collection.queries[2] == Query("q3", "main", "train travel across the mountains")
    assert load_trec(TREC_TINY, name="tiny").name == "tiny"


GOOD = {
    "docs.jsonl": '{"id": "a", "text": "apples"}\n{"id": "b", "text": "bananas"}\n',
    "queries.jsonl": '{"id": "q1", "text": "fruit"}\n',
    "qrels": "q1 0 a 1\n",
}


def write_collection(folder: Path, **files: str | bytes | None) -> Path:
    """GOOD's files with some replaced (``docs_jsonl=...`` for docs.jsonl) or, given None, left out."""
    folder.mkdir(exist_ok=True)
    for name, content in {**GOOD, **{name.replace("_", "."): text for name, text in files.items()}}.items():
        if isinstance(content, bytes):
            (folder / name).write_bytes(content)
        elif content is not None:
            (folder / name).write_text(content, encoding="utf-8")
    return folder


def test_trec_documents_may_carry_context(tmp_path):
    folder = write_collection(
        tmp_path / "c",
        docs_jsonl='{"id": "a", "text": "apples", "source": "Ann: I love apples", "occurred_at": "2024-03-01"}\n'
        '{"id": "b", "text": "bananas"}\n',
    )
    a, b = load_trec(folder).documents
    assert (a.source, a.occurred_at, b.source, b.occurred_at) == ("Ann: I love apples", "2024-03-01", None, None)
    assert a.record() == {
        "key": "a",
        "content": "apples",
        "tags": [],
        "source": "Ann: I love apples",
        "occurred_at": "2024-03-01",
    }


def test_trec_skips_blank_lines_and_ignores_unjudged(tmp_path):
    folder = write_collection(tmp_path / "c", docs_jsonl='\n{"id": "a", "text": "apples"}\n\n', qrels="\nq1 0 a -1\n")
    collection = load_trec(folder)
    assert [document.id for document in collection.documents] == ["a"]
    assert collection.qrels == {}
    assert collection.summary()["queries"] == 1


def test_trec_keeps_json_line_separators_inside_strings(tmp_path):
    folder = write_collection(
        tmp_path / "c", docs_jsonl='{"id": "a", "text": "one\u2028two"}\n{"id": "b", "text": "x"}\n'
    )
    assert load_trec(folder).documents[0].text == "one\u2028two"


BAD_FILES = [
    # a missing file names it and lists the three expected files
    ({"docs_jsonl": None}, ["has no docs.jsonl", "docs.jsonl, queries.jsonl, qrels"]),
    ({"queries_jsonl": None, "qrels": None}, ["has no queries.jsonl, qrels"]),
    # malformed lines: file, 1-based line number (blank lines counted), and what was wrong
    ({"docs_jsonl": '{"id": "a", "text": "x"}\n{"id": "b", "text": \n'}, ["docs.jsonl line 2", "not valid JSON"]),
    ({"docs_jsonl": '\n\n["a", "x"]\n'}, ["docs.jsonl line 3", "must be a JSON object, not list"]),
    ({"queries_jsonl": '"q1"\n'}, ["queries.jsonl line 1", "must be a JSON object, not str"]),
    ({"docs_jsonl": '{"text": "x"}\n'}, ["docs.jsonl line 1", 'no "id"']),
    ({"docs_jsonl": '{"id": "a"}\n'}, ["docs.jsonl line 1", 'no "text"']),
    ({"docs_jsonl": '{"id": "", "text": "x"}\n'}, ["docs.jsonl line 1", '"id" is empty']),
    ({"docs_jsonl": '{"id": "a", "text": "  "}\n'}, ["docs.jsonl line 1", '"text" is empty']),
    ({"docs_jsonl": '{"id": 7, "text": "x"}\n'}, ["docs.jsonl line 1", '"id" must be a string, not int']),
    ({"queries_jsonl": '{"id": "q1", "text": ["x"]}\n'}, ["queries.jsonl line 1", '"text" must be a string, not list']),
    ({"queries_jsonl": '{"id": null, "text": "x"}\n'}, ["queries.jsonl line 1", '"id" must be a string, not NoneType']),
    ({"docs_jsonl": '{"id": "a", "text": "x", "tags": "fruit"}\n'}, ["docs.jsonl line 1", "tags must be a list"]),
    ({"docs_jsonl": '{"id": "a", "text": "x", "tags": [""]}\n'}, ["docs.jsonl line 1", "each tag must not be empty"]),
    ({"docs_jsonl": b'{"id": "a", "text": "x"}\n\xff\xfe\n'}, ["docs.jsonl line 2", "not UTF-8"]),
    ({"docs_jsonl": '{"id": "a", "text": "x", "occurred_at": "May"}\n'}, ["docs.jsonl line 1", "occurred_at must be"]),
    ({"docs_jsonl": '{"id": "a", "text": "x", "source": 3}\n'}, ["docs.jsonl line 1", "source must be a string"]),
    ({"qrels": "q1 0 a\n"}, ["qrels line 1", "expected 4 fields", "found 3"]),
    ({"qrels": "q1 0 a 1\n\nq1 0 b 1 extra\n"}, ["qrels line 3", "expected 4 fields", "found 5"]),
    ({"qrels": "q1 0 a high\n"}, ["qrels line 1", "relevance 'high' is not an integer"]),
    ({"qrels": "q1 0 a 1.5\n"}, ["qrels line 1", "relevance '1.5' is not an integer"]),
    # duplicates name the line and the first occurrence
    (
        {"docs_jsonl": '{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n{"id": "a", "text": "z"}\n'},
        ["docs.jsonl line 3", "duplicate document id 'a'", "first at docs.jsonl line 1"],
    ),
    (
        {"queries_jsonl": '{"id": "q1", "text": "x"}\n{"id": "q1", "text": "y"}\n'},
        ["queries.jsonl line 2", "duplicate query id 'q1'", "first at queries.jsonl line 1"],
    ),
    ({"qrels": "q1 0 a 1\nq1 0 a 0\n"}, ["qrels line 2", "judged twice", "first at qrels line 1"]),
    # qrels naming what the collection lacks: the count and the first few
    ({"qrels": "q1 0 a 1\nq1 0 zz 1\n"}, ["qrels names 1 unknown document id ('zz')"]),
    (
        {"qrels": "".join(f"q1 0 d{n} 1\n" for n in range(7))},
        ["7 unknown document ids ('d0', 'd1', 'd2', 'd3', 'd4', ...)"],
    ),
    ({"qrels": "q9 0 a 0\nq8 0 zz 1\n"}, ["2 unknown query ids ('q9', 'q8')", "1 unknown document id ('zz')"]),
    # a document id is a memory key
    ({"docs_jsonl": '{"id": " a", "text": "x"}\n'}, ["docs.jsonl line 1", "not a valid memory key", "whitespace"]),
    ({"docs_jsonl": '{"id": "a\\u0007b", "text": "x"}\n'}, ["docs.jsonl line 1", "control characters"]),
    ({"docs_jsonl": json.dumps({"id": "k" * 257, "text": "x"})}, ["docs.jsonl line 1", "the limit is 256"]),
    ({"docs_jsonl": '{"id": "a b", "text": "x"}\n'}, ["docs.jsonl line 1", "contains whitespace"]),
    ({"queries_jsonl": '{"id": "q 1", "text": "x"}\n'}, ["queries.jsonl line 1", "contains whitespace"]),
]


@pytest.mark.parametrize(("files", "fragments"), BAD_FILES)
def test_trec_bad_files(tmp_path, files, fragments):
    folder = write_collection(tmp_path / "c", **files)
    with pytest.raises(CollectionError) as raised:
        load_trec(folder)
    for fragment in fragments:
        assert fragment in str(raised.value)


def test_trec_missing_folder(tmp_path):
    with pytest.raises(CollectionError, match="docs.jsonl, queries.jsonl, qrels"):
        load_trec(tmp_path / "absent")
