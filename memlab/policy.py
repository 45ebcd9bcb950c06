"""The pre-tool-call hook pipeline and the policy's rules.

A hook is a plain function ``hook(call: ToolCall) -> ToolCall``: it may change the call's arguments
(and say so in ``call.notes``, which the audit keeps) or refuse the call by raising a ``MemlabError``.
A store's ``hooks`` list is ordinary Python, so a notebook can append to it:

>>> from memlab import InvalidArgument
>>> def no_secrets(call):
...     if "password" in str(call.arguments.get("content", "")).lower():
...         raise InvalidArgument("passwords are not remembered")
...     return call
>>> store.hooks.append(no_secrets)  # doctest: +SKIP
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memlab.levels import Level

if TYPE_CHECKING:
    from memlab.session import Session

__all__ = [
    "ToolCall",
    "Hook",
    "LEVEL_LIKE_ARGUMENTS",
    "strip_level_arguments",
    "DEFAULT_HOOKS",
    "run_hooks",
    "save_classification",
]


@dataclass
class ToolCall:
    """A tool call on its way to the session: hooks see and may change it."""

    session: Session
    tool: str
    arguments: dict[str, Any]
    notes: list[str] = field(default_factory=list)


Hook = Callable[[ToolCall], ToolCall]

# Argument names (lower-cased, letters only) by which a caller might try to pick a level.
LEVEL_LIKE_ARGUMENTS = frozenset(
    {"classification", "classificationlevel", "level", "securitylevel", "taint", "clearance", "sensitivity", "label"}
)


def strip_level_arguments(call: ToolCall) -> ToolCall:
    """Remove any classification-like argument: the level of a save is never the caller's to choose.

    >>> strip_level_arguments(ToolCall(None, "memory_save", {"key": "k", "classification": "PUBLIC"})).notes
    ["stripped argument classification='PUBLIC': the classification is always the session's taint"]
    """
    for name in list(call.arguments):
        if re.sub(r"[^a-z]", "", str(name).lower()) in LEVEL_LIKE_ARGUMENTS:
            value = call.arguments.pop(name)
            call.notes.append(f"stripped argument {name}={value!r}: the classification is always the session's taint")
    return call


DEFAULT_HOOKS: tuple[Hook, ...] = (strip_level_arguments,)


def run_hooks(hooks: Sequence[Hook], call: ToolCall) -> ToolCall:
    """Pass ``call`` through every hook in order."""
    for hook in hooks:
        call = hook(call)
    return call


def save_classification(taint: Level) -> Level:
    """The level a save gets: the session's live taint, always (no write-down, no caller's choice)."""
    return taint
