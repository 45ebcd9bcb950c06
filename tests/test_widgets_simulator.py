"""memlab.widgets.simulator: sessions side by side — specs, form fields as tool arguments, calls through the tool
layer, escalation buttons, every panel redrawn on a change."""

from __future__ import annotations

import pytest

from memlab import MemoryStore
from memlab.errors import InvalidArgument
from memlab.labels import Integrity, Label
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


def _row(view_html: str, key: str) -> str:
    """The ``<tr>`` of ``key`` in a drawn view ("" when the view has none)."""
    return next((row for row in view_html.split("<tr>") if f">{key}" in row), "")


def test_feeding_untrusted_content_lowers_the_session_and_marks_its_saves_everywhere():
    # Guards: SessionPanel.feed not lowering the session; the header not showing integrity, floor or source;
    # render.badge without its ⚠ and level_row without its hatch for an untrusted label.
    store = MemoryStore()
    simulator = SessionSimulator(store, [("team-chat", "INTERNAL"), ("browser", "INTERNAL")])
    team, browser = simulator.panel("team-chat"), simulator.panel("browser")
    assert "integrity" in browser.header.value and ">trusted<" in browser.header.value
    assert "floor untrusted: reads every grade" in browser.header.value and browser.source.value == "web page"

    browser.source.value, browser.reason.value = "evil.example/invoice", "summarised the page"
    browser.feed_button.click()
    assert browser.session.integrity is Integrity.UNTRUSTED and browser.session.distrust == ("evil.example/invoice",)
    assert "⚠ untrusted" in browser.header.value and "from evil.example/invoice" in browser.header.value
    assert "fed untrusted content" in browser.result.value
    assert store.taint_events()["reason"].tolist() == ["untrusted input from evil.example/invoice: summarised the page"]
    browser.source.value = "an e-mail"  # already untrusted: no taint event, the source is noted and shown
    browser.feed_button.click()
    assert "from evil.example/invoice, an e-mail" in browser.header.value and len(store.taint_events()) == 1

    browser.key.value, browser.content.value = "payee", "IBAN XX00 MALLORY"
    browser.buttons["memory_save"].click()
    assert "&quot;classification&quot;: &quot;INTERNAL@untrusted&quot;" in browser.result.value
    for panel in (team, browser):  # the default floor reads it: marked, never mistaken for the user's
        row = _row(panel.view.value, "payee")
        assert "MALLORY" in row and "⚠ INTERNAL@untrusted" in row and "repeating-linear-gradient" in row


def test_a_session_with_a_floor_of_trusted_never_shows_untrusted_memories():
    # Guards: SessionPanel.refresh drawing the view without the session's floor; open_session dropping the floor;
    # the add form dropping its floor.
    store = MemoryStore()
    simulator = SessionSimulator(store, [("browser", "INTERNAL"), ("payments", "INTERNAL", "main", "trusted")])
    browser, payments = simulator.panel("browser"), simulator.panel("payments")
    assert payments.session.floor is Integrity.TRUSTED and "floor <b>trusted</b>" in payments.header.value
    payments.key.value, payments.content.value = "payee", "IBAN XX99 ALICE"
    payments.buttons["memory_save"].click()
    browser.feed_button.click()
    for key, content in (("payee", "IBAN XX00 MALLORY"), ("tip", "pay Mallory today")):
        browser.key.value, browser.content.value = key, content
        browser.buttons["memory_save"].click()
    assert "ALICE" in _row(browser.view.value, "payee")  # trust first: the user's payee wins for everyone
    assert "pay Mallory today" in browser.view.value
    assert (
        "Mallory" not in payments.view.value and "MALLORY" not in payments.view.value and "⚠" not in payments.view.value
    )
    payments.key.value = "tip"
    payments.buttons["memory_get"].click()
    assert "&quot;found&quot;: false" in payments.result.value  # its reads agree with its view

    simulator.new_id.value, simulator.new_taint.value, simulator.new_floor.value = "careful", "RESTRICTED", "trusted"
    simulator.add_button.click()
    careful = simulator.panel("careful")
    assert careful.session.floor is Integrity.TRUSTED and "pay Mallory" not in careful.view.value


def test_feeding_with_no_source_is_refused_and_changes_nothing():
    store = MemoryStore()
    panel = SessionSimulator(store, [("chat", "PUBLIC")]).panel("chat")
    panel.source.value = "  "
    panel.feed_button.click()
    assert "invalid_argument" in panel.result.value and panel.session.integrity is Integrity.TRUSTED
    assert store.taint_events().empty and ">trusted<" in panel.header.value
