"""Analyzers: the registry, and every analyzer indexing and finding other forms of a word in a real store."""

import pytest

from memlab import InvalidArgument, MemoryStore, SchemaError
from memlab.search.analyzers import Analyzer, get, names, register, resolve

# For each analyzer: a word saved and a different form that must find it.
FORMS = {
    "none": ("marathon", "MARATHON"),
    "porter": ("running", "runs"),
    "trigram": ("marathons", "marathon"),
    "nltk-porter": ("running", "runs"),
    "nltk-porter-original": ("running", "runs"),
    "nltk-porter-martin": ("running", "runs"),
    "snowball": ("running", "runs"),
    "lancaster": ("running", "runs"),
    "simplemma": ("mice", "mouse"),
}


def test_the_registry_has_builtins_nltk_and_a_lemmatizer():
    assert names() == list(FORMS)
    assert resolve(None).name == "porter" and resolve(None).tokenize == "porter unicode61"
    assert get("nltk-porter").mode == "NLTK_EXTENSIONS" and get("nltk-porter-martin").mode == "MARTIN_EXTENSIONS"
    assert not get("porter").prestemmed and get("snowball").prestemmed
    with pytest.raises(InvalidArgument, match="known analyzers: none, porter, trigram"):
        get("stemmer-x")
    with pytest.raises(InvalidArgument, match="already registered"):
        register(Analyzer("porter", "unicode61"))


@pytest.mark.parametrize("name", list(FORMS))
def test_every_analyzer_indexes_and_finds_another_form(name):
    saved, asked = FORMS[name]
    with MemoryStore(analyzer=name) as store:
        session = store.session()
        session.memory_save("hobby", f"She loves {saved} with friends", tags=["sport"])
        session.memory_save("other", "nothing related at all", tags=["misc"])
        hits = session.memory_search(asked)
        assert [hit.memory.key for hit in hits] == ["hobby"], name
        assert hits[0].memory.content == f"She loves {saved} with friends"  # original text, not stems
        assert "**" in hits[0].snippet
        assert [hit.memory.key for hit in session.memory_search("sport")] == ["hobby"]


def test_unstemmed_analyzer_does_not_conflate():
    with MemoryStore(analyzer="none") as store:
        session = store.session()
        session.memory_save("hobby", "She loves running")
        assert session.memory_search("runs") == []


def test_prestemmed_snippets_show_the_original_words():
    with MemoryStore(analyzer="snowball") as store:
        session = store.session()
        session.memory_save("hobby", "She loves running marathons")
        (hit,) = session.memory_search("marathon runs")
        assert hit.snippet == "She loves **running** **marathons**"


def test_long_snippets_are_windows_around_the_first_match():
    analyzer = get("snowball")
    text = " ".join(f"w{n}" for n in range(40)) + " running " + " ".join(f"v{n}" for n in range(40))
    snippet = analyzer.snippet(text, analyzer.query_terms("run"))
    assert snippet.startswith("…") and snippet.endswith("…") and "**running**" in snippet
    assert len(snippet.split()) == 16


def test_stems_are_cached_per_word():
    stem = get("lancaster").stem
    stem.cache_clear()
    get("lancaster").terms("running running running runs")
    assert stem.cache_info().misses == 2 and stem.cache_info().hits == 2


def test_a_store_keeps_its_analyzer(db_path):
    MemoryStore(db_path, analyzer="snowball").close()
    MemoryStore(db_path, analyzer="snowball").close()
    with pytest.raises(SchemaError, match="indexed with analyzer 'snowball', not 'porter'"):
        MemoryStore(db_path)


TEXTS = ["She keeps running marathons; her runners ran 42 km.", "Café crème, naïve résumé — C++ & Rust!", "a b c"]


@pytest.mark.parametrize("name", names())
def test_terms_are_exactly_what_the_store_indexes(name):
    """One place knows text -> terms: Analyzer.terms equals the store's own index, read through fts5vocab."""
    analyzer = get(name)
    with MemoryStore(analyzer=name) as store:
        session = store.session()
        session.memory_save_many([{"key": f"k{n}", "content": text} for n, text in enumerate(TEXTS)])
        storage = store.storage
        storage.conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, fts_1_public, instance)")
        column = "index_content" if analyzer.prestemmed else "content"
        held: dict[int, list[str]] = {}
        for doc, term in storage.conn.execute(
            'SELECT doc, term FROM temp.vocab WHERE col = ? ORDER BY doc, "offset"', (column,)
        ):
            held.setdefault(doc, []).append(term)
    assert list(held.values()) == [analyzer.terms(text) for text in TEXTS]
    words = [word for text in TEXTS for word in text.split()]
    assert analyzer.word_terms(words) == {word: " ".join(analyzer.terms(word)) for word in words}
