"""LangGraph's names as memlab's (``MemlabStore``): a namespace is an agent, its labels joined by ``/``, and an item's
key is a memory's key; each is checked before anything of a batch runs.

A name LangGraph hands in is used only when memlab keeps it exactly as given, so what a graph puts is what it reads
back. memlab's names (``memlab.arguments``) have no surrounding whitespace, no control, format (zero-width, bidi) or
non-character, and are in Unicode NFC: two names that look alike are one name (``cafe\u0301`` and ``café``), so
that no one can save a look-alike of another's key. A LangGraph name that NFC would change is refused rather than
merged: merged, a put under one spelling would overwrite what was put under the other, and a search would return a
key that was never put. Its NFC spelling (``unicodedata.normalize("NFC", name)``) is always accepted.

Examples:
    >>> check_namespace(("users", "ann"))
    >>> check_key("cafe\u0301")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
        ...
    memlab.errors.InvalidArgument: the key '...' is not in Unicode NFC: memlab keeps ... one name for two ...
"""

from __future__ import annotations

import unicodedata
from typing import Any

from langgraph.store.base import InvalidNamespaceError

from memlab import InvalidArgument, arguments
from memlab.arguments import quoted

__all__ = ["check_namespace", "check_key", "check_labels", "path", "addressable"]


def check_namespace(namespace: Any, checked: set[tuple[str, ...]] | None = None) -> None:
    """Refuse the namespace of a get, put or delete unless it names a memlab agent exactly: its labels
    (``check_labels``) and their join must be names memlab keeps as given (``arguments.agent``), at most
    ``MAX_AGENT_CHARS`` joined.

    Args:
        namespace: the namespace given.
        checked: the namespaces accepted so far (a batch's puts mostly share one), added to: one found there is not
            checked again. Only tuples of exact ``str`` are kept and looked up, so no label type's own ``==``
            decides what is skipped.

    Raises:
        InvalidNamespaceError: LangGraph's error for a namespace, naming what is wrong.
    """
    plain = checked is not None and type(namespace) is tuple and all(type(label) is str for label in namespace)
    if plain and namespace in checked:
        return
    _check_namespace(namespace)
    if plain:
        checked.add(namespace)


def _check_namespace(namespace: Any) -> None:
    check_labels(namespace, "namespace")
    if not namespace:
        raise InvalidNamespaceError("the namespace must not be empty: it names the agent")
    for name in (*namespace, "/".join(namespace)):
        try:
            kept = arguments.agent(name)
        except InvalidArgument as error:
            raise InvalidNamespaceError(f"the namespace {quoted(namespace)} is not a memlab agent: {error}") from None
        if kept != name:
            raise InvalidNamespaceError(_not_nfc(f"the namespace {quoted(namespace)}", name))


def check_key(key: Any) -> None:
    """Refuse a key memlab would refuse (``arguments.key``) or keep otherwise than given.

    Raises:
        InvalidArgument: naming what is wrong.
    """
    if arguments.key(key) != key:
        raise InvalidArgument(_not_nfc(f"the key {quoted(key)}", key))


def check_labels(namespace: Any, what: str) -> None:
    """Refuse a namespace, prefix or suffix whose labels would not join into one agent name and split back into the
    same labels: a tuple of non-empty strings without ``/``, ``.`` or NUL (the last two as LangGraph's own stores).

    Raises:
        InvalidNamespaceError: naming the label.
    """
    if not isinstance(namespace, tuple):
        raise InvalidNamespaceError(f"the {what} must be a tuple of strings, not {type(namespace).__name__}")
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(f"label {label!r} of the {what} {namespace!r} must be a string")
        if not label:
            raise InvalidNamespaceError(f"the {what} {namespace!r} has an empty label")
        for char, name in (("/", "a slash (it joins the labels of an agent name)"), (".", "a period"), ("\x00", "NUL")):
            if char in label:
                raise InvalidNamespaceError(f"label {label!r} of the {what} {namespace!r} must not hold {name}")


def path(given: Any, what: str) -> tuple[str, ...]:
    """A search's prefix or a listing's prefix or suffix as a tuple, checked; a list is one too, as LangGraph's
    ``search(["users"])`` and ``list_namespaces(prefix=["users"])`` take it.

    Examples:
        >>> path(["users", "*"], "prefix")
        ('users', '*')
    """
    if isinstance(given, list):
        given = tuple(given)
    check_labels(given, what)
    return given


def addressable(namespace: tuple[str, ...]) -> bool:
    """Whether an agent's name splits into labels LangGraph can address (another door may name agents freely)."""
    return all(label and "." not in label and "\x00" not in label for label in namespace)


def _not_nfc(what: str, name: str) -> str:
    nfc = unicodedata.normalize("NFC", name)
    return (
        f"{what} is not in Unicode NFC: memlab keeps {quoted(name)} as {quoted(nfc)}, one name for two that look "
        "alike; give it in NFC (unicodedata.normalize('NFC', name))"
    )
