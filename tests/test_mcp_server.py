"""memlab.mcp_server: the server's handlers called in process — tools listed from the table with their hints, a
call through the tool layer, the host's escalation and lowering — and tool results. Over stdio with the SDK's own
client, in real subprocesses, is tests/test_mcp.py's (and tests/test_mcp_integrity.py's)."""

from __future__ import annotations

import json
import random

import anyio
import jsonschema
import pytest
from mcp import types
from mcp.shared.exceptions import MCPError

from memlab import MemoryStore, tooldefs, tools
from memlab.check import scenarios
from memlab.labels import Integrity, Label
from memlab.mcp_server import (
    ESCALATE_METHOD,
    LOWER_INTEGRITY_METHOD,
    EscalateParams,
    LowerIntegrityParams,
    annotations,
    build,
    tool_result,
)


def handle(server, method: str, params):
    """The server's handler of ``method`` run on ``params`` (memlab's handlers read nothing of the context)."""
    return anyio.run(server.get_request_handler(method).handler, None, params)


def test_tool_results_keep_memlab_data_and_mark_errors():
    ok = tool_result({"found": False, "key": "k"})
    assert (ok.is_error, ok.structured_content, json.loads(ok.content[0].text)) == (
        False,
        {"found": False, "key": "k"},
        {"found": False, "key": "k"},
    )
    failed = tool_result({"error": {"code": "denied", "message": "passwords are not remembered"}})
    assert failed.is_error and failed.content[0].text == "denied: passwords are not remembered"


@pytest.mark.parametrize(
    ("tool", "read_only", "destructive"),
    [
        ("memory_get", True, None),
        ("memory_search", True, None),
        ("memory_save", False, False),
        ("memory_delete", False, True),
    ],
)
def test_annotations_come_from_the_table(tool, read_only, destructive):
    hints = annotations(tooldefs.get(tool))
    assert (hints.read_only_hint, hints.destructive_hint, hints.open_world_hint) == (read_only, destructive, False)


def test_the_tools_are_listed_with_memlabs_own_schemas_and_the_spine():
    server = build(MemoryStore().session())
    listed = handle(server, "tools/list", None).tools
    assert [tool.name for tool in listed] == list(tools.TOOL_NAMES)
    assert [tool.input_schema for tool in listed] == [schema["parameters"] for schema in tools.SCHEMAS]
    assert server.instructions == tools.spine()


def test_a_call_goes_through_the_tool_layer_with_its_hooks():
    # Guards: mcp_server's call_tool bypassing tools.call (a classification argument then reaching the session).
    store = MemoryStore()
    session = store.session("INTERNAL")
    server = build(session)
    arguments = {"key": "k", "content": "v", "classification": "PUBLIC"}
    result = handle(server, "tools/call", types.CallToolRequestParams(name="memory_save", arguments=arguments))
    assert not result.is_error and result.structured_content["classification"] == "INTERNAL"
    assert store.audit()["notes"].iloc[-1][0].startswith("stripped argument 'classification'")
    missing = handle(server, "tools/call", types.CallToolRequestParams(name="memory_delete", arguments={"key": "x"}))
    assert missing.is_error and missing.content[0].text.startswith("not_found: ")


def test_the_host_escalates_and_a_step_down_is_refused():
    store = MemoryStore()
    session = store.session("INTERNAL")
    server = build(session)
    raised = handle(server, ESCALATE_METHOD, EscalateParams(level="confidential", reason="payroll.xlsx"))
    assert raised.taint == "CONFIDENTIAL" and session.taint == Label.parse("CONFIDENTIAL")
    assert store.taint_events()["reason"].tolist() == ["payroll.xlsx"]
    with pytest.raises(MCPError) as refused:
        handle(server, ESCALATE_METHOD, EscalateParams(level="PUBLIC"))
    assert refused.value.error.code == types.INVALID_PARAMS and session.taint == Label.parse("CONFIDENTIAL")


def test_the_host_lowers_the_integrity_and_a_params_object_that_would_raise_it_is_refused():
    # Guards: the handler passing extra fields through unread (a {"source": ..., "integrity": "trusted"} then
    # lowers as if the field meant nothing, instead of being refused whole).
    store = MemoryStore()
    session = store.session("INTERNAL")
    server = build(session)
    raw = {"source": "https://example.com/page", "integrity": "trusted"}
    with pytest.raises(MCPError, match="takes no parameter 'integrity'") as refused:
        handle(server, LOWER_INTEGRITY_METHOD, LowerIntegrityParams.model_validate(raw))
    assert refused.value.error.code == types.INVALID_PARAMS and session.integrity is Integrity.TRUSTED
    lowered = handle(server, LOWER_INTEGRITY_METHOD, LowerIntegrityParams(source="https://example.com/page"))
    assert (lowered.integrity, lowered.taint) == ("untrusted", "INTERNAL@untrusted")
    assert session.distrust == ("https://example.com/page",)
    assert store.taint_events()["to_level"].tolist() == ["INTERNAL@untrusted"]


@pytest.mark.parametrize("extra", [{"integrity": "trusted"}, {"floor": "untrusted"}])
def test_an_escalation_that_also_asks_for_trust_is_refused_whole(extra):
    # Guards: escalate_taint without _refuse_extra (the field then ignored and the taint raised as if obeyed).
    store = MemoryStore()
    session = store.session("INTERNAL")
    session.lower_integrity(source="https://example.com/page")
    with pytest.raises(MCPError, match=f"memlab/escalate takes no parameter '{next(iter(extra))}'"):
        handle(build(session), ESCALATE_METHOD, EscalateParams.model_validate({"level": "CONFIDENTIAL", **extra}))
    assert session.taint == Label.parse("INTERNAL@untrusted") and len(store.taint_events()) == 1


# -- every tool's results against the outputSchema it is listed with ----------------------------------------------


def listed_tools(server) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in handle(server, "tools/list", None).tools}


def conforms(tool: types.Tool, result: types.CallToolResult) -> None:
    """``result``'s structured content validates against ``tool``'s outputSchema (the MCP spec's MUST)."""
    jsonschema.Draft202012Validator(tool.output_schema).validate(result.structured_content)


def test_every_tool_has_a_title_and_an_output_schema_that_is_a_json_schema_object():
    # Guards: list_tools without title or output_schema (a host then shows the bare name and cannot validate).
    for tool in listed_tools(build(MemoryStore().session())).values():
        assert tool.title and tool.title != tool.name
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert tool.output_schema["type"] == "object"  # MCP: the root of an outputSchema is an object


# Each tool's calls: what succeeds, what finds nothing, and what is refused, on a store with memories at several
# labels and integrities (a compartment, an untrusted save with its source and time).
CALLS = [
    ("memory_save", {"key": "plan", "content": "beta in March", "tags": ["project"]}, False),
    ("memory_save", {"key": "plan"}, True),
    ("memory_save", {"key": " padded ", "content": "x"}, True),
    ("memory_save", {"key": "plan", "content": "x", "tags": "project"}, True),
    ("memory_get", {"key": "user-city"}, False),
    ("memory_get", {"key": "web"}, False),
    ("memory_get", {"key": "salary"}, False),
    ("memory_get", {"key": 3}, True),
    ("memory_search", {"query": "Lisbon", "max_results": 5}, False),
    ("memory_search", {"query": "nothing matches this"}, False),
    ("memory_search", {"query": 5}, True),
    ("memory_search", {"query": "x", "max_results": 0}, True),
    ("memory_list", {}, False),
    ("memory_list", {"tag": "personal"}, False),
    ("memory_list", {"tag": 7}, True),
    ("memory_list", {"tag": "x", "extra": 1}, True),
    ("memory_save", {"key": "after-the-web", "content": "saved untrusted"}, False),
    ("memory_delete", {"key": "after-the-web"}, False),
    ("memory_delete", {"key": "after-the-web"}, True),
    ("memory_delete", {}, True),
]


@pytest.fixture
def served():
    store = MemoryStore()
    store.session("INTERNAL", "main").memory_save("user-city", "Sam lives in Lisbon", tags=["personal"])
    web = store.session("INTERNAL", "main")
    web.lower_integrity(source="https://example.com/page")
    web.memory_save("web", "Lisbon is sunny", source="https://example.com/page", occurred_at="2026-03-01")
    store.session("CONFIDENTIAL:hr", "main").memory_save("salary", "Sam earns 90k")
    session = store.session("CONFIDENTIAL:hr", "main")
    server = build(session)
    return server, listed_tools(server)


def test_every_tools_results_success_and_error_validate_against_its_output_schema(served):
    # Guards: a render adding or renaming a field (the schema's additionalProperties and required catch it), an
    # error result in another shape, a classification written otherwise than a label.
    server, listed = served
    seen = set()
    for name, arguments, is_error in CALLS:
        result = handle(server, "tools/call", types.CallToolRequestParams(name=name, arguments=arguments))
        assert result.is_error is is_error, (name, arguments, result.structured_content)
        conforms(listed[name], result)
        seen.add((name, is_error))
    assert seen == {(name, error) for name in tools.TOOL_NAMES for error in (False, True)}  # every tool, both ways


def test_random_calls_of_every_tool_validate_against_its_output_schema(served):
    # The checkers' random arguments, and each tool given another tool's arguments: results of every shape.
    server, listed = served
    rng = random.Random(37)
    for _ in range(200):
        name = rng.choice(tools.TOOL_NAMES)
        arguments = dict(scenarios.random_arguments(rng, rng.choice([name, *tools.TOOL_NAMES])))
        result = handle(server, "tools/call", types.CallToolRequestParams(name=name, arguments=arguments))
        conforms(listed[name], result)


def test_a_result_in_another_shape_fails_its_schema():
    # The schemas are not vacuous: a missing field, an extra one, a bad label or error code each fail.
    schema = tooldefs.get("memory_save").output_schema()
    good = {"saved": True, "key": "k", "classification": "INTERNAL@untrusted", "integrity": "untrusted", "version": 1}
    jsonschema.validate(good, schema)
    for bad in (
        {**good, "extra": 1},
        {key: value for key, value in good.items() if key != "version"},
        {**good, "classification": "SECRET"},
        {"error": {"code": "Not Found", "message": "m"}},
        {"error": {"code": "not_found"}},
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)
