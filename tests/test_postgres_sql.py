"""memlab.storage.postgres.sql: the small SQL helpers every PostgreSQL module shares, without a server: URLs,
what PostgreSQL can store, a row as a memory, and writes sent together."""

from __future__ import annotations

import json

import pytest

from memlab.labels import Label
from memlab.storage.postgres.sql import IDENTIFIER, is_postgres_url, memory_of, redact, storable, write_together


@pytest.mark.parametrize(
    ("path", "postgres"),
    [
        ("postgresql://h/db", True),
        ("postgres://h/db", True),
        ("POSTGRESQL://h/db", False),
        ("store.db", False),
        (None, False),
        (b"postgresql://h/db", False),
    ],
)
def test_is_postgres_url(path, postgres):
    assert is_postgres_url(path) is postgres


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://owner:s3cret@db:5432/memories", "postgresql://owner:***@db:5432/memories"),
        ("postgresql://owner:a/b:c@db/x", "postgresql://owner:***@db/x"),
        ("postgresql://owner@db/x", "postgresql://owner@db/x"),
    ],
)
def test_redact_hides_the_password(url, shown):
    assert redact(url) == shown


def test_storable_replaces_nul_only():
    assert storable("a\x00b\ufffd") == "a\ufffdb\ufffd" and storable(None) is None


@pytest.mark.parametrize(
    ("name", "plain"),
    [("memlab", True), ("memlab_session", True), ("Memlab", False), ("1st", False), ("a-b", False), ("x" * 64, False)],
)
def test_identifiers_are_plain_lower_case_names(name, plain):
    assert bool(IDENTIFIER.fullmatch(name)) is plain


@pytest.mark.parametrize(
    ("classification", "categories", "integrity", "label"),
    [
        (2, [], 1, "CONFIDENTIAL"),
        (1, ["hr", "a"], 1, "INTERNAL:a,hr"),
        (1, [], 0, "INTERNAL@untrusted"),
        (1, ["hr"], 0, "INTERNAL:hr@untrusted"),
    ],
)
def test_a_row_is_a_memory(classification, categories, integrity, label):
    distrust = [] if integrity else ["https://evil.example"]
    row = ("k", "v", json.dumps(["t"]), classification, 3, "at", "s1", "src", None, categories, integrity, distrust)
    memory = memory_of(row)
    assert (memory.key, memory.tags, memory.label, memory.version, memory.source, memory.distrust) == (
        "k",
        ("t",),
        Label.parse(label),
        3,
        "src",
        tuple(distrust),
    )


class Cursor:
    """Records what ``write_together`` sends."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, object]] = []

    def executemany(self, sql, rows):
        self.sent.extend((sql, tuple(row)) for row in rows)

    def execute(self, sql, parameters):
        self.sent.append((sql, parameters))


def test_write_together_sends_the_last_row_of_each_write_with_the_last_statement():
    # Guards: postgres.sql.write_together sending every row on its own (a call's writes then one round trip each).
    cursor = Cursor()
    write_together(cursor, [("INSERT a", [(1,), (2,)]), ("INSERT b", []), ("INSERT c", [(3,)])], ("UPDATE d", (4,)))
    assert cursor.sent == [
        ("INSERT a", (1,)),
        ("WITH written_0 AS (INSERT a), written_2 AS (INSERT c) UPDATE d", (2, 3, 4)),
    ]
    alone = Cursor()
    write_together(alone, [], ("UPDATE d", (4,)))
    assert alone.sent == [("UPDATE d", (4,))]
