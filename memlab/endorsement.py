"""The auditor's integrity acts on a store's storage: endorsing an untrusted version, and finding what a source of
distrust wrote (``MemoryStore.endorse`` and ``MemoryStore.purge_source`` call these; no session or tool does)."""

from __future__ import annotations

import dataclasses
from typing import Any

from memlab import arguments
from memlab.errors import Denied, InvalidArgument, NotFound
from memlab.labels import Label, LabelLike
from memlab.levels import Level
from memlab.records import AuditEvent, NewVersion

__all__ = ["endorse", "written_under"]


def endorse(storage: Any, agent: str, key: str, level: LabelLike | None, *, reason: str, by: str, at: str) -> str:
    """Save a trusted copy of ``key``'s one live untrusted version (at ``level``'s level and categories when given),
    audited as tool ``endorse`` naming both versions; a refusal is audited and writes nothing else.

    Returns:
        The ref of the trusted version made.
    Raises:
        InvalidArgument: a bad key or level, an empty reason, or ``by`` naming a session of the store.
        NotFound: no live untrusted version of ``key`` (at ``level``).
        Denied: several, and no ``level`` to choose among them.
    """
    key = arguments.key(key)
    wanted = None if level is None else Label.parse(level)
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidArgument("an endorsement needs a reason (a ticket, a request id)")
    by = arguments.audit_text(by, 64) or "auditor"
    if by in {row["id"] for row in storage.session_rows()}:
        raise InvalidArgument(f"an endorsement is an auditor's act, not session {by!r}'s")
    event = AuditEvent(
        at=at,
        session_id=by,
        agent=agent,
        taint=Label.parse(max(Level)),
        tool="endorse",
        key=key,
        message=arguments.audit_text(reason, 200),
    )
    live = _live_untrusted(storage.history_rows(agent, key) if agent in storage.agents() else [])
    if wanted is not None:
        live = [row for row in live if _place(Label.parse(row["classification"])) == _place(wanted)]
    failure: Exception | None = None
    if not live:
        failure = NotFound(f"no untrusted version of {key!r} to endorse" + (f" at {wanted}" if wanted else ""))
    elif len(live) > 1:
        labels = ", ".join(row["classification"] for row in live)
        failure = Denied(f"{key!r} has several untrusted versions ({labels}); name the level to endorse")
    if failure is not None:
        storage.append_audit(dataclasses.replace(event, outcome=failure.code, message=str(failure)))
        raise failure
    (row,) = live
    untrusted = Label.parse(row["classification"])
    endorsed = f"{key}@{untrusted}/v{row['version']}"
    new = NewVersion(key, row["content"], tuple(row["tags"]), at, row["source"], row["occurred_at"])
    (memory,) = storage.save_many(
        agent,
        Label(*_place(untrusted)),
        [new],
        saved_by=by,
        audit=lambda memory: dataclasses.replace(event, records=(memory.ref(), endorsed)),
    )
    return memory.ref()


def written_under(storage: Any, source: str) -> list[tuple[str, str, str]]:
    """(agent, key, label) of every version whose sources of distrust name ``source`` and whose content is not yet
    erased, each once, by agent."""
    found: dict[tuple[str, str, str], None] = {}
    for agent in sorted(storage.agents()):
        for row in storage.history_rows(agent):
            if source in (row.get("distrust") or ()) and row["content"]:
                found[agent, row["key"], row["classification"]] = None
    return list(found)


def _place(label: Label) -> tuple[Level, frozenset[str]]:
    """A label's level and categories: where its trusted copy goes."""
    return label.level, label.categories


def _live_untrusted(rows: Any) -> list[dict]:
    """The newest version at each untrusted label among a key's history ``rows``, when it is live."""
    newest: dict[str, dict] = {}
    for row in rows:
        if not Label.parse(row["classification"]).trusted:
            newest[row["classification"]] = row  # history is by label, then version: the last one is the newest
    return [row for row in newest.values() if row["deleted_at"] is None]
