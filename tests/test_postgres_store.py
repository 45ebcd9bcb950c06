"""memlab.storage.postgres.store: PostgresStorage's own behaviour — what it declares, its rankings, its auditor's
rows, dropping a throwaway schema. The semantics on PostgreSQL are the contract suite's (postgres backend), its
attacks tests/test_postgres.py's."""

from __future__ import annotations

import psycopg
import pytest

from memlab import MemoryStore, Ranking
from memlab.errors import InvalidArgument
from memlab.storage.capabilities import BACKENDS
from memlab.storage.postgres import PostgresStorage
from memlab.storage.postgres.schema import RANKINGS


@pytest.fixture
def storage(pg_url):
    storage = PostgresStorage(pg_url, rank_function="ts_rank-length")
    yield storage
    storage.close()


def test_it_declares_the_postgres_capabilities_and_ranks_by_its_function(storage):
    assert storage.capabilities == BACKENDS["postgres"]
    assert RANKINGS["ts_rank-length"] in storage.search_statement
    storage.ranking = Ranking(tag_boost=3.0)
    assert storage.ranking.tag_boost == 3.0
    with pytest.raises(InvalidArgument, match="keeps no dense vectors"):
        storage.ranking = Ranking.hybrid()


def test_the_auditors_rows_name_a_versions_label_whole(storage):
    # Guards: PostgresStorage.history_rows giving a version's level without its categories.
    store = MemoryStore(storage=storage)
    store.session("CONFIDENTIAL:hr").memory_save("k", "v", tags=["t"])
    store.session("PUBLIC", "bob").memory_save("b", "x")
    (row,) = storage.history_rows("main", "k")
    assert (row["classification"], row["tags"], row["content"]) == ("CONFIDENTIAL:hr", ["t"], "v")
    assert storage.agents() == ["bob", "main"]
    assert [row["records"] for row in storage.audit_rows("main")] == [["k@CONFIDENTIAL:hr/v1"]]


def test_drop_removes_the_schema_and_everything_in_it(pg_url):
    storage = PostgresStorage(pg_url, schema="scratch")
    MemoryStore(storage=storage).session().memory_save("k", "v")
    storage.drop()
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT to_regnamespace('scratch')").fetchone() == (None,)
