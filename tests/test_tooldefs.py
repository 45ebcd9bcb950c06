"""The one table of tools: a tool added at run time is one table entry and one ``Session`` method, and every door
(the tool layer, MCP, the checkers' random steps) offers and runs it with no other edit."""

import dataclasses
import random

import anyio
import pytest
from mcp import Client

from memlab import InvalidArgument, Level, MemoryStore, Session, arguments, tools
from memlab.check import scenarios
from memlab.check.results import Step
from memlab.mcp_server import build
from memlab.tooldefs import TOOLS, Parameter, Tool, get
from tests.conftest import fixed_clock

COUNT = Tool(
    "memory_count",
    "Count the accessible memories, optionally those with a tag.",
    (Parameter("tag", arguments.tag, {"type": "string", "description": "Tag to filter by."}),),
    render=lambda given, count: {"count": count, "tag": given["tag"]},
    title="Count memories",
    result={
        "type": "object",
        "properties": {"count": {"type": "integer"}, "tag": {"type": ["string", "null"]}},
        "required": ["count", "tag"],
        "additionalProperties": False,
    },
    read_only=True,
)


def _memory_count(self, taint, audit, *, tag):
    """The tool's one method: the effective view, its audit row written in the read's transaction."""
    view = audit.written_with(
        self.store.storage.effective_view,
        self.agent,
        taint,
        tag=tag,
        audit=lambda view: audit.event(records=self._readable_refs(taint, view)),
    )
    return len(view)


@pytest.fixture
def registered(monkeypatch):
    """``memory_count`` in the table and on ``Session`` for one test, then gone: other tests see the five tools."""
    monkeypatch.setattr(Session, "_memory_count", _memory_count, raising=False)
    TOOLS.register(COUNT)
    try:
        yield COUNT
    finally:
        TOOLS.unregister(COUNT.name)


@pytest.fixture
def session():
    with MemoryStore(clock=fixed_clock) as store:
        session = store.session(Level.INTERNAL, session_id="host")
        session.memory_save("user-name", "Sam", tags=["personal"])
        session.memory_save("deadline", "14 March", tags=["project"])
        store.session(Level.CONFIDENTIAL).memory_save("salary", "90k", tags=["personal"])
        yield session


def test_a_tool_added_at_run_time_is_offered_and_called_through_the_tool_layer(registered, session):
    # Guards: SCHEMAS or TOOL_NAMES frozen at import (a registered tool never offered), or tools.call rendering by
    # an if-chain over the five names (the new tool rendered in the delete's shape, or raising).
    assert tools.TOOL_NAMES[-1] == "memory_count" and tools.SCHEMAS[-1] == COUNT.schema()
    assert tools.for_anthropic()[-1]["name"] == tools.for_openai()[-1]["function"]["name"] == "memory_count"
    assert tools.call(session, "memory_count", {}) == {"count": 2, "tag": None}  # the CONFIDENTIAL one is hidden
    assert tools.call(session, "memory_count", {"tag": "personal"}) == {"count": 1, "tag": "personal"}
    assert session.call("memory_count", {"tag": "project"}) == 1
    refused = tools.call(session, "memory_count", {"tag": "personal", "key": "k"})
    assert refused["error"]["message"] == "memory_count takes no argument 'key'; it takes tag"
    audit = session.store.audit()
    assert audit["tool"].tolist()[-4:] == ["memory_count"] * 4
    assert audit["outcome"].tolist()[-4:] == ["ok", "ok", "ok", "invalid_argument"]
    assert audit["records"].tolist()[-3] == ["user-name@INTERNAL/v1"]


def test_a_tool_added_at_run_time_is_listed_and_called_over_mcp(registered, session):
    # Guards: MCP's tools/list reading a dict of annotations by name (a KeyError for any tool not in it).
    async def scenario():
        async with Client(build(session)) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            called = await client.call_tool("memory_count", {"tag": "personal"})
            return listed, called

    listed, called = anyio.run(scenario)
    assert list(listed) == list(tools.TOOL_NAMES)
    count = listed["memory_count"]
    assert count.input_schema == COUNT.schema()["parameters"] and count.description == COUNT.description
    assert (count.title, count.output_schema) == ("Count memories", COUNT.output_schema())
    assert count.annotations.read_only_hint is True and count.annotations.destructive_hint is None
    assert listed["memory_delete"].annotations.destructive_hint is True
    assert listed["memory_save"].annotations.destructive_hint is False
    assert not called.is_error and called.structured_content == {"count": 1, "tag": "personal"}


def test_a_tool_added_at_run_time_is_drawn_by_the_checkers_random_steps(registered, session):
    # Guards: scenarios drawing from a hand-written tuple of the five tools (a new tool never checked).
    assert scenarios.drawn() == (*scenarios.MIX, "memory_count")
    assert "memory_count" not in scenarios.writes() and scenarios.is_read("memory_count")
    rng = random.Random(0)
    steps = [scenarios.random_step(rng, "s1") for _ in range(60)]
    counts = [step for step in steps if step.tool == "memory_count"]
    assert counts and {dict(step.arguments)["tag"] for step in counts} <= {None, *scenarios.TAGS}
    assert all(dict(step.arguments).keys() == {"tag"} for step in counts)
    assert scenarios.act(session, Step("s1", "memory_count", (("tag", "personal"),)), 0) == 1


def test_once_removed_the_tool_is_nowhere():
    # Guards: a test's tool left registered (every later test would see six tools).
    assert "memory_count" not in TOOLS and "memory_count" not in tools.TOOL_NAMES
    assert "memory_count" not in scenarios.drawn()
    with pytest.raises(InvalidArgument, match="unknown tool 'memory_count'; known tools: memory_save, memory_get"):
        get("memory_count")


def test_the_shipped_tools_arguments_are_drawn_in_the_order_the_seeded_checks_use():
    # Guards: arguments drawn in another order from the table (every seeded check would find other scenarios).
    rng = random.Random(7)
    drawn = [scenarios.random_arguments(rng, tool) for tool in scenarios.MIX]
    rng = random.Random(7)
    expected = []
    for tool in scenarios.MIX:
        words = " ".join(rng.sample(scenarios.WORDS, rng.randint(1, 2)))
        if tool == "memory_save":
            key = rng.choice(scenarios.KEYS)
            expected.append(
                (("key", key), ("content", words), ("tags", tuple(rng.sample(scenarios.TAGS, rng.randint(0, 1)))))
            )
        elif tool in ("memory_get", "memory_delete"):
            expected.append((("key", rng.choice(scenarios.KEYS)),))
        elif tool == "memory_list":
            expected.append((("tag", rng.choice((None, *scenarios.TAGS))),))
        else:
            expected.append((("query", words), ("max_results", 5)))
    assert drawn == expected


def test_a_method_that_writes_no_audit_row_fails_the_call_and_is_audited(monkeypatch, session):
    # Guards: Session.dispatch returning a result whose method wrote no audit row (a call the audit never sees).
    monkeypatch.setattr(Session, "_memory_count", lambda self, taint, audit, *, tag: 0, raising=False)
    TOOLS.register(COUNT)
    try:
        result = tools.call(session, "memory_count", {})
    finally:
        TOOLS.unregister(COUNT.name)
    assert result == {"error": {"code": "internal_error", "message": "_memory_count wrote no audit row"}}
    last = session.store.audit().iloc[-1]
    assert (last["tool"], last["outcome"]) == ("memory_count", "internal_error")


def test_a_render_that_fails_is_an_error_result_not_a_traceback(monkeypatch, session):
    # Guards: tools.call rendering outside its try (a bad render raises into the model's host).
    broken = dataclasses.replace(COUNT, render=lambda given, count: {}["missing"])
    monkeypatch.setattr(Session, "_memory_count", _memory_count, raising=False)
    TOOLS.register(broken)
    try:
        result = tools.call(session, "memory_count", {})
    finally:
        TOOLS.unregister(broken.name)
    assert result == {"error": {"code": "internal_error", "message": "the call failed: KeyError"}}


def test_a_model_tool_needs_a_render_and_a_name_is_registered_once():
    # Guards: a model tool accepted without a render (its first call would have no shape to answer in).
    with pytest.raises(InvalidArgument, match="'memory_count' is offered to models, so it needs a render"):
        Tool("memory_count", "Count.", ())
    # Guards: a model tool accepted without a title or a result schema (MCP would list it without an outputSchema).
    with pytest.raises(InvalidArgument, match="'memory_count' is offered to models, so it needs a title and a result"):
        dataclasses.replace(COUNT, title="")
    with pytest.raises(InvalidArgument, match="needs a title and a result schema"):
        dataclasses.replace(COUNT, result=None)
    with pytest.raises(InvalidArgument, match="a tool named 'memory_save' is already registered"):
        TOOLS.register(get("memory_save"))


def test_the_host_tool_is_in_the_table_but_offered_to_no_model():
    # Guards: get() listing or returning memory_recall to a model's door.
    assert "memory_recall" in TOOLS and get("memory_recall", host=True).render is None
    with pytest.raises(InvalidArgument) as refused:
        get("memory_recall")
    assert "memory_recall" not in str(refused.value).split("known tools: ")[1]


def test_a_tool_name_a_model_sent_is_cut_short_in_the_refusal():
    # Guards: the unknown-tool message showing the whole name (a model can send a name of any length).
    with pytest.raises(InvalidArgument) as refused:
        get("x" * 10_000)
    assert "… (10002 characters); known tools: memory_save" in str(refused.value) and len(str(refused.value)) < 200
