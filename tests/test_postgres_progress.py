"""memlab.storage.postgres.progress: a class's progress records on PostgreSQL, under row-level security: the
teacher reads and resets all of them, a student's connection writes and reads its own only, seats are taken."""

from __future__ import annotations

import psycopg
import pytest

from memlab import MemoryStore
from memlab.errors import Denied, SchemaError
from memlab.storage.postgres.progress import PostgresProgress


@pytest.fixture
def url(pg_url):
    MemoryStore(pg_url).close()
    return pg_url


def test_teacher_and_students_records_and_resets(url):
    # Guards: progress's row-level policy on class_progress admitting any student's row (ana then reads ben's).
    teacher, ana, ben = (
        PostgresProgress(url),
        PostgresProgress(url, student="ana"),
        PostgresProgress(url, student="ben"),
    )
    try:
        ana.record("ana", {"step": 1})
        ben.record("ben", {"step": 2})
        assert sorted(teacher.records()) == [("ana", {"step": 1}), ("ben", {"step": 2})]
        assert ana.records() == [("ana", {"step": 1})]
        teacher.reset("ana")
        teacher.reset()
        assert (ana.resets("ana"), ben.resets("ben")) == (2, 1)
        with pytest.raises((Denied, psycopg.Error)):
            ana.record("ben", {"step": 99})
        assert dict(teacher.records())["ben"] == {"step": 2}
    finally:
        for records in (teacher, ana, ben):
            records.close()


def test_a_seat_is_held_until_the_connection_closes(url):
    first, second = PostgresProgress(url, student="ana"), PostgresProgress(url, student="ben")
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            allowed, reserved = (
                int(conn.execute(f"SHOW {name}").fetchone()[0])
                for name in ("max_connections", "superuser_reserved_connections")
            )
        room = allowed - reserved
        each = room - 1  # one seat in all
        assert first.take_seat(reserved=0, each=each) == 1
        assert second.take_seat(reserved=0, each=each) is None
        first.close()
        assert second.take_seat(reserved=0, each=each) == 1
    finally:
        second.close()


def test_a_database_without_a_store_is_refused(pg_url):
    with pytest.raises(SchemaError, match="holds no memlab store"):
        PostgresProgress(pg_url)
