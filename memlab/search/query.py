"""Natural-language queries to safe FTS5 MATCH expressions.

A query is never FTS5 syntax: it is split into words in Python, each word becomes a quoted FTS5 string,
and the strings are OR-combined, so quotes, ``AND``, ``NEAR(``, ``*``, ``^``, ``col:`` or ``-`` in the
input are only text and no input can raise an SQLite error.
"""

from __future__ import annotations

import re

__all__ = ["STOPWORDS", "WORD", "words", "query_terms", "match_expression", "quoted_or"]

# Letters and digits, as FTS5's unicode61 tokenizer sees them: underscores and punctuation separate words.
WORD = re.compile(r"[^\W_]+")

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


def words(text: str) -> list[str]:
    """The lower-cased words of ``text``, split as FTS5's ``unicode61`` tokenizer splits them.

    Examples:
        >>> words("Caroline's LGBTQ_group, 2023!")
        ['caroline', 's', 'lgbtq', 'group', '2023']
    """
    return WORD.findall(text.lower())


def quoted_or(terms: list[str]) -> str | None:
    """Terms as quoted FTS5 strings, OR-combined; None when there are none.

    A term made by ``words`` (or stemmed from one) holds letters and digits only, so quoting is safe.

    Examples:
        >>> quoted_or(["c", "unbalanced"])
        '"c" OR "unbalanced"'
    """
    return " OR ".join(f'"{term}"' for term in terms if '"' not in term) or None


def query_terms(query: str) -> list[str]:
    """The distinct lower-cased words of ``query`` worth searching for, in order.

    Stopwords are dropped unless the query has nothing else.

    Examples:
        >>> query_terms("What's my name?")
        ['name']
    """
    distinct = list(dict.fromkeys(words(query)))
    content_words = [word for word in distinct if word not in STOPWORDS]
    return content_words or distinct


def match_expression(query: str) -> str | None:
    """A safe FTS5 MATCH expression for ``query``, or None when it has no words.

    Examples:
        >>> match_expression('C++ "unbalanced')
        '"c" OR "unbalanced"'
    """
    return quoted_or(query_terms(query))
