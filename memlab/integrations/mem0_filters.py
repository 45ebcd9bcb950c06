"""mem0's search filters, checked and applied to the fields of a memlab memory (``memlab.integrations.mem0``).

A filter is a dict, as mem0's "enhanced metadata filtering" documents it: sibling keys are ANDed; a key's
condition is a plain value (equality), ``"*"`` (the field is present), or a dict of operators ``eq``, ``ne``,
``gt``, ``gte``, ``lt``, ``lte``, ``in``, ``nin``, ``contains``, ``icontains``; ``AND``, ``OR`` and ``NOT`` take a
list of filters (``NOT`` matches when none of them does). A field is a memory's metadata key or one of the
fields mem0 promotes (``user_id``, ``agent_id``, ``run_id``, ``actor_id``, ``role``, ``created_at``,
``updated_at``, ``expiration_date``).

Where mem0's vector stores differ, one rule is chosen and kept: ``"*"`` requires the field (pgvector's reading);
``ne`` and ``nin`` match a memory without the field; ``gt``/``gte``/``lt``/``lte`` compare two numbers or two
strings and never match anything else; equality is JSON's (``True`` is not ``1``); ``contains`` is a substring of
a string or a member of a list. A filter that names an unknown operator, or gives ``in`` something other than a
list, is refused before anything is read (``InvalidArgument``, a ``ValueError`` as mem0 raises).

Examples:
    >>> check({"user_id": "alice", "priority": {"gte": 5}, "NOT": [{"status": "archived"}]})
    >>> matches({"user_id": "alice", "priority": 7, "status": "active"}, {"priority": {"gte": 5}})
    True
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from typing import Any

from memlab.errors import InvalidArgument

__all__ = ["ENTITY_IDS", "OPERATORS", "LOGICAL", "WILDCARD", "check", "matches"]

ENTITY_IDS = ("user_id", "agent_id", "run_id")
"""The ids that scope a memory, as mem0 names them; a search or listing names at least one."""
OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains")
"""The comparison operators a condition may use, as mem0 documents them."""
LOGICAL = ("AND", "OR", "NOT")
"""The keys that combine filters."""
WILDCARD = "*"
"""A condition that matches any value of a field that is present."""

_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
}


def check(where: Any, path: str = "filters") -> None:
    """Refuse a filter that is not mem0's grammar: not a dict, an unknown operator, a logical key without a list
    of filters, ``in``/``nin`` without a list, an ordering of something neither a number nor a string.

    Raises:
        InvalidArgument: naming the place in the filter (``filters.AND[1].priority``) and what is wrong.

    Examples:
        >>> check({"category": {"like": "x"}})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        memlab.errors.InvalidArgument: filters.category: unsupported filter operator 'like'; known: eq, ne, ...
    """
    if not isinstance(where, Mapping):
        raise InvalidArgument(f"{path} must be a dict of conditions, not {type(where).__name__}")
    for field, condition in where.items():
        if not isinstance(field, str):
            raise InvalidArgument(f"{path}: a field name must be a string, not {field!r}")
        place = f"{path}.{field}"
        if field in LOGICAL:
            if not isinstance(condition, list | tuple) or (field != "AND" and not condition):
                raise InvalidArgument(f"{place} takes a {'non-empty ' if field != 'AND' else ''}list of filters")
            for number, inner in enumerate(condition):
                check(inner, f"{place}[{number}]")
        elif isinstance(condition, Mapping):
            if not condition:
                raise InvalidArgument(f"{place}: an empty dict of operators matches nothing; name an operator")
            for name, operand in condition.items():
                _check_operator(place, name, operand)


def _check_operator(place: str, name: Any, operand: Any) -> None:
    if name not in OPERATORS:
        raise InvalidArgument(f"{place}: unsupported filter operator {name!r}; known: {', '.join(OPERATORS)}")
    if name in ("in", "nin") and not isinstance(operand, list | tuple):
        raise InvalidArgument(f"{place}: {name} takes a list of values, not {type(operand).__name__}")
    if name in _ORDER and not (_is_number(operand) or isinstance(operand, str)):
        raise InvalidArgument(f"{place}: {name} compares numbers or strings, not {operand!r}")
    if name == "icontains" and not isinstance(operand, str):
        raise InvalidArgument(f"{place}: icontains takes a string, not {type(operand).__name__}")


def matches(fields: Mapping[str, Any], where: Mapping[str, Any]) -> bool:
    """Whether a memory's ``fields`` satisfy a filter ``check`` accepted (every sibling condition).

    Examples:
        >>> matches({"category": "work"}, {"OR": [{"category": "urgent"}, {"category": {"in": ["work"]}}]})
        True
        >>> matches({"category": "work"}, {"NOT": [{"category": "work"}]})
        False
    """
    for field, condition in where.items():
        if field == "AND":
            passed = all(matches(fields, inner) for inner in condition)
        elif field == "OR":
            passed = any(matches(fields, inner) for inner in condition)
        elif field == "NOT":
            passed = not any(matches(fields, inner) for inner in condition)
        else:
            passed = _holds(field in fields, fields.get(field), condition)
        if not passed:
            return False
    return True


def _holds(present: bool, value: Any, condition: Any) -> bool:
    if isinstance(condition, Mapping):
        return all(_apply(present, value, name, operand) for name, operand in condition.items())
    if isinstance(condition, str) and condition == WILDCARD:
        return present
    return present and _equal(value, condition)


def _apply(present: bool, value: Any, name: str, operand: Any) -> bool:
    if name == "eq":
        return present and _equal(value, operand)
    if name == "ne":
        return not (present and _equal(value, operand))
    if name == "in":
        return present and any(_equal(value, one) for one in operand)
    if name == "nin":
        return not (present and any(_equal(value, one) for one in operand))
    if name in _ORDER:
        return present and _comparable(value, operand) and _ORDER[name](value, operand)
    return present and _contains(value, operand, fold=name == "icontains")


def _comparable(value: Any, operand: Any) -> bool:
    """Two numbers, or two strings: what an ordering compares."""
    return (_is_number(value) and _is_number(operand)) or (isinstance(value, str) and isinstance(operand, str))


def _contains(value: Any, operand: Any, *, fold: bool) -> bool:
    if isinstance(value, str) and isinstance(operand, str):
        return operand.casefold() in value.casefold() if fold else operand in value
    if isinstance(value, list):
        if fold:
            return any(isinstance(one, str) and one.casefold() == operand.casefold() for one in value)
        return any(_equal(one, operand) for one in value)
    return False


def _equal(value: Any, wanted: Any) -> bool:
    """JSON's equality: a boolean equals only a boolean (Python's ``True == 1`` is not a metadata match)."""
    if isinstance(value, bool) or isinstance(wanted, bool):
        return type(value) is type(wanted) and value == wanted
    if isinstance(value, list) and isinstance(wanted, list | tuple):
        return len(value) == len(wanted) and all(_equal(a, b) for a, b in zip(value, wanted, strict=True))
    return value == wanted


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
