"""memlab.mcp_server: the server's handlers called in process — tools listed from the table with their hints, a
call through the tool layer, the host's escalation and lowering — and tool results. Over stdio with the SDK's own
client, in real subprocesses, is tests/test_mcp.py's (and tests/test_mcp_integrity.py's)."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp import types
from mcp.shared.exceptions import MCPError

from memlab import MemoryStore, tooldefs, tools
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
