"""The host's side of compartments: a host's pre-tool-call hook, the notebook widgets and the demo's table, each
used by a host whose sessions are at labels (``CONFIDENTIAL:hr``), which are not totally ordered."""

from __future__ import annotations

import pytest

from memlab import InvalidArgument, Level, MemoryStore
from memlab.demo import effective_views
from memlab.labels import Label
from memlab.widgets import simulator
from memlab.widgets.audit import filter_audit, taint_timeline, timeline_html
from memlab.widgets.figures import audit_timeline_figure
from memlab.widgets.render import LEVEL_COLOURS, badge, level_row
from tests.conftest import fixed_clock

HR, LEGAL = "CONFIDENTIAL:hr", "CONFIDENTIAL:legal"


def no_confidential_saves(call):
    """A host's hook: nothing at CONFIDENTIAL or above is saved through this assistant, whatever its categories."""
    if call.tool == "memory_save" and Label(Level.CONFIDENTIAL).can_flow_to(call.label):
        raise InvalidArgument(f"saves at {call.label} are not allowed here")
    return call


def test_a_hosts_hook_compares_a_calls_label_through_the_lattice():
    """A hook refusing saves at CONFIDENTIAL and above refuses one at ``CONFIDENTIAL:hr`` (audited, nothing saved)
    and lets one at ``INTERNAL:hr`` through: ``ToolCall.label`` is the call's taint as a label at levels too.

    Guards: ``ToolCall.label`` dropping the categories (``Label(Label.parse(self.taint).level)``: the refusal then
    names CONFIDENTIAL, not the session's label), seen failing; before ``ToolCall.label`` such a hook compared
    ``call.taint >= Level.CONFIDENTIAL``, a TypeError at a label (the call failed as ``internal_error``)."""
    store = MemoryStore()
    store.hooks.append(no_confidential_saves)
    with pytest.raises(InvalidArgument, match="saves at CONFIDENTIAL:hr are not allowed"):
        store.session(taint=HR).memory_save("salary", "Sam earns 90k")
    assert store.session(taint="INTERNAL:hr").memory_save("team", "Sam leads the team").label == Label.parse(
        "INTERNAL:hr"
    )
    with pytest.raises(InvalidArgument, match="saves at RESTRICTED:hr are not allowed"):
        store.session(taint="RESTRICTED:hr").memory_save("salary", "x")
    with pytest.raises(InvalidArgument, match="saves at CONFIDENTIAL are not allowed"):
        store.session(taint="CONFIDENTIAL").memory_save("salary", "x")
    assert store.versions()["key"].tolist() == ["team"]
    assert store.audit()["outcome"].tolist() == ["invalid_argument", "ok", "invalid_argument", "invalid_argument"]


def test_the_simulator_drives_a_session_at_a_label_and_escalates_it_up_the_lattice():
    """A simulator with a session at ``CONFIDENTIAL:hr`` beside one at ``CONFIDENTIAL:legal``: each column shows
    its label and only its compartment's memories; the hr column offers RESTRICTED only, and clicking it raises
    the taint to ``RESTRICTED:hr`` (its categories kept), recorded as a taint event.

    Guards: SessionPanel.escalate raising to the bare level (``target = Label(level)``: the store refuses the
    lowering across compartments and the taint stays), seen failing."""
    store = MemoryStore()
    store.session(taint=LEGAL).memory_save("case", "contract dispute")
    sim = simulator(store, [("hr-review", HR, "main"), ("legal-review", LEGAL, "main")])
    hr, legal = sim.panel("hr-review"), sim.panel("legal-review")
    hr.key.value, hr.content.value = "salary", "Sam earns 90k"
    assert hr.call("memory_save")["classification"] == HR
    assert ">CONFIDENTIAL:hr<" in hr.header.value and LEVEL_COLOURS[Level.CONFIDENTIAL] in hr.widget.layout.border
    assert "90k" in hr.view.value and "contract dispute" not in hr.view.value
    assert "contract dispute" in legal.view.value and "90k" not in legal.view.value
    assert [level for level, button in hr.escalate_buttons.items() if not button.disabled] == [Level.RESTRICTED]
    hr.reason.value = "payroll review"
    hr.escalate_buttons[Level.RESTRICTED].click()
    assert hr.session.taint == Label.parse("RESTRICTED:hr") and ">RESTRICTED:hr<" in hr.header.value
    assert store.taint_events()[["from_level", "to_level", "reason"]].values.tolist() == [
        [HR, "RESTRICTED:hr", "payroll review"]
    ]
    assert "contract dispute" not in hr.view.value  # still not legal's


def test_the_audit_timeline_and_the_tables_draw_labelled_sessions_in_their_levels_hue():
    """A store whose audit holds calls at labels draws its timeline (each call in its label's level's hue), a badge
    names the label whole, a table row takes its level's tint, and the demo's side-by-side table names labels.

    Guards: audit_timeline_figure reading the taint as a level (``Level.parse(row.taint)``: it refuses
    'CONFIDENTIAL:hr'), seen failing."""
    store = MemoryStore()
    hr = store.session(taint=HR, session_id="hr")
    hr.memory_save("salary", "Sam earns 90k")
    store.session(taint="INTERNAL", session_id="wiki").memory_get("salary")
    figure = audit_timeline_figure(store.audit())
    (axis,) = figure.axes
    colours = {tuple(round(c, 3) for c in collection.get_edgecolor()[0][:3]) for collection in axis.collections}
    assert len(axis.collections) == 2 and len(colours) == 2
    assert ">CONFIDENTIAL:hr<" in badge(HR) and LEVEL_COLOURS[Level.CONFIDENTIAL] in badge(Label.parse(HR))
    assert level_row("level")({"level": HR}) == level_row("level")({"level": "CONFIDENTIAL"})
    legal = store.session(taint=LEGAL, session_id="legal")
    legal.memory_save("case", "contract dispute")
    table = effective_views([hr, legal])
    assert list(table.columns) == ["hr @ CONFIDENTIAL:hr", "legal @ CONFIDENTIAL:legal"]
    assert table.loc["salary"].tolist() == ["Sam earns 90k (CONFIDENTIAL:hr)", "—"]


def test_the_audit_viewer_filters_by_a_label_and_draws_its_taint_timeline():
    """The audit viewer's filter takes a label as it takes a level, and the taint timeline draws a session's
    stretches at labels, each named whole in its level's hue (on a fixed clock, so each of a session's two
    stretches is half its bar, wide enough to be named).

    Guards: timeline_html reading a stretch's taint as a level (``Level.parse(row["level"])``: it refuses
    'CONFIDENTIAL:hr'), seen failing."""
    store = MemoryStore(clock=fixed_clock)
    hr = store.session(taint=HR, session_id="hr")
    hr.memory_save("salary", "Sam earns 90k")
    hr.escalate("RESTRICTED:hr", reason="payroll")
    hr.memory_get("salary")
    store.session(taint="PUBLIC", session_id="wiki").memory_list()
    assert filter_audit(store.audit(), levels=[HR])["tool"].tolist() == ["memory_save"]
    assert filter_audit(store.audit(), levels=["restricted:hr", "PUBLIC"])["tool"].tolist() == [
        "memory_get",
        "memory_list",
    ]
    drawn = timeline_html(taint_timeline(store))
    assert ">CONFIDENTIAL:hr<" in drawn and ">RESTRICTED:hr<" in drawn and LEVEL_COLOURS[Level.RESTRICTED] in drawn
