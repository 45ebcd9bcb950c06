"""Seals: what binds memory versions and audit rows to the chain — built and checked here, for every backend.

A save seals its version (``seal``): a random salt, the commitment ``HMAC(salt, content ‖ tags ‖ context)``, and
the version's digest, which the save's audit row carries; a delete's audit row carries the digest of the
deletion (``deletion``). Audit rows are chained (``chain_rows``): each row's hash covers the previous hash and
its fields (``AUDIT_FIELDS``, in that order). ``check_chain``, ``check_versions`` and ``check_sessions`` recompute
all of it from any backend's rows, so what verify checks is written once, beside what it checks.

Examples:
    >>> from memlab.records import NewVersion
    >>> sealed = seal("main", NewVersion("k", "v", ("t",), "2026-01-01T00:00:00+00:00"), 0, 1, "s1")
    >>> sealed.tags, sealed.commitment == chain.commitment(sealed.salt, "v", '["t"]')
    ('["t"]', True)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from memlab.errors import InvalidArgument
from memlab.labels import Label
from memlab.levels import Level
from memlab.records import AuditEvent, Memory, NewVersion
from memlab.storage import chain
from memlab.storage.label_codes import read_label, stored

__all__ = [
    "AUDIT_FIELDS",
    "Seal",
    "seal",
    "seal_many",
    "deletion",
    "chain_rows",
    "Audited",
    "check_chain",
    "check_versions",
    "check_sessions",
]

AUDIT_FIELDS = (
    "seq",
    "at",
    "session_id",
    "agent",
    "taint",
    "tool",
    "key",
    "query",
    "outcome",
    "records",
    "notes",
    "message",
    "digest",
)
"""The hashed fields of an audit row, in the order the hash takes them; the row stores its ``hash`` after them."""

_LEVEL_NAMES = {level: str(level) for level in Level}


class Seal(NamedTuple):
    """What a save stores and audits of one version beside its content."""

    tags: str
    """The tags as stored (JSON), which the commitment covers."""
    salt: bytes
    commitment: str
    digest: str
    """The version's identity, carried by the save's audit row."""


def seal(
    agent: str, new: NewVersion, classification: int | str, version: int, saved_by: str, distrust: str | None = None
) -> Seal:
    """Seal a new version of ``agent``'s ``new.key`` at ``classification``, numbered ``version`` (``distrust``: its
    sources of distrust as SQLite stores them, ``chain.version_digest``)."""
    tags, salt = chain.json_strings(new.tags), chain.new_salt()
    commitment = chain.commitment(salt, new.content, tags, new.source, new.occurred_at)
    digest = chain.version_digest(agent, new.key, classification, version, new.saved_at, saved_by, commitment, distrust)
    return Seal(tags, salt, commitment, digest)


def seal_many(
    agent: str,
    versions: Sequence[NewVersion],
    classification: int | str,
    numbers: Sequence[int],
    saved_by: str,
    distrust: str | None = None,
) -> list[Seal]:
    """``seal`` of each of ``versions`` (numbered ``numbers``), byte for byte, for a batch: the salts drawn at
    once, the digest's constant parts encoded once, each distinct tag list encoded once; ``distrust`` is the
    versions' sources of distrust as stored (``chain.version_digest``)."""
    digest = chain.version_digester(agent, saved_by, distrust)
    stored_tags: dict[tuple[str, ...], str] = {}
    seals = []
    for new, number, salt in zip(versions, numbers, chain.new_salts(len(versions)), strict=True):
        tags = stored_tags.get(new.tags) if type(new.tags) is tuple else None
        if tags is None:
            tags = chain.json_strings(new.tags)
            if type(new.tags) is tuple:
                stored_tags[new.tags] = tags
        commitment = chain.commitment(salt, new.content, tags, new.source, new.occurred_at)
        seals.append(Seal(tags, salt, commitment, digest(new.key, classification, number, new.saved_at, commitment)))
    return seals


def deletion(agent: str, memory: Memory, commitment: str, deleted_at: str, deleted_by: str) -> str:
    """The digest a delete's audit row carries: the deleted version's digest, when and by whom."""
    distrust = chain.json_strings(memory.distrust) if memory.distrust else None
    version = chain.version_digest(
        agent, memory.key, stored(memory.label), memory.version, memory.saved_at, memory.saved_by, commitment, distrust
    )
    return chain.deletion_digest(version, deleted_at, deleted_by)


def chain_rows(
    events: Sequence[AuditEvent],
    digests: Sequence[str | None] | None,
    *,
    seq: int,
    previous: str,
    text: Callable[[str | None], str | None] | None = None,
) -> list[tuple[Any, ...]]:
    """Audit rows for ``events`` (``AUDIT_FIELDS`` then ``hash``), numbered after ``seq`` and chained to
    ``previous``; ``text`` makes a free-text field storable (PostgreSQL refuses NUL characters; None: stored as
    it is)."""
    rows = []
    for event, digest in zip(events, digests or [None] * len(events), strict=True):
        seq += 1
        session_id, key, query, message = event.session_id, event.key, event.query, event.message
        if text is not None:
            session_id, key, query, message = text(session_id), text(key), text(query), text(message)
        taint = event.taint
        fields = (
            seq,
            event.at,
            session_id,
            event.agent,
            _LEVEL_NAMES[taint] if type(taint) is Level else str(taint),
            event.tool,
            key,
            query,
            event.outcome,
            chain.json_strings(event.records) if event.records else "[]",
            chain.json_strings(event.notes) if event.notes else "[]",
            message,
            digest,
        )
        previous = chain.audit_hash(previous, fields)
        rows.append((*fields, previous))
    return rows


@dataclass
class Audited:
    """What one audit chain says was done: its length, its head, and the digests of saves and deletes."""

    rows: int = 0
    head: str = ""
    saves: dict[tuple[str, str], str | None] = field(default_factory=dict)
    deletes: dict[tuple[str, str], str | None] = field(default_factory=dict)
    purges: set[tuple[str, str]] = field(default_factory=set)
    sessions: dict[str, tuple[set[str], set[str]]] = field(default_factory=dict)
    """session id -> the agents and the taints its audited calls name (a purge or an endorsement is the auditor's,
    no session's)."""
    auditors: set[str] = field(default_factory=set)
    """Who the audited purges and endorsements name (``by``): never a session."""


def check_chain(rows: Iterable[Sequence[Any]], genesis: str, prefix: str, problems: list[str]) -> Audited:
    """Recompute one chain from ``genesis`` over audit ``rows`` (seq, ..., digest, hash, in seq order); note
    every broken link in ``problems`` and return what the chain records. Any backend's rows, same rules."""
    audited = Audited()
    previous, expected_seq = genesis, 1
    for row in rows:
        audited.rows += 1
        *fields, stored = row
        seq = fields[0]
        if seq != expected_seq:
            problems.append(f"{prefix}audit seq {expected_seq} is missing (the next row is seq {seq})")
            expected_seq = seq
        expected_seq += 1
        previous = chain.audit_hash(previous, tuple(fields))
        if stored != previous:
            problems.append(f"{prefix}audit row seq {seq}: its hash does not follow (edited, forged or reordered)")
            previous = stored  # go on from the stored hash, so one edit is reported once
        agent, tool, outcome, records, digest = fields[3], fields[5], fields[8], fields[9], fields[12]
        if tool in _AUDITORS_ACTS:
            audited.auditors.add(fields[2])
        else:
            agents, taints = audited.sessions.setdefault(fields[2], (set(), set()))
            agents.add(agent)
            taints.add(fields[4])
        if outcome != "ok":
            continue
        refs = _refs(records)
        if (tool == "memory_save" and len(refs) == 1) or (tool == "endorse" and len(refs) == 2):
            audited.saves[agent, refs[0]] = digest  # an endorsement saves a trusted copy of refs[1]
        elif tool == "memory_delete" and len(refs) == 1:
            audited.deletes[agent, refs[0]] = digest
        elif tool == "purge":
            audited.purges.update((agent, ref) for ref in refs)
    audited.head = previous if audited.rows else ""
    return audited


def check_sessions(
    sessions: Iterable[Sequence[Any]], events: Iterable[Sequence[Any]], audited: Audited, prefix: str
) -> list[str]:
    """Sessions (id, agent, starting taint) and taint events (session id, from, to; in order) against the
    audited calls: every audited session exists, of the agent its calls name; its escalations climb from its
    starting taint, each from where the last ended (a lowered integrity is a taint event too: a taint's integrity
    only goes down); every call was made at a taint it held; no purge or endorsement names a session. What no
    audited call contradicts (an escalation after a session's last call, a session never used, a reason) is not
    checked."""
    problems: list[str] = []
    held: dict[str, tuple[str, list[str]]] = {}
    for session_id, agent, taint in sessions:
        held[session_id] = (agent, [taint])
    for session_id, from_level, to_level in events:
        if session_id not in held:
            problems.append(f"{prefix}session {session_id!r}: escalated, but missing (removed)")
            continue
        levels = held[session_id][1]
        number = len(levels)
        if from_level != levels[-1]:
            problems.append(
                f"{prefix}session {session_id!r}: escalation {number} starts at {from_level}, not at {levels[-1]}"
            )
        elif not _climbs(from_level, to_level):
            problems.append(
                f"{prefix}session {session_id!r}: escalation {number} does not climb ({from_level} to {to_level})"
            )
        levels.append(to_level)
    for name in sorted(audited.auditors & held.keys()):
        problems.append(f"{prefix}session {name!r}: a purge or an endorsement names it; those are an auditor's acts")
    for session_id, (agents, taints) in sorted(audited.sessions.items()):
        if session_id not in held:
            problems.append(f"{prefix}session {session_id!r}: audited, but missing (removed)")
            continue
        agent, levels = held[session_id]
        if agents != {agent}:
            problems.append(f"{prefix}session {session_id!r}: of agent {agent!r}, but audited for {sorted(agents)}")
        problems.extend(
            f"{prefix}session {session_id!r}: audited at {taint}, a taint it never held (an escalation removed?)"
            for taint in sorted(taints - set(levels))
        )
    return problems


_AUDITORS_ACTS = frozenset({"purge", "endorse"})


def _climbs(from_taint: str, to_taint: str) -> bool:
    """Whether a taint event goes strictly up the lattice (both ends are labels, the first flows to the second)."""
    try:
        before, after = Label.parse(from_taint), Label.parse(to_taint)
    except InvalidArgument:
        return False
    return before != after and before.can_flow_to(after)


def _refs(records: str) -> list[str]:
    try:
        refs = json.loads(records)
    except (TypeError, ValueError):
        return []
    return [ref for ref in refs if isinstance(ref, str)] if isinstance(refs, list) else []


def check_versions(rows: Iterable[Sequence[Any]], audited: Audited, prefix: str, problems: list[str]) -> int:
    """Check memory version ``rows`` (agent, key, content, tags, source, occurred_at, classification, version,
    saved_at, saved_by, deleted_at, deleted_by, salt, commitment, purged_at, and optionally categories and the
    sources of distrust as stored) against
    what the chain ``audited`` records; return how many there were. Any backend's rows, same rules. A version's
    categories are in its ref (``key@CONFIDENTIAL:hr/v1``), so an edited category is a save no audit row names."""
    saves, deletes, purges = audited.saves, audited.deletes, audited.purges
    count = 0
    seen: set[tuple[str, str]] = set()
    for row in rows:
        count += 1
        agent, key, content, tags, source, occurred_at, level, version, saved_at, saved_by, *rest = row
        deleted_at, deleted_by, salt, commitment, purged, *extra = rest
        categories, distrust = extra[:1], extra[1] if len(extra) > 1 else None
        try:
            label = read_label(level)
            if categories and categories[0]:  # PostgreSQL keeps a version's categories in a column of their own
                label = Label(Level(level), frozenset(categories[0]))
            ref = f"{key}@{label}/v{version}"
        except (ValueError, InvalidArgument):
            problems.append(f"{prefix}version {key!r} v{version} has no valid classification ({level!r})")
            continue
        seen.add((agent, ref))
        where = f"{prefix}version {ref} of agent {agent!r}"
        if purged is None:
            if salt is None or commitment != chain.commitment(salt, content, tags, source, occurred_at):
                problems.append(f"{where}: its content, tags or context do not match its commitment (edited)")
        elif (agent, ref) not in purges or salt is not None or content or source or occurred_at:
            problems.append(f"{where}: marked purged, but no purge of it is audited (or content remains)")
        digest = chain.version_digest(
            agent, key, stored(label), version, saved_at, saved_by, commitment or "", distrust
        )
        if (agent, ref) not in saves:
            problems.append(f"{where}: no audited save wrote it (forged, or its level, key or version edited)")
        elif saves[agent, ref] != digest:
            problems.append(f"{where}: does not match the digest its save audited (edited)")
        if deleted_at is not None and (agent, ref) not in purges:
            if deletes.get((agent, ref)) != chain.deletion_digest(digest, deleted_at, deleted_by):
                problems.append(f"{where}: its deletion does not match an audited delete")
        elif deleted_at is None and (agent, ref) in deletes:
            problems.append(f"{where}: audited as deleted, but live (its delete undone)")
    for agent, ref in sorted(saves.keys() - seen):
        problems.append(f"{prefix}version {ref} of agent {agent!r}: audited as saved, but missing (removed)")
    return count
