"""memlab.storage.upgrade: a schema-2 SQLite file brought to this schema in place, on its own connection.

Opening such a store through MemoryStore (and searching it after) is tests/test_context.py's.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from memlab.errors import SchemaError
from memlab.search.analyzers import get
from memlab.storage.schema import SCHEMA_VERSION, missing_objects
from memlab.storage.upgrade import UPGRADABLE, upgrade

FIXTURE = Path(__file__).parent / "fixtures" / "store-v2.db"


@pytest.fixture
def v2(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    shutil.copy(FIXTURE, tmp_path / "store.db")
    with contextlib.closing(sqlite3.connect(tmp_path / "store.db", isolation_level=None)) as db:
        yield db


def fts_tables(db: sqlite3.Connection) -> list[str]:
    return [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL%'")]


def indexed(db: sqlite3.Connection) -> dict[str, list[int]]:
    """The rowids each FTS5 index holds, read from the index itself (an external-content table's own rowids are
    its content table's)."""
    return {
        table: [row[0] for row in db.execute(f'SELECT id FROM "{table}_docsize" ORDER BY id')]
        for table in fts_tables(db)
    }


def test_upgrade_adds_the_context_and_vectors_and_keeps_every_index_whole(v2):
    # Guards: upgrade.upgrade recreating each FTS5 index without refilling it (every search then finds nothing).
    assert (
        UPGRADABLE == 2 == int(v2.execute("SELECT value FROM memlab_meta WHERE name = 'schema_version'").fetchone()[0])
    )
    before = indexed(v2)
    versions = v2.execute("SELECT id, key, content, commitment FROM memories ORDER BY id").fetchall()
    audit = v2.execute("SELECT seq, hash FROM audit ORDER BY seq").fetchall()
    v2.execute("BEGIN")
    upgrade(v2, get("porter"), "lattice")
    v2.execute("COMMIT")
    assert v2.execute("SELECT value FROM memlab_meta WHERE name = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),
    )
    assert [name for name in missing_objects(v2) if name.startswith("table")] == []
    assert indexed(v2) == before and all(before.values())
    assert v2.execute("SELECT id, key, content, commitment FROM memories ORDER BY id").fetchall() == versions
    assert v2.execute("SELECT seq, hash FROM audit ORDER BY seq").fetchall() == audit
    table = fts_tables(v2)[0]
    columns = [row[1] for row in v2.execute(f'PRAGMA table_info("{table}")')]
    assert columns[-1] == "index_tag_words" and "source" in columns


def test_upgrade_fills_the_tag_words_of_live_versions(v2):
    v2.execute("BEGIN")
    upgrade(v2, get("porter"), "lattice")
    v2.execute("COMMIT")
    words = dict(v2.execute("SELECT id, index_tag_words FROM memories"))
    assert words == {1: "personal", 2: "personal place", 3: "secret", 4: "personal", 5: None}


@pytest.mark.parametrize(
    ("analyzer", "views", "message"),
    [("snowball", "lattice", "analyzer 'porter'"), ("porter", "lattice global-statistics", "policy that created")],
)
def test_upgrade_refuses_a_file_for_another_analyzer_or_views(v2, analyzer, views, message):
    with pytest.raises(SchemaError, match=message):
        upgrade(v2, get(analyzer), views)


def test_upgrade_refuses_a_file_already_upgraded(v2):
    v2.execute("BEGIN")
    upgrade(v2, get("porter"), "lattice")
    v2.execute("COMMIT")
    with pytest.raises(SchemaError, match="newer memlab"):
        upgrade(v2, get("porter"), "lattice")
