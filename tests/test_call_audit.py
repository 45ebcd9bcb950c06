"""``memlab.call_audit``: one call's audit row on its way, and the helpers a batch of saves completes rows with."""

from __future__ import annotations

from functools import partial

import pytest

from memlab.call_audit import CallAudit, batches, failed, in_order, new_version
from memlab.errors import NotFound
from memlab.labels import Label
from memlab.records import AuditEvent, Memory

EVENT = partial(AuditEvent, at="2026-01-01T00:00:00+00:00", session_id="s", agent="main", taint=Label.parse("PUBLIC"))


def test_a_row_is_written_only_once_its_storage_call_returns():
    # Guards: written_with marking the row written before the storage call (a call that raises would then leave
    # the session believing its row was written, and no row at all would record the failure).
    audit = CallAudit(partial(EVENT, tool="memory_get"))
    assert audit.written_with(lambda a, b=0: a + b, 2, b=3) == 5 and audit.written
    failing = CallAudit(partial(EVENT, tool="memory_get"))
    with pytest.raises(ZeroDivisionError):
        failing.written_with(lambda: 1 / 0)
    assert not failing.written and failing.at == "2026-01-01T00:00:00+00:00"


def test_a_batchs_rows_are_completed_in_order_one_per_saved_version():
    saved = [Memory(key, "c", (), Label.parse("PUBLIC"), 1, "t", "s") for key in ("a", "b")]
    complete = in_order([partial(EVENT, tool="memory_save", key=key) for key in ("a", "b")])
    events = [complete(memory) for memory in saved]
    assert [(event.key, event.records) for event in events] == [("a", ("a@PUBLIC/v1",)), ("b", ("b@PUBLIC/v1",))]


@pytest.mark.parametrize("size, expected", [(1, [[0], [1], [2]]), (2, [[0, 1], [2]]), (5, [[0, 1, 2]])])
def test_batches_cut_an_iterable_in_order(size, expected):
    assert list(batches(iter(range(3)), size)) == expected


def test_a_failed_row_keeps_the_errors_code_and_message_and_a_save_describes_its_version():
    event = failed(partial(EVENT, tool="memory_delete", key="k"), NotFound("no memory with key 'k'"))
    assert (event.outcome, event.message) == ("not_found", "no memory with key 'k'")
    args = {"key": "k", "content": "c", "tags": ("t",), "source": None, "occurred_at": "2024-01-01"}
    assert new_version(args, "now") == ("k", "c", ("t",), "now", None, "2024-01-01")
