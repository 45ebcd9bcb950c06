"""Analyzers: named ways of turning text into index terms, in a registry.

Built-in analyzers are FTS5 tokenizers (``none`` = ``unicode61``, ``porter``, ``trigram``). The others stem
in Python and are *pre-stemmed*: the store indexes the stems with ``unicode61`` in separate columns and
stems each query the same way, while results and snippets keep the original text. Stemming is cached per
distinct word, so a stemmer costs little more than a dictionary look-up after the first sight of a word.

Examples:
    >>> get("snowball").terms("Running runners ran")
    ['run', 'runner', 'ran']
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field

from memlab.registry import Registry
from memlab.search import fts5, porter
from memlab.search.query import WORD, query_terms, quoted_or, words

__all__ = ["Analyzer", "register", "get", "names", "resolve", "DEFAULT"]

DEFAULT = "porter"


@dataclass(frozen=True)
class Analyzer:
    """How text becomes index terms.

    Attributes:
        name: the registry name.
        tokenize: the FTS5 tokenizer of the index.
        stem: a Python stemmer for lower-cased words; None when FTS5 does everything.
        description: one line for tables and notebooks.
        mode: the stemmer's variant, recorded with every result (e.g. NLTK porter's mode).
    """

    name: str
    tokenize: str
    stem: Callable[[str], str] | None = field(default=None, compare=False)
    description: str = ""
    mode: str | None = None
    fts_stem: Callable[[str], str] | None = field(default=None, compare=False)
    """What FTS5's own tokenizer does to a lower-cased word, in Python, so snippets can be made without a
    second FTS5 scan; None when it cannot be mirrored (trigram)."""
    stem_tail: int | None = field(default=None, compare=False)
    """At most how many of a term's last characters differ from the word it was made from, its first never
    (FTS5's porter: 2; no stemming: 0): snippets then stem only the words that begin like a query's term.
    None: no such bound (a lemmatizer maps "mice" to "mouse"), and snippets stem every word they look at."""

    @property
    def python_snippets(self) -> bool:
        """True when snippets are made in Python from the original content (see ``snippet``)."""
        return self.stem is not None or self.fts_stem is not None

    def snippet_terms(self, query: str) -> SnippetTerms:
        """The terms ``snippet`` marks for ``query``: its search terms as the index sees them."""
        return SnippetTerms((self.term(term) for term in query_terms(query)), self.stem_tail)

    @property
    def prestemmed(self) -> bool:
        """True when stems are computed in Python and indexed as plain words."""
        return self.stem is not None

    def words(self, text: str) -> list[str]:
        """The lower-cased words of ``text`` as FTS5's unicode61 splits them."""
        return words(text)

    def terms(self, text: str) -> list[str]:
        """The terms the index holds for ``text``, in order, as SQLite's tokenizer makes them: FTS5's porter
        stems, trigram's substrings, or a pre-stemmed analyzer's stems after ``unicode61`` (which folds
        diacritics: ``café`` is held as ``cafe``).

        Examples:
            >>> get("porter").terms("She runs daily")
            ['she', 'run', 'daili']
        """
        return fts5.tokenize([self.index_text(text) if self.prestemmed else text], self.tokenize)[0]

    def word_terms(self, words: Iterable[str]) -> dict[str, str]:
        """Each distinct word's index term(s), space-separated where a word makes several (trigram).

        Examples:
            >>> get("porter").word_terms(["running", "ran"])
            {'running': 'run', 'ran': 'ran'}
        """
        distinct = list(dict.fromkeys(words))
        given = [self.index_text(word) for word in distinct] if self.prestemmed else distinct
        made = fts5.tokenize(given, self.tokenize)
        return {word: " ".join(terms) for word, terms in zip(distinct, made, strict=True)}

    def index_text(self, text: str) -> str:
        """What a pre-stemmed index stores for ``text``: its stems, space-separated."""
        return " ".join(self.term(word) for word in self.words(text))

    def query_terms(self, query: str) -> list[str]:
        """Distinct search terms of a natural-language query, stopwords dropped, stemmed like the index."""
        terms = query_terms(query)
        if self.stem is not None:
            terms = list(dict.fromkeys(self.stem(term) for term in terms))
        return terms

    def match_expression(self, query: str) -> str | None:
        """A safe FTS5 MATCH expression (quoted terms, OR-combined), or None when the query has no words."""
        return quoted_or(self.query_terms(query))

    def term(self, word: str) -> str:
        """One word's index term, computed in Python: its stem (a pre-stemmed analyzer's, or FTS5 porter's
        mirror), else the lower-cased word. ``terms`` asks SQLite instead, for whole texts."""
        word = word.lower()
        stem = self.stem or self.fts_stem
        return stem(word) if stem is not None else word

    def snippet(self, text: str, terms: Collection[str], *, tokens: int = 16) -> str:
        """An excerpt of ``text`` around the first word whose term is in ``terms``, matches marked ``**so**``.

        Search makes its snippets here rather than with FTS5's snippet(), which would need a second scan of
        the matches (and shows stems for a pre-stemmed index); the layout mirrors FTS5's, the window is the
        one around the first match. Only words that can match are stemmed: with a ``stem_tail`` bound, those
        that begin like a term; and only up to the first match and in the window.

        Examples:
            >>> get("snowball").snippet("She loves running", get("snowball").snippet_terms("runs"))
            'She loves **running**'
        """
        # Lower-casing keeps a letter or digit one letter or digit (all of Unicode checked), so each word is in the
        # same place in ``lowered``: all but "İ", made "i" and a combining dot, whose dot is dropped (as unicode61
        # drops it).
        lowered = text.lower() if "İ" not in text else text.replace("İ", "i").lower()
        if type(terms) is SnippetTerms and terms.tail == self.stem_tail:
            beginnings = terms.beginnings
        else:
            beginnings = _beginnings(self.stem_tail, terms)
        term_of = _memoised_term(self)
        # Words are split only as far as needed: up to the first match, then through the window and one word
        # past it (which says whether the text goes on); a text with no match has nowhere to stop and is split whole.
        found = WORD.finditer(text)
        spans: list[tuple[int, int]] = []
        first_hit, add = None, spans.append
        for match in found:
            begin, end = span = match.span()
            add(span)
            if lowered.startswith(beginnings, begin, end) and term_of(lowered[begin:end]) in terms:
                first_hit = len(spans) - 1
                more = max(0, max(0, first_hit - 2) + tokens - first_hit)
                spans += [match.span() for match in itertools.islice(found, more)]
                break
        if not spans:
            return text
        first = max(0, min(first_hit - 2 if first_hit is not None else 0, len(spans) - tokens))
        window = spans[first : first + tokens]
        start = 0 if first == 0 else window[0][0]
        end = len(text) if first + tokens >= len(spans) else window[-1][1]
        out, cursor = [], start
        if first_hit is not None:  # the words before it are known not to match, it is known to
            for i, (begin, finish) in enumerate(window[first_hit - first :], start=first_hit):
                if i == first_hit or (
                    lowered.startswith(beginnings, begin, finish) and term_of(lowered[begin:finish]) in terms
                ):
                    out.append(text[cursor:begin] + "**" + text[begin:finish] + "**")
                    cursor = finish
        out.append(text[cursor:end])
        return ("…" if start > 0 else "") + "".join(out) + ("…" if end < len(text) else "")


class SnippetTerms(frozenset):
    """A query's snippet terms, with how a word that may match them begins (``_beginnings``), worked out once per
    search rather than once per hit."""

    tail: int | None
    beginnings: tuple[str, ...]

    def __new__(cls, terms: Iterable[str], tail: int | None) -> SnippetTerms:
        made = super().__new__(cls, terms)
        made.tail, made.beginnings = tail, _beginnings(tail, made)
        return made


def _beginnings(tail: int | None, terms: Collection[str]) -> tuple[str, ...]:
    """How every word whose term is in ``terms`` begins, when a term differs from its word in its last ``tail``
    characters at most and never in its first; any word may match when there is no such bound."""
    if tail is None:
        return ("",) if terms else ()
    return tuple({term[: max(1, len(term) - tail)] for term in terms})


@functools.cache
def _memoised_term(analyzer: Analyzer) -> Callable[[str], str]:
    """``analyzer.term``, memoised, one per analyzer (snippets look up every word they show)."""
    return functools.lru_cache(maxsize=1 << 16)(analyzer.term)


_REGISTRY: Registry[Analyzer] = Registry("analyzer", Analyzer, default=DEFAULT)
register, get, names, resolve = _REGISTRY.register, _REGISTRY.get, _REGISTRY.names, _REGISTRY.resolve


def lazy_stemmer(build: Callable[[], Callable[[str], str]]) -> Callable[[str], str]:
    """A stemmer made by ``build()`` on its first word (importing NLTK costs a second), memoised per
    distinct word: agent memories repeat words, and stemmers are slow."""
    made: list[Callable[[str], str]] = []

    @functools.cache
    def stem(word: str) -> str:
        if not made:
            made.append(build())
        return made[0](word)

    return stem


def _nltk_porter(mode: str) -> Callable[[], Callable[[str], str]]:
    def build() -> Callable[[str], str]:
        from nltk.stem.porter import PorterStemmer

        return PorterStemmer(mode=getattr(PorterStemmer, mode)).stem

    return build


def _snowball() -> Callable[[str], str]:
    from nltk.stem.snowball import SnowballStemmer

    return SnowballStemmer("english").stem


def _lancaster() -> Callable[[str], str]:
    from nltk.stem.lancaster import LancasterStemmer

    return LancasterStemmer().stem


def _simplemma() -> Callable[[str], str]:
    import simplemma

    return lambda word: simplemma.lemmatize(word, lang="en").lower()


register(
    Analyzer("none", "unicode61", description="FTS5 unicode61: case folding, no stemming", fts_stem=str, stem_tail=0)
)
# FTS5's porter in Python, exact against SQLite's (tests/test_porter.py): snippets need no NLTK.
register(
    Analyzer(
        "porter",
        "porter unicode61",
        description="FTS5's built-in porter stemmer (the default)",
        fts_stem=porter.stem,
        stem_tail=porter.TAIL,
    )
)
register(Analyzer("trigram", "trigram", description="FTS5 trigram: substrings of three characters"))
for _name, _mode in (
    ("nltk-porter", "NLTK_EXTENSIONS"),
    ("nltk-porter-original", "ORIGINAL_ALGORITHM"),
    ("nltk-porter-martin", "MARTIN_EXTENSIONS"),
):
    register(
        Analyzer(_name, "unicode61", lazy_stemmer(_nltk_porter(_mode)), f"NLTK PorterStemmer, mode {_mode}", _mode)
    )
register(Analyzer("snowball", "unicode61", lazy_stemmer(_snowball), "NLTK Snowball (Porter2), English"))
register(Analyzer("lancaster", "unicode61", lazy_stemmer(_lancaster), "NLTK Lancaster (Paice/Husk): aggressive"))
register(
    Analyzer("simplemma", "unicode61", lazy_stemmer(_simplemma), "simplemma lemmatizer, English (offline, no WordNet)")
)
