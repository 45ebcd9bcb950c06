"""The attacks of the second wave's security review, each written as the attacker's move.

1. calls that escaped the audit (lone surrogates, internal errors); 3. content reaching the audit;
5. hooks applying to one door only, the taint snapshot, the existence oracle's audit; 6. look-alike names.
(2, the tamper-evident audit, is in ``test_verify.py``; 4, opening foreign files, in ``test_contract.py``.)
"""

from __future__ import annotations

import json

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings

from memlab import Denied, InvalidArgument, Level, MemoryStore, tools
from memlab.arguments import MAX_ARGUMENT_NAME_CHARS, MAX_KEY_CHARS, MAX_QUERY_CHARS
from tests.backends import open_store

SURROGATE = json.loads('"caf\\ud800"')  # what a host's json.loads of model output can produce

pytestmark = pytest.mark.contract


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("memory_save", {"key": "note", "content": SURROGATE}),
        ("memory_save", {"key": SURROGATE, "content": "x"}),
        ("memory_save", {"key": "note", "content": "x", "tags": [SURROGATE]}),
        ("memory_get", {"key": SURROGATE}),
        ("memory_search", {"query": SURROGATE}),
        ("memory_list", {"tag": SURROGATE}),
        ("memory_delete", {"key": SURROGATE}),
        (SURROGATE, {}),
        ("memory_get", {SURROGATE: "x", "key": "k"}),
    ],
)
def test_lone_surrogates_are_invalid_arguments_and_audited(store, tool, arguments):
    session = store.session()
    result = tools.call(session, tool, arguments)
    assert result["error"]["code"] == "invalid_argument"
    message = result["error"]["message"]
    assert "surrogate" in message or "takes no argument" in message or "unknown tool" in message
    json.dumps(result, ensure_ascii=False).encode("utf-8")  # the reply itself is valid text
    audit = store.audit()
    assert len(audit) == 1 and audit["outcome"].iloc[0] == "invalid_argument"


def test_an_internal_error_is_audited_with_its_class_only(store, monkeypatch):
    session = store.session()

    def broken(*args, **kwargs):
        raise ZeroDivisionError("secret detail from deep inside")

    monkeypatch.setattr(store.storage, "search", broken)
    result = tools.call(session, "memory_search", {"query": "anything"})
    assert result == {"error": {"code": "internal_error", "message": "memory_search failed: ZeroDivisionError"}}
    (row,) = store.audit().to_dict("records")
    assert row["outcome"] == "internal_error" and row["message"] == "ZeroDivisionError"
    assert "secret detail" not in json.dumps(row, default=str)


# -- 3. content reaching the audit --------------------------------------------------------------------


def test_a_stripped_argument_is_named_without_its_value(store):
    session = store.session()
    tools.call(session, "memory_save", {"key": "k", "content": "c", "label": "the launch code is 0000"})
    notes = store.audit()["notes"].iloc[0]
    assert notes and all("0000" not in note for note in notes) and "label" in notes[0]


def test_rejected_input_is_recorded_as_length_and_digest_never_in_full(store):
    session = store.session()
    huge_key, huge_query = "k" * (MAX_KEY_CHARS + 10_000), "q " * MAX_QUERY_CHARS
    assert tools.call(session, "memory_get", {"key": huge_key})["error"]["code"] == "invalid_argument"
    assert tools.call(session, "memory_search", {"query": huge_query})["error"]["code"] == "invalid_argument"
    for row in store.audit().to_dict("records"):
        assert len(json.dumps(row, default=str)) < 2_000
    keys = store.audit()["key"].tolist()
    assert keys[0].startswith(f"<{len(huge_key)} chars sha256:") and len(keys[0]) < 100


def test_an_unknown_argument_name_is_not_echoed_in_full(store):
    name = "x" * 20_000
    result = tools.call(store.session(), "memory_get", {"key": "k", name: 1})
    assert result["error"]["code"] == "invalid_argument"
    assert len(result["error"]["message"]) < MAX_ARGUMENT_NAME_CHARS + 300
    assert len(json.dumps(store.audit().to_dict("records"), default=str)) < 2_000


# -- 5. one call path ---------------------------------------------------------------------------------


def _no_passwords(call):
    if "password" in str(call.arguments.get("content", "")).lower():
        raise Denied("passwords are not remembered")
    return call


def test_hooks_apply_to_the_python_methods_too(store):
    store.hooks.append(_no_passwords)
    session = store.session()
    with pytest.raises(Denied):
        session.memory_save("wifi", "the password is hunter2")
    with pytest.raises(Denied):
        session.call("memory_save", {"key": "wifi", "content": "password: hunter2"})
    with pytest.raises(Denied):
        session.memory_save_many([{"key": "ok", "content": "fine"}, {"key": "wifi", "content": "password 1"}])
    assert store.versions().empty
    assert store.audit()["outcome"].tolist() == ["denied", "denied", "denied"]


def test_the_call_path_uses_one_taint_snapshot(store):
    """An escalation racing a save cannot make the audited taint and the saved level differ."""
    session = store.session(Level.PUBLIC)

    def escalate_midway(call):
        session.escalate(Level.CONFIDENTIAL, reason="another thread")  # a hook sees no session: it closes over one
        return call

    store.hooks.append(escalate_midway)
    memory = session.memory_save("k", "v")
    row = store.audit().iloc[-1]
    assert memory.classification.name == row["taint"] == "PUBLIC"


def test_the_existence_oracle_audits_what_the_caller_got(backend):
    with open_store(backend, policy="existence-oracle") as store:
        store.session(Level.CONFIDENTIAL).memory_save("salary", "90k")
        with pytest.raises(Denied):
            store.session(Level.PUBLIC).memory_get("salary")
        assert store.audit()["outcome"].tolist() == ["ok", "denied"]


# -- 6. look-alike names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["user\x85name", "user\u202ename", "user\u200bname", "\ufeffuser", "user\u2066name", "user\ufffename", "a\x1fb"],
)
def test_look_alike_keys_tags_and_agents_are_refused(store, name):
    session = store.session()
    with pytest.raises(InvalidArgument, match="key"):
        session.memory_save(name, "x")
    with pytest.raises(InvalidArgument, match="tag"):
        session.memory_save("k", "x", tags=[name])
    with pytest.raises(InvalidArgument, match="agent"):
        store.session(agent=name)


def test_names_are_nfc_normalised(store):
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    session = store.session()
    session.memory_save(decomposed, "coffee place")
    assert session.memory_get(composed).content == "coffee place"
    assert session.memory_list()[0].key == composed


# -- the property: every call audited, never an internal error ----------------------------------------

json_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=30)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | json_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(json_text, children, max_size=3),
    max_leaves=6,
)
tool_names = st.sampled_from(["memory_save", "memory_get", "memory_search", "memory_list", "memory_delete"]) | json_text
argument_names = (
    st.sampled_from(["key", "content", "tags", "query", "max_results", "tag", "classification"]) | json_text
)
words = st.sampled_from(["alice", "coffee", "user-name", "march"]) | json_text
plausible = st.one_of(  # well-formed calls whose text may still hold surrogates, controls or look-alikes
    st.tuples(
        st.just("memory_save"),
        st.fixed_dictionaries({"key": words, "content": words}, optional={"tags": st.lists(words, max_size=3)}),
    ),
    st.tuples(st.just("memory_get"), st.fixed_dictionaries({"key": words})),
    st.tuples(st.just("memory_search"), st.fixed_dictionaries({"query": words}, optional={"max_results": json_values})),
    st.tuples(st.just("memory_list"), st.fixed_dictionaries({}, optional={"tag": words})),
    st.tuples(st.just("memory_delete"), st.fixed_dictionaries({"key": words})),
)
calls = plausible | st.tuples(tool_names, st.dictionaries(argument_names, json_values, max_size=4) | json_values)


@settings(max_examples=300)
@given(st.lists(calls, min_size=1, max_size=12))
def test_every_call_is_audited_exactly_once_and_never_fails_inside(sequence):
    with MemoryStore() as store:
        session = store.session(Level.INTERNAL)
        for tool, arguments in sequence:
            result = tools.call(session, tool, arguments)
            assert result.get("error", {}).get("code") != "internal_error", result
        assert len(store.audit()) == len(sequence)
