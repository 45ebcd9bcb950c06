"""memlab.search.query: a natural-language query as a safe FTS5 MATCH expression."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from memlab.search.query import STOPWORDS, match_expression, query_terms, quoted_or, words


@pytest.mark.parametrize(
    ("text", "split"),
    [
        ("Caroline's LGBTQ_group, 2023!", ["caroline", "s", "lgbtq", "group", "2023"]),
        ("ÉCOLE naïve", ["école", "naïve"]),
        ("a-b/c.d", ["a", "b", "c", "d"]),
        ("   ", []),
        ("***", []),
    ],
)
def test_words_split_as_unicode61_does(text, split):
    assert words(text) == split


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("What's my NAME?", ["name"]),
        ("name name Name", ["name"]),
        ("who is it", ["who", "is", "it"]),  # nothing but stopwords: keep them all
        ("where does Sam work", ["sam", "work"]),
        ("", []),
    ],
)
def test_query_terms_drop_stopwords_unless_nothing_else_is_left(query, terms):
    assert query_terms(query) == terms


def test_the_stopword_list_holds_function_words_only():
    assert {"what", "is", "my", "the", "s"} <= STOPWORDS
    assert not {"name", "job", "work", "sam"} & STOPWORDS


@pytest.mark.parametrize(
    ("query", "expression"),
    [
        ('C++ "unbalanced', '"c" OR "unbalanced"'),
        ("NEAR(x AND y)", '"near" OR "x" OR "y"'),
        ("col:value -minus ^start pre*", '"col" OR "value" OR "minus" OR "start" OR "pre"'),
        ("?!", None),
    ],
)
def test_match_expression_quotes_every_word(query, expression):
    assert match_expression(query) == expression


def test_quoted_or_leaves_out_a_term_holding_a_quote():
    assert quoted_or(['x"y', "z"]) == '"z"'
    assert quoted_or([]) is None


@pytest.mark.parametrize(
    "query", ['"', "NEAR(", "a OR", "*", "x:y", '") OR 1=1 --', "AND AND", "\x00", "(((", "{col}: a"]
)
def test_no_query_makes_fts5_raise(query):
    # Guards: query.WORD matching FTS5 syntax characters (a quote or `(` reaching MATCH raises in SQLite).
    expression = match_expression(query)
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.execute("CREATE VIRTUAL TABLE t USING fts5(text)")
        db.execute("INSERT INTO t VALUES ('near and or col x y a')")
        if expression is not None:
            db.execute("SELECT rowid FROM t WHERE t MATCH ?", (expression,)).fetchall()
