"""The floor of ``benchmarks/bench_floor.py`` keeps the guarantees it is the floor of: a cheaper floor that dropped one
would make memlab look slower than it is."""

from __future__ import annotations

import hashlib
import hmac
import sqlite3
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_floor import FloorStore, _encode, _sha256  # noqa: E402
from bench_store import Note  # noqa: E402

from memlab import Level  # noqa: E402


@pytest.fixture
def floor(tmp_path):
    store = FloorStore(tmp_path / "floor.db")
    yield store
    store.close()


def _note(key: str, content: str, level: Level, tags: tuple[str, ...] = ("work",)) -> Note:
    return Note(key, content, tags, level)


def test_a_session_sees_the_highest_version_at_or_below_its_taint_and_searches_only_those(floor):
    public, internal = floor.session(Level.PUBLIC), floor.session(Level.INTERNAL)
    public.save(_note("plan", "picnic in the park", Level.PUBLIC))
    internal.save(_note("plan", "merger talks on friday", Level.INTERNAL))
    internal.save(_note("secret", "merger price agreed", Level.INTERNAL))

    assert public.get("plan").content == "picnic in the park"
    assert internal.get("plan").content == "merger talks on friday"
    assert public.get("secret") is None
    assert public.search("merger") == []
    assert sorted(hit.key for hit in internal.search("merger")) == ["plan", "secret"]
    # The PUBLIC index holds the PUBLIC view only, so its statistics move with nothing saved above it.
    # Guards: writing a save's version into the view and index of every taint (the save's `taint < level` skip
    # dropped and `_winner` reading every level, not those <= the taint) fails here.
    assert floor.conn.execute("SELECT count(*) FROM fts_public WHERE fts_public MATCH 'merger'").fetchone() == (0,)


def test_every_call_appends_one_chained_audit_row_and_every_version_matches_its_commitment(floor):
    session = floor.session(Level.PUBLIC)
    session.save_many([_note(f"n{i}", f"note number {i}", Level.PUBLIC) for i in range(3)])
    session.save(_note("n0", "note zero, again", Level.PUBLIC))
    session.get("n0")
    session.get("missing")
    session.search("note")

    rows = floor.conn.execute("SELECT * FROM audit ORDER BY seq").fetchall()
    assert [row[5] for row in rows] == ["memory_save"] * 4 + ["memory_get"] * 2 + ["memory_search"]
    assert rows[5][8] == "not_found"
    # Guards: a row's hash not covering the previous one (`_sha256(seq, *row)` in FloorStore._audit) fails here.
    previous = floor.conn.execute("SELECT value FROM meta WHERE name = 'genesis'").fetchone()[0]
    for row in rows:
        previous = _sha256(previous, *row[:-1])
        assert row[-1] == previous
    versions = floor.conn.execute("SELECT key, version, content, tags, salt, commitment FROM versions").fetchall()
    assert [(key, number) for key, number, *_ in versions] == [("n0", 1), ("n1", 1), ("n2", 1), ("n0", 2)]
    for *_, content, tags, salt, commitment in versions:
        assert hmac.new(salt, _encode((content, tags, None, None)), hashlib.sha256).hexdigest() == commitment


def test_a_search_fails_when_an_index_returns_a_version_outside_the_view(floor):
    public, internal = floor.session(Level.PUBLIC), floor.session(Level.INTERNAL)
    public.save(_note("lunch", "soup at noon", Level.PUBLIC))
    internal.save(_note("deal", "takeover at noon", Level.INTERNAL))
    deal = floor.conn.execute("SELECT id FROM versions WHERE key = 'deal'").fetchone()[0]
    floor.conn.execute(
        "INSERT INTO fts_public (rowid, key, content, tags) VALUES (?, 'deal', 'takeover at noon', '[]')", (deal,)
    )
    # Guards: reading the winners' rows from versions alone (without the join on effective) fails here.
    with pytest.raises(RuntimeError, match="outside its view"):
        public.search("takeover")


def test_the_audit_and_the_versions_refuse_to_be_changed(floor):
    session = floor.session(Level.PUBLIC)
    session.save(_note("k", "v", Level.PUBLIC))
    for statement in (
        "UPDATE audit SET outcome = 'error'",
        "DELETE FROM audit",
        "INSERT OR REPLACE INTO audit SELECT * FROM audit WHERE seq = 1",
        "UPDATE versions SET content = 'w'",
        "DELETE FROM versions",
    ):
        with pytest.raises(sqlite3.IntegrityError, match="frozen"):
            floor.conn.execute(statement)


def test_raw_fts5_with_the_audited_commit_ranks_as_raw_fts5_and_commits_one_chained_row(tmp_path):
    """The baseline beside the search target does memlab's per-search transaction and nothing more: the same ranking
    as raw FTS5, one audit row per search naming the hits, chained to the row before, committed."""
    from bench_bulk import raw_search
    from bench_floor import raw_search_audited
    from bench_store import RawStore

    raw = RawStore(tmp_path / "raw.db")
    raw.load([_note(f"k{i}", f"apple pie number {i}", Level.PUBLIC) for i in range(5)])
    try:
        for query in ("apple", "pie 3", "nothing"):
            assert raw_search_audited(raw, query) == raw_search(raw, query)
        rows = raw.conn.execute(
            "SELECT seq, at, session_id, agent, taint, tool, key, query, outcome, records, notes, "
            "message FROM audit ORDER BY seq"
        ).fetchall()
        assert [row[7] for row in rows] == ["apple", "pie 3", "nothing"] and not raw.conn.in_transaction
        previous = ""
        for seq, *fields, chained in rows:
            assert chained == _sha256(previous, seq, *fields)
            previous = chained
    finally:
        raw.close()
