"""The storage contract, run against every backend: files shared between processes, concurrent writers,
crashes mid-batch, schema checks on open, bulk saves equal to single saves, hostile agent names."""

from __future__ import annotations

import inspect
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memlab import InvalidArgument, Level, MemoryStore, SchemaError, TaintError
from memlab.labels import Ambiguous, Label
from memlab.policy import Policy
from memlab.storage import FolderStorage, PostgresStorage, SqliteStorage, StorageProvider
from memlab.storage.schema import SCHEMA_VERSION
from tests.backends import CAPABILITIES, HOSTILE_AGENTS, detect, open_store
from tests.conftest import fixed_clock

pytestmark = pytest.mark.contract

ON_DISK = ["file", "folder"]


@pytest.fixture(params=ON_DISK)
def layout(request) -> str:
    return request.param


@pytest.fixture
def path(tmp_path: Path, layout: str) -> Path:
    return tmp_path / "memories"


def _open(path: Path, layout: str, **options) -> MemoryStore:
    return MemoryStore(path, layout=layout, **options)


@pytest.mark.parametrize("implementation", [SqliteStorage, FolderStorage, PostgresStorage])
def test_every_implementation_takes_the_protocols_parameters(implementation):
    """Same methods, same parameter names and kinds, as the protocol declares them."""
    for name in [n for n in dir(StorageProvider) if not n.startswith("_") and n != "rules"]:
        declared = inspect.signature(getattr(StorageProvider, name)).parameters
        actual = inspect.signature(getattr(implementation, name)).parameters
        assert [(p.name, p.kind) for p in actual.values()] == [(p.name, p.kind) for p in declared.values()], name


def test_the_declared_capabilities_are_what_each_backend_does(backend):
    """tests/backends.py declares what each backend can do; trying each feature must find exactly that.
    Guards: a capability added to or dropped from a backend's CAPABILITIES entry (or a backend that starts or
    stops refusing a feature) without the other changing."""
    assert detect(backend) == CAPABILITIES[backend]


def test_a_new_path_is_a_folder_unless_a_file_is_asked_for(tmp_path):
    with MemoryStore(tmp_path / "a") as store:
        store.session().memory_save("k", "v")
        assert isinstance(store.storage, FolderStorage)
    with MemoryStore(tmp_path / "b", layout="file") as store:
        store.session().memory_save("k", "v")
        assert isinstance(store.storage, SqliteStorage)
    assert (tmp_path / "a").is_dir() and (tmp_path / "b").is_file()
    with MemoryStore(tmp_path / "b") as store:  # an existing file opens as a file store
        assert store.session().memory_get("k").content == "v"
    with pytest.raises(InvalidArgument, match="is a file store"):
        MemoryStore(tmp_path / "b", layout="folder")


def test_a_store_reopens_with_everything(path, layout):
    with _open(path, layout) as store:
        store.session(Level.INTERNAL, session_id="a").memory_save("k", "v")
    with _open(path, layout) as store:
        assert store.session(Level.INTERNAL).memory_get("k").content == "v"
        assert store.sessions()["id"].tolist()[0] == "a"
        assert store.audit()["tool"].tolist() == ["memory_save", "memory_get"]


def test_files_use_wal(path, layout):
    with _open(path, layout) as store:
        store.session().memory_save("k", "v")
        file = path if layout == "file" else store.storage.agent_path("main")
        with sqlite3.connect(file) as conn:
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_session_ids_are_unique_in_the_whole_store(path, layout):
    with _open(path, layout) as store:
        store.session(agent="alice", session_id="s1")
        with pytest.raises(InvalidArgument, match="already taken"):
            store.session(agent="bob", session_id="s1")


def test_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "one.db"
    MemoryStore(path, layout="file").close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memlab_meta SET value = ? WHERE name = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(SchemaError, match="newer memlab"):
        MemoryStore(path)


def test_a_newer_folder_catalogue_is_refused(tmp_path):
    path = tmp_path / "folder"
    MemoryStore(path).close()
    with sqlite3.connect(path / "catalogue.db") as conn:
        conn.execute("UPDATE memlab_meta SET value = '99' WHERE name = 'schema_version'")
    with pytest.raises(SchemaError, match="newer memlab"):
        MemoryStore(path)


def test_a_foreign_database_is_refused_and_left_alone(tmp_path):
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    with pytest.raises(SchemaError, match=r"not a memlab store.*customers"):
        MemoryStore(path)
    with sqlite3.connect(path) as conn:
        tables = [row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert tables == ["customers"]


def test_a_folder_holding_other_files_is_refused_and_left_alone(tmp_path):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(SchemaError, match=r"not a memlab store.*cat.jpg"):
        MemoryStore(tmp_path / "photos")
    assert [entry.name for entry in (tmp_path / "photos").iterdir()] == ["cat.jpg"]


def test_a_file_that_is_not_sqlite_is_refused(tmp_path):
    path = tmp_path / "notes.db"
    path.write_text("this is not a database, just some text that is long enough to matter" * 20)
    with pytest.raises(SchemaError, match="cannot open"):
        MemoryStore(path)


def test_a_write_that_fails_leaves_nothing_behind(backend, monkeypatch):
    with open_store(backend) as store:
        session = store.session()
        session.memory_save("k", "one")
        storage = store.storage if backend != "folder" else store.storage.agent_storage("main")
        # The save fails at its audit row, after its versions, views and indexes are written.
        if backend == "postgres":
            monkeypatch.setattr(storage, "_append_audits", _explode)
        else:
            monkeypatch.setattr(storage._audit, "append", _explode)
        with pytest.raises(RuntimeError):
            session.memory_save_many([{"key": "k", "content": "two"}, {"key": "j", "content": "three"}])
        monkeypatch.undo()
        assert session.memory_get("k").content == "one"
        assert [h.memory.content for h in session.memory_search("one two three")] == ["one"]
        assert store.history("k")["version"].tolist() == [1]
        assert store.history("j").empty


def _explode(*args):
    raise RuntimeError("crash mid-save")


# -- bulk saves ---------------------------------------------------------------------------------------

RECORDS = [
    {"key": "user-name", "content": "Alice Smith", "tags": ["personal"]},
    {"key": "deadline", "content": "the project is due in March", "tags": ["work", "project"]},
    {"key": "user-name", "content": "Alice Jones, after the wedding"},
    {"key": "coffee", "content": "likes coffee black, no sugar", "tags": ["preference"]},
    {"key": "deadline", "content": "moved to April", "tags": ["work"]},
]


def _snapshot(store: MemoryStore) -> dict:
    views = {level: store.view(level).to_dict("records") for level in Level}
    searches = {}
    for level in Level:
        session = store.session(level, session_id=f"reader-{level.name}")
        searches[level] = [(h.memory.ref(), h.score, h.snippet) for h in session.memory_search("alice project march")]
    return {
        "versions": store.versions().to_dict("records"),
        "views": views,
        "searches": searches,
        "audit": store.audit().drop(columns="seq").to_dict("records"),
    }


def test_a_bulk_save_equals_saving_one_by_one(backend):
    """The store, the views at every taint, the search results and the audit are the same."""
    snapshots = []
    for bulk in (False, True):
        with open_store(backend, clock=fixed_clock) as store:
            low = store.session(Level.PUBLIC, session_id="low")
            low.memory_save("user-name", "Al")
            high = store.session(Level.CONFIDENTIAL, session_id="high")
            high.memory_save("coffee", "a secret blend")
            session = store.session(Level.INTERNAL, session_id="import")
            if bulk:
                session.memory_save_many(RECORDS, batch_size=2)
            else:
                for record in RECORDS:
                    session.memory_save(**record)
            snapshots.append(_snapshot(store))
    assert snapshots[0] == snapshots[1]


def test_a_bad_record_writes_nothing_of_its_batch(backend):
    records = [*RECORDS, {"key": "ok", "content": "fine"}, {"key": "bad\x00key", "content": "x"}]
    with open_store(backend) as store:
        session = store.session(Level.INTERNAL)
        with pytest.raises(InvalidArgument, match=r"record 7: key .* control characters.*\(5 records saved") as caught:
            session.memory_save_many(records, batch_size=5)
        assert caught.value.record == 7
        assert len(store.versions()) == 5  # the first batch stands; nothing of the second
        assert store.history("ok").empty
        audit = store.audit()
        assert audit["tool"].tolist() == ["memory_save"] * 5 + ["memory_save_many"]
        assert audit["outcome"].iloc[-1] == "invalid_argument"


# -- many agents and hostile names --------------------------------------------------------------------


def test_hostile_agent_names_stay_inside_the_folder_and_apart(tmp_path):
    path = tmp_path / "store"
    outside_before = sorted(p.name for p in tmp_path.iterdir())
    with MemoryStore(path) as store:
        for agent in HOSTILE_AGENTS:
            store.session(Level.PUBLIC, agent).memory_save("whoami", f"I am {agent}")
        assert store.storage.agents() == sorted(HOSTILE_AGENTS)
        for agent in HOSTILE_AGENTS:
            session = store.session(Level.PUBLIC, agent)
            assert session.memory_get("whoami").content == f"I am {agent}"
            assert [hit.memory.content for hit in session.memory_search("whoami")] == [f"I am {agent}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*outside_before, "store"])
    files = [p for p in path.rglob("*") if p.is_file()]
    assert all(p.resolve().is_relative_to(path.resolve()) for p in files)
    assert len([p for p in files if p.suffix == ".db"]) == len(HOSTILE_AGENTS) + 1  # and the catalogue


def test_an_agent_name_that_is_not_unicode_text_is_refused(tmp_path):
    with MemoryStore(tmp_path / "store") as store, pytest.raises(InvalidArgument, match="agent name"):
        store.session(agent="caf\ud800")


def test_the_schema_does_not_grow_with_the_number_of_agents(tmp_path):
    path = tmp_path / "store"
    with MemoryStore(path) as store:
        for n in range(40):
            session = store.session(Level.PUBLIC if n % 2 else Level.CONFIDENTIAL, f"agent-{n}")
            session.memory_save("note", f"note of agent {n}")
        sizes = set()
        for n in (0, 1, 39):
            with sqlite3.connect(store.storage.agent_path(f"agent-{n}")) as conn:
                sizes.add(conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0])
        with sqlite3.connect(path / "catalogue.db") as conn:
            catalogue = conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
    # The same small schema for every agent; the catalogue: 6 objects, and the log of agents with its 2 triggers.
    assert len(sizes) == 1 and max(sizes) <= 30 and catalogue <= 9


def test_the_connection_cache_stays_bounded_and_files_reopen(tmp_path):
    with MemoryStore(tmp_path / "store") as store:
        store.storage.cache_size = 3
        for n in range(10):
            store.session(agent=f"a{n}").memory_save("k", f"v{n}")
        assert len(store.storage._files) <= 3
        assert [store.session(agent=f"a{n}").memory_get("k").content for n in range(10)] == [f"v{n}" for n in range(10)]


def test_bm25_statistics_never_cross_agents(tmp_path):
    """The same memories score the same whatever another agent holds."""
    scores = []
    for crowd in (0, 30):
        with MemoryStore(tmp_path / f"store-{crowd}") as store:
            other = store.session(agent="other")
            for n in range(crowd):
                other.memory_save(f"n{n}", "coffee coffee coffee everywhere")
            mine = store.session(agent="mine")
            mine.memory_save("a", "coffee in the morning")
            mine.memory_save("b", "tea in the evening")
            scores.append([(h.memory.key, h.score) for h in mine.memory_search("coffee evening")])
    assert scores[0] == scores[1]


# -- processes ----------------------------------------------------------------------------------------


def _python(code: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args])


def test_a_second_process_sees_everything(path, layout):
    with _open(path, layout) as store:
        store.session(Level.CONFIDENTIAL, session_id="first").memory_save("plan", "acquire Initech", tags=["m&a"])
    child = _python(
        """
        import sys
        from memlab import MemoryStore, Level
        store = MemoryStore(sys.argv[1])
        s = store.session(Level.CONFIDENTIAL, session_id="second")
        assert s.memory_get("plan").content == "acquire Initech"
        assert [h.memory.key for h in s.memory_search("Initech")] == ["plan"]
        assert store.session(Level.PUBLIC).memory_get("plan") is None
        s.memory_save("plan", "acquire Initech and Globex")
        """,
        str(path),
    )
    assert child.wait(timeout=60) == 0
    with _open(path, layout) as store:
        session = store.session(Level.CONFIDENTIAL)
        assert session.memory_get("plan").content == "acquire Initech and Globex"
        assert set(store.sessions()["id"]) >= {"first", "second"}
        assert store.audit()["tool"].tolist() == [
            "memory_save",
            "memory_get",
            "memory_search",
            "memory_get",
            "memory_save",
            "memory_get",
        ]


def test_concurrent_writers_lose_nothing(path, layout):
    _open(path, layout).close()
    writer = """
        import sys
        from memlab import MemoryStore, Level
        store = MemoryStore(sys.argv[1])
        name = sys.argv[2]
        s = store.session(Level.INTERNAL, session_id=name)
        mine = store.session(Level.INTERNAL, agent=name)
        for n in range(200):
            s.memory_save(f"{name}-{n}", f"note {n} from {name}")
            s.memory_save("shared", f"{name} {n}")
            mine.memory_save("own", f"{n}")
        """
    children = [_python(writer, str(path), name) for name in ("alpha", "beta")]
    assert [child.wait(timeout=120) for child in children] == [0, 0]
    with _open(path, layout) as store:
        session = store.session(Level.INTERNAL)
        assert len(session.memory_list()) == 401
        assert store.history("shared")["version"].tolist() == list(range(1, 401))
        assert len(session.memory_search("note", max_results=100)) == 100
        assert len(store.audit("main")) == 800 + 2  # the list and search above are audited too
        for name in ("alpha", "beta"):
            assert store.history("own", agent=name)["version"].tolist() == list(range(1, 201))


def test_a_process_killed_mid_import_leaves_whole_batches(path, layout):
    """SIGKILL during a bulk import: every batch is all there or not there, views and audit agree."""
    _open(path, layout).close()
    importer = _python(
        """
        import sys
        from memlab import MemoryStore, Level
        store = MemoryStore(sys.argv[1])
        s = store.session(Level.INTERNAL, session_id="importer")
        records = ({"key": f"k{n % 700}", "content": f"memory number {n} about coffee"} for n in range(10**7))
        s.memory_save_many(records, batch_size=100)
        """,
        str(path),
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.3)
            with _open(path, layout) as store:
                if len(store.audit()) >= 300:
                    break
    finally:
        os.kill(importer.pid, signal.SIGKILL)
        importer.wait(timeout=30)
    with _open(path, layout) as store:
        versions = store.versions()
        assert len(versions) >= 300 and len(versions) % 100 == 0
        assert len(store.audit()) == len(versions)
        session = store.session(Level.INTERNAL)
        view = session.memory_list()
        newest = versions.sort_values("version").groupby("key").tail(1)
        assert sorted((m.key, m.version) for m in view) == sorted(zip(newest["key"], newest["version"], strict=True))
        hits = session.memory_search("coffee", max_results=100)
        assert len(hits) == min(100, len(view))


# -- opening never harms ------------------------------------------------------------------------------


def _memlab_file(path: Path, *statements: str) -> None:
    MemoryStore(path, layout="file").close()
    conn = sqlite3.connect(path)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()


HARMFUL_OPENS = {
    "another application's database": lambda p: _sql_file(p, "CREATE TABLE customers (id INTEGER PRIMARY KEY)"),
    "a file holding only a view": lambda p: _sql_file(p, "CREATE VIEW v AS SELECT 1 AS one"),
    "a memlab file without its audit": lambda p: _memlab_file(
        p,
        "DROP TRIGGER audit_no_update",
        "DROP TRIGGER audit_no_delete",
        "DROP TRIGGER audit_no_replace",
        "DROP TABLE audit",
    ),
    "a memlab file truncated to its header": lambda p: (_memlab_file(p), p.write_bytes(p.read_bytes()[:100])),
    "a newer schema": lambda p: _memlab_file(p, "UPDATE memlab_meta SET value = '99' WHERE name = 'schema_version'"),
    "a garbled schema version": lambda p: _memlab_file(
        p, "UPDATE memlab_meta SET value = 'x2' WHERE name = 'schema_version'"
    ),
    "text": lambda p: p.write_text("not a database " * 100),
}


def _sql_file(path: Path, statement: str) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(statement)
    conn.close()


@pytest.mark.parametrize("case", list(HARMFUL_OPENS))
def test_opening_a_file_that_is_not_a_store_leaves_it_byte_identical(tmp_path, case):
    path = tmp_path / "victim.db"
    HARMFUL_OPENS[case](path)
    before = {entry.name: entry.read_bytes() for entry in tmp_path.iterdir()}
    with pytest.raises(SchemaError):
        MemoryStore(path)
    assert {entry.name: entry.read_bytes() for entry in tmp_path.iterdir()} == before


def test_a_read_only_store_file_is_refused_clearly(tmp_path, monkeypatch):
    path = tmp_path / "store.db"
    _memlab_file(path)
    before = path.read_bytes()
    # Root may write a 0444 file, and CI runs as root: the file is made read-only as memlab sees it.
    monkeypatch.setattr("memlab.storage.opening.os.access", lambda target, mode: Path(target) != path)
    with pytest.raises(SchemaError, match="read-only"):
        MemoryStore(path)
    assert path.read_bytes() == before


@pytest.mark.parametrize("layout", ON_DISK)
def test_a_missing_parent_folder_is_a_clear_error_and_creates_nothing(tmp_path, layout):
    with pytest.raises(SchemaError, match="does not exist"):
        MemoryStore(tmp_path / "no" / "such" / "store", layout=layout)
    assert list(tmp_path.iterdir()) == []


def test_memlab_serve_reports_a_bad_store_in_one_line(tmp_path):
    path = tmp_path / "app.db"
    _sql_file(path, "CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    done = subprocess.run(
        [sys.executable, "-m", "memlab.cli", "serve", "--db", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("memlab serve: not a memlab store")
    assert "Traceback" not in done.stderr


def test_threads_sharing_a_folder_store_with_a_tiny_cache(tmp_path):
    """Files evicted and reopened under four threads: no call fails, nothing is lost, the chain verifies."""
    import threading

    with MemoryStore(tmp_path / "store") as store:
        store.storage.cache_size = 2
        failures: list[str] = []

        def work(n: int) -> None:
            try:
                for i in range(30):
                    agent = f"a{(n + i) % 7}"
                    session = store.session(Level.PUBLIC, agent)
                    session.memory_save(f"k{n}-{i}", f"note {i}")
                    session.memory_search("note")
                    store.history(f"k{n}-{i}", agent=agent)
                    store.audit(agent)
            except Exception as error:  # any failure, reported after the threads end
                failures.append(repr(error))

        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert failures == []
        assert sum(len(store.versions(f"a{n}")) for n in range(7)) == 4 * 30
        assert len(store.audit()) == 4 * 30 * 2 and store.verify().ok


# -- compartments (docs/semantics.md): every backend that keeps them passes these; one that does not yet is
# expected to refuse a label clearly, and these cases are then strict xfails for it (they fail loudly once it
# keeps them, so the mark is removed with the work).


@pytest.fixture
def labelled(backend: str, request):
    """A store factory on ``backend`` for the compartment cases: ``labelled(policy=...)`` opens one."""
    opened = []

    def open_labelled(**options) -> MemoryStore:
        context = open_store(backend, **options)
        store = context.__enter__()
        opened.append(context)
        if "compartments" not in store.storage.capabilities:
            with pytest.raises(InvalidArgument, match="compartments not supported"):
                store.session(taint="CONFIDENTIAL:hr")
            request.applymarker(pytest.mark.xfail(strict=True, reason=f"{backend} keeps no compartments yet"))
        return store

    yield open_labelled
    for context in reversed(opened):
        context.__exit__(None, None, None)


class _Refuse(Policy):
    name = "refuse-contract"
    shadowing = "refuse"


def test_compartments_reads_follow_levels_and_categories(labelled):
    store = labelled()
    store.session().memory_save("k", "public apple")
    hr = store.session(taint="CONFIDENTIAL:hr")
    assert hr.memory_save("k", "hr apple").ref() == "k@CONFIDENTIAL:hr/v1"
    store.session(taint="CONFIDENTIAL:legal").memory_save("j", "legal apple")
    seen = {}
    for taint in ["PUBLIC", "RESTRICTED", "CONFIDENTIAL:hr", "CONFIDENTIAL:legal", "RESTRICTED:hr,legal"]:
        session = store.session(taint=taint)
        got = session.memory_get("k")
        seen[taint] = (
            got.ref(),
            [m.ref() for m in session.memory_list()],
            sorted(hit.memory.ref() for hit in session.memory_search("apple")),
        )
    assert seen == {
        "PUBLIC": ("k@PUBLIC/v1", ["k@PUBLIC/v1"], ["k@PUBLIC/v1"]),
        "RESTRICTED": ("k@PUBLIC/v1", ["k@PUBLIC/v1"], ["k@PUBLIC/v1"]),
        "CONFIDENTIAL:hr": ("k@CONFIDENTIAL:hr/v1", ["k@CONFIDENTIAL:hr/v1"], ["k@CONFIDENTIAL:hr/v1"]),
        "CONFIDENTIAL:legal": (
            "k@PUBLIC/v1",
            ["j@CONFIDENTIAL:legal/v1", "k@PUBLIC/v1"],
            ["j@CONFIDENTIAL:legal/v1", "k@PUBLIC/v1"],
        ),
        "RESTRICTED:hr,legal": (
            "k@CONFIDENTIAL:hr/v1",
            ["j@CONFIDENTIAL:legal/v1", "k@CONFIDENTIAL:hr/v1"],
            ["j@CONFIDENTIAL:legal/v1", "k@CONFIDENTIAL:hr/v1"],
        ),
    }
    assert hr.memory_delete("k").ref() == "k@CONFIDENTIAL:hr/v1"
    assert hr.memory_get("k").ref() == "k@PUBLIC/v1"
    assert store.verify().ok


def test_compartments_shadowing_newest_and_refuse(labelled):
    newest, refusing = labelled(), labelled(policy=_Refuse())
    for store in (newest, refusing):
        store.session(taint="CONFIDENTIAL:legal").memory_save("k", "legal apple")
        store.session(taint="CONFIDENTIAL:hr").memory_save("k", "hr apple")
    both = newest.session(taint="CONFIDENTIAL:hr,legal")
    assert both.memory_get("k").ref() == "k@CONFIDENTIAL:hr/v1"
    assert [hit.memory.ref() for hit in both.memory_search("apple")] == ["k@CONFIDENTIAL:hr/v1"]
    both = refusing.session(taint="CONFIDENTIAL:hr,legal")
    with pytest.raises(Ambiguous, match="CONFIDENTIAL:hr, CONFIDENTIAL:legal"):
        both.memory_get("k")
    assert both.memory_list() == [] and both.memory_search("apple") == []
    assert refusing.audit()["outcome"].tolist()[-3:] == ["ambiguous", "ok", "ok"]
    assert newest.verify().ok and refusing.verify().ok


def test_compartments_escalation_climbs_the_lattice_and_the_audit_records_labels(labelled):
    store = labelled()
    session = store.session(taint="INTERNAL", session_id="s1")
    session.escalate("CONFIDENTIAL:hr", reason="case")
    with pytest.raises(TaintError, match="incomparable"):
        session.escalate("CONFIDENTIAL:legal")
    with pytest.raises(TaintError, match="cannot lower"):
        session.escalate("CONFIDENTIAL")
    session.memory_save("k", "v")
    assert session.taint == Label.parse("CONFIDENTIAL:hr")
    events = store.taint_events()[["from_level", "to_level"]].values.tolist()
    assert events == [["INTERNAL", "CONFIDENTIAL:hr"]]
    audit = store.audit()
    assert audit[["taint", "records"]].values.tolist() == [["CONFIDENTIAL:hr", ["k@CONFIDENTIAL:hr/v1"]]]
    assert store.history("k")["classification"].tolist() == ["CONFIDENTIAL:hr"]
    assert store.verify().ok
