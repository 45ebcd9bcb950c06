"""The classification lattice: ``PUBLIC < INTERNAL < CONFIDENTIAL < RESTRICTED``."""

from __future__ import annotations

import enum

from memlab.errors import InvalidArgument

__all__ = ["Level", "can_flow_to"]


class Level(enum.IntEnum):
    """A classification level; the integer order is the flow order."""

    PUBLIC = 0
    INTERNAL = 1
    CONFIDENTIAL = 2
    RESTRICTED = 3

    @classmethod
    def parse(cls, value: Level | str) -> Level:
        """Return the level named by ``value``, in any letter case.

        Args:
            value: a ``Level`` or its name (``"confidential"``, ``"Public"``).
        Returns:
            The ``Level``.
        Raises:
            InvalidArgument: ``value`` names no level.

        Examples:
            >>> Level.parse("confidential")
            <Level.CONFIDENTIAL: 2>
        """
        if isinstance(value, Level):
            return value
        if isinstance(value, str) and value.strip().upper() in cls.__members__:
            return cls[value.strip().upper()]
        known = ", ".join(cls.__members__)
        raise InvalidArgument(f"unknown level {value!r}; expected one of {known}")

    def __str__(self) -> str:
        return self.name


def can_flow_to(source: Level, target: Level) -> bool:
    """True when data classified ``source`` may be read at taint ``target``.

    Examples:
        >>> can_flow_to(Level.PUBLIC, Level.CONFIDENTIAL), can_flow_to(Level.RESTRICTED, Level.INTERNAL)
        (True, False)
    """
    return source <= target
