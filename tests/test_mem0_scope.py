"""The scope and filters of a mem0 call (memlab.integrations.mem0_scope): mem0 1.x's and 2.x's spellings give the
same scope, a contradiction or a missing scope is refused, counts and configurations are checked."""

from __future__ import annotations

import pytest

from memlab import InvalidArgument
from memlab.integrations.mem0_scope import DEFAULT_TOP_K, config_of, count_of, scope_of, where_of

NO_IDS = {"user_id": None, "agent_id": None, "run_id": None}


def test_both_spellings_of_a_scope_are_one_scope():
    two = where_of({"user_id": "alice", "category": "work"}, **NO_IDS)
    one = where_of({"category": "work"}, **{**NO_IDS, "user_id": "alice"})
    assert two == one == ({"user_id": "alice"}, {"user_id": "alice", "category": "work"})
    assert where_of({"user_id": " alice "}, **NO_IDS)[0] == {"user_id": "alice"}
    assert where_of({"user_id": None, "agent_id": 7}, **NO_IDS)[0] == {"agent_id": "7"}


@pytest.mark.parametrize(
    "filters, ids, message",
    [
        (None, NO_IDS, "at least one of: user_id, agent_id, run_id"),
        ({"category": "work"}, NO_IDS, "at least one of"),
        ({"OR": [{"user_id": "a"}, {"user_id": "b"}]}, NO_IDS, "at least one of"),  # a scope is a top-level id
        ({"user_id": "bob"}, {**NO_IDS, "user_id": "alice"}, "contradicts"),
        ({"user_id": {"in": ["a", "b"]}}, NO_IDS, "must be an id"),
        ({"user_id": "a", "x": {"bad": 1}}, NO_IDS, "unsupported filter operator"),
    ],
)
def test_a_missing_or_contradicting_scope_is_refused(filters, ids, message):
    with pytest.raises(InvalidArgument, match=message):
        where_of(filters, **ids)


def test_scope_of_needs_one_id():
    assert scope_of(user_id=None, agent_id="bot", run_id=None) == {"agent_id": "bot"}
    with pytest.raises(InvalidArgument, match="At least one of 'user_id', 'agent_id', or 'run_id'"):
        scope_of(user_id=None, agent_id=None, run_id=None)


def test_a_count_is_top_k_or_limit():
    assert (count_of(None, None), count_of(3, None), count_of(None, 4), count_of(0, None)) == (DEFAULT_TOP_K, 3, 4, 0)
    for top_k, limit in ((1, 1), (-1, None), (True, None), (None, 2.5)):
        with pytest.raises(InvalidArgument):
            count_of(top_k, limit)


def test_a_configuration_holds_memlabs_keys_only():
    assert config_of({"taint": "INTERNAL"}) == {"taint": "INTERNAL"}
    with pytest.raises(InvalidArgument, match="unknown configuration embedder: .* takes store, taint"):
        config_of({"embedder": {"provider": "openai"}})
    with pytest.raises(InvalidArgument, match="must be a dict"):
        config_of(["taint"])
