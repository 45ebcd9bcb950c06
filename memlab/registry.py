"""A registry of named things (policies, analyzers): unique names, clear errors, a default."""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

from memlab.errors import InvalidArgument

__all__ = ["Registry"]


class Named(Protocol):
    name: str


T = TypeVar("T", bound=Named)


class Registry(Generic[T]):
    """Named objects of one kind, in registration order.

    Examples:
        >>> policies = Registry("policy", Policy, default="strict", plural="policies")
        >>> policies.register(Policy()).name, policies.names()
        ('strict', ['strict'])
    """

    def __init__(self, kind: str, kind_type: type, default: str, *, plural: str | None = None) -> None:
        self.kind, self.kind_type, self.default = kind, kind_type, default
        self.plural = plural or f"{kind}s"
        self._items: dict[str, T] = {}

    def register(self, item: T) -> T:
        """Add ``item`` under its name.

        Raises:
            InvalidArgument: the name is taken.
        """
        if item.name in self._items:
            raise InvalidArgument(f"a {self.kind} named {item.name!r} is already registered")
        self._items[item.name] = item
        return item

    def get(self, name: str) -> T:
        """The item called ``name``.

        Raises:
            InvalidArgument: no such item; the message lists the known names.
        """
        if name not in self._items:
            raise InvalidArgument(f"unknown {self.kind} {name!r}; known {self.plural}: {', '.join(self._items)}")
        return self._items[name]

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._items)

    def resolve(self, item: T | str | None) -> T:
        """An item from a name, an item, or None (the default).

        Raises:
            InvalidArgument: an unknown name, or something that is neither a name nor an item.
        """
        if item is None:
            return self.get(self.default)
        if isinstance(item, self.kind_type):
            return item
        if isinstance(item, str):
            return self.get(item)
        raise InvalidArgument(f"{self.kind} must be a name or a {self.kind_type.__name__}, not {type(item).__name__}")
