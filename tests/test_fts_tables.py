"""memlab.storage.fts_tables: the FTS5 indexes' names, the columns they read, the tag words, their creation."""

from __future__ import annotations

import contextlib
import sqlite3

import pytest

from memlab.levels import Level
from memlab.search.analyzers import get
from memlab.search.ranking import COLUMNS
from memlab.storage.fts_tables import create_fts_table, fts_table, indexed_columns, tag_words


@pytest.mark.parametrize(
    ("agent_id", "taint", "name"),
    [(1, Level.PUBLIC, "fts_1_public"), (12, Level.RESTRICTED, "fts_12_restricted"), (3, None, "fts_3_all")],
)
def test_fts_table_names_an_agents_view(agent_id, taint, name):
    assert fts_table(agent_id, taint) == name


@pytest.mark.parametrize("analyzer", ["porter", "none", "snowball"])
def test_the_indexed_columns_follow_the_rankings_columns_then_the_tag_words(analyzer):
    columns = indexed_columns(get(analyzer))
    assert len(columns) == len(COLUMNS) + 1 and columns[-1] == "index_tag_words"
    prefix = "index_" if get(analyzer).prestemmed else ""
    assert columns[:3] == tuple(prefix + column for column in COLUMNS[:3])


@pytest.mark.parametrize(
    ("analyzer", "tags", "words"),
    [
        ("porter", ["Caroline", "session-1", "work"], "caroline work"),
        ("porter", ["two words", "x_y"], None),
        ("porter", [], None),
        ("none", ["Running"], "running"),
    ],
)
def test_tag_words_are_the_one_word_tags(analyzer, tags, words):
    # Guards: fts_tables.tag_words keeping a tag of several words (the boost then matching part of a phrase).
    assert tag_words(get(analyzer), tags) == words


def test_a_prestemming_analyzer_stems_its_tag_words():
    analyzer = next(get(name) for name in ("snowball", "nltk-porter") if get(name).prestemmed)
    assert tag_words(analyzer, ["running"]) == analyzer.index_text("running")


def test_create_fts_table_makes_an_external_content_index_once():
    analyzer = get("porter")
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        db.execute(
            "CREATE TABLE memories (id INTEGER PRIMARY KEY, key, content, tags, source, index_when, index_tag_words)"
        )
        table = create_fts_table(db, 1, analyzer, Level.INTERNAL)
        assert create_fts_table(db, 1, analyzer, Level.INTERNAL) == table == "fts_1_internal"
        db.execute(f"INSERT INTO {table}(rowid, key, content, tags) VALUES (1, 'user-name', 'She runs', '[]')")
        assert db.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH 'running'").fetchall() == [(1,)]
        assert create_fts_table(db, 1, analyzer, None, name="fts_1_internal:hr") == "fts_1_internal:hr"
