"""``memlab.storage.new_versions``: a batch's rows numbered as single saves would be, and ids that follow the
file's, whoever wrote it last."""

from __future__ import annotations

import sqlite3

import pytest

from memlab.labels import Label
from memlab.levels import Level
from memlab.records import NewVersion
from memlab.storage import SqliteStorage
from memlab.storage.agents import Agents
from memlab.storage.live import latest
from memlab.storage.new_versions import VersionWriter

PUBLIC = Label(Level.PUBLIC)


def _new(key: str, content: str, tags: tuple[str, ...] = ()) -> NewVersion:
    return NewVersion(key, content, tags, "2026-01-01T00:00:00+00:00")


@pytest.fixture
def storage():
    storage = SqliteStorage()
    Agents(storage.conn, storage.rules, storage.analyzer).get("main", create=True)
    return storage


def _insert(storage: SqliteStorage, writer: VersionWriter, versions: list[NewVersion]) -> list[tuple[int, str, int]]:
    keys = list(dict.fromkeys(version.key for version in versions))
    saved, digests, _texts = writer.insert(
        "main", 1, PUBLIC, versions, latest(storage.conn, 1, keys), saved_by="s", vectors=None
    )
    assert len(digests) == len(saved)
    rows = storage.conn.execute("SELECT id, key, version FROM memories ORDER BY id")
    return [row for row in rows if row[1] in keys]


def test_a_batch_is_numbered_as_single_saves_are(storage):
    # Guards: VersionWriter.insert not entering each new version in ``latest`` (seen failing: the second "a" numbered
    # 1 again, UNIQUE constraint failed).
    writer = VersionWriter(storage.conn, storage.analyzer, None, index_tag_words=True)
    assert _insert(storage, writer, [_new("a", "one"), _new("b", "two"), _new("a", "three")]) == [
        (1, "a", 1),
        (2, "b", 1),
        (3, "a", 2),
    ]
    assert _insert(storage, writer, [_new("a", "four")])[-1] == (4, "a", 3)


def test_the_next_id_is_read_again_after_forget(storage):
    # Guards: VersionWriter.forget keeping the next id (seen failing: the first writer reused id 2, UNIQUE
    # constraint failed: memories.id).
    first = VersionWriter(storage.conn, storage.analyzer, None, index_tag_words=True)
    second = VersionWriter(storage.conn, storage.analyzer, None, index_tag_words=True)
    _insert(storage, first, [_new("a", "one")])
    _insert(storage, second, [_new("b", "two")])
    with pytest.raises(sqlite3.IntegrityError):
        _insert(storage, first, [_new("c", "kept id")])
    first.forget()
    assert _insert(storage, first, [_new("c", "three")]) == [(3, "c", 1)]


@pytest.mark.parametrize(("index_tag_words", "stored"), [(True, "work"), (False, None)])
def test_the_one_word_tags_are_stored_only_when_asked(storage, index_tag_words, stored):
    # Guards: VersionWriter.insert ignoring index_tag_words (seen failing: the plain rows' store kept "work").
    writer = VersionWriter(storage.conn, storage.analyzer, None, index_tag_words=index_tag_words)
    _insert(storage, writer, [_new("a", "one", ("work", "two words"))])
    assert storage.conn.execute("SELECT index_tag_words FROM memories").fetchone() == (stored,)
