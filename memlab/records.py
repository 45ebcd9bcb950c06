"""Immutable value objects that cross module boundaries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

from memlab.labels import Integrity, Label
from memlab.levels import Level

__all__ = ["Memory", "Hit", "TaintEvent", "AuditEvent", "NewVersion"]


@dataclass(frozen=True)
class Memory:
    """One version of one memory, as a session sees it."""

    key: str
    """The agent's identifier for the fact, e.g. ``user-name``."""
    content: str
    """The remembered text."""
    tags: tuple[str, ...]
    """Ordered, de-duplicated tags."""
    classification: Label
    """The taint of the session that saved this version: its level, and its categories under compartments."""
    version: int
    """1, 2, ... per agent, key and classification."""
    saved_at: str
    """ISO 8601 UTC time of the save."""
    saved_by: str
    """Id of the session that saved it."""
    source: str | None = None
    """Where it came from, as the host gave it: the message or messages it was extracted from."""
    occurred_at: str | None = None
    """When what it says happened (ISO 8601), as the host gave it; ``saved_at`` is when it was saved."""
    distrust: tuple[str, ...] = ()
    """Why it is untrusted: the sources the host named when it lowered the session that saved it (a web page, an
    e-mail, a memory read untrusted), oldest first; empty for a trusted version."""

    @property
    def label(self) -> Label:
        """The version's classification (another name for it, for code that reads it as a label)."""
        return self.classification

    @property
    def integrity(self) -> Integrity:
        """Whether a trusted decision may rest on this version: the integrity of the session that saved it."""
        return self.classification.integrity

    @property
    def level(self) -> Level:
        """The classification's level."""
        return self.classification.level

    @property
    def categories(self) -> frozenset[str]:
        """The classification's compartments (``memlab.labels``); empty under the four-level order."""
        return self.classification.categories

    def ref(self) -> str:
        """The version's identifier in audit rows: ``key@LEVEL/vN``, or ``key@LEVEL:cat,cat/vN`` under compartments."""
        return f"{self.key}@{self.classification}/v{self.version}"


class _Snippet:
    """A hit's ``snippet``: given as text, or as a function of nothing that makes it, called when it is first read
    (a caller that reads no snippet, such as the relevance lab, pays nothing for it)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    def __get__(self, hit: Hit | None, owner: type | None = None) -> str:
        if hit is None:
            raise AttributeError(self.slot)  # no default: every hit is given its snippet
        value = hit.__dict__[self.slot]
        if not isinstance(value, str):
            value = hit.__dict__[self.slot] = value()
        return value

    def __set__(self, hit: Hit, value: str | Callable[[], str]) -> None:
        hit.__dict__[self.slot] = value


@dataclass(frozen=True)
class Hit:
    """One search result."""

    memory: Memory
    score: float
    """BM25 relevance, higher is better, from the visible levels' statistics only."""
    snippet: str = _Snippet()  # type: ignore[assignment]
    """An excerpt of the content with matched words marked ``**like this**`` (made when first read)."""

    def __reduce__(self) -> tuple[type[Hit], tuple[Memory, float, str]]:
        return Hit, (self.memory, self.score, self.snippet)


@dataclass(frozen=True)
class TaintEvent:
    """A session's taint went up."""

    session_id: str
    at: str
    from_level: Label
    """The taint before (stored as ``str``)."""
    to_level: Label
    reason: str


@dataclass(frozen=True)
class AuditEvent:
    """One tool call, as the auditor sees it: identifiers, never memory content."""

    at: str
    session_id: str
    agent: str
    taint: Label
    """The call's taint (stored as ``str``)."""
    tool: str
    outcome: str = "ok"
    """``ok``, ``not_found`` or an error code such as ``invalid_argument``."""
    key: str | None = None
    query: str | None = None
    records: tuple[str, ...] = ()
    """Refs (``key@LEVEL/vN``) of the versions the call returned or wrote."""
    notes: tuple[str, ...] = field(default=())
    """What hooks changed, e.g. a stripped classification argument."""
    message: str | None = None
    """The error message, when the call failed."""


class NewVersion(NamedTuple):
    """A version to save: what the caller gave, validated, and when the call was made."""

    key: str
    content: str
    tags: tuple[str, ...]
    saved_at: str
    source: str | None = None
    occurred_at: str | None = None
