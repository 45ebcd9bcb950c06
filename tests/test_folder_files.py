"""A store folder's agent files as the store opens and closes them: evicted files closed off the call path (and
never reused), their chain heads still recorded, each schema checked once per process, as many files open as the
process's descriptors allow, and a catalogue opened with ``sqlite3`` alone."""

from __future__ import annotations

import ast
import resource
import sqlite3
import threading
from pathlib import Path

import pytest

import memlab.storage.catalogue
import memlab.storage.folder
import memlab.storage.folder_closer
import memlab.storage.folder_files
from memlab import InvalidArgument, Level, MemoryStore, SchemaError
from memlab.storage.folder import FolderStorage
from memlab.storage.folder_files import (
    DESCRIPTORS_PER_FILE,
    MAX_OPEN_FILES,
    MIN_OPEN_FILES,
    AgentFile,
    OpenFiles,
    keep_wal_on_close,
    open_files_allowed,
)
from memlab.storage.sqlite import SqliteStorage
from tests.test_verify import _sql


def _closers() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "memlab-folder-closer"]


def _store(path: Path, cache_size: int) -> MemoryStore:
    store = MemoryStore(path, layout="folder")
    store.storage.cache_size = cache_size  # type: ignore[attr-defined]
    return store


def _audit_length(store: MemoryStore, agent: str) -> int:
    return len(list(store.storage.audit_rows(agent)))


# -- eviction: closed on the closer's thread, never reused, heads recorded -------------------------------


def test_an_evicted_file_is_closed_off_the_calling_thread_and_close_joins_the_closer(tmp_path, monkeypatch):
    """Guards: ``agent_storage`` closing the evicted file itself (``self._close_file(...)`` instead of
    ``self._closer.close_later(...)``): the close runs on the calling thread."""
    closed_on: list[str] = []
    real_close = AgentFile.close

    def spy(self: AgentFile) -> None:
        closed_on.append(threading.current_thread().name)
        real_close(self)

    monkeypatch.setattr(AgentFile, "close", spy)
    store = _store(tmp_path / "store", 1)
    for agent in ("ann", "bob", "cid"):
        store.session(Level.PUBLIC, agent=agent).memory_save("note", f"{agent}'s note")
    store.storage._closer.drain()  # type: ignore[attr-defined]
    assert closed_on == ["memlab-folder-closer", "memlab-folder-closer"]  # ann's and bob's, evicted
    store.close()
    assert closed_on[-1] == threading.current_thread().name  # cid's, still open, closed by close()
    assert _closers() == []


def test_a_file_being_closed_is_reopened_only_once_closed_and_never_reused(tmp_path, monkeypatch):
    """Guards: ``agent_storage`` without ``self._closer.wait_for(agent)``: ann's file is opened again while the
    closer is still closing her evicted one."""
    closing, release = threading.Event(), threading.Event()
    real_close = AgentFile.close

    def slow(self: AgentFile) -> None:
        if threading.current_thread().name == "memlab-folder-closer":
            closing.set()
            release.wait(10)
        real_close(self)

    store = _store(tmp_path / "store", 1)
    ann = store.session(Level.PUBLIC, agent="ann")
    ann.memory_save("note", "ann's note")
    evicted = store.storage.agent_storage("ann")  # type: ignore[attr-defined]
    monkeypatch.setattr(AgentFile, "close", slow)
    store.session(Level.PUBLIC, agent="bob").memory_save("note", "bob's note")
    assert closing.wait(10)
    found: list[object] = []
    caller = threading.Thread(target=lambda: found.append(ann.memory_get("note")))
    caller.start()
    caller.join(0.5)
    assert caller.is_alive() and found == []  # waits for the close
    release.set()
    caller.join(10)
    assert [memory.content for memory in found] == ["ann's note"]  # type: ignore[attr-defined]
    assert store.storage.agent_storage("ann") is not evicted  # type: ignore[attr-defined]
    store.close()


def test_an_error_while_closing_an_evicted_file_is_warned(tmp_path, monkeypatch):
    """Guards: the closer swallowing the error (``except Exception: pass``)."""
    real_close = AgentFile.close

    def failing(self: AgentFile) -> None:
        real_close(self)
        if threading.current_thread().name == "memlab-folder-closer":
            raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(AgentFile, "close", failing)
    store = _store(tmp_path / "store", 1)
    store.session(Level.PUBLIC, agent="ann").memory_save("note", "ann's note")
    with pytest.warns(RuntimeWarning, match="closing the file of agent 'ann' failed .*disk I/O error"):
        store.session(Level.PUBLIC, agent="bob").memory_save("note", "bob's note")
        store.close()
    assert _closers() == []


def test_the_heads_of_evicted_files_are_recorded(tmp_path):
    """Each eviction records the agent's chain in the catalogue, so a removed tail is seen against it.

    Guards: the closer closing without ``record_head(...)``: ann's record stays at her first eviction's."""
    path = tmp_path / "store"
    store = _store(path, 1)
    for round_ in range(3):
        for agent in ("ann", "bob"):
            store.session(Level.PUBLIC, agent=agent).memory_get(f"note-{round_}")
    lengths = {agent: _audit_length(store, agent) for agent in ("ann", "bob")}
    store.session(Level.PUBLIC, agent="bob").memory_get("last")  # ann's file evicted, head recorded off-thread
    store.storage._closer.drain()  # type: ignore[attr-defined]
    recorded = dict(sqlite3.connect(path / "catalogue.db").execute("SELECT name, audit_rows FROM agents").fetchall())
    assert recorded["ann"] == lengths["ann"]
    store.close()


def test_the_closer_records_heads_without_a_sync_of_its_own_per_eviction(tmp_path, monkeypatch):
    """The closer's catalogue connection commits at ``synchronous=NORMAL``, as the store's does: at SQLite's FULL
    each eviction's head record waited for a sync of the catalogue's WAL, holding its write lock (a new session's
    insert waited behind it).

    Guards: ``catalogue_connection`` without its ``PRAGMA synchronous=NORMAL``; the closer opening the catalogue
    with ``sqlite3.connect`` itself."""
    levels: list[int] = []
    real = memlab.storage.catalogue.catalogue_connection

    def spy(catalogue: Path, busy_timeout: float) -> sqlite3.Connection:
        conn = real(catalogue, busy_timeout)
        levels.append(conn.execute("PRAGMA synchronous").fetchone()[0])
        return conn

    monkeypatch.setattr(memlab.storage.folder_closer, "catalogue_connection", spy)
    with _store(tmp_path / "store", 1) as store:
        for agent in ("ann", "bob"):
            store.session(Level.PUBLIC, agent=agent).memory_save("note", f"{agent}'s note")
        store.storage._closer.drain()  # type: ignore[attr-defined]
        assert levels == [1]  # NORMAL: one connection, for ann's eviction
        assert store.storage._catalogue.execute("PRAGMA synchronous").fetchone()[0] == 1  # type: ignore[attr-defined]


def test_a_file_closed_with_its_wal_kept_is_synced_and_checkpointed_when_the_store_closes(tmp_path, monkeypatch):
    """Where the closer can keep an evicted file's WAL (Python 3.12's ``setconfig``; faked here), it syncs the WAL in
    place of the checkpoint, and the store checkpoints every such file when it closes.

    Guards: the closer without ``sync_wal(storage.path)`` (seen failing); ``close()`` without the loop over
    ``kept_wal`` (seen failing)."""
    kept, synced, checkpointed = [], [], []
    monkeypatch.setattr(memlab.storage.folder_closer, "keep_wal_on_close", lambda conn: kept.append(conn) or True)
    monkeypatch.setattr(memlab.storage.folder_closer, "sync_wal", synced.append)
    real_checkpoint = memlab.storage.folder.checkpoint
    monkeypatch.setattr(
        memlab.storage.folder, "checkpoint", lambda path: checkpointed.append(path) or real_checkpoint(path)
    )
    store = _store(tmp_path / "store", 1)
    for agent in ("ann", "bob", "cid"):
        store.session(Level.PUBLIC, agent=agent).memory_save("note", f"{agent}'s note")
    store.storage._closer.drain()  # type: ignore[attr-defined]
    files = [store.storage.agent_path(agent) for agent in ("ann", "bob")]  # type: ignore[attr-defined]
    assert len(kept) == 2 and synced == files
    store.close()
    assert sorted(checkpointed) == sorted(files)
    assert not [path for path in (tmp_path / "store").rglob("*-wal")]


def test_an_evicted_file_keeps_its_wal_exactly_where_python_offers_it(tmp_path):
    """On 3.12+ (``setconfig``) an evicted file's WAL stays (no checkpoint on the call path's behalf, nor a new WAL
    header on reopen) and the store closes with none left; on 3.11 the close checkpoints. Either way nothing is lost
    and the folder verifies."""
    # Guards: keep_wal_on_close returning True where it cannot set the option (the closer then counts a WAL the
    # close removed as kept: seen failing on 3.11).
    store = _store(tmp_path / "store", 1)
    for round_ in range(2):
        for agent in ("ann", "bob"):
            store.session(Level.PUBLIC, agent=agent).memory_save(f"note-{round_}", f"{agent}'s note {round_}")
    store.storage._closer.drain()  # type: ignore[attr-defined]
    ann_wal = Path(f"{store.storage.agent_path('ann')}-wal")  # type: ignore[attr-defined]
    offered = hasattr(sqlite3.Connection, "setconfig")
    assert ann_wal.exists() == offered
    assert bool(store.storage._closer.kept_wal) == offered  # type: ignore[attr-defined]
    assert [m.content for m in store.session(Level.PUBLIC, agent="ann").memory_list()] == [
        "ann's note 0",
        "ann's note 1",
    ]
    store.close()
    assert not [path for path in (tmp_path / "store").rglob("*-wal")]
    with MemoryStore(tmp_path / "store", layout="folder") as again:
        assert again.verify().ok


def _wal_file(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=wal")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("INSERT INTO t VALUES (1)")
    return conn


def test_a_close_keeps_the_wal_where_setconfig_sets_the_option_and_checkpoints_elsewhere(tmp_path):
    """Python 3.12+: the option is set, the close leaves the WAL with its frame, and a new connection reads the row
    from it. Python 3.11 has no ``setconfig``: nothing is set and the close checkpoints the WAL away."""
    # Guards: keep_wal_on_close returning True without setting the option (3.12: the close checkpoints; 3.11: it
    # claims a WAL it cannot keep; seen failing on 3.11).
    path = tmp_path / "a.db"
    conn = _wal_file(path)
    offered = hasattr(sqlite3.Connection, "setconfig")
    assert keep_wal_on_close(conn) == offered
    conn.close()
    wal = Path(f"{path}-wal")
    if offered:
        assert wal.stat().st_size > 32  # a header and at least one frame: no checkpoint emptied it
    else:
        assert not wal.exists()  # checkpointed and removed
    again = sqlite3.connect(path)
    assert again.execute("SELECT x FROM t").fetchall() == [(1,)]
    again.close()


def test_a_large_wal_is_checkpointed_by_the_close_not_kept(tmp_path, monkeypatch):
    """A kept WAL is read whole by the file's next open, so one over ``KEPT_WAL_BYTES`` is checkpointed by the
    evicting close (off the call path) instead: no file's WAL grows call after call.

    Guards: the closer keeping every WAL whatever its size (seen failing)."""
    monkeypatch.setattr(memlab.storage.folder_closer, "KEPT_WAL_BYTES", 0)
    monkeypatch.setattr(memlab.storage.folder_closer, "keep_wal_on_close", lambda conn: True)
    store = _store(tmp_path / "store", 1)
    for agent in ("ann", "bob"):
        store.session(Level.PUBLIC, agent=agent).memory_save("note", f"{agent}'s note")
    store.storage._closer.drain()  # type: ignore[attr-defined]
    assert not Path(f"{store.storage.agent_path('ann')}-wal").exists()  # type: ignore[attr-defined]
    assert not store.storage._closer.kept_wal  # type: ignore[attr-defined]
    assert [m.content for m in store.session(Level.PUBLIC, agent="ann").memory_list()] == ["ann's note"]
    store.close()


# -- the schema check: once per schema and process, in full for anything else ---------------------------


def test_a_second_agent_file_with_the_same_schema_is_not_checked_again(tmp_path, monkeypatch):
    """Guards: ``AgentFile._check_schema`` running ``super()._check_schema()`` on every open."""
    checks: list[Path] = []
    real_check = SqliteStorage._check_schema

    def spy(self: SqliteStorage) -> dict[str, str]:
        checks.append(self.path)
        return real_check(self)

    with _store(tmp_path / "store", 1) as store:
        for agent in ("ann", "bob", "cid"):
            store.session(Level.PUBLIC, agent=agent).memory_save("note", f"{agent}'s note")
        monkeypatch.setattr(SqliteStorage, "_check_schema", spy)
        store.session(Level.PUBLIC, agent="ann").memory_get("note")
        first = len(checks)
        for agent in ("bob", "cid", "ann"):
            assert store.session(Level.PUBLIC, agent=agent).memory_get("note") is not None
        assert first <= 1 and len(checks) == first


TAMPERING = {
    "a trigger dropped": ("DROP TRIGGER audit_no_update", "trigger audit_no_update missing"),
    "the views edited in the meta": ("UPDATE memlab_meta SET value = 'other' WHERE name = 'views'", "views"),
    "the schema version edited": ("UPDATE memlab_meta SET value = '99' WHERE name = 'schema_version'", "newer"),
}


@pytest.mark.parametrize("attack", list(TAMPERING))
def test_a_file_whose_schema_or_meta_changed_is_checked_in_full(tmp_path, attack):
    """Once a schema has passed in this process, a file reading otherwise is still refused.

    Guards: a schema key without the objects (``tuple(objects)`` dropped) or without the checked meta values."""
    statement, refusal = TAMPERING[attack]
    path = tmp_path / "store"
    with MemoryStore(path, layout="folder") as store:
        for agent in ("ann", "bob"):
            store.session(Level.PUBLIC, agent=agent).memory_save("note", f"{agent}'s note")
        bob = store.storage.agent_path("bob")  # type: ignore[attr-defined]
    _sql(bob, statement)
    with MemoryStore(path) as store:
        assert store.session(Level.PUBLIC, agent="ann").memory_get("note") is not None  # its schema passes
        with pytest.raises(SchemaError, match=refusal):
            store.session(Level.PUBLIC, agent="bob").memory_get("note")


# -- how many files stay open --------------------------------------------------------------------------


@pytest.fixture
def low_limit():
    """The soft limit on descriptors lowered to 256 for the test (restored after)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 256:
        pytest.skip("the hard limit on descriptors is too low to lower the soft one")
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
    try:
        yield hard
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _files_for(soft: int) -> int:
    """The open files a soft limit of ``soft`` descriptors gives: all but a headroom of 1,024 (or an eighth)."""
    return max(MIN_OPEN_FILES, min(MAX_OPEN_FILES, (soft - max(1024, soft // 8)) // DESCRIPTORS_PER_FILE))


def test_a_store_folder_raises_the_descriptor_limit_and_keeps_files_open_by_it(tmp_path, low_limit):
    """Guards: ``open_files_allowed`` without its ``setrlimit`` (the cache sized from 256 descriptors: 64 files)."""
    storage = FolderStorage(tmp_path / "store")
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    assert soft == min(low_limit, 65_536) if low_limit != resource.RLIM_INFINITY else soft == 65_536
    assert storage.cache_size == _files_for(soft) == open_files_allowed()
    assert soft > 1024 and storage.cache_size > MIN_OPEN_FILES  # this machine's hard limit allows more
    storage.close()


@pytest.mark.parametrize("limits", [(1024, 4096), (1024, 20_000), (4096, 4096), (1024, 1_048_576), (256, 256)])
def test_the_open_files_leave_the_process_a_headroom_of_descriptors(monkeypatch, limits):
    """Most descriptors may hold agent files (at 10,000 agents most files stay open), but never the last 1,024 nor
    the last eighth: the host's own sockets and files still open.

    Guards: the headroom dropped (``spare = soft``); the old quarter share (``soft // 12`` files)."""
    raised: list[tuple[int, int]] = []
    monkeypatch.setattr(memlab.storage.folder_files.resource, "getrlimit", lambda which: limits)
    monkeypatch.setattr(memlab.storage.folder_files.resource, "setrlimit", lambda which, pair: raised.append(pair))
    soft, hard = limits
    limit = min(hard, 65_536)
    files = open_files_allowed()
    assert raised == ([] if soft >= limit else [(limit, hard)])
    assert files == _files_for(limit)
    if files > MIN_OPEN_FILES:
        assert files * DESCRIPTORS_PER_FILE + max(1024, limit // 8) <= limit
    if MIN_OPEN_FILES < files < MAX_OPEN_FILES:
        assert files * DESCRIPTORS_PER_FILE > limit // 2  # most of them
    if limits == (1024, 20_000):
        assert files == 5833  # this machine's limits: 58% of 10,000 agents' files open


def test_store_folders_sized_by_the_process_share_its_budget_of_open_files(tmp_path, monkeypatch):
    """Two store folders of one process each sized alone would each take the descriptors meant for both.

    Guards: the eviction by this store's own count alone (``or self._over_shared_budget()`` dropped)."""
    monkeypatch.setattr(memlab.storage.folder, "open_files_allowed", lambda: 4)
    # A count of this test's own: stores other tests left open in this process would otherwise share the budget.
    shared = OpenFiles()
    monkeypatch.setattr(memlab.storage.folder, "OPEN_FILES", shared)
    with MemoryStore(tmp_path / "a", layout="folder") as first, MemoryStore(tmp_path / "b", layout="folder") as second:
        for agent in ("ann", "bob", "cid", "dan"):
            first.session(Level.PUBLIC, agent=agent).memory_save("note", f"{agent}'s note")
        assert len(first.storage._files) == 4 and shared.count == 4  # type: ignore[attr-defined]
        for agent in ("eve", "fay", "gus"):
            second.session(Level.PUBLIC, agent=agent).memory_save("note", f"{agent}'s note")
            # the second keeps one file open, whatever it opens, while the first holds the rest
            assert len(second.storage._files) == 1  # type: ignore[attr-defined]
            assert shared.count <= 5
        assert second.session(Level.PUBLIC, agent="eve").memory_get("note") is not None
        sized = FolderStorage(tmp_path / "c", cache_size=3)  # a number given is the store's own
        try:
            for agent in ("hal", "ida", "jon"):
                sized.agent_storage(agent)
            assert len(sized._files) == 3
        finally:
            sized.close()
    assert shared.count == 0  # every file counted is given back when its store closes


def test_a_cache_size_given_leaves_the_descriptor_limit_alone(tmp_path, low_limit):
    storage = FolderStorage(tmp_path / "store", cache_size=5)
    assert storage.cache_size == 5 and resource.getrlimit(resource.RLIMIT_NOFILE)[0] == 256
    storage.close()


# -- the catalogue: sqlite3 alone ---------------------------------------------------------------------


def test_an_existing_catalogue_is_opened_and_written_without_sqlite_utils(tmp_path, monkeypatch):
    """Guards: ``open_catalogue`` wrapping the connection in ``sqlite_utils.Database`` again."""
    import sqlite_utils

    path = tmp_path / "store"
    FolderStorage(path).close()

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("sqlite_utils used to open a catalogue")

    monkeypatch.setattr(sqlite_utils, "Database", refused)
    storage = FolderStorage(path, cache_size=1)
    assert storage.agents() == [] and storage.meta["format"] == "memlab-folder"
    storage.close()


def test_the_catalogue_module_does_not_import_sqlite_utils():
    """``import memlab`` must not load sqlite-utils (and pandas with it) for the catalogue's sake.

    Guards: ``import sqlite_utils`` at the top of ``catalogue.py``."""
    tree = ast.parse(Path(memlab.storage.catalogue.__file__).read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert not [name for name in imported if name.split(".")[0] == "sqlite_utils"]


# -- sessions -------------------------------------------------------------------------------------------


def test_a_session_id_taken_by_another_agent_is_refused_before_anything_is_written(tmp_path):
    """The catalogue holds every session id of the store, whether or not the agent's file that holds the session is
    open; the refusal makes no file for the new agent.

    Guards: ``add_session`` without its catalogue read before ``agent_storage`` (bob's file is made, then the
    insert refused)."""
    path = tmp_path / "store"
    with _store(path, 1) as store:
        store.session(agent="alice", session_id="s1").memory_save("note", "alice's note")
        store.session(agent="cid").memory_get("note")  # alice's file evicted and closed
        with pytest.raises(InvalidArgument, match="session id 's1' is already taken in this store"):
            store.session(agent="bob", session_id="s1")
        assert store.storage.agents() == ["alice", "cid"]  # type: ignore[attr-defined]
        assert not store.storage.agent_path("bob").exists()  # type: ignore[attr-defined]
        assert [row["agent"] for row in store.storage.session_rows() if row["id"] == "s1"] == ["alice"]
