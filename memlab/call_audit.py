"""One tool call's audit row on its way: the event to complete with the call's outcome and records, and whether a
storage call wrote it in its transaction (``Session`` writes it itself only when none did)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from memlab.errors import MemlabError
from memlab.records import AuditEvent, Memory, NewVersion

__all__ = ["CallAudit", "new_version", "in_order", "batches", "failed"]


@dataclass
class CallAudit:
    """The audit row of one call: the event, to be completed with its outcome and records, and whether a storage
    call has written it."""

    event: partial[AuditEvent]
    written: bool = False

    @property
    def at(self) -> str:
        return self.event.keywords["at"]

    def written_with(self, storage_call: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """Run a storage call that writes this row in its transaction: once it returns, the row is written
        (a storage call that raises has rolled back, row included)."""
        result = storage_call(*args, **kwargs)
        self.written = True
        return result


def new_version(args: Mapping[str, Any], saved_at: str) -> NewVersion:
    """The version a validated ``memory_save`` describes."""
    return NewVersion(args["key"], args["content"], args["tags"], saved_at, args["source"], args["occurred_at"])


def in_order(events: list[partial[AuditEvent]]) -> Callable[[Memory], AuditEvent]:
    """Complete the events of a batch in order, one per saved version."""
    pending = iter(events)
    return lambda memory: next(pending)(records=(memory.ref(),))


def batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(items)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def failed(event: partial[AuditEvent], error: MemlabError) -> AuditEvent:
    return event(outcome=error.code, message=str(error))
