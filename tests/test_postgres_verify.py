"""memlab.storage.postgres.verify: a PostgreSQL store verified as its owner — the protections the database must
still enforce, then every chain. The attacks themselves are tests/test_postgres.py's and test_postgres_gate.py's."""

from __future__ import annotations

import psycopg
import pytest

from memlab import MemoryStore
from memlab.errors import InvalidArgument, SchemaError
from memlab.storage.postgres.verify import verify_url


@pytest.fixture
def url(pg_url):
    with MemoryStore(pg_url) as store:
        store.session("INTERNAL").memory_save("k", "v")
    return pg_url


def owner(url: str, *statements: str) -> None:
    with psycopg.connect(url, autocommit=True, options="-c search_path=memlab") as conn:
        for statement in statements:
            conn.execute(statement)


def test_an_intact_store_verifies(url):
    result = verify_url(url)
    assert result.ok and (result.audit_rows, result.versions) == (1, 1)


@pytest.mark.parametrize(
    ("statements", "problem"),
    [
        (["ALTER TABLE audit DISABLE ROW LEVEL SECURITY"], "row-level security is off on table audit"),
        (["GRANT UPDATE ON audit TO memlab_session"], "the session role memlab_session may UPDATE the audit"),
        (["ALTER TABLE memories DISABLE TRIGGER deletions_are_final"], "deletions_are_final is missing or disabled"),
    ],
)
def test_a_protection_the_database_no_longer_enforces_is_named(url, statements, problem):
    # Guards: postgres.verify skipping its protections when every chain verifies (a disabled RLS then passes).
    owner(url, *statements)
    assert any(problem in found for found in verify_url(url).problems)


def test_an_edited_version_is_named(url):
    owner(
        url,
        "ALTER TABLE memories DISABLE TRIGGER USER",
        "UPDATE memories SET content = 'forged'",
        "ALTER TABLE memories ENABLE TRIGGER USER",
    )
    assert any("commitment" in problem for problem in verify_url(url).problems)


def test_no_store_or_a_bad_schema_is_refused(pg_url):
    with pytest.raises(SchemaError):
        verify_url(pg_url)
    with pytest.raises(InvalidArgument, match="plain lower-case"):
        verify_url(pg_url, schema="Memlab")
