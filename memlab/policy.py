"""The policy's rules, and the pre-tool-call hook pipeline.

A ``Policy`` decides the level a save gets, what a session may read, whether shadowing comes before
search and tag filters, what a delete may touch, and how search statistics are scoped. ``Policy()``
itself is ``strict``: exactly the semantics of ``docs/semantics.md``. ``memlab.policies`` ships variants
that model real mistakes; a researcher writes a new one by subclassing and overriding a method or a flag.

A hook is a plain function ``hook(call: ToolCall) -> ToolCall``: it may change the call's arguments
(and say so in ``call.notes``, which the audit keeps) or refuse the call by raising a ``MemlabError``.
A store's ``hooks`` list is ordinary Python, so a notebook can append to it:

Examples:
    >>> from memlab import InvalidArgument
    >>> def no_secrets(call):
    ...     if "password" in str(call.arguments.get("content", "")).lower():
    ...         raise InvalidArgument("passwords are not remembered")
    ...     return call
    >>> store.hooks.append(no_secrets)
    >>> s.memory_save("wifi", "the password is hunter2")
    Traceback (most recent call last):
        ...
    memlab.errors.InvalidArgument: passwords are not remembered
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memlab.arguments import quoted
from memlab.errors import Denied
from memlab.labels import Label
from memlab.levels import Level
from memlab.viewrules import ViewRules

__all__ = [
    "ToolCall",
    "Hook",
    "LEVEL_LIKE_ARGUMENTS",
    "strip_level_arguments",
    "DEFAULT_HOOKS",
    "run_hooks",
    "Visible",
    "Policy",
]


@dataclass
class ToolCall:
    """A tool call on its way to the session: hooks see and may change its arguments and notes.

    A hook sees who calls (agent, session id) and at which taint, never the session itself: a hook cannot
    escalate, read or write through it. Under compartments the taint may be a ``Label``, which is not totally
    ordered: a hook compares through the lattice, ``call.label`` with ``Label.can_flow_to``, never with ``<``.

    Examples:
        >>> call = ToolCall("memory_save", {}, taint=Label.parse("CONFIDENTIAL:hr"))
        >>> Label(Level.CONFIDENTIAL).can_flow_to(call.label), call.label.can_flow_to(Label(Level.RESTRICTED))
        (True, False)
    """

    tool: str
    arguments: dict[str, Any]
    taint: Label = Label.parse(Level.PUBLIC)
    """The session's taint when the call began: what the policy, the storage and the audit use."""
    agent: str = "main"
    session_id: str = ""
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.taint = Label.parse(self.taint)

    @property
    def label(self) -> Label:
        """The call's taint (another name for ``taint``, for code that reads it as a label)."""
        return self.taint


Hook = Callable[[ToolCall], ToolCall]

# Argument names (lower-cased, letters only) by which a caller might try to pick a level.
LEVEL_LIKE_ARGUMENTS = frozenset(
    {"classification", "classificationlevel", "level", "securitylevel", "taint", "clearance", "sensitivity", "label"}
)
INTEGRITY_LIKE_ARGUMENTS = frozenset(
    {"integrity", "trusted", "untrusted", "trust", "trustlevel", "provenance", "endorsed", "verified", "floor"}
)
"""Argument names by which a caller might try to pick a save's integrity: stripped like the levels' (a model's
output never sets trust; ``Session.lower_integrity`` is the host's)."""


def strip_level_arguments(call: ToolCall) -> ToolCall:
    """Remove any classification-like or integrity-like argument: the level and the trust of a save are never the
    caller's to choose.

    The note names the argument, never its value (a model may put anything there).

    Examples:
        >>> strip_level_arguments(ToolCall("memory_save", {"key": "k", "classification": "PUBLIC"})).notes
        ["stripped argument 'classification': the classification is always the session's taint"]
        >>> strip_level_arguments(ToolCall("memory_save", {"key": "k", "trusted": True})).notes
        ["stripped argument 'trusted': the integrity is always the session's, lowered only by its host"]
    """
    for name in list(call.arguments):
        kind = _level_like(str(name))
        if kind:
            del call.arguments[name]
            call.notes.append(f"stripped argument {quoted(name)}: {_STRIPPED[kind]}")
    return call


_STRIPPED = {
    "classification": "the classification is always the session's taint",
    "integrity": "the integrity is always the session's, lowered only by its host",
}


@functools.lru_cache(maxsize=4096)
def _level_like(name: str) -> str:
    """What an argument name tries to choose: ``classification``, ``integrity`` or nothing ("") (decided once per
    name: the same few names come on every call)."""
    letters = re.sub(r"[^a-z]", "", name.lower())
    if letters in LEVEL_LIKE_ARGUMENTS:
        return "classification"
    return "integrity" if letters in INTEGRITY_LIKE_ARGUMENTS else ""


DEFAULT_HOOKS: tuple[Hook, ...] = (strip_level_arguments,)


Visible = Callable[[str], Label | None]
"""The classification of a key's version in the caller's effective view (None: the key is not visible)."""


def run_hooks(hooks: Sequence[Hook], call: ToolCall) -> ToolCall:
    """Pass ``call`` through every hook in order."""
    for hook in hooks:
        call = hook(call)
    return call


class Policy:
    """The strict policy, exactly the documented semantics; subclass it to model a variant.

    Examples:
        >>> class PublicReadsInternal(Policy):
        ...     name = "public-reads-internal"
        ...     def readable(self, classification, taint):
        ...         return classification <= max(taint, Level.INTERNAL)
    """

    name = "strict"
    description = "the design: saves at the live taint, reads gated by can_flow_to, shadowing before matching"
    """What the policy models: the design, or the real mistake a variant reproduces (the policy lab shows it)."""

    shadow_before_match: bool = True
    """False: search and tag filters run on every readable version, and shadowing only among the matches."""
    global_statistics: bool = False
    """True: one FTS5 index over every level, so bm25 statistics include memories the session cannot read."""
    reveal_hidden: bool = False
    """True: a get of a key that exists only above the taint answers differently from a missing key."""
    shadowing: str = "newest"
    """Under compartments, which of a key's several maximal visible versions a view shows (``ViewRules.shadowing``):
    ``newest`` (the one saved last) or ``refuse`` (none: a get is ambiguous, lists and searches leave the key out)."""
    trust_first: bool = True
    """False: shadowing by label order only, whatever the integrity (``ViewRules.trust_first``)."""
    shared_ranking: bool = False
    """True: a reader whose floor is trusted is ranked by the index of every grade (``ViewRules.shared_ranking``)."""
    reads_lower: bool = True
    """False: a call that returns an untrusted version leaves the session's integrity as it was."""
    label_alphabet: tuple[str, ...] = ()
    """The labels ``memlab.check``'s noninterference check draws sessions from for this policy (none: the levels
    it is given): a policy about compartments opts in, so the check examines its shadowing rule."""

    def readable(self, classification: Label, taint: Label) -> bool:
        """May a session at ``taint`` read a version classified ``classification``? The views a store keeps ask
        it of labels without categories, and add the lattice's rule for categories (``ViewRules``)."""
        return classification.can_flow_to(taint)

    def save_level(self, taint: Label, *, initial_taint: Label) -> Label:
        """The classification a save gets: ``taint``, the session's taint when the call began (no caller's
        choice, no write-down); ``initial_taint`` is the taint the session started at. A variant compares labels
        through the lattice (``Label.can_flow_to``, or ``<=``, a partial order)."""
        return taint

    def delete_level(self, key: str, taint: Label, *, visible: Visible) -> Label:
        """The level whose current version of ``key`` a delete soft-deletes: exactly the call's taint.

        ``visible`` tells the classification of a key's version in the caller's effective view, for variants
        that ask (it reads only when called)."""
        return taint

    def call_taint(self, call: ToolCall) -> Label:
        """The taint a tool call acts at (its saves are stamped with it): the session's live taint, ``call.taint``,
        whatever the call's arguments say (an integrity-like argument is stripped, ``strip_level_arguments``).
        Asked before the hooks run, so a variant can reproduce an argument read before it was stripped."""
        return call.taint

    def endorse(self, session: Any, key: str) -> str:
        """A session's request to endorse ``key`` (a model asking through a tool its host wired): refused.
        Endorsement is an auditor's act on the store (``MemoryStore.endorse``), never a session's or a tool's; the
        ``session-may-endorse`` variant carries the request out.

        Raises:
            Denied: always, naming the rule; nothing is written.
        """
        raise Denied(f"session {session.id} may not endorse {key!r}: endorsement is an auditor's act on the store")

    def view_rules(self) -> ViewRules:
        """What storage needs of this policy to keep its views: readability, shadow order, statistics scope."""
        return ViewRules(
            readable=frozenset((c, t) for c in Level for t in Level if self.readable(Label.parse(c), Label.parse(t))),
            shadow_before_match=self.shadow_before_match,
            global_statistics=self.global_statistics,
            shadowing=self.shadowing,
            trust_first=self.trust_first,
            shared_ranking=self.shared_ranking,
        )

    def __repr__(self) -> str:
        return f"<policy {self.name}>"
