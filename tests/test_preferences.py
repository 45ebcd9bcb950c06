"""``preferences``: facts stated once, recalled by requests that share no content word with them (generated, seeded)."""

import pytest

import memlab.eval
from memlab.cli import main
from memlab.errors import InvalidArgument
from memlab.eval import load_collection
from memlab.eval.preferences import CATEGORIES, FAMILIES, NAMES, build_preferences
from memlab.search import analyzers
from memlab.search.query import STOPWORDS, words

PORTER = analyzers.get("porter")  # the analyzer of the porter and memlab rows


def content_stems(text):
    return {PORTER.term(word) for word in words(text) if word not in STOPWORDS}


@pytest.fixture(scope="module")
def preferences():
    return build_preferences()


def test_the_same_seed_makes_the_same_collection_and_another_seed_another():
    # Guards: generation drawing on an unseeded source (random.random, set order) instead of random.Random(seed).
    assert build_preferences(3) == build_preferences(3)
    assert build_preferences(3) != build_preferences(4)


def test_every_query_is_judged_to_one_fact_of_its_own_agent(preferences):
    # Guards: a query left without qrels, or judged to a memory of another agent or to a distractor.
    documents = {document.id: document for document in preferences.documents}
    assert len({document.id for document in preferences.documents}) == len(preferences.documents)
    assert len({query.id for query in preferences.queries}) == len(preferences.queries) == 300
    for query in preferences.queries:
        [(judged, relevance)] = preferences.qrels[query.id].items()
        document = documents[judged]
        assert relevance == 1 and document.agent == query.agent
        family = next(family for family in FAMILIES if query.id.split("/")[1] == family.name)
        assert query.text in family.requests and family.category == query.category
        assert document.text in {family.fact.format(name=n, item=item) for n in NAMES for item in family.items}


def test_no_request_shares_a_content_word_with_its_judged_memory(preferences):
    # Guards: a template whose request repeats its fact's words (lexical search would then find it by matching).
    documents = {document.id: document for document in preferences.documents}
    for query in preferences.queries:
        [judged] = preferences.qrels[query.id]
        document = documents[judged]
        indexed = content_stems(f"{document.key} {document.text} {' '.join(document.tags)}")
        assert not content_stems(query.text) & indexed, (query.text, document.text)


def test_every_template_and_slot_value_keeps_the_overlap_at_zero():
    # Guards: the same for values no seed has drawn yet (every name, every item).
    for family in FAMILIES:
        for name in NAMES:
            for item in family.items:
                fact = content_stems(family.fact.format(name=name, item=item)) | {"note"}
                assert not any(content_stems(request) & fact for request in family.requests), (family.name, item)


def test_distractors_share_the_requests_topic_words(preferences):
    # Guards: distractors that share nothing with the requests (lexical search would then be empty, not wrong).
    for family in FAMILIES:
        for request in family.requests:
            shared = [content_stems(request) & content_stems(text.format(name="x")) for text in family.distractors]
            assert any(shared), (family.name, request)


def test_every_category_is_asked_evenly(preferences):
    # Guards: an agent drawing two families of one category and none of another.
    assert preferences.summary()["queries_per_category"] == dict.fromkeys(sorted(CATEGORIES), 60)
    for agent in {query.agent for query in preferences.queries}:
        asked = [query.category for query in preferences.queries if query.agent == agent]
        assert sorted(asked) == sorted(CATEGORIES * 2)


def test_a_number_of_agents_out_of_range_is_refused():
    with pytest.raises(InvalidArgument, match="agents must be between 1 and 30"):
        build_preferences(agents=31)
    with pytest.raises(InvalidArgument, match="agents must be between 1 and 30, not 0"):
        build_preferences(agents=0)


def test_it_loads_by_name_and_ignores_the_locomo_file(tmp_path):
    # Guards: the shipped name missing from the registry, or its loader reading the LoCoMo file it does not need.
    assert load_collection("preferences", locomo=tmp_path / "missing.json") == build_preferences()


def test_memlab_eval_runs_it_by_name(monkeypatch, capsys):
    seen = []
    monkeypatch.setattr(memlab.eval, "run", lambda collection, **_: seen.append(collection) or _stop())
    with pytest.raises(_Stopped):
        main(["eval", "--collection", "preferences", "--rows", "porter,memlab,dense,hybrid", "--workers", "1"])
    assert seen[0].name == "preferences"
    assert "preferences: 1530 documents in 30 agents, 300 queries (300 judged" in capsys.readouterr().out


def test_lexical_search_finds_none_of_the_judged_facts():
    # The case the collection exists to show, on two agents: FTS5 matches only the distractors.
    small = build_preferences(agents=2)
    results = memlab.eval.run(small, rows=["porter", "memlab"], workers=1, progress=False, cache=False)
    for row in ("porter", "memlab"):
        assert results.summary.loc[row, "S@10"] == 0.0


class _Stopped(Exception):
    pass


def _stop():
    raise _Stopped
