"""memlab.widgets.simulator: sessions side by side — specs, form fields as tool arguments, calls through the tool
layer, escalation buttons, every panel redrawn on a change."""

from __future__ import annotations

import pytest

from memlab import MemoryStore
from memlab.errors import InvalidArgument
from memlab.labels import Label
from memlab.levels import Level
from memlab.widgets.simulator import SessionSimulator, open_session, run_tool, tool_arguments


@pytest.mark.parametrize(
    ("tool", "form", "arguments"),
    [
        (
            "memory_save",
            {"key": "k", "content": "c", "tags": " a, ,b "},
            {"key": "k", "content": "c", "tags": ["a", "b"]},
        ),
        ("memory_save", {"key": "k", "content": ""}, {"key": "k", "content": ""}),
        ("memory_get", {"key": "k", "query": "ignored"}, {"key": "k"}),
        ("memory_delete", {}, {"key": ""}),
        ("memory_search", {"query": "q"}, {"query": "q"}),
        ("memory_list", {"tag": ""}, {}),
        ("memory_list", {"tag": "t"}, {"tag": "t"}),
        ("not_a_tool", {"key": "k"}, {}),
    ],
)
def test_tool_arguments_from_the_form(tool, form, arguments):
    assert tool_arguments(tool, **form) == arguments


def test_open_session_takes_a_session_or_a_spec():
    store = MemoryStore()
    assert open_session(store, "only-an-id").taint == Label.parse("PUBLIC")
    session = open_session(store, ("x", "internal", "bob"))
    assert (session.id, session.agent) == ("x", "bob") and open_session(store, session) is session
    with pytest.raises(InvalidArgument, match="another store"):
        open_session(MemoryStore(), session)


def test_a_form_call_goes_through_the_tool_layer_and_is_audited():
    store = MemoryStore()
    session = store.session()
    assert run_tool(session, "memory_save", key="k", content="v")["saved"] is True
    assert run_tool(session, "memory_get", key="")["error"]["code"] == "invalid_argument"
    assert store.audit()["tool"].tolist() == ["memory_save", "memory_get"]


def test_an_action_in_one_panel_redraws_every_panel():
    # Guards: SessionSimulator not listening to its store (another panel's view then stale after a save).
    store = MemoryStore()
    simulator = SessionSimulator(store)
    public, internal = simulator.panel("public-chat"), simulator.panel("team-chat")
    public.key.value, public.content.value = "name", "Sam"
    public.buttons["memory_save"].click()
    assert "Sam" in internal.view.value and "new" in internal.view.value
    assert not public.escalate_buttons[Level.INTERNAL].disabled and public.escalate_buttons[Level.PUBLIC].disabled
    public.escalate_buttons[Level.CONFIDENTIAL].click()
    assert public.session.taint == Label.parse("CONFIDENTIAL") and public.escalate_buttons[Level.INTERNAL].disabled
    with pytest.raises(KeyError, match="it has \\['public-chat', 'team-chat', 'hr-review'\\]"):
        simulator.panel("nobody")
