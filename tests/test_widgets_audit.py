"""memlab.widgets.audit: the audit viewer's data — filtered audit rows, each session's taint over time, the chain's
verdict. The viewer drawn and following a store is tests/test_widgets.py's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memlab import MemoryStore
from memlab.storage.verify import Verification
from memlab.widgets.audit import filter_audit, taint_timeline, verification_html


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
