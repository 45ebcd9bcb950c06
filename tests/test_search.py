"""Search: natural language only, stemming, shadowing before matching, statistics from visible levels only."""

import contextlib
import json

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from memlab import Level, MemoryStore
from memlab.search import match_expression, query_terms
from memlab.storage import chain
from memlab.storage.rows import _tags
from tests.backends import has, open_store
from tests.reference_model import _WORD, _stem

pytestmark = pytest.mark.contract

HOSTILE_QUERIES = [
    "what's my name?",
    "C++",
    '"unbalanced',
    "foo AND",
    "*",
    "AND",
    "OR OR",
    "NOT x",
    "NEAR(a b)",
    "NEAR(",
    "a:b",
    "content:alice",
    "key:user",
    "^start",
    "-minus",
    "+plus",
    "col:",
    "(",
    ")",
    "()",
    "{a b}",
    "[x]",
    "'",
    "''",
    '"',
    '""',
    'a"b',
    "emoji 🎉 party",
    "🎉",
    "",
    "   ",
    "\t\n",
    "\x00",
    "%",
    "_",
    "a%b_c",
    "x" * 4000,
    "ünïcödé café",
    "日本語のテキスト",
    "SELECT * FROM memories; --",
    "rank:1",
    "rowid=1",
    "alice*",
    "al*ce",
    "\\",
    "a/b",
    "1.5e10",
    "NEAR(alice, 3)",
]


@pytest.fixture
def session(store):
    s = store.session()
    s.memory_save("user-name", "Alice Smith", tags=["personal"])
    s.memory_save("hobby", "She loves running marathons", tags=["preference", "sport"])
    return s


_NOTES = {
    "note": "Alice likes C++ and NEAR queries with AND or OR",
    "star": "a * star: the rating was 5* and ^caret^ (parenthesised) col: value",
    "quote": 'she said "hello" and it\'s fine - really',
    "emoji": "party 🎉 tonight, naïve café",
    "plain": "nothing special here at all",
}
_shared = MemoryStore()
_shared.session().memory_save_many([{"key": key, "content": text} for key, text in _NOTES.items()])


def _expected(query: str) -> set[str]:
    """The keys a query must find: those whose words share a porter stem with a query word (the model's rule)."""
    wanted = {_stem(term) for term in query_terms(query)}
    return {
        key for key, text in _NOTES.items() if wanted & {_stem(word.lower()) for word in _WORD.findall(f"{key} {text}")}
    }


@pytest.fixture(scope="module")
def notes_stores():
    """One store per backend holding ``_NOTES``, made on first use and shared by the module's queries."""
    stores = contextlib.ExitStack()
    with stores:
        yield {}, stores


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
def test_hostile_queries_are_plain_words(query, backend, notes_stores):
    opened, stores = notes_stores
    if backend not in opened:
        opened[backend] = stores.enter_context(open_store(backend))
        opened[backend].session().memory_save_many([{"key": key, "content": text} for key, text in _NOTES.items()])
    hits = opened[backend].session().memory_search(query, max_results=100)
    assert {hit.memory.key for hit in hits} == _expected(query)


@settings(max_examples=500)
@given(st.lists(st.sampled_from(['"', "*", "AND", "NEAR(", "^", ":", "-", "(", ")", "c++", "'", "star", "alice"])))
def test_any_mix_of_syntax_and_words_finds_exactly_the_words(tokens):
    hits = _shared.session().memory_search(" ".join(tokens), max_results=100)
    assert {hit.memory.key for hit in hits} == _expected(" ".join(tokens))


@settings(max_examples=500)
@given(st.text(max_size=60))
def test_any_text_is_a_valid_query(query):
    # Any Unicode (FTS5 folds diacritics, which the model does not): no error, real keys, ranked by score.
    hits = _shared.session().memory_search(query, max_results=100)
    assert {hit.memory.key for hit in hits} <= set(_NOTES)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_query_terms_are_words_without_stopwords():
    assert query_terms("What's my NAME?") == ["name"]
    assert query_terms("who is it") == ["who", "is", "it"]  # nothing but stopwords: keep them all
    assert query_terms("C++ and c") == ["c"]
    assert match_expression("  ") is None
    assert match_expression('NEAR(x "y') == '"near" OR "x" OR "y"'


def test_stemming_matches_other_forms(session):
    assert [h.memory.key for h in session.memory_search("runs")] == ["hobby"]
    assert [h.memory.key for h in session.memory_search("marathon")] == ["hobby"]


def test_keys_and_tags_are_searchable_as_words(session):
    assert [h.memory.key for h in session.memory_search("what is my name?")] == ["user-name"]
    assert [h.memory.key for h in session.memory_search("sport")] == ["hobby"]


def test_classification_and_agent_are_never_matched(store):
    session = store.session(agent="public")
    session.memory_save("note", "nothing special")
    assert session.memory_search("public") == []
    assert session.memory_search("PUBLIC main") == []


def test_snippet_marks_the_matched_words(session):
    (hit,) = session.memory_search("marathon")
    assert hit.snippet == "She loves running **marathons**"


def test_lower_version_never_surfaces_when_the_higher_one_is_visible(store):
    """A reference mistake: searching before shadowing let the lower version match."""
    store.session(Level.PUBLIC).memory_save("user-name", "Sam from accounting")
    store.session(Level.INTERNAL).memory_save("user-name", "Samantha Rivera")
    internal = store.session(Level.INTERNAL)
    assert internal.memory_search("accounting") == []
    assert [h.memory.content for h in internal.memory_search("Rivera")] == ["Samantha Rivera"]
    assert [h.memory.content for h in store.session().memory_search("accounting")] == ["Sam from accounting"]


def test_results_are_ranked_and_limited(store, backend):
    session = store.session()
    session.memory_save("a", "coffee")
    session.memory_save("b", "coffee coffee coffee with milk and sugar and more words here")
    session.memory_save("c", "tea")
    for n in range(20):
        session.memory_save(f"filler-{n}", f"unrelated text number {n}")
    hits = session.memory_search("coffee", max_results=5)
    # bm25 normalises by length: the short memory first; ts_rank counts occurrences: the repeated word first.
    assert [h.memory.key for h in hits] == (["a", "b"] if has(backend, "fts5_ranking") else ["b", "a"])
    assert hits[0].score > hits[1].score > 0
    assert len(session.memory_search("unrelated", max_results=3)) == 3


def test_equal_scores_keep_save_order(store):
    session = store.session()
    for key in ["z", "m", "a"]:
        session.memory_save(key, "same words")
    assert [h.memory.key for h in session.memory_search("words")] == ["z", "m", "a"]


def test_only_memlabs_short_stopword_list_is_dropped(store):
    """docs/semantics.md: a short list of English stopwords is dropped unless nothing else remains. A word
    outside that list ("same") is a word, and a query of stopwords only ("who") still searches for them.
    Guards: PostgreSQL indexing with its english configuration, which drops its own, longer list."""
    session = store.session()
    session.memory_save("same", "the same words")
    session.memory_save("who", "who is it")
    assert [h.memory.key for h in session.memory_search("same")] == ["same"]
    assert [h.memory.key for h in session.memory_search("who is it?")] == ["who"]


def _scores(session, query):
    return [(h.memory.key, h.score) for h in session.memory_search(query)]


def test_hidden_levels_do_not_move_visible_scores(store):
    """bm25 over one shared index would let CONFIDENTIAL rows change PUBLIC scores; per-level indexes do not."""
    public = store.session(Level.PUBLIC)
    public.memory_save("fruit", "apple and banana")
    public.memory_save("pie", "apple pie recipe with cinnamon")
    public.memory_save("car", "a red car")
    confidential = store.session(Level.CONFIDENTIAL)
    before_public = _scores(public, "apple cinnamon")
    before_confidential = _scores(confidential, "apple cinnamon")

    for n in range(30):
        confidential.memory_save(f"secret-{n}", "apple merger cinnamon codename apple")
    confidential.memory_save("fruit", "apple apple apple (confidential shadow)")
    assert _scores(public, "apple cinnamon") == before_public
    assert _scores(confidential, "apple cinnamon") != before_confidential  # the statistics did change up there

    for n in range(30):
        confidential.memory_delete(f"secret-{n}")
    confidential.memory_delete("fruit")
    assert _scores(public, "apple cinnamon") == before_public
    assert _scores(confidential, "apple cinnamon") == before_confidential


def test_other_agents_do_not_move_scores(store):
    mine = store.session(agent="alice")
    mine.memory_save("fruit", "apple and banana")
    mine.memory_save("car", "a red car")
    before = _scores(mine, "apple")
    other = store.session(agent="bob")
    for n in range(10):
        other.memory_save(f"n{n}", "apple apple")
    assert _scores(mine, "apple") == before


def test_a_level_first_used_late_is_indexed_with_everything_below_it(store):
    """Indexes are kept only for levels that had a save; the first save at a level builds its index."""
    store.session(Level.PUBLIC).memory_save("fruit", "apple and banana")
    store.session(Level.CONFIDENTIAL).memory_save("merger", "apple buys pear")
    restricted = store.session(Level.RESTRICTED)  # nothing saved at RESTRICTED: it reads CONFIDENTIAL's index
    assert sorted(h.memory.key for h in restricted.memory_search("apple")) == ["fruit", "merger"]
    internal = store.session(Level.INTERNAL)
    assert [h.memory.key for h in internal.memory_search("apple")] == ["fruit"]
    before = _scores(internal, "apple banana")
    internal.memory_save("recipe", "apple pie")  # the first INTERNAL save starts the INTERNAL index
    assert sorted(h.memory.key for h in internal.memory_search("apple")) == ["fruit", "recipe"]
    assert _scores(store.session(Level.PUBLIC), "apple banana") == before
    assert sorted(h.memory.key for h in restricted.memory_search("apple")) == ["fruit", "merger", "recipe"]
    assert store.session(Level.PUBLIC).memory_search("pie") == []


@pytest.mark.parametrize("policy", [None, "shadow-after-match", "global-stats"])
def test_a_search_ranks_reads_rows_and_gates_in_one_statement_per_index(tmp_path, policy):
    """A search's statements: per index searched, the tag boost's statistics and one ranking, which also reads the
    ranked versions' rows and checks them against the effective view (the second gate); then the audit row. No
    statement of their own reads the keys, the rows or the gate. Guards: _rank reading only ids and scores (the
    gate and the rows each a statement of their own, as before this change)."""
    store = MemoryStore(tmp_path / "one.db", layout="file", **({} if policy is None else {"policy": policy}))
    for level in Level:
        store.session(taint=level).memory_save(f"fruit-{level.name}", f"apple and {level.name.lower()} pie")
    session = store.session(taint=Level.CONFIDENTIAL)
    statements: list[str] = []
    store.storage.conn.set_trace_callback(statements.append)
    hits = session.memory_search("apple pie")
    store.storage.conn.set_trace_callback(None)
    kinds = [_statement_kind(sql) for sql in statements if sql.startswith("SELECT")]
    searched = 3 if policy == "shadow-after-match" else 1
    assert kinds == ["boost statistics", "ranking"] * searched
    assert sorted(hit.memory.content for hit in hits) == [
        f"apple and {n} pie" for n in ("confidential", "internal", "public")
    ]


def _statement_kind(sql: str) -> str:
    if " FROM (SELECT rowid, bm25(" in sql and "JOIN memories" in sql and "JOIN effective" in sql:
        return "ranking"
    if sql.startswith("SELECT j.value, (SELECT count(*) FROM "):
        return "boost statistics"
    if "FROM json_each(" in sql and "JOIN effective" in sql:
        return "second gate"
    if "FROM memories m WHERE m.id IN" in sql:
        return "rows"
    return sql


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.lists(st.text()), st.text(), st.lists(st.text()).map(lambda tags: chain.json_strings(tags))))
def test_stored_tags_decode_as_json_loads_does(text):
    """A row's tags decoded by the scanner directly are what ``json.loads`` gives, and what it refuses is refused.
    Guards: _tags accepting an array followed by other text (``end != len(text)`` dropped)."""
    text = text if isinstance(text, str) else json.dumps(text)
    for given_text in (text, text + "x", " " + text, text[:-1]):
        try:
            expected: object = tuple(json.loads(given_text))
        except (ValueError, TypeError) as error:
            expected = type(error)
        try:
            decoded: object = _tags(given_text)
        except (ValueError, TypeError) as error:
            decoded = type(error)
        assert decoded == expected


def test_the_tag_boost_fires_for_a_name_and_not_for_a_topic():
    """A tag earns the boost where bm25 cannot weigh its word (in half the view or more: a speaker's name), not
    where bm25 already does (a topic a few memories carry, which the question also names): issue 22.
    Guards: _boosted_terms keeping every query term that is a tag (the boost before issue 22)."""
    from memlab import Ranking

    with MemoryStore(ranking=Ranking(tag_boost=2.0)) as store:
        session = store.session()
        for number in range(4):
            session.memory_save(f"ann-{number}", f"Ann went to the park on day {number}", tags=["ann"])
        session.memory_save("bob-beach", "Bob swam at the beach", tags=["bob", "beach"])
        session.memory_save("ann-swim", "Ann swam at the beach and the lake", tags=["ann"])
        named = {h.memory.key: h.score for h in session.memory_search("Where did Ann swim?")}
        topical = {h.memory.key: h.score for h in session.memory_search("Who swam at the beach?")}
        store.ranking = Ranking(tag_boost=0.0)
        plain_named = {h.memory.key: h.score for h in session.memory_search("Where did Ann swim?")}
        plain_topical = {h.memory.key: h.score for h in session.memory_search("Who swam at the beach?")}
    assert named == {key: score + (2.0 if key.startswith("ann") else 0.0) for key, score in plain_named.items()}
    assert topical == plain_topical


def _boosted(session, query: str) -> dict[str, float]:
    return {hit.memory.key: hit.score for hit in session.memory_search(query)}


def _ann_and_bob(session, anns: int, bobs: int) -> None:
    for number in range(anns):
        session.memory_save(f"ann-{number}", f"Ann went to the park on day {number}", tags=["ann"])
    for number in range(bobs):
        session.memory_save(f"bob-{number}", f"Bob went to the beach on day {number}", tags=["bob"])


@pytest.mark.parametrize("writer", ["this store", "another connection"])
def test_a_boost_decided_once_is_decided_again_when_the_view_changes(tmp_path, writer):
    """The tag boost's decision per index and word is kept while the index is as it was: a repeated search runs no
    statistics statement; a save (here or by another process) that takes a tag word to half the view decides it
    again, and so does a write outside memlab's transactions. Guards: _boosted_terms' cache without its token
    (``_boosted_at`` never compared: "this store" fails); LexicalSearch.forget not clearing ``_boosted`` (both
    fail): each seen failing."""
    from memlab import Ranking

    path = tmp_path / "one.db"
    store = MemoryStore(path, layout="file", ranking=Ranking(tag_boost=2.0))
    session = store.session()
    _ann_and_bob(session, anns=1, bobs=3)
    before = _boosted(session, "Ann")  # one memory in four is tagged ann: no boost
    statements: list[str] = []
    store.storage.conn.set_trace_callback(statements.append)
    assert _boosted(session, "Ann") == before
    store.storage.conn.set_trace_callback(None)
    assert [_statement_kind(sql) for sql in statements if sql.startswith("SELECT")] == ["ranking"]
    if writer == "this store":
        _ann_and_bob(session, anns=3, bobs=0)
    else:
        with MemoryStore(path, layout="file") as other:
            _ann_and_bob(other.session(), anns=3, bobs=0)
    after = _boosted(session, "Ann")  # four in seven: a name, boosted
    store.ranking = Ranking(tag_boost=0.0)
    plain = _boosted(session, "Ann")
    store.ranking = Ranking(tag_boost=2.0)
    assert after == {key: score + (2.0 if key.startswith("ann") else 0.0) for key, score in plain.items()}
    store.storage.conn.execute(
        "DELETE FROM fts_1_public WHERE rowid IN (SELECT id FROM memories WHERE key IN ('ann-1', 'ann-2', 'ann-3'))"
    )
    shrunk = _boosted(session, "Ann")  # ann-0 and the bobs left in the index: one row in four says Ann again
    assert list(shrunk) == ["ann-0"] and shrunk["ann-0"] < 2.0
    store.close()
