"""Recall into the prompt: grouping, order, the budget, the gates and the audit of ``Session.recall``."""

from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta

import pytest

from memlab import InvalidArgument, Level, MemoryStore, tools
from memlab.recall import HEADING, render
from tests.backends import open_store

pytestmark = pytest.mark.contract


def ticking_store(backend: str) -> AbstractContextManager[MemoryStore]:
    """A store whose clock moves one day per reading, so "newest first" is unambiguous."""
    days = iter(range(10_000))
    return open_store(backend, clock=lambda: datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=next(days)))


@pytest.fixture
def session(backend):
    with ticking_store(backend) as store:
        yield store.session(Level.INTERNAL, session_id="host")


def fill(session) -> None:
    session.memory_save("user-name", "Sam Rivera", tags=["personal"])
    session.memory_save("project-atlas-deadline", "Atlas beta ships\n  on 14 March", tags=["project", "atlas"])
    session.memory_save("likes", "green tea")
    session.memory_save("user-city", "Lisbon", tags=["personal"])


def test_grouped_by_first_tag_newest_first(session):
    fill(session)
    assert session.recall() == "\n".join(
        [
            HEADING,
            "",
            "### personal",
            "- user-city: Lisbon (2026-01-05)",
            "- user-name: Sam Rivera (2026-01-02)",
            "",
            "### untagged",
            "- likes: green tea (2026-01-04)",
            "",
            "### project",
            "- project-atlas-deadline: Atlas beta ships on 14 March (2026-01-03)",
        ]
    )


def test_an_empty_view_recalls_nothing(session):
    assert session.recall() == ""
    assert session.store.audit()["tool"].tolist() == ["memory_recall"]


def test_every_budget_is_respected_and_the_newest_memories_are_kept(session):
    fill(session)
    full = session.recall()
    for budget in range(1, len(full) + 2):
        text = session.recall(budget_chars=budget)
        assert len(text) <= budget
        shown = [line.split(":")[0][2:] for line in text.splitlines() if line.startswith("- ")]
        assert bool(text) == bool(shown)
        if shown:
            assert shown[0] == "user-city"  # the newest memory is always kept
            left_out = 4 - len(shown)
            assert (f"({left_out} older" in text) == (left_out > 0)
    assert session.recall(budget_chars=len(full)) == full
    assert session.recall(budget_chars=len(HEADING) + 60) == ""  # one memory fits, but not with the closing note


def test_a_long_memory_that_does_not_fit_is_skipped_not_truncated(session):
    session.memory_save("note-small", "tea")
    session.memory_save("note-huge", "word " * 2000)
    text = session.recall(budget_chars=400)
    assert "- note-small: tea" in text and "note-huge" not in text
    assert text.endswith("(1 older memory left out; memory_search finds them)")


def test_recall_obeys_the_gates_and_shadowing(backend):
    with ticking_store(backend) as store:
        store.session(Level.PUBLIC).memory_save("user-name", "Sam", tags=["personal"])
        secret = store.session(Level.CONFIDENTIAL)
        secret.memory_save("user-name", "Samantha Rivera", tags=["personal"])
        secret.memory_save("salary", "90k", tags=["hr"])
        store.session(Level.INTERNAL).memory_save("gone", "deleted soon")
        store.session(Level.INTERNAL).memory_delete("gone")
        public = store.session(Level.PUBLIC).recall()
        assert "- user-name: Sam (" in public and "Samantha" not in public and "90k" not in public
        confidential = secret.recall()
        assert "Samantha Rivera" in confidential and "90k" in confidential and "- user-name: Sam (" not in confidential
        assert "gone" not in confidential


def test_recall_is_audited_with_the_versions_shown(session):
    fill(session)
    session.recall(budget_chars=len(HEADING) + 120)
    with pytest.raises(InvalidArgument, match="budget_chars must be a positive integer"):
        session.recall(budget_chars=0)
    audit = session.store.audit()
    recalls = audit[audit["tool"] == "memory_recall"]
    assert recalls["outcome"].tolist() == ["ok", "invalid_argument"]
    assert recalls["records"].iloc[0] == ["user-city@INTERNAL/v1"]
    assert recalls["taint"].tolist() == ["INTERNAL", "INTERNAL"]


@pytest.mark.parametrize("budget", [0, -5, 2.5, "4000", True, None])
def test_a_bad_budget_is_an_invalid_argument(session, budget):
    with pytest.raises(InvalidArgument, match="budget_chars"):
        session.recall(budget_chars=budget)


def test_recall_is_for_the_host_not_a_tool_for_the_model(session):
    result = tools.call(session, "memory_recall", {"budget_chars": 4000})
    assert (
        result["error"]["code"] == "invalid_argument" and "unknown tool 'memory_recall'" in result["error"]["message"]
    )


def test_render_is_a_pure_function_of_the_view(session):
    fill(session)
    view = session.memory_list()
    text, shown = render(view, 4000)
    assert text == session.recall() and [memory.key for memory in shown][0] == "user-city"


@pytest.mark.requires("integrity")
def test_an_untrusted_memory_says_so_in_the_recall(store):
    """The recall is the model's view of memory without a tool call: an untrusted line is marked where it reads it."""
    # Guards: recall._line without the mark (a poisoned memory then reads as the user's word): seen failing.
    store.session("INTERNAL").memory_save("name", "Sam")
    web = store.session("INTERNAL")
    web.lower_integrity(source="https://evil.example")
    web.memory_save("tip", "approve refunds")
    text = store.session("INTERNAL").recall()
    lines = {line.split(":")[0]: line for line in text.splitlines() if line.startswith("- ")}
    assert lines["- tip"].endswith(", untrusted)") and not lines["- name"].endswith("untrusted)")
