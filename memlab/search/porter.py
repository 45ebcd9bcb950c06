"""SQLite FTS5's porter stemmer in Python: what the ``porter`` tokenizer does to each token ``unicode61`` makes.

Snippets mark the words FTS5 matched, so they must stem a word exactly as FTS5 does, without asking SQLite
for every word. This follows ``fts5PorterCb`` in SQLite's ``ext/fts5/fts5_tokenize.c`` rule for rule, with its
particulars: a token under 3 or over 64 bytes is left alone; it stems UTF-8 bytes, so a non-ASCII byte counts
as a consonant; ``*v*`` counts ``y`` as a vowel anywhere but first; and in each step only the first suffix
that ends the word (and is shorter than it) is tried. ``tests/test_porter.py`` checks it against SQLite's own
stems on every word of the LoCoMo data and on random words.

Examples:
    >>> [stem(word) for word in ["running", "possibly", "relational", "hopeful", "café"]]
    ['run', 'possibl', 'relat', 'hope', 'café']
"""

from __future__ import annotations

import functools
from collections.abc import Callable

__all__ = ["stem", "TAIL"]

MAX_TOKEN = 64  # FTS5_PORTER_MAX_TOKEN: longer tokens (in bytes) are indexed as they are

TAIL = 2
"""A stem differs from its word in its last 2 characters at most, and never in its first, so snippets stem only
the words that begin like a query's stem (``Analyzer.stem_tail``). Every step keeps a non-empty beginning of
what it is given. Step 1 changes at most the last character (``e`` added, or ``at``/``bl``/``iz`` given an
``e``, after ``ing``; ``y`` made ``i``). A step 2 suffix is longer than that change and its replacement shares
all but at most 2 characters with it (``biliti`` > ``ble``; ``ational`` > ``ate`` only 1). Step 3 writes a
beginning of the suffix it replaces, steps 4 and 5 only remove."""


def _pattern(stem: str) -> str:
    """``c`` or ``v`` per character: a consonant, or a vowel (``y`` is a vowel after a consonant)."""
    out, consonant = [], False
    for char in stem:
        consonant = not (char in "aeiou" or (consonant and char == "y"))
        out.append("c" if consonant else "v")
    return "".join(out)


def _measure(stem: str) -> int:
    """Porter's m: how many vowel-consonant sequences ``stem`` has."""
    return _pattern(stem).count("vc")


def _m_gt_0(stem: str) -> bool:
    return _measure(stem) > 0


def _m_gt_1(stem: str) -> bool:
    return _measure(stem) > 1


def _m_gt_1_s_or_t(stem: str) -> bool:
    return stem[-1:] in ("s", "t") and _measure(stem) > 1


def _has_vowel(stem: str) -> bool:
    """FTS5's ``*v*``: a vowel, where ``y`` counts at any position but the first."""
    return any(char in "aeiou" for char in stem) or "y" in stem[1:]


def _ends_cvc(stem: str) -> bool:
    """Porter's ``*o``: consonant, vowel, consonant at the end, the last not ``w``, ``x`` or ``y``."""
    return stem[-1:] not in ("w", "x", "y") and _pattern(stem)[-3:] == "cvc"


_Rule = tuple[str, str, Callable[[str], bool] | None]


def _rules(condition: Callable[[str], bool] | None, pairs: str) -> list[_Rule]:
    """Rules from ``"suffix>replacement ..."`` (an empty replacement removes the suffix), in FTS5's order."""
    return [(suffix, replacement, condition) for suffix, replacement in (pair.split(">") for pair in pairs.split())]


_STEP_1B = [("eed", "ee", _m_gt_0), ("ed", "", _has_vowel), ("ing", "", _has_vowel)]
_STEP_1B2 = _rules(None, "at>ate bl>ble iz>ize")
_STEP_2 = _rules(
    _m_gt_0,
    "ational>ate tional>tion enci>ence anci>ance izer>ize logi>log bli>ble alli>al entli>ent eli>e ousli>ous "
    "ization>ize ation>ate ator>ate alism>al iveness>ive fulness>ful ousness>ous aliti>al iviti>ive biliti>ble",
)
_STEP_3 = _rules(_m_gt_0, "ical>ic ness> icate>ic iciti>ic ful> ative> alize>al")
_STEP_4 = [
    *_rules(_m_gt_1, "al> ance> ence> er> ic> able> ible> ant> ement> ment> ent>"),
    ("ion", "", _m_gt_1_s_or_t),
    *_rules(_m_gt_1, "ou> ism> ate> iti> ous> ive> ize>"),
]


def _apply(word: str, rules: list[_Rule]) -> tuple[str, str]:
    """The first rule whose suffix ends ``word`` (leaving a stem) decides: applied if its condition holds.
    Returns the word and the suffix replaced ("" when none was)."""
    if not word.endswith(_ENDINGS[id(rules)]):  # most words end in none of a step's suffixes
        return word, ""
    for suffix, replacement, condition in rules:
        if len(word) > len(suffix) and word.endswith(suffix):
            stem = word[: -len(suffix)]
            if condition is None or condition(stem):
                return stem + replacement, suffix
            return word, ""
    return word, ""


_ENDINGS = {
    id(rules): tuple(suffix for suffix, _, _ in rules) for rules in (_STEP_1B, _STEP_1B2, _STEP_2, _STEP_3, _STEP_4)
}


def _step_1a(word: str) -> str:
    if not word.endswith("s"):
        return word
    if word[-2] == "e":
        if (len(word) > 4 and word.endswith("sses")) or (len(word) > 3 and word[-3] == "i"):
            return word[:-2]
        return word[:-1]
    return word if word[-2] == "s" else word[:-1]


def _porter(word: str) -> str:
    word = _step_1a(word)
    word, removed = _apply(word, _STEP_1B)
    if removed in ("ed", "ing"):
        word, restored = _apply(word, _STEP_1B2)
        if not restored:
            last = word[-1]
            # A double consonant is undone (``y`` counts as one here), except ll, ss and zz.
            if last not in "aeioulsz" and len(word) > 1 and word[-2] == last:
                word = word[:-1]
            elif _measure(word) == 1 and _ends_cvc(word):
                word += "e"
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    word = _apply(word, _STEP_2)[0]
    word = _apply(word, _STEP_3)[0]
    word = _apply(word, _STEP_4)[0]
    if word.endswith("e"):
        stem = word[:-1]
        measure = _measure(stem)
        if measure > 1 or (measure == 1 and not _ends_cvc(stem)):
            word = stem
    if len(word) > 1 and word.endswith("ll") and _m_gt_1(word[:-1]):
        word = word[:-1]
    return word


@functools.lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """FTS5 porter's stem of one lower-cased token (memoised: agents' memories repeat their words)."""
    if word.isascii():
        return _porter(word) if 3 <= len(word) <= MAX_TOKEN else word
    # FTS5 stems bytes: each byte of a non-ASCII character is one (consonant) position.
    raw = word.encode("utf-8")
    if not 3 <= len(raw) <= MAX_TOKEN:
        return word
    return _porter(raw.decode("latin-1")).encode("latin-1").decode("utf-8")
