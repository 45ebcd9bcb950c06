"""LangGraph's ``search(filter=...)`` over item values (``MemlabStore``): checked before a batch runs, then matched
item by item.

A filter is a dict of fields. A field's wanted value is equal field by field (a nested dict field by field, a list
element by element, as LangGraph's ``InMemoryStore`` compares), or a dict of the operators LangGraph documents,
``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt`` and ``$lte``. An ordering compares numbers, infinities included
(``{"price": {"$lt": float("inf")}}`` holds for every number, as in LangGraph's ``SqliteStore``); it never holds
for a value that is not a number, and an operand of NaN holds for none.

A field's name may be a dotted path, ``"user.access-level"``: it names the value's own field of that name when the
value has one (what ``InMemoryStore`` and ``PostgresStore`` read), else the path into nested objects (what
``SqliteStore`` reads, ``$.user.access-level``). A field a value does not have reads as ``None``.

Examples:
    >>> passes({"user": {"access-level": "admin"}, "price": 3}, {"user.access-level": "admin"})
    True
    >>> passes({"price": 3}, {"price": {"$lt": float("inf")}})
    True
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from memlab import InvalidArgument

__all__ = ["OPERATORS", "check_filter", "passes", "field"]

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
"""The comparison operators a ``search`` filter may use, as LangGraph documents them."""
_ORDERING: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def check_filter(where: Any, path: str = "filter") -> None:
    """Refuse a filter that is not a dict of fields, an operator LangGraph does not document, or an ordering
    whose operand is not a number.

    Raises:
        InvalidArgument: naming the field, e.g. ``filter.meta.kind uses unknown operator '$regex'``.

    Examples:
        >>> check_filter({"n": {"$in": [1]}})
        Traceback (most recent call last):
            ...
        memlab.errors.InvalidArgument: filter.n uses unknown operator '$in'; known: $eq, $ne, $gt, $gte, $lt, $lte
    """
    if not isinstance(where, Mapping):
        raise InvalidArgument(f"{path} must be a dict of field values, not {type(where).__name__}")
    for name, wanted in where.items():
        if _is_operators(wanted):
            for operator_name, operand in wanted.items():
                if operator_name not in OPERATORS:
                    known = ", ".join(OPERATORS)
                    raise InvalidArgument(f"{path}.{name} uses unknown operator {operator_name!r}; known: {known}")
                if operator_name in _ORDERING and not _is_number(operand):
                    raise InvalidArgument(f"{path}.{name}: {operator_name} compares numbers, not {operand!r}")
        elif isinstance(wanted, Mapping):
            check_filter(wanted, f"{path}.{name}")


def passes(value: Any, where: Mapping[str, Any]) -> bool:
    """Whether an item's value matches a checked filter (``check_filter``).

    Examples:
        >>> passes({"n": 2, "meta": {"kind": "note"}}, {"meta": {"kind": "note"}, "n": {"$gte": 2}})
        True
    """
    if not isinstance(value, Mapping):
        return False
    return all(_compare(field(value, name), wanted) for name, wanted in where.items())


def field(value: Mapping[str, Any], name: str) -> Any:
    """The field ``name`` of ``value``: its own field of that name, else a dotted path into nested objects (each
    way of splitting the name at a period, shortest first); ``None`` when there is none.

    Examples:
        >>> field({"user": {"access-level": "admin"}}, "user.access-level"), field({"a.b": 1}, "a.b")
        ('admin', 1)
    """
    if name in value or not isinstance(name, str):
        return value.get(name)
    for at, char in enumerate(name):
        if char == ".":
            inner = value.get(name[:at])
            if isinstance(inner, Mapping):
                found = field(inner, name[at + 1 :])
                if found is not None:
                    return found
    return None


def _is_operators(wanted: Any) -> bool:
    return isinstance(wanted, Mapping) and any(str(name).startswith("$") for name in wanted)


def _compare(value: Any, wanted: Any) -> bool:
    if _is_operators(wanted):
        return all(_apply(value, operator_name, operand) for operator_name, operand in wanted.items())
    if isinstance(wanted, Mapping):
        return passes(value, wanted)
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(wanted)
            and all(_compare(one, other) for one, other in zip(value, wanted, strict=True))
        )
    return value == wanted


def _apply(value: Any, operator_name: str, operand: Any) -> bool:
    if operator_name == "$eq":
        return value == operand
    if operator_name == "$ne":
        return value != operand
    # Python compares an int with a float exactly, infinities included; NaN is unordered, so it holds for none.
    return _is_number(value) and _ORDERING[operator_name](value, operand)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
