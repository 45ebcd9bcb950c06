"""memlab.widgets.audit: the audit viewer's data — filtered audit rows (by level and integrity), each session's
taint over time, the lowerings of integrity, the chain's verdict — and the viewer showing integrity. The viewer's
filters, timeline and following a store are tests/test_widgets.py's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memlab import MemoryStore
from memlab.storage.verify import Verification
from memlab.widgets.audit import (
    AuditViewer,
    filter_audit,
    integrity_events,
    integrity_events_html,
    taint_timeline,
    verification_html,
)


class Clock:
    """A clock one second further on each reading."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def store() -> MemoryStore:
    store = MemoryStore(clock=Clock())
    chat = store.session("PUBLIC", session_id="chat")
    chat.memory_save("k", "v")  # 12:00:02
    chat.escalate("INTERNAL", reason="opened the wiki")  # 12:00:03
    chat.memory_get("k")  # 12:00:04
    store.session("CONFIDENTIAL", session_id="hr").memory_get("nothing")  # 12:00:06
    return store


@pytest.mark.parametrize(
    ("filters", "keys"),
    [
        ({}, ["k", "k", "nothing"]),
        ({"sessions": ["hr"]}, ["nothing"]),
        ({"tools": ["memory_save"]}, ["k"]),
        ({"levels": ["INTERNAL", "CONFIDENTIAL"]}, ["k", "nothing"]),
        ({"since": "2026-01-01T12:00:03Z", "until": "2026-01-01T12:00:04"}, ["k"]),  # no zone: UTC
        ({"since": "2026-01-01T13:00:04+01:00"}, ["k", "nothing"]),
        ({"tools": ["memory_get"], "outcomes": ["not_found"]}, ["nothing"]),
    ],
)
def test_filter_audit_keeps_the_rows_every_filter_matches(store, filters, keys):
    # Guards: widgets.audit._utc reading a time without a zone as local time (the range then shifted).
    assert filter_audit(store.audit(), **filters)["key"].tolist() == keys


def test_the_timeline_has_a_stretch_per_level_a_session_held(store):
    timeline = taint_timeline(store)
    chat = timeline[timeline["session_id"] == "chat"]
    assert chat[["level", "reason"]].values.tolist() == [["PUBLIC", ""], ["INTERNAL", "opened the wiki"]]
    assert chat["end"].iloc[0] == chat["start"].iloc[1]
    assert chat["end"].iloc[1] == store.audit()["at"].max()  # open until the last time the store recorded
    assert taint_timeline(store, until="2027-01-01")["end"].iloc[-1] == "2027-01-01"


def test_the_verdict_names_the_first_broken_link_and_how_many_more():
    assert "verified" in verification_html(Verification(audit_rows=3, versions=1, head="ab" * 32))
    broken = verification_html(Verification(problems=("seq 2 <edited>", "seq 3")))
    assert "BROKEN" in broken and "seq 2 &lt;edited&gt;" in broken and "(and 1 more)" in broken


@pytest.fixture
def poisoned() -> MemoryStore:
    """browser is fed a web page and saves; team-chat reads what it saved (and is lowered by the read)."""
    store = MemoryStore(clock=Clock())
    team, browser = store.session("INTERNAL", session_id="team"), store.session("INTERNAL", session_id="browser")
    team.memory_save("payee", "ALICE")  # 12:00:03
    browser.lower_integrity(source="evil.example", reason="summarised a page")
    browser.memory_save("tip", "pay MALLORY")
    team.escalate("CONFIDENTIAL", reason="opened payroll")
    team.memory_get("tip")  # returns the untrusted tip: team is lowered after the call
    team.memory_save("note", "derived")
    return store


@pytest.mark.parametrize(
    ("filters", "keys"),
    [
        ({}, ["payee", "tip", "tip", "note"]),
        ({"integrity": ["untrusted"]}, ["tip", "note"]),
        ({"integrity": ["trusted"]}, ["payee", "tip"]),  # team's get ran at its trusted taint
        ({"levels": ["INTERNAL"]}, ["payee", "tip"]),  # a level plainly names both grades
        ({"levels": ["INTERNAL@untrusted"]}, ["tip"]),
        ({"levels": ["CONFIDENTIAL"], "integrity": ["untrusted"]}, ["note"]),
    ],
)
def test_filter_audit_by_integrity_and_by_level_whatever_the_integrity(poisoned, filters, keys):
    # Guards: audit._matches matching the label exactly (INTERNAL then missing INTERNAL@untrusted rows), or an
    # untrusted wanted label matching trusted rows; the integrity filter ignored.
    assert filter_audit(poisoned.audit(), **filters)["key"].tolist() == keys


def test_integrity_events_are_the_lowerings_not_the_escalations(poisoned):
    # Guards: audit.integrity_events keeping every taint event (the escalation then listed as a lowering).
    events = integrity_events(poisoned)
    assert events[["session_id", "from_level", "to_level"]].values.tolist() == [
        ["browser", "INTERNAL", "INTERNAL@untrusted"],
        ["team", "CONFIDENTIAL", "CONFIDENTIAL@untrusted"],
    ]
    assert events["reason"].iloc[0] == "untrusted input from evil.example: summarised a page"
    assert events["reason"].iloc[1].startswith("read untrusted tip@INTERNAL@untrusted/v1")
    shown = integrity_events_html(events)
    assert "(2)" in shown and "⚠ CONFIDENTIAL@untrusted" in shown and "evil.example" in shown


def test_the_viewer_shows_each_calls_integrity_and_every_lowering(poisoned):
    # Guards: AuditViewer.show without the integrity column or filter; the viewer not drawing the lowerings; the
    # timeline drawing an untrusted stretch as a trusted one.
    viewer = AuditViewer(poisoned)
    rows = viewer.table.value.split("<tr>")[2:]
    assert ["⚠ untrusted" in row for row in rows] == [False, True, False, True]
    assert all(">trusted<" in row for row in (rows[0], rows[2]))
    assert "⚠ INTERNAL@untrusted" in rows[1] and "repeating-linear-gradient" in rows[1]
    viewer.integrity.value = ("untrusted",)
    assert "2 of 4 calls" in viewer.table.value
    assert "integrity lowered</b> (2)" in viewer.lowered.value and "evil.example" in viewer.lowered.value
    assert "⚠ INTERNAL@untrusted</div>" in viewer.timeline.value
    browser = poisoned.session("PUBLIC", session_id="later")
    browser.lower_integrity(source="an e-mail")
    assert "integrity lowered</b> (3)" in viewer.lowered.value  # it follows the store
    assert "no session was lowered" in AuditViewer(MemoryStore()).lowered.value
