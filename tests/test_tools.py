"""The LLM-facing layer: schemas, result shapes, identical answers for hidden and missing keys, hooks."""

import json

import pytest

from memlab import Denied, Level, tools
from memlab.policy import LEVEL_LIKE_ARGUMENTS, ToolCall, strip_level_arguments

pytestmark = pytest.mark.contract

TOOL_NAMES = ["memory_save", "memory_get", "memory_search", "memory_list", "memory_delete"]


def test_schemas_describe_the_five_tools_without_any_level_parameter():
    assert [schema["name"] for schema in tools.SCHEMAS] == TOOL_NAMES
    for schema in tools.SCHEMAS:
        properties = schema["parameters"]["properties"]
        assert not {name.lower() for name in properties} & LEVEL_LIKE_ARGUMENTS
        assert schema["parameters"]["additionalProperties"] is False
    search = tools.SCHEMAS[2]["parameters"]["properties"]["max_results"]
    assert (search["default"], search["minimum"]) == (10, 1)
    json.dumps(tools.SCHEMAS)  # plain JSON data


def test_result_shapes(store):
    session = store.session(Level.INTERNAL)
    saved = tools.call(session, "memory_save", {"key": "user-name", "content": "Alice", "tags": ["personal"]})
    assert saved == {
        "saved": True,
        "key": "user-name",
        "classification": "INTERNAL",
        "integrity": "trusted",
        "version": 1,
    }
    got = tools.call(session, "memory_get", {"key": "user-name"})
    assert got.pop("saved_at")
    assert got == {
        "found": True,
        "key": "user-name",
        "content": "Alice",
        "tags": ["personal"],
        "classification": "INTERNAL",
        "integrity": "trusted",
    }
    assert tools.call(session, "memory_get", {"key": "nope"}) == {"found": False, "key": "nope"}
    found = tools.call(session, "memory_search", {"query": "alice"})
    assert found["query"] == "alice"
    (hit,) = found["results"]
    assert set(hit) == {"key", "content", "tags", "classification", "integrity", "score", "snippet"}
    assert hit["snippet"] == "**Alice**" and hit["score"] > 0
    listed = tools.call(session, "memory_list", {})
    assert [m["key"] for m in listed["memories"]] == ["user-name"]
    assert tools.call(session, "memory_list", {"tag": "none-such"}) == {"memories": []}
    assert tools.call(session, "memory_delete", {"key": "user-name"}) == {
        "deleted": True,
        "key": "user-name",
        "classification": "INTERNAL",
        "integrity": "trusted",
    }
    failed = tools.call(session, "memory_delete", {"key": "user-name"})
    assert failed == {
        "error": {"code": "not_found", "message": "no memory with key 'user-name' at this session's level"}
    }
    for result in (saved, got, found, listed, failed):
        json.dumps(result)


@pytest.mark.parametrize(
    "tool, arguments",
    [
        ("memory_get", {"key": "{key}"}),
        ("memory_delete", {"key": "{key}"}),
        ("memory_save", {"key": "{key}", "content": "low note"}),
        ("memory_search", {"query": "{key} payroll"}),
        ("memory_list", {"tag": "{key}"}),
    ],
)
def test_a_hidden_key_and_a_missing_key_get_the_same_answer(store, tool, arguments):
    store.session(Level.CONFIDENTIAL).memory_save("salary", "payroll figures", tags=["salary"])
    public = store.session(Level.PUBLIC)

    def answer(key):
        filled = {name: value.replace("{key}", key) for name, value in arguments.items()}
        return json.dumps(tools.call(public, tool, filled)).replace(key, "KEY")

    assert answer("salary") == answer("bonus")


@pytest.mark.parametrize("name", ["classification", "Classification", "level", "security_level", "taint", "clearance"])
def test_level_like_arguments_are_stripped_and_audited(store, name):
    session = store.session(Level.CONFIDENTIAL)
    result = tools.call(session, "memory_save", {"key": "k", "content": "c", name: "PUBLIC"})
    assert result["classification"] == "CONFIDENTIAL"
    assert store.session(Level.PUBLIC).memory_get("k") is None
    event = store.audit().iloc[0]
    assert event["outcome"] == "ok"
    assert event["notes"] == [f"stripped argument {name!r}: the classification is always the session's taint"]


def test_a_read_with_a_level_argument_is_stripped_too(store):
    store.session(Level.CONFIDENTIAL).memory_save("k", "secret")
    result = tools.call(store.session(Level.PUBLIC), "memory_get", {"key": "k", "level": "CONFIDENTIAL"})
    assert result == {"found": False, "key": "k"}


def test_hooks_are_plain_functions_a_notebook_can_add(store):
    def no_passwords(call: ToolCall) -> ToolCall:
        if "password" in str(call.arguments.get("content", "")).lower():
            raise Denied("passwords are not remembered")
        return call

    def lower_case_keys(call: ToolCall) -> ToolCall:
        if "key" in call.arguments:
            call.arguments["key"] = call.arguments["key"].lower()
            call.notes.append("key lower-cased")
        return call

    store.hooks.extend([no_passwords, lower_case_keys])
    session = store.session()
    refused = tools.call(session, "memory_save", {"key": "K", "content": "my Password is hunter2"})
    assert refused == {"error": {"code": "denied", "message": "passwords are not remembered"}}
    assert tools.call(session, "memory_save", {"key": "User-Name", "content": "Sam"})["key"] == "user-name"
    assert tools.call(session, "memory_get", {"key": "USER-NAME"}) == tools.call(
        session, "memory_get", {"key": "user-name"}
    )
    assert tools.call(session, "memory_get", {"key": "Nobody"}) == {"found": False, "key": "nobody"}
    audit = store.audit()
    assert audit["outcome"].tolist() == ["denied", "ok", "ok", "ok", "not_found"]
    assert audit["notes"].tolist() == [[]] + [["key lower-cased"]] * 4
    assert strip_level_arguments in store.hooks


def test_unexpected_failures_become_error_results(store, monkeypatch):
    session = store.session()

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(store.storage, "effective", broken)
    result = tools.call(session, "memory_get", {"key": "k"})
    assert result == {"error": {"code": "internal_error", "message": "memory_get failed: RuntimeError"}}
