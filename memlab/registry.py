"""A registry of named things: unique names, one error for an unknown name, an optional default.

Every kind memlab looks up by name is one: policies, analyzers, tools, checks, the relevance lab's rows and its
shipped collections. An unknown name reads the same in each, ``unknown <kind> 'x'; known <kinds>: a, b``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Generic, Protocol, TypeVar

from memlab.arguments import quoted
from memlab.errors import InvalidArgument

__all__ = ["Registry"]


class Named(Protocol):
    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


class Registry(Generic[T]):
    """Named objects of one kind, in registration order; ``in``, ``len`` and iteration go over the names.

    Args:
        kind: what one item is called in messages (``"policy"``).
        kind_type: the items' class, which ``resolve`` passes through.
        default: the name ``resolve(None)`` stands for; None: the kind has no default.
        plural: the kind's plural in messages (default ``kind + "s"``).

    Examples:
        >>> policies = Registry("policy", Policy, default="strict", plural="policies")
        >>> policies.register(Policy()).name, policies.names(), "strict" in policies
        ('strict', ['strict'], True)
        >>> policies.get("lax")
        Traceback (most recent call last):
            ...
        memlab.errors.InvalidArgument: unknown policy 'lax'; known policies: strict
    """

    def __init__(self, kind: str, kind_type: type, default: str | None = None, *, plural: str | None = None) -> None:
        self.kind, self.kind_type, self.default = kind, kind_type, default
        self.plural = plural or f"{kind}s"
        self._items: dict[str, T] = {}

    def register(self, item: T) -> T:
        """Add ``item`` under its name.

        Returns:
            ``item``, so a registration can stand where the item is defined.
        Raises:
            InvalidArgument: the name is taken.
        """
        if item.name in self._items:
            raise InvalidArgument(f"a {self.kind} named {item.name!r} is already registered")
        self._items[item.name] = item
        return item

    def unregister(self, name: str) -> T:
        """Remove the item called ``name`` (a lab's or a test's item, once it is done with it).

        Returns:
            The item removed.
        Raises:
            InvalidArgument: no such item; the message lists the known names.
        """
        item = self.get(name)
        del self._items[name]
        return item

    def get(self, name: Any) -> T:
        """The item called ``name``.

        Raises:
            InvalidArgument: no such item; the message lists the known names.
        """
        item = self._items.get(name) if isinstance(name, str) else None
        if item is None:
            raise InvalidArgument(self.unknown(name))
        return item

    def unknown(self, name: Any, known: list[str] | None = None, *, limit: int | None = None) -> str:
        """The message for an unknown ``name``: ``unknown <kind> 'x'; known <kinds>: a, b``.

        Args:
            known: the names to list, when only some of them are offered to the caller (default all).
            limit: cut the name shown to about this many characters (a name a model sent may be any length).

        Examples:
            >>> Registry("check", object).unknown("leaks")
            "unknown check 'leaks'; known checks: "
        """
        listed = ", ".join(self.names() if known is None else known)
        name_shown = repr(name) if limit is None else quoted(name, limit)
        return f"unknown {self.kind} {name_shown}; known {self.plural}: {listed}"

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._items)

    def values(self) -> list[T]:
        """Registered items, in registration order."""
        return list(self._items.values())

    def resolve(self, item: T | str | None) -> T:
        """An item from a name, an item, or None (the default).

        Raises:
            InvalidArgument: an unknown name, None for a kind without a default, or something that is neither a
                name nor an item.
        """
        if item is None:
            if self.default is None:
                raise InvalidArgument(f"a {self.kind} is needed; known {self.plural}: {', '.join(self._items)}")
            return self.get(self.default)
        if isinstance(item, self.kind_type):
            return item
        if isinstance(item, str):
            return self.get(item)
        raise InvalidArgument(f"{self.kind} must be a name or a {self.kind_type.__name__}, not {type(item).__name__}")

    def find(self, name: object) -> T | None:
        """The item called ``name``, or None (``get`` without the error, for a caller that words its own)."""
        return self._items.get(name) if isinstance(name, str) else None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)
