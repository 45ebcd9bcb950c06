"""The storage seam: a small protocol and the sqlite-utils implementation behind it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol

from memlab.levels import Level
from memlab.records import AuditEvent, Hit, Memory, TaintEvent
from memlab.storage.sqlite import SqliteStorage

__all__ = ["StorageProvider", "SqliteStorage"]


class StorageProvider(Protocol):
    """What a session and the store need from storage.

    Every tool-level call appends its audit event in the same transaction (``audit`` builds it from the
    result), so nothing is read or written without its audit row. Reads take the taint explicitly:
    storage applies shadowing but never decides who may call it. ``search`` takes the natural-language
    query and makes it a safe FTS5 expression with the store's analyzer; no input can raise an SQL error.
    """

    def add_session(self, session_id: str, agent: str, taint: Level, created_at: str) -> None: ...

    def add_taint_event(self, event: TaintEvent) -> None: ...

    def save(
        self,
        agent: str,
        key: str,
        content: str,
        tags: tuple[str, ...],
        classification: Level,
        *,
        saved_at: str,
        saved_by: str,
        audit: Callable[[Memory], AuditEvent],
    ) -> Memory: ...

    def delete(
        self,
        agent: str,
        key: str,
        classification: Level,
        *,
        deleted_at: str,
        deleted_by: str,
        audit: Callable[[Memory | None], AuditEvent],
    ) -> Memory | None: ...

    def effective(
        self, agent: str, taint: Level, key: str, *, audit: Callable[[Memory | None], AuditEvent] | None = None
    ) -> Memory | None: ...

    def exists(self, agent: str, key: str) -> bool: ...

    def effective_view(
        self,
        agent: str,
        taint: Level,
        *,
        tag: str | None = None,
        audit: Callable[[list[Memory]], AuditEvent] | None = None,
    ) -> list[Memory]: ...

    def search(
        self, agent: str, taint: Level, query: str, limit: int, *, audit: Callable[[list[Hit]], AuditEvent]
    ) -> list[Hit]: ...

    def append_audit(self, event: AuditEvent) -> None: ...

    def audit_rows(self) -> Iterator[dict[str, Any]]: ...

    def history_rows(self, agent: str, key: str | None = None) -> Iterator[dict[str, Any]]: ...

    def session_rows(self) -> Iterator[dict[str, Any]]: ...

    def taint_event_rows(self) -> Iterator[dict[str, Any]]: ...

    def close(self) -> None: ...
