"""memlab.storage.postgres.schema: a PostgreSQL store's tables, its text search configuration and rankings. One
test opens a store on the test server (tests/pgserver.py) and reads what the schema made."""

from __future__ import annotations

import psycopg
import pytest

from memlab import MemoryStore
from memlab.storage.postgres.schema import (
    FORMAT,
    RANKINGS,
    SCHEMA_VERSION,
    TEXT_SEARCH_CONFIGS,
    indexing_config,
    schema_sql,
)


@pytest.mark.parametrize(("config", "indexing"), [("english", "memlab.memlab_english"), ("simple", "simple")])
def test_english_indexes_through_the_stores_own_configuration(config, indexing):
    assert indexing_config("memlab", config) == indexing
    statements = schema_sql("memlab", "memlab_session", config)
    assert any("CREATE TEXT SEARCH CONFIGURATION memlab.memlab_english" in s for s in statements) is (
        config == "english"
    )
    assert any(f"to_tsvector('{indexing}', content)" in s for s in statements)


def test_only_porter_snowball_and_none_have_a_configuration_and_every_ranking_reads_the_document():
    assert TEXT_SEARCH_CONFIGS == {"porter": "english", "snowball": "english", "none": "simple"}
    assert all("m.document, q" in ranking for ranking in RANKINGS.values())


def test_a_new_store_has_the_tables_its_meta_and_row_level_security(pg_url):
    # Guards: schema_sql (its gate_sql part) leaving a table without row-level security (the session role then
    # reads every row).
    MemoryStore(pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        meta = dict(conn.execute("SELECT name, value FROM memlab.memlab_meta").fetchall())
        assert (meta["format"], meta["schema_version"]) == (FORMAT, str(SCHEMA_VERSION))
        secured = dict(
            conn.execute(
                "SELECT relname, relrowsecurity FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE nspname = 'memlab' AND relkind = 'r'"
            ).fetchall()
        )
    assert {"memories", "audit", "sessions", "taint_events", "chain_heads"} <= set(secured)
    assert all(secured[table] for table in ("memories", "audit", "sessions", "taint_events", "chain_heads"))
