"""memlab.storage.seal: sealing versions, chaining audit rows, and the checks verify makes of any backend's rows.

Tampering with a real store's files and verify's report is tests/test_tampering.py's and tests/test_verify.py's.
"""

from __future__ import annotations

import pytest

from memlab.labels import Label
from memlab.levels import Level
from memlab.records import AuditEvent, Memory, NewVersion
from memlab.storage import chain
from memlab.storage.seal import chain_rows, check_chain, check_sessions, check_versions, deletion, seal, seal_many

AT = "2026-01-01T12:00:00+00:00"
GENESIS = "0" * 64


def new(key: str = "k", content: str = "v", tags: tuple[str, ...] = ("t",), **context) -> NewVersion:
    return NewVersion(key, content, tags, AT, **context)


def test_a_seal_commits_to_content_tags_and_context():
    sealed = seal("main", new(source="msg"), 2, 1, "s1")
    assert sealed.tags == '["t"]'
    assert sealed.commitment == chain.commitment(sealed.salt, "v", '["t"]', "msg", None)
    assert sealed.digest == chain.version_digest("main", "k", 2, 1, AT, "s1", sealed.commitment)
    assert seal("main", new(source="msg"), 2, 1, "s1").salt != sealed.salt


def test_seal_many_is_seal_for_each_version():
    versions = [new("a"), new("b", tags=("t",)), new("c", tags=["x", "y"]), new("d", occurred_at="2026-01-01")]
    seals = seal_many("main", versions, "CONFIDENTIAL:hr", [1, 2, 3, 4], "s1")
    for version, number, sealed in zip(versions, [1, 2, 3, 4], seals, strict=True):
        assert sealed.tags == chain.json_strings(version.tags)
        assert sealed.commitment == chain.commitment(
            sealed.salt, version.content, sealed.tags, version.source, version.occurred_at
        )
        assert sealed.digest == chain.version_digest(
            "main", version.key, "CONFIDENTIAL:hr", number, AT, "s1", sealed.commitment
        )
    assert len({sealed.salt for sealed in seals}) == 4


def event(seq: int, tool: str = "memory_get", **fields) -> AuditEvent:
    return AuditEvent(AT, fields.pop("session_id", "s1"), "main", fields.pop("taint", Level.PUBLIC), tool, **fields)


def test_chained_rows_check_and_each_edit_is_reported_once():
    # Guards: seal.check_chain going on from its own recomputed hash after a mismatch (one edit then reported
    # at every row after it).
    rows = chain_rows([event(n) for n in range(4)], None, seq=0, previous=GENESIS)
    assert [row[0] for row in rows] == [1, 2, 3, 4]
    problems: list[str] = []
    audited = check_chain(rows, GENESIS, "", problems)
    assert problems == [] and audited.rows == 4 and audited.head == rows[-1][-1]
    edited = [list(row) for row in rows]
    edited[1][5] = "memory_delete"
    check_chain(edited, GENESIS, "f: ", problems)
    assert problems == ["f: audit row seq 2: its hash does not follow (edited, forged or reordered)"]


def test_a_missing_row_is_named():
    rows = chain_rows([event(n) for n in range(3)], None, seq=0, previous=GENESIS)
    problems: list[str] = []
    check_chain([rows[0], rows[2]], GENESIS, "", problems)
    assert problems[0] == "audit seq 2 is missing (the next row is seq 3)"


def test_chain_rows_makes_text_storable_and_numbers_after_seq():
    rows = chain_rows(
        [event(0, query="a\x00b")], None, seq=41, previous=GENESIS, text=lambda t: t and t.replace("\x00", "")
    )
    assert rows[0][0] == 42 and rows[0][7] == "ab"
    assert rows[0][4] == "PUBLIC"


def saved(memory_key: str = "k", content: str = "v") -> tuple[list[tuple], list[AuditEvent], list]:
    """One version saved at CONFIDENTIAL, its version row, and its audited save."""
    sealed = seal("main", new(memory_key, content), 2, 1, "s1")
    row = (
        "main",
        memory_key,
        content,
        sealed.tags,
        None,
        None,
        2,
        1,
        AT,
        "s1",
        None,
        None,
        sealed.salt,
        sealed.commitment,
        None,
    )
    save = event(0, "memory_save", records=(f"{memory_key}@CONFIDENTIAL/v1",), taint=Level.CONFIDENTIAL)
    return [row], [save], [sealed.digest]


def checked(rows: list[tuple], events: list[AuditEvent], digests: list) -> list[str]:
    problems: list[str] = []
    audited = check_chain(chain_rows(events, digests, seq=0, previous=GENESIS), GENESIS, "", problems)
    check_versions(rows, audited, "", problems)
    return problems


def test_a_sealed_and_audited_version_checks():
    assert checked(*saved()) == []


@pytest.mark.parametrize(
    ("index", "value", "problem"),
    [
        (2, "forged", "do not match its commitment (edited)"),
        (6, 3, "no audited save wrote it"),
        (8, "2027-01-01T00:00:00+00:00", "does not match the digest its save audited"),
        (6, "nonsense", "has no valid classification"),
        (10, AT, "its deletion does not match an audited delete"),
    ],
)
def test_an_edited_version_is_named(index, value, problem):
    rows, events, digests = saved()
    rows[0] = rows[0][:index] + (value,) + rows[0][index + 1 :]
    assert any(problem in found for found in checked(rows, events, digests))


def test_a_removed_version_and_an_audited_delete_are_checked():
    rows, events, digests = saved()
    assert checked([], events, digests) == [
        "version k@CONFIDENTIAL/v1 of agent 'main': audited as saved, but missing (removed)"
    ]
    memory = Memory("k", "v", ("t",), Label.parse("CONFIDENTIAL"), 1, AT, "s1")
    events.append(event(1, "memory_delete", records=("k@CONFIDENTIAL/v1",), taint=Level.CONFIDENTIAL))
    digests.append(deletion("main", memory, rows[0][13], "later", "s2"))
    assert any("audited as deleted, but live" in problem for problem in checked(rows, events, digests))
    rows[0] = rows[0][:10] + ("later", "s2") + rows[0][12:]
    assert checked(rows, events, digests) == []


def sessions_check(sessions, taint_events, calls) -> list[str]:
    problems: list[str] = []
    audited = check_chain(chain_rows(calls, None, seq=0, previous=GENESIS), GENESIS, "", problems)
    return check_sessions(sessions, taint_events, audited, "")


@pytest.mark.parametrize(
    ("sessions", "taint_events", "calls", "problem"),
    [
        ([("s1", "main", "PUBLIC")], [], [event(0)], None),
        ([], [], [event(0)], "session 's1': audited, but missing (removed)"),
        ([("s1", "bob", "PUBLIC")], [], [event(0)], "of agent 'bob', but audited for ['main']"),
        (
            [("s1", "main", "PUBLIC")],
            [],
            [event(0, taint=Level.INTERNAL)],
            "audited at INTERNAL, a taint it never held",
        ),
        ([("s1", "main", "PUBLIC")], [("s1", "PUBLIC", "INTERNAL")], [event(0, taint=Level.INTERNAL)], None),
        ([("s1", "main", "INTERNAL")], [("s1", "INTERNAL", "PUBLIC")], [], "does not climb (INTERNAL to PUBLIC)"),
        ([("s1", "main", "INTERNAL:hr")], [("s1", "INTERNAL:hr", "INTERNAL:legal")], [], "does not climb"),
        ([("s1", "main", "PUBLIC")], [("s1", "INTERNAL", "RESTRICTED")], [], "starts at INTERNAL, not at PUBLIC"),
        ([], [("s9", "PUBLIC", "INTERNAL")], [], "session 's9': escalated, but missing (removed)"),
    ],
)
def test_check_sessions(sessions, taint_events, calls, problem):
    problems = sessions_check(sessions, taint_events, calls)
    assert problems == [] if problem is None else any(problem in found for found in problems)
