"""Natural-language queries to safe FTS5 MATCH expressions.

A query is never FTS5 syntax: it is split into words in Python, each word becomes a quoted FTS5 string,
and the strings are OR-combined, so quotes, ``AND``, ``NEAR(``, ``*``, ``^``, ``col:`` or ``-`` in the
input are only text and no input can raise an SQLite error.
"""

from __future__ import annotations

import re

__all__ = ["STOPWORDS", "query_terms", "match_expression"]

# Letters and digits, as FTS5's unicode61 tokenizer sees them: underscores and punctuation separate words.
_WORD = re.compile(r"[^\W_]+")

# Question words and function words that carry no topic. Short on purpose: BM25 already discounts
# common words; this list only keeps "what is my ..." from matching every memory that says "is".
STOPWORDS = frozenset(
    """
    a an and are as at be been being but by can could did do does doing for from had has have having
    he her hers him his how i if in into is it its me my myself of on or our ours she should so than
    that the their theirs them then there these they this those to too was we were what when where
    which while who whom why will with would you your yours s t d ll m re ve
    """.split()
)


def query_terms(query: str) -> list[str]:
    """The distinct lower-cased words of ``query`` worth searching for, in order.

    Stopwords are dropped unless the query has nothing else.

    >>> query_terms("What's my name?")
    ['name']
    """
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(query)))
    content_words = [w for w in words if w not in STOPWORDS]
    return content_words or words


def match_expression(query: str) -> str | None:
    """A safe FTS5 MATCH expression for ``query``, or None when it has no words.

    >>> match_expression('C++ "unbalanced')
    '"c" OR "unbalanced"'
    """
    terms = query_terms(query)
    if not terms:
        return None
    # A word from _WORD holds no double quote, so quoting needs no escaping.
    return " OR ".join(f'"{term}"' for term in terms)
