"""Statistics about stemmers: how much a stemmer conflates a vocabulary, and where two stemmers disagree.

A stemmer is any ``Callable[[str], str]`` on lower-cased words, e.g. ``PorterStemmer().stem`` from NLTK.
Text is split into words as SQLite FTS5's ``unicode61`` tokenizer splits it (letters and digits; underscores
and punctuation separate words). :func:`fts5_stems` asks SQLite itself what its tokenizer makes of words, so
a Python stemmer can be checked against the one the store really uses.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

import pandas as pd

from memlab.search import fts5
from memlab.search.query import words

__all__ = ["words_of", "vocabulary", "fts5_stems", "disagreements"]


# How many of the biggest conflation classes vocabulary() lists.
_LARGEST = 10


def words_of(text: str) -> list[str]:
    """The lower-cased words of ``text``, split as FTS5's ``unicode61`` tokenizer splits them.

    Args:
        text: any text.

    Returns:
        The words, in order, with repeats.

    Examples:
        >>> words_of("Caroline's LGBTQ_group, 2023!")
        ['caroline', 's', 'lgbtq', 'group', '2023']
    """
    return words(text)


def vocabulary(texts: Iterable[str], stem: Callable[[str], str]) -> dict:
    """How much ``stem`` conflates the vocabulary of ``texts``.

    Args:
        texts: the texts whose distinct words make the vocabulary.
        stem: the stemmer, applied to each distinct lower-cased word.

    Returns:
        ``{"words": distinct words, "stems": distinct stems, "reduction": 1 - stems / words (0.0 when there
        are no words), "mean_class_size": mean number of words per stem, "largest_classes": the 10 stems with
        the most words, as (stem, sorted words), biggest first and ties by stem}``.

    Examples:
        >>> vocabulary(["runs running", "ran"], lambda word: word[:3])["largest_classes"]
        [('run', ['running', 'runs']), ('ran', ['ran'])]
    """
    words = {word for text in texts for word in words_of(text)}
    classes: dict[str, list[str]] = defaultdict(list)
    for word in sorted(words):
        classes[stem(word)].append(word)
    largest = sorted(classes.items(), key=lambda item: (-len(item[1]), item[0]))[:_LARGEST]
    return {
        "words": len(words),
        "stems": len(classes),
        "reduction": 1.0 - len(classes) / len(words) if words else 0.0,
        "mean_class_size": len(words) / len(classes) if classes else 0.0,
        "largest_classes": largest,
    }


def fts5_stems(words: Iterable[str], tokenize: str = "porter unicode61") -> dict[str, str]:
    """What SQLite FTS5's tokenizer ``tokenize`` makes of each word.

    Each distinct word is indexed as its own row of an in-memory FTS5 table, and its terms are read back
    through an ``fts5vocab`` ``instance`` table. FTS5 also folds case and, with ``unicode61``'s defaults,
    removes diacritics, so ``"café"`` becomes ``"cafe"`` before any stemming.

    Args:
        words: the words to tokenize.
        tokenize: an FTS5 ``tokenize`` option, e.g. ``"porter unicode61"`` or ``"unicode61"`` (no stemming).

    Returns:
        word -> its term; a word the tokenizer splits maps to its terms joined by a space, and a word with no
        term (only punctuation) maps to ``""``.

    Raises:
        InvalidArgument: SQLite refused the ``tokenize`` option.

    Examples:
        >>> fts5_stems(["running", "ran"])
        {'running': 'run', 'ran': 'ran'}
    """
    distinct = list(dict.fromkeys(words))
    return {word: " ".join(terms) for word, terms in zip(distinct, fts5.tokenize(distinct, tokenize), strict=True)}


def disagreements(words: Iterable[str], a: Callable[[str], str], b: Callable[[str], str]) -> pd.DataFrame:
    """The words that stemmers ``a`` and ``b`` stem differently.

    Args:
        words: the words to compare on (repeats are compared once).
        a: one stemmer.
        b: the other stemmer.

    Returns:
        A frame with columns ``word``, ``a``, ``b`` (the two stems), one row per disagreement, sorted by word.

    Examples:
        >>> disagreements(["cats", "dogs"], lambda w: w.rstrip("s"), lambda w: w.replace("cats", "cat")).word.tolist()
        ['dogs']
    """
    rows = [(word, a(word), b(word)) for word in sorted(set(words))]
    differing = [row for row in rows if row[1] != row[2]]
    return pd.DataFrame(differing, columns=["word", "a", "b"])
