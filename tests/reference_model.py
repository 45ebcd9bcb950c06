"""A small pure-Python model of memlab's semantics (docs/semantics.md), to check the real store against.

It knows nothing of SQL or FTS5: versions are lists, the effective view is computed from scratch on every
read, and search is "does any query word's stem occur among the memory's words".

Under compartments a classification or taint may be a ``Label``: a version is readable when its level is at
most the taint's and its categories within the taint's, a key's view is its maximal readable live versions,
and ``shadowing`` chooses among several (``newest``: the last saved; ``refuse``: ``AMBIGUOUS``). The order is
worked out here from levels and category sets, not with ``memlab.viewrules.maximal`` or the store's rules.

Integrity (DESIGN.md section 9): a label's integrity is trusted or untrusted; reads are asked as a *reader*, a
label whose integrity is the session's floor (the least trusted grade it accepts): a version is readable when it is
at least that trusted. Among the readable versions of a key the trusted ones compete first; untrusted ones only
when no trusted one is readable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nltk.stem.porter import PorterStemmer

from memlab import Level
from memlab.labels import Integrity, Label
from memlab.search import query_terms

# FTS5's porter tokenizer agrees with NLTK's porter in MARTIN_EXTENSIONS mode (pinned in tests/test_stemstats.py).
_stem = PorterStemmer(mode=PorterStemmer.MARTIN_EXTENSIONS).stem
_WORD = re.compile(r"[^\W_]+")

AMBIGUOUS = "ambiguous"
"""What ``effective`` gives for a key the ``refuse`` rule will not choose a version of."""


def _pair(value: Level | Label) -> tuple[Level, frozenset[str], bool]:
    """A label's level, categories and whether it is trusted (a ``Level`` is trusted)."""
    if isinstance(value, Label):
        return value.level, value.categories, value.integrity == Integrity.TRUSTED
    return Level(value), frozenset(), True


def _below(low: Level | Label, high: Level | Label) -> bool:
    """Whether a version labelled ``low`` may be read as ``high`` (a reader: its integrity is its floor)."""
    (low_level, low_categories, low_trusted), (high_level, high_categories, high_trusted) = _pair(low), _pair(high)
    return low_level <= high_level and low_categories <= high_categories and (low_trusted or not high_trusted)


def trusted(version: Version) -> bool:
    return _pair(version.classification)[2]


@dataclass
class Version:
    agent: str
    key: str
    content: str
    tags: tuple[str, ...]
    classification: Level | Label
    version: int
    saved_by: str
    deleted: bool = False

    def words(self) -> set[str]:
        text = " ".join([self.key, self.content, *self.tags])
        return {_stem(word.lower()) for word in _WORD.findall(text)}


@dataclass
class ReferenceStore:
    versions: list[Version] = field(default_factory=list)
    shadowing: str = "newest"

    def _current(self, agent: str, key: str, level: Level | Label) -> Version | None:
        """The newest version at exactly ``level`` (live or deleted)."""
        found = [
            v for v in self.versions if (v.agent, v.key) == (agent, key) and _pair(v.classification) == _pair(level)
        ]
        return max(found, key=lambda v: v.version, default=None)

    def effective(self, agent: str, taint: Level | Label, key: str) -> Version | str | None:
        """The key's version a session reading as ``taint`` (level, categories, floor as integrity) sees."""
        labels = {_pair(v.classification): v.classification for v in self.versions if (v.agent, v.key) == (agent, key)}
        live = [
            current
            for current in (self._current(agent, key, label) for label in labels.values())
            if current is not None and not current.deleted
        ]
        readable = [v for v in live if _below(v.classification, taint)]
        readable = [v for v in readable if trusted(v)] or readable  # trust first
        top = [
            v for v in readable if not any(o is not v and _below(v.classification, o.classification) for o in readable)
        ]
        if len(top) > 1 and self.shadowing == "refuse":
            return AMBIGUOUS
        return max(top, key=self.versions.index, default=None)

    def view(self, agent: str, taint: Level | Label) -> list[Version]:
        keys = sorted({v.key for v in self.versions if v.agent == agent})
        return [v for v in (self.effective(agent, taint, key) for key in keys) if isinstance(v, Version)]

    def save(self, agent: str, taint: Level | Label, key: str, content: str, tags: tuple[str, ...], by: str) -> Version:
        current = self._current(agent, key, taint)
        version = Version(agent, key, content, tags, taint, 1 if current is None else current.version + 1, by)
        self.versions.append(version)
        return version

    def delete(self, agent: str, taint: Level | Label, key: str) -> Version | None:
        current = self._current(agent, key, taint)
        if current is None or current.deleted:
            return None
        current.deleted = True
        return current

    def list(self, agent: str, taint: Level | Label, tag: str | None) -> list[Version]:
        return [v for v in self.view(agent, taint) if tag is None or tag in v.tags]

    def matching_keys(self, agent: str, taint: Level | Label, query: str) -> set[str]:
        wanted = {_stem(term) for term in query_terms(query)}
        return {v.key for v in self.view(agent, taint) if wanted & v.words()}
