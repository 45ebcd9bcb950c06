"""mem0's filter grammar over a memory's fields (memlab.integrations.mem0_filters): every operator of mem0's
"enhanced metadata filtering" page, the logical keys, and the refusals of what is not the grammar."""

from __future__ import annotations

import pytest

from memlab import InvalidArgument
from memlab.integrations.mem0_filters import OPERATORS, check, matches

FIELDS = {
    "user_id": "alice",
    "category": "work",
    "priority": 7,
    "score": 0.85,
    "archived": False,
    "title": "Weekly meeting notes",
    "tags": ["urgent", "Q3"],
    "created_date": "2024-03-01",
}

CASES = [
    ({"category": "work"}, True),
    ({"category": "home"}, False),
    ({"missing": "x"}, False),
    ({"category": "*"}, True),
    ({"missing": "*"}, False),  # pgvector's reading: the field must be there
    ({"category": {"eq": "work"}}, True),
    ({"category": {"ne": "work"}}, False),
    ({"missing": {"ne": "work"}}, True),
    ({"priority": {"gt": 6}}, True),
    ({"priority": {"gt": 7}}, False),
    ({"priority": {"gte": 7}}, True),
    ({"priority": {"lt": 8, "gte": 5}}, True),
    ({"score": {"lte": 0.85}}, True),
    ({"created_date": {"gte": "2024-01-01"}}, True),  # strings order as strings (ISO dates)
    ({"category": {"gt": 3}}, False),  # a string is not compared with a number
    ({"archived": {"eq": 0}}, False),  # JSON's equality: False is not 0
    ({"archived": False}, True),
    ({"category": {"in": ["food", "work"]}}, True),
    ({"category": {"nin": ["food", "work"]}}, False),
    ({"missing": {"nin": ["x"]}}, True),
    ({"title": {"contains": "meeting"}}, True),
    ({"title": {"contains": "Meeting"}}, False),
    ({"title": {"icontains": "MEETING"}}, True),
    ({"tags": {"contains": "urgent"}}, True),
    ({"tags": {"icontains": "q3"}}, True),
    ({"priority": {"contains": "7"}}, False),
    ({"tags": ["urgent", "Q3"]}, True),
    ({"AND": [{"category": "work"}, {"priority": {"gte": 7}}]}, True),
    ({"AND": [{"category": "work"}, {"priority": {"gte": 8}}]}, False),
    ({"OR": [{"category": "urgent"}, {"priority": {"gte": 7}}]}, True),
    ({"OR": [{"category": "urgent"}, {"priority": {"gte": 9}}]}, False),
    ({"NOT": [{"category": "archived"}, {"status": "deleted"}]}, True),
    ({"NOT": [{"category": "work"}]}, False),
    ({"NOT": [{"category": "work"}, {"status": "deleted"}]}, False),  # none of them may match, not "not all"
    (
        {"user_id": "alice", "AND": [{"OR": [{"category": "work"}, {"category": "x"}]}, {"NOT": [{"archived": 1}]}]},
        True,
    ),
    ({"AND": []}, True),
]


@pytest.mark.parametrize("where, expected", CASES, ids=[str(where) for where, _ in CASES])
def test_a_filter_selects_as_mem0s_page_says(where, expected):
    check(where)
    assert matches(FIELDS, where) is expected


REFUSED = [
    ("not a dict", "must be a dict"),
    ({"invalid_operator": {"unknown": "value"}}, "unsupported filter operator 'unknown'"),  # mem0's own example
    ({"category": {"like": "x"}}, "unsupported filter operator 'like'"),
    ({"category": {}}, "empty dict of operators"),
    ({"category": {"in": "work"}}, "in takes a list"),
    ({"category": {"nin": 3}}, "nin takes a list"),
    ({"priority": {"gt": [1]}}, "compares numbers or strings"),
    ({"priority": {"gte": True}}, "compares numbers or strings"),
    ({"priority": {"lt": float("nan")}}, "compares numbers or strings"),
    ({"title": {"icontains": 3}}, "icontains takes a string"),
    ({"OR": []}, "non-empty list"),
    ({"NOT": {"a": 1}}, "non-empty list"),
    ({"AND": [{"a": {"bad": 1}}]}, r"filters\.AND\[0\]\.a: unsupported"),
    ({1: "x"}, "field name must be a string"),
]


@pytest.mark.parametrize("where, message", REFUSED, ids=[str(where) for where, _ in REFUSED])
def test_what_is_not_mem0s_grammar_is_refused_as_a_value_error(where, message):
    with pytest.raises(InvalidArgument, match=message) as refused:
        check(where)
    assert isinstance(refused.value, ValueError)  # what mem0's callers catch


def test_every_documented_operator_is_known():
    assert OPERATORS == ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains", "icontains")
    for name in OPERATORS:
        check({"field": {name: ["x"] if name in ("in", "nin") else "x"}})
