"""memlab.integrations.langgraph_filter: a LangGraph search filter checked, then matched against item values —
infinite bounds as LangGraph's SqliteStore compares them, dotted paths into nested values as SqliteStore resolves
them (a value's own dotted field first, as InMemoryStore and PostgresStore read it)."""

from __future__ import annotations

import pytest

from memlab import InvalidArgument, MemoryStore
from memlab.integrations.langgraph import MemlabStore
from memlab.integrations.langgraph_filter import OPERATORS, check_filter, field, passes

PRICES = [{"price": price} for price in (-10, 0, 10, 2.5, 10**100, 10**400)]


@pytest.mark.parametrize(
    "where, matched",
    [
        ({"price": {"$lt": float("inf")}}, 6),
        ({"price": {"$lte": float("inf")}}, 6),
        ({"price": {"$gt": float("-inf")}}, 6),
        ({"price": {"$gte": float("-inf")}}, 6),
        ({"price": {"$gt": float("inf")}}, 0),
        ({"price": {"$lt": float("-inf")}}, 0),
        ({"price": {"$lt": 10**100}}, 4),
        ({"price": {"$gt": 10**100}}, 1),
        ({"price": {"$gt": float("nan")}}, 0),
        ({"price": {"$eq": float("nan")}}, 0),
        ({"price": {"$gt": float("-inf"), "$lt": 0}}, 1),
    ],
)
def test_infinite_and_huge_bounds_compare_every_number_as_sqlitestore_does(where, matched):
    # Guards: check_filter refusing a non-finite operand (LangGraph's own store tests bound prices by ±inf), and the
    # ordering done in floats (10**400 has no float: OverflowError).
    check_filter(where)
    assert sum(passes(value, where) for value in PRICES) == matched


@pytest.mark.parametrize("operand", ["3", None, True, [1], {"a": 1}])
@pytest.mark.parametrize("operator", ["$gt", "$gte", "$lt", "$lte"])
def test_an_ordering_compares_numbers_only(operator, operand):
    with pytest.raises(InvalidArgument, match=f"filter.price: \\{operator} compares numbers"):
        check_filter({"price": {operator: operand}})


@pytest.mark.parametrize("value", ["3", True, None, [3]])
def test_an_ordering_never_holds_for_a_value_that_is_not_a_number(value):
    assert not passes({"price": value}, {"price": {"$lt": float("inf")}})


VALUE = {
    "access-level": "public",
    "user": {"access-level": "nested", "123abc": "ok2", "profile": {"tier": 3}},
    "a.b": "literal",
    "a": {"b": "nested"},
    "x": {"y.z": "dotted inside"},
}


@pytest.mark.parametrize(
    "where, holds",
    [
        ({"access-level": "public"}, True),
        ({"user.access-level": "nested"}, True),
        ({"user.access-level": "public"}, False),
        ({"user.123abc": "ok2"}, True),
        ({"user.profile.tier": {"$gte": 3}}, True),
        ({"user.profile.tier": {"$gt": 3}}, False),
        ({"user.missing": None}, True),
        ({"user.access-level.deeper": None}, True),
        ({"a.b": "literal"}, True),  # the value's own field of that name first, as InMemoryStore reads it
        ({"x.y.z": "dotted inside"}, True),
        ({"user": {"profile.tier": 3}}, True),  # a path inside a nested filter too
        ({"user.access-level": "nested", "access-level": "public"}, True),
    ],
)
def test_a_dotted_field_name_is_a_path_into_nested_values(where, holds):
    # Guards: passes() reading value.get(name) only (LangGraph's SqliteStore resolves "user.access-level" as
    # $.user.access-level; a graph written for it would find nothing).
    assert passes(VALUE, where) is holds


def test_a_field_is_none_when_the_value_has_no_such_field_or_path():
    assert field(VALUE, "nope") is None and field(VALUE, "user.nope.deeper") is None and field({}, "a.b") is None


@pytest.mark.parametrize(
    "where, message",
    [
        ({"n": {"$in": [1, 2]}}, "filter.n uses unknown operator '\\$in'"),
        ({"meta": {"kind": {"$regex": "n.*"}}}, "filter.meta.kind uses unknown operator"),
        (["n", 3], "must be a dict"),
    ],
)
def test_a_filter_memlab_cannot_read_is_refused_naming_the_field(where, message):
    with pytest.raises(InvalidArgument, match=message):
        check_filter(where)


def test_the_operators_are_langgraphs():
    assert OPERATORS == ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def test_a_filter_field_name_is_data_so_one_carrying_sql_widens_nothing_and_any_json_name_matches():
    # Guards: a field the value lacks matching nothing but None (were it skipped, the crafted name below would match
    # the private item), and no refusal of field names LangGraph's SqliteStore cannot build into its SQL: memlab
    # matches filters in Python, never in SQL, as InMemoryStore does and PostgresStore binds them.
    graph_store = MemlabStore(MemoryStore(), taint="PUBLIC")
    graph_store.put(("docs",), "public", {"access": "public", "data": "public info"})
    graph_store.put(("docs",), "private", {"access": "private", "data": "secret", "password": "123"})
    graph_store.put(("docs",), "quoted", {"O'Brien's field": "x; DROP TABLE memories --", "first name": "Ann"})
    crafted = "access') = 'public' OR '1'='1' OR json_extract(value, '$."
    assert graph_store.search(("docs",), filter={crafted: "dummy"}) == []
    assert [item.key for item in graph_store.search(("docs",), filter={"access": "public' OR '1'='1"})] == []
    wanted = {"O'Brien's field": "x; DROP TABLE memories --", "first name": "Ann"}
    assert [item.key for item in graph_store.search(("docs",), filter=wanted)] == ["quoted"]
    assert sorted(item.key for item in graph_store.search(("docs",))) == ["private", "public", "quoted"]
