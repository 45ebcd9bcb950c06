"""Collections: LoCoMo's counts pinned, the TREC-style fixtures (agents, categories, keys apart from ids), and a
clear error for each kind of bad file."""

import json
from collections import Counter
from pathlib import Path

import pytest

from memlab import InvalidArgument, arguments
from memlab.eval import CollectionError, Document, Query, load_locomo, load_trec
from memlab.eval.configurations import rows_of
from memlab.eval.runner import run_configuration
from memlab.eval.trec import wordless_key
from memlab.search import analyzers

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT / "data" / "locomo10.json"
TREC_TINY = Path(__file__).resolve().parent / "fixtures" / "trec-tiny"
TREC_AGENTS = Path(__file__).resolve().parent / "fixtures" / "trec-agents"


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
        "key": wordless_key("a"),  # no "key" given: the id's words stay out of the searchable text
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
    # a document id follows the rules of memory keys
    (
        {"docs_jsonl": '{"id": "a\\u200bb", "text": "x"}\n'},
        ["docs.jsonl line 1", '"id" must follow the rules of memory keys', "U+200B (ZERO WIDTH SPACE)"],
    ),
    ({"docs_jsonl": '{"id": "a\\u0007b", "text": "x"}\n'}, ["docs.jsonl line 1", '"id"', "control characters"]),
    ({"docs_jsonl": json.dumps({"id": "k" * 257, "text": "x"})}, ["docs.jsonl line 1", '"id"', "the limit is 256"]),
    # an agent, a key or a category that is not a valid name: file, line, field and memlab's own rule
    (
        {"docs_jsonl": '{"id": "a", "text": "x"}\n{"id": "b", "text": "y", "agent": " ann"}\n'},
        ["docs.jsonl line 2", '"agent" is not a valid agent name', "must not start or end with whitespace"],
    ),
    ({"docs_jsonl": '{"id": "a", "text": "x", "agent": 7}\n'}, ["docs.jsonl line 1", '"agent"', "must be a string"]),
    (
        {"docs_jsonl": '{"id": "a", "text": "x", "agent": "a\\u200bb"}\n'},
        ["docs.jsonl line 1", '"agent"', "U+200B (ZERO WIDTH SPACE)"],
    ),
    (
        {"queries_jsonl": '{"id": "q1", "text": "fruit", "agent": ""}\n'},
        ["queries.jsonl line 1", '"agent" is not a valid agent name', "must not be empty"],
    ),
    (
        {"docs_jsonl": '{"id": "a", "text": "x", "key": "k\\u0000"}\n'},
        ["docs.jsonl line 1", '"key" is not a valid memory key', "control characters"],
    ),
    ({"docs_jsonl": '{"id": "a", "text": "x", "key": ["k"]}\n'}, ["docs.jsonl line 1", '"key"', "must be a string"]),
    (
        {"queries_jsonl": '{"id": "q1", "text": "fruit", "category": "temporal "}\n'},
        ["queries.jsonl line 1", '"category" must follow the rules of tags', "must not start or end with whitespace"],
    ),
    (
        {"queries_jsonl": '{"id": "q1", "text": "fruit", "category": 2}\n'},
        ["queries.jsonl line 1", '"category"', "must be a string, not int"],
    ),
    (
        {"queries_jsonl": json.dumps({"id": "q1", "text": "fruit", "category": "c" * 65})},
        ["queries.jsonl line 1", '"category"', "the limit is 64"],
    ),
    # a query naming an agent with no documents, a key twice in one agent, a judgment across agents
    (
        {"queries_jsonl": '{"id": "q1", "text": "fruit"}\n{"id": "q2", "text": "fruit", "agent": "bob"}\n'},
        ["queries.jsonl line 2", "\"agent\" 'bob' has no documents in docs.jsonl", "agents there: main"],
    ),
    (
        {"docs_jsonl": '{"id": "a", "text": "x", "key": "k"}\n{"id": "b", "text": "y", "key": "k"}\n'},
        ["docs.jsonl line 2", "duplicate \"key\" 'k' in agent 'main'", "first at docs.jsonl line 1"],
    ),
    (
        {
            "docs_jsonl": '{"id": "a", "text": "x", "agent": "ann"}\n{"id": "b", "text": "y", "agent": "ben"}\n',
            "queries_jsonl": '{"id": "q1", "text": "fruit", "agent": "ann"}\n',
            "qrels": "q1 0 a 1\nq1 0 b 1\n",
        },
        ["qrels line 2", "query 'q1' of agent 'ann' judges document 'b' of agent 'ben' relevant"],
    ),
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


def test_the_same_key_in_two_agents_is_two_memories(tmp_path):
    docs = '{"id": "a", "text": "x", "key": "k"}\n{"id": "b", "text": "y", "key": "k", "agent": "bob"}\n'
    collection = load_trec(write_collection(tmp_path / "c", docs_jsonl=docs))
    assert [(document.agent, document.key) for document in collection.documents] == [("main", "k"), ("bob", "k")]


def test_trec_missing_folder(tmp_path):
    with pytest.raises(CollectionError, match="docs.jsonl, queries.jsonl, qrels"):
        load_trec(tmp_path / "absent")


# The researcher's collection: three agents, categories, keys apart from ids (docs/relevance-lab.md's example).


@pytest.fixture(scope="module")
def agents():
    return load_trec(TREC_AGENTS)


def test_each_document_is_saved_as_its_agents_memory(agents):
    by_agent = Counter(document.agent for document in agents.documents)
    assert by_agent == {"ann": 4, "ben": 4, "cleo": 3}
    assert [query.agent for query in agents.queries] == ["ann", "ben", "ann", "ben", "cleo", "ann", "ben", "cleo"]
    assert agents.summary() == {
        "documents": 11,
        "queries": 8,
        "agents": 3,
        "queries_per_category": {"open-domain": 1, "single-hop": 4, "temporal": 2},
        "judged_queries": 8,
        "judged_pairs": 8,
    }


def test_the_key_is_apart_from_the_id(agents):
    ann, ben = agents.documents[0], agents.documents[4]
    assert (ann.id, ann.agent, ann.key) == ("ann-1", "ann", "pets/dog")
    assert (ben.id, ben.agent, ben.key) == ("ben-1", "ben", "pets/dog")  # a key is unique within its agent only
    assert agents.queries[0] == Query("q1", "ann", "What is the dog called?", "single-hop")
    assert agents.queries[7] == Query("q8", "cleo", "Which city does Cleo live in now?")  # no category


def test_agent_and_category_are_optional(tmp_path):
    collection = load_trec(write_collection(tmp_path / "c"))
    assert {item.agent for item in [*collection.documents, *collection.queries]} == {"main"}
    assert collection.queries[0].category is None


def test_a_question_searches_only_its_own_agents_memories(agents):
    # q1 and q2 ask the same question in two agents: each finds its own agent's dog, never the other's.
    # Guards: load_trec ignoring "agent" (every document and query in main: every question searches every agent).
    ranking, _, _ = run_configuration(agents, rows_of(["porter"], None)[0])
    agent_of = {document.id: document.agent for document in agents.documents}
    for query in agents.queries:
        assert {agent_of[doc_id] for doc_id in ranking[query.id]} <= {query.agent}, query.id
    assert list(ranking["q1"])[0] == "ann-1" and "ben-1" not in ranking["q1"]
    assert list(ranking["q2"])[0] == "ben-1" and "ann-1" not in ranking["q2"]


def wordy_ids(folder: Path, key: str | None = None) -> Path:
    """A collection whose one document's id says what its text does not ("caroline"); ``key`` given or not."""
    document = {"id": "caroline/session-1/3", "text": "She went to a support group on Tuesday."}
    lines = [json.dumps(document | ({"key": key} if key else {})), '{"id": "other", "text": "A walk by the sea."}']
    return write_collection(
        folder,
        docs_jsonl="\n".join(lines) + "\n",
        queries_jsonl='{"id": "q1", "text": "caroline"}\n{"id": "q2", "text": "session 1 3"}\n',
        qrels="q1 0 caroline/session-1/3 1\n",
    )


@pytest.mark.parametrize("analyzer", analyzers.names())
def test_a_word_only_in_an_id_finds_nothing(tmp_path, analyzer):
    # Guards: load_trec keying a document without "key" by its id (the id's words become searchable, weight 1).
    collection = load_trec(wordy_ids(tmp_path / "c"))
    ranking, _, _ = run_configuration(collection, rows_of([analyzer], None)[0])
    assert ranking == {"q1": {}, "q2": {}}


def test_a_word_in_a_given_key_is_searchable_text(tmp_path):
    collection = load_trec(wordy_ids(tmp_path / "c", key="caroline"))
    ranking, _, _ = run_configuration(collection, rows_of(["porter"], None)[0])
    assert list(ranking["q1"]) == ["caroline/session-1/3"] and ranking["q2"] == {}


def test_a_key_made_for_a_document_carries_no_words(agents):
    made = {document.id: document.key for document in agents.documents if document.id in ("ann-4", "cleo-3")}
    assert made["ann-4"] != made["cleo-3"]
    assert load_trec(TREC_AGENTS).documents[3].key == made["ann-4"]  # the same id always makes the same key
    for key in made.values():
        assert arguments.key(key) == key
        assert not any(char.isalnum() for char in key)
        for name in analyzers.names():  # no analyzer's index holds a term a query word could match
            assert not any(char.isalnum() for term in analyzers.get(name).terms(key) for char in term), name


def test_many_made_keys_are_distinct(tmp_path):
    lines = "".join(json.dumps({"id": f"d{n}", "text": "x"}) + "\n" for n in range(5000))
    collection = load_trec(write_collection(tmp_path / "c", docs_jsonl=lines, qrels=""))
    assert len({document.key for document in collection.documents}) == 5000
