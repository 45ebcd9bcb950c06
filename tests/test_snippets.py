"""Snippets stem only the words that can match and stop at the window, and show exactly what they showed when
they stemmed every word up to the first match and every word of the window."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.search import analyzers, porter
from memlab.search.analyzers import Analyzer
from memlab.search.query import WORD, words

LOCOMO = Path(__file__).resolve().parent.parent / "data" / "locomo10.json"


def reference_snippet(analyzer: Analyzer, text: str, terms, *, tokens: int = 16) -> str:
    """The snippet as memlab made it before it stemmed only what can match (eb6c2a4), kept as the reference."""
    spans = [match.span() for match in WORD.finditer(text)]
    if not spans:
        return text
    lowered = text.lower()
    matched = (i for i, (begin, end) in enumerate(spans) if analyzer.term(lowered[begin:end]) in terms)
    first_hit = next(matched, None)
    first = max(0, min(first_hit - 2 if first_hit is not None else 0, len(spans) - tokens))
    window = spans[first : first + tokens]
    start = 0 if first == 0 else window[0][0]
    end = len(text) if first + tokens >= len(spans) else window[-1][1]
    out, cursor = [], start
    for begin, finish in window:
        if analyzer.term(lowered[begin:finish]) in terms:
            out.append(text[cursor:begin] + "**" + text[begin:finish] + "**")
            cursor = finish
    out.append(text[cursor:end])
    return ("…" if start > 0 else "") + "".join(out) + ("…" if end < len(text) else "")


VOCABULARY = sorted(set(words(LOCOMO.read_text(encoding="utf-8"))))[::7]  # ~1,500 English words, digits, names
word = st.one_of(st.sampled_from(VOCABULARY), st.text(alphabet="abcdeinorsty", min_size=1, max_size=9))
separator = st.sampled_from([" ", " ", " ", ", ", ". ", "'", "_", " — ", "!\n"])
text = st.lists(st.tuples(word, separator, st.booleans()), max_size=60).map(
    lambda parts: "".join((w.capitalize() if upper else w) + sep for w, sep, upper in parts)
)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from(["porter", "none", "snowball"]),
    text,
    st.lists(word, min_size=1, max_size=4).map(" ".join),
    st.integers(1, 20),
)
def test_snippets_equal_the_reference_on_random_texts_and_queries(name, content, query, tokens):
    # Guards: only the first match marked in the window (`i == first_hit and (...)`); porter.TAIL = 0.
    # Guards: the words after the first match split one short (`... + tokens - first_hit - 1`): seen failing.
    analyzer = analyzers.get(name)
    terms = analyzer.snippet_terms(query)
    assert analyzer.snippet(content, terms, tokens=tokens) == reference_snippet(analyzer, content, terms, tokens=tokens)


def test_snippets_equal_the_reference_on_locomo_observations_and_questions():
    locomo = json.loads(LOCOMO.read_text(encoding="utf-8"))
    texts = [
        observation[0]
        for sample in locomo[:2]
        for session in sample["observation"].values()
        for observations in session.values()
        for observation in observations
    ]
    questions = [qa["question"] for sample in locomo[:2] for qa in sample["qa"]]
    analyzer = analyzers.get("porter")
    marked = 0
    for n, content in enumerate(texts):
        terms = analyzer.snippet_terms(questions[n % len(questions)])
        made = analyzer.snippet(content, terms)
        assert made == reference_snippet(analyzer, content, terms), content
        marked += "**" in made
    assert marked > 50


def test_a_porter_stem_keeps_the_beginning_its_tail_promises():
    # Guards: porter.TAIL = 0 (snippets would then miss "happy" for "happi", "agreed" for "agre").
    vocabulary = set(words(LOCOMO.read_text(encoding="utf-8"))) | {"happy", "agreed", "probability", "sensibility"}
    tail = analyzers.get("porter").stem_tail
    broken = {w: s for w in vocabulary if not w.startswith((s := porter.stem(w))[: max(1, len(s) - tail)])}
    assert broken == {}


def _spy(stem_tail: int | None) -> tuple[Analyzer, list[str]]:
    """An analyzer that records the words it stems (named apart: analyzers are memoised by name)."""
    stemmed: list[str] = []

    def stem(word: str) -> str:
        stemmed.append(word)
        return porter.stem(word)

    return Analyzer(f"spy-{next(_SPIES)}", "porter unicode61", fts_stem=stem, stem_tail=stem_tail), stemmed


_SPIES = itertools.count()


def test_only_words_that_begin_like_a_term_are_stemmed():
    # Guards: `_beginnings` returning ("",) for a bounded stemmer (every word stemmed, as before).
    analyzer, stemmed = _spy(porter.TAIL)
    content = "She ran two marathons and many miles to the maracas, as marathoners do"
    assert analyzer.snippet(content, {"marathon"}) == (
        "She ran two **marathons** and many miles to the maracas, as **marathoners** do"
    )
    assert stemmed == ["marathons", "marathoners"]  # "marath" begins neither "many", "miles" nor "maracas"


def test_words_past_the_window_are_never_stemmed():
    analyzer, stemmed = _spy(porter.TAIL)
    content = " ".join(f"red{n}" for n in range(10)) + " running " + " ".join(f"rose{n}" for n in range(40))
    snippet = analyzer.snippet(content, {"run"}, tokens=16)
    assert snippet == "…red8 red9 **running** " + " ".join(f"rose{n}" for n in range(13)) + "…"
    assert stemmed == [*(f"red{n}" for n in range(10)), "running", *(f"rose{n}" for n in range(13))]


def test_without_a_tail_bound_every_word_up_to_the_window_is_stemmed():
    analyzer, stemmed = _spy(None)
    assert analyzer.snippet("mice ate cheese", {"mice"}) == "**mice** ate cheese"
    assert stemmed == ["mice", "ate", "cheese"]


def test_terms_made_under_another_stem_bound_are_matched_by_this_analyzer_s_bound():
    # A search's terms carry their beginnings, worked out once; an analyzer with another bound works out its own.
    # Guards: `SnippetTerms.beginnings` used whatever its tail (no `terms.tail == self.stem_tail`): seen failing.
    lemmas = Analyzer("lemma-spy", "porter unicode61", fts_stem=lambda word: {"mice": "mouse"}.get(word, word))
    terms = analyzers.SnippetTerms(["mouse"], porter.TAIL)
    assert terms == {"mouse"} and terms.beginnings == ("mou",)
    assert lemmas.snippet("three mice ate", terms) == "three **mice** ate"


def test_a_capital_dotted_i_does_not_shift_the_marks():
    # "İ".lower() is two characters: the words after it must still be marked where they are (the reference did not).
    # Guards: `lowered = text.lower()` whatever the text.
    analyzer = analyzers.get("porter")
    content = "İstanbul trip: we went running there"
    assert analyzer.snippet(content, analyzer.snippet_terms("runs")) == "İstanbul trip: we went **running** there"
    assert analyzer.snippet(content, analyzer.snippet_terms("istanbul")) == "**İstanbul** trip: we went running there"
    assert re.fullmatch(r"[^*]*", reference_snippet(analyzer, content, analyzer.snippet_terms("runs")))


def test_a_search_makes_a_snippet_only_when_it_is_read_and_then_the_same_one(monkeypatch):
    """The relevance lab asks for 100 hits a query and reads none of their snippets: a hit makes its snippet when
    it is first read, from the version's content and the search's terms alone, byte for byte what it was.
    Guards: LexicalSearch.hits calling analyzer.snippet for every hit before it returns (eager snippets)."""
    from memlab import MemoryStore
    from memlab.records import Hit

    made: list[str] = []
    snippet = Analyzer.snippet

    def counted(self, text, terms, *, tokens=16):
        made.append(text)
        return snippet(self, text, terms, tokens=tokens)

    with MemoryStore() as store:
        session = store.session()
        session.memory_save("run", "She loves running marathons in the rain")
        session.memory_save("walk", "He walks and runs to work, " + "then more words " * 10 + "and runs home")
        monkeypatch.setattr(Analyzer, "snippet", counted)
        hits = session.memory_search("runs")
        assert made == []
        analyzer = analyzers.get("porter")
        terms = analyzer.snippet_terms("runs")
        expected = [snippet(analyzer, hit.memory.content, terms) for hit in hits]
        assert [hit.snippet for hit in hits] == expected and len(made) == 2
        assert [hit.snippet for hit in hits] == expected and len(made) == 2  # made once
        assert hits == [Hit(hit.memory, hit.score, text) for hit, text in zip(hits, expected, strict=True)]
        store.session().memory_save("run", "She stopped running")  # a later save does not reach a hit made before
        assert hits[0].snippet == expected[0]
