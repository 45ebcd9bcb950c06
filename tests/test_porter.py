"""memlab's Python porter stems exactly as SQLite FTS5's porter tokenizer does: on every word of data/, on the
edge cases of its C code, and on random words built from the suffixes its rules look at."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.search import analyzers, fts5, porter

DATA = Path(__file__).resolve().parent.parent / "data"
TEXT = {".json", ".md", ".txt"}


def sqlite_stems(tokens: list[str]) -> list[str]:
    """What FTS5's porter tokenizer makes of each token (each one a token of ``unicode61``, so one term)."""
    return [" ".join(terms) for terms in fts5.tokenize(tokens, "porter unicode61")]


def data_vocabulary() -> list[str]:
    """Every distinct token FTS5's unicode61 makes of the text files in data/ (LoCoMo, its licence, the README;
    not the warm vectors' ``.npz``)."""
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.execute("CREATE VIRTUAL TABLE texts USING fts5(text, tokenize = 'unicode61')")
        db.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(texts, 'row')")
        db.executemany(
            "INSERT INTO texts(text) VALUES (?)",
            [(path.read_text(encoding="utf-8"),) for path in sorted(DATA.glob("*")) if path.suffix in TEXT],
        )
        return [term for (term,) in db.execute("SELECT term FROM terms")]


def test_equals_sqlites_porter_on_every_word_of_the_data():
    # Guards: "ational>ate" written "ational>at" in _STEP_2; `"y" in stem[2:]` in _has_vowel; "y" dropped from
    # the letters _ends_cvc refuses last.
    vocabulary = data_vocabulary()
    assert len(vocabulary) > 10_000
    expected = dict(zip(vocabulary, sqlite_stems(vocabulary), strict=True))
    assert {token: porter.stem(token) for token in vocabulary if porter.stem(token) != expected[token]} == {}


EDGES = [
    # Under 3 and over 64 bytes, in characters and in UTF-8 bytes: left alone.
    "is",
    "as",
    "ßs",
    "a" * 61 + "ing",
    "a" * 62 + "ing",
    "ø" * 30 + "ing",
    "ø" * 31 + "ing",
    "日" * 20 + "ing",
    "日" * 21 + "ing",
    # Characters unicode61 keeps as they are: their bytes are consonants, each a position of its own.
    "straßen",
    "søren",
    "œuvres",
    "øøed",
    # Step 1a: sses, ies, s, ss, es.
    "caresses",
    "ponies",
    "ties",
    "ies",
    "caress",
    "cats",
    "goes",
    "xes",
    # Step 1b: eed when m > 0 only, ed/ing after a vowel (y counts past the first letter), at/bl/iz, doubles.
    "feed",
    "agreed",
    "plastered",
    "bled",
    "motoring",
    "sing",
    "yed",
    "aed",
    "yying",
    "conflated",
    "troubled",
    "sized",
    "hopping",
    "tanned",
    "falling",
    "hissing",
    "fizzed",
    "failing",
    "filing",
    "xßßing",
    # Step 1c, 2, 3, 4, 5.
    "happy",
    "sky",
    "relational",
    "conditional",
    "rational",
    "valenci",
    "digitizer",
    "analogi",
    "generalization",
    "operator",
    "feudalism",
    "decisiveness",
    "hopefulness",
    "callousness",
    "formaliti",
    "sensitiviti",
    "sensibiliti",
    "triplicate",
    "formative",
    "formalize",
    "electriciti",
    "electrical",
    "hopeful",
    "goodness",
    "revival",
    "allowance",
    "inference",
    "airliner",
    "gyroscopic",
    "adjustable",
    "defensible",
    "irritant",
    "replacement",
    "adjustment",
    "dependent",
    "adoption",
    "fusion",
    "homologou",
    "communism",
    "activate",
    "angulariti",
    "homologous",
    "effective",
    "bowdlerize",
    "probate",
    "rate",
    "cease",
    "controll",
    "roll",
]


def test_equals_sqlites_porter_on_the_edges_of_its_rules():
    # Guards: "y" taken for a vowel in step 1b's double consonant ("aeiouylsz"); the 64-byte limit counted in
    # characters (`len(word)` for `len(raw)`).
    assert [porter.stem(word) for word in EDGES] == sqlite_stems(EDGES)


# The suffixes the rules look at, so random words reach every rule and its conditions.
SUFFIXES = sorted(
    {suffix for step in (porter._STEP_1B, porter._STEP_2, porter._STEP_3, porter._STEP_4) for suffix, _, _ in step}
    | {"s", "es", "ies", "sses", "y", "e", "ll", "l", "at", "bl", "iz"}
)
LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"
word = st.builds(
    lambda stem, first, second: (stem + first + second)[:70],
    st.text(alphabet=LETTERS, min_size=1, max_size=10),
    st.sampled_from(["", *SUFFIXES]),
    st.sampled_from(["", *SUFFIXES]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(word, min_size=1, max_size=40))
def test_equals_sqlites_porter_on_random_lower_case_words(words):
    assert [porter.stem(w) for w in words] == sqlite_stems(words)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="aeiouybcdlstwxz", min_size=1, max_size=12), min_size=1, max_size=40))
def test_equals_sqlites_porter_on_random_words_of_vowels_and_the_letters_its_rules_name(words):
    assert [porter.stem(w) for w in words] == sqlite_stems(words)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="aeiouyslßøœ日", min_size=1, max_size=30), min_size=1, max_size=40))
def test_equals_sqlites_porter_on_random_words_with_characters_unicode61_keeps(words):
    assert [porter.stem(w) for w in words] == sqlite_stems(words)


def test_the_default_analyzer_stems_snippets_with_it_not_nltk():
    assert analyzers.get("porter").fts_stem is porter.stem
