"""A small pure-Python model of memlab's semantics (docs/semantics.md), to check the real store against.

It knows nothing of SQL or FTS5: versions are lists, the effective view is computed from scratch on every
read, and search is "does any query word's stem occur among the memory's words".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nltk.stem.porter import PorterStemmer

from memlab import Level
from memlab.search import query_terms

# FTS5's porter tokenizer agrees with NLTK's porter in MARTIN_EXTENSIONS mode (pinned in tests/test_stemstats.py).
_stem = PorterStemmer(mode=PorterStemmer.MARTIN_EXTENSIONS).stem
_WORD = re.compile(r"[^\W_]+")


@dataclass
class Version:
    agent: str
    key: str
    content: str
    tags: tuple[str, ...]
    classification: Level
    version: int
    saved_by: str
    deleted: bool = False

    def words(self) -> set[str]:
        text = " ".join([self.key, self.content, *self.tags])
        return {_stem(word.lower()) for word in _WORD.findall(text)}


@dataclass
class ReferenceStore:
    versions: list[Version] = field(default_factory=list)

    def _current(self, agent: str, key: str, level: Level) -> Version | None:
        """The newest version at exactly ``level`` (live or deleted)."""
        found = [v for v in self.versions if (v.agent, v.key, v.classification) == (agent, key, level)]
        return max(found, key=lambda v: v.version, default=None)

    def effective(self, agent: str, taint: Level, key: str) -> Version | None:
        for level in sorted((lv for lv in Level if lv <= taint), reverse=True):
            current = self._current(agent, key, level)
            if current is not None and not current.deleted:
                return current
        return None

    def view(self, agent: str, taint: Level) -> list[Version]:
        keys = sorted({v.key for v in self.versions if v.agent == agent})
        return [v for v in (self.effective(agent, taint, key) for key in keys) if v is not None]

    def save(self, agent: str, taint: Level, key: str, content: str, tags: tuple[str, ...], by: str) -> Version:
        current = self._current(agent, key, taint)
        version = Version(agent, key, content, tags, taint, 1 if current is None else current.version + 1, by)
        self.versions.append(version)
        return version

    def delete(self, agent: str, taint: Level, key: str) -> Version | None:
        current = self._current(agent, key, taint)
        if current is None or current.deleted:
            return None
        current.deleted = True
        return current

    def list(self, agent: str, taint: Level, tag: str | None) -> list[Version]:
        return [v for v in self.view(agent, taint) if tag is None or tag in v.tags]

    def matching_keys(self, agent: str, taint: Level, query: str) -> set[str]:
        wanted = {_stem(term) for term in query_terms(query)}
        return {v.key for v in self.view(agent, taint) if wanted & v.words()}
