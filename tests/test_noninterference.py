"""Noninterference: what a session at taint <= L observes depends only on operations at levels <= L.

Two stores get the same operations from "low" sessions (taint <= L, agent ``main``); one of them also gets
operations from "high" sessions (taint > L, same agent) and from another agent at any level. Every
observation of the low sessions — results, order, scores, snippets, versions, errors — must be identical.
"""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from memlab import Level, MemlabError, tools
from tests.backends import HOSTILE_AGENTS, open_store
from tests.conftest import fixed_clock

WORDS = ["alice", "bob", "runs", "running", "deadline", "march", "python", "coffee", "salary", "review", "team"]
KEYS = ["user-name", "deadline", "salary", "notes", "plan"]
READS = {"memory_get", "memory_list", "memory_search"}


def operation(actor: str, escalations: list[Level]):
    text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join)
    return st.one_of(
        st.tuples(st.just(actor), st.just("escalate"), st.sampled_from(escalations)),
        st.tuples(
            st.just(actor),
            st.just("memory_save"),
            st.fixed_dictionaries(
                {
                    "key": st.sampled_from(KEYS),
                    "content": text,
                    "tags": st.lists(st.sampled_from(["work", "hr"]), max_size=2),
                }
            ),
        ),
        st.tuples(st.just(actor), st.just("memory_get"), st.fixed_dictionaries({"key": st.sampled_from(KEYS)})),
        st.tuples(st.just(actor), st.just("memory_delete"), st.fixed_dictionaries({"key": st.sampled_from(KEYS)})),
        st.tuples(
            st.just(actor),
            st.just("memory_list"),
            st.fixed_dictionaries({"tag": st.sampled_from([None, "work", "hr"])}),
        ),
        st.tuples(
            st.just(actor),
            st.just("memory_search"),
            st.fixed_dictionaries({"query": text, "max_results": st.integers(1, 5)}),
        ),
    )


@st.composite
def scenario(draw):
    bound = draw(st.sampled_from([Level.PUBLIC, Level.INTERNAL, Level.CONFIDENTIAL]))
    low = {
        "low-a": draw(st.sampled_from([lv for lv in Level if lv <= bound])),
        "low-b": draw(st.sampled_from([lv for lv in Level if lv <= bound])),
    }
    high = {
        "high": ("main", draw(st.sampled_from([lv for lv in Level if lv > bound]))),
        "other-agent": (draw(st.sampled_from(HOSTILE_AGENTS[1:])), draw(st.sampled_from(list(Level)))),
    }
    # Low sessions may escalate but stay <= L; the high ones stay above L.
    escalations = {name: [lv for lv in Level if lv <= bound] for name in low}
    escalations |= {"high": [lv for lv in Level if lv > bound], "other-agent": list(Level)}
    actors = st.sampled_from([*low, *high])
    ops = draw(st.lists(actors.flatmap(lambda actor: operation(actor, escalations[actor])), min_size=1, max_size=30))
    return bound, low, high, ops


def run(low, high, ops, *, with_high: bool, backend: str = "memory") -> list[object]:
    with open_store(backend, clock=fixed_clock) as store:
        return _observe(store, low, high, ops, with_high=with_high)


def _observe(store, low, high, ops, *, with_high: bool) -> list[object]:
    sessions = {name: store.session(level, "main", session_id=name) for name, level in low.items()}
    if with_high:
        sessions |= {name: store.session(level, agent, session_id=name) for name, (agent, level) in high.items()}
    seen = []
    for actor, tool, arguments in ops:
        if actor not in low and not with_high:
            continue
        session = sessions[actor]
        try:
            if tool == "escalate":
                result = session.escalate(arguments)
            else:
                result = session._invoke(tool, arguments)
        except MemlabError as error:
            result = (type(error).__name__, str(error))
        if actor in low:
            # Reads again through the LLM-facing layer: its JSON must not differ either.
            shown = tools.call(session, tool, arguments) if tool in READS else None
            seen.append((actor, tool, result, shown))
    return seen


@settings(max_examples=1000)
@given(scenario())
def test_low_sessions_cannot_observe_high_operations(case):
    bound, low, high, ops = case
    assert run(low, high, ops, with_high=False) == run(low, high, ops, with_high=True)


@pytest.mark.parametrize("backend", ["file", "folder"])
@settings(max_examples=100)
@given(case=scenario())
def test_low_sessions_cannot_observe_high_operations_on_disk(backend, case):
    bound, low, high, ops = case
    assert run(low, high, ops, with_high=False, backend=backend) == run(low, high, ops, with_high=True, backend=backend)
