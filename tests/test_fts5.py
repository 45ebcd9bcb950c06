"""memlab.search.fts5: the terms SQLite's own FTS5 tokenizers make of text."""

from __future__ import annotations

import pytest

from memlab.errors import InvalidArgument
from memlab.search.fts5 import tokenize


@pytest.mark.parametrize(
    ("option", "text", "terms"),
    [
        ("unicode61", "She RUNS; he ran.", ["she", "runs", "he", "ran"]),
        ("porter unicode61", "She runs; he ran.", ["she", "run", "he", "ran"]),
        ("porter unicode61", "connections connected", ["connect", "connect"]),
        ("unicode61 remove_diacritics 2", "Café naïve", ["cafe", "naive"]),
        ("unicode61 remove_diacritics 0", "Café", ["café"]),
        ("trigram", "abcd", ["abc", "bcd"]),
        ("unicode61", "x_y", ["x", "y"]),
        ("unicode61 tokenchars '_'", "x_y", ["x_y"]),  # a quote in the option reaches SQLite quoted
    ],
)
def test_tokenize_is_what_sqlite_indexes(option, text, terms):
    assert tokenize([text], option) == [terms]


def test_each_text_keeps_its_own_terms_in_order_even_when_empty():
    # Guards: fts5.tokenize numbering rows from 0 (every text's terms shifted onto the previous one).
    assert tokenize(["b a", "", "c"], "unicode61") == [["b", "a"], [], ["c"]]
    assert tokenize([], "unicode61") == []


@pytest.mark.parametrize("option", ["no-such-tokenizer", "porter nosuch", "unicode61 remove_diacritics 9"])
def test_an_option_sqlite_refuses_is_an_invalid_argument(option):
    with pytest.raises(InvalidArgument, match="SQLite refused"):
        tokenize(["x"], option)


def test_a_quote_in_the_option_is_no_injection():
    with pytest.raises(InvalidArgument):
        tokenize(["x"], "unicode61'); DROP TABLE texts; --")
