"""``memlab import`` (bulk load from JSON Lines) and ``memlab migrate`` (a single file to a store folder)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memlab import Level, MemoryStore, SchemaError
from memlab.cli import main
from tests.backends import HOSTILE_AGENTS, store_location
from tests.conftest import fixed_clock

pytestmark = pytest.mark.contract


@pytest.fixture
def location(backend):
    """Where a new store of ``backend`` lives (a path or a URL), for ``--db``."""
    with store_location(backend) as where:
        yield where


def _write_jsonl(path, records: list, extra_lines: dict[int, str] | None = None) -> None:
    lines = [json.dumps(record) for record in records]
    for index, line in (extra_lines or {}).items():
        lines.insert(index, line)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.requires("persistent")
def test_import_loads_every_line_at_the_given_taint(tmp_path, capsys, location):
    source = tmp_path / "notes.jsonl"
    records = [{"key": f"note-{n}", "content": f"fact number {n} about coffee", "tags": ["import"]} for n in range(250)]
    _write_jsonl(source, records, {100: ""})  # a blank line is skipped
    db = location
    code = main(
        ["import", str(source), "--db", str(db), "--agent", "alice", "--taint", "internal", "--batch-size", "64"]
    )
    assert code == 0
    assert "imported 250 memories into agent 'alice' at INTERNAL" in capsys.readouterr().out
    with MemoryStore(db) as store:
        assert store.session(Level.PUBLIC, "alice").memory_list() == []
        internal = store.session(Level.INTERNAL, "alice")
        assert len(internal.memory_list(tag="import")) == 250
        assert internal.memory_get("note-7").content == "fact number 7 about coffee"
        assert (store.audit("alice")["tool"] == "memory_save").sum() == 250


def test_import_reports_bad_lines_by_number_and_writes_nothing(tmp_path, capsys):
    source = tmp_path / "notes.jsonl"
    records = [
        {"key": "good", "content": "fine"},
        {"key": "", "content": "empty key"},
        {"key": "no-content"},
        ["not", "an", "object"],
        {"key": "k", "content": "c", "classification": "PUBLIC"},
    ]
    _write_jsonl(source, records)
    db = tmp_path / "store"
    assert main(["import", str(source), "--db", str(db), "--taint", "public"]) == 1
    err = capsys.readouterr().err
    assert f"{source}:2: key must not be empty" in err
    assert f"{source}:3:" in err and "content" in err
    assert f"{source}:4: a record must be an object, not list" in err
    assert f"{source}:5:" in err and "classification" in err
    assert "4 bad records; nothing was imported" in err
    assert not db.exists()


def test_import_reports_a_line_that_is_not_json(tmp_path, capsys):
    source = tmp_path / "notes.jsonl"
    _write_jsonl(source, [{"key": "a", "content": "b"}], {1: '{"key": "broken"'})
    assert main(["import", str(source), "--db", str(tmp_path / "store"), "--taint", "public"]) == 1
    assert f"{source}:2: not JSON" in capsys.readouterr().err


def test_import_of_a_missing_file_is_a_clear_error(tmp_path, capsys):
    assert main(["import", str(tmp_path / "nope.jsonl"), "--db", str(tmp_path / "store"), "--taint", "public"]) == 2
    assert "is not a file" in capsys.readouterr().err


def _old_store(path) -> None:
    """A single-file store with several agents, levels, escalations, shadowing, deletes and failed calls."""
    with MemoryStore(path, layout="file", clock=fixed_clock) as store:
        for n, agent in enumerate(HOSTILE_AGENTS[:6]):
            low = store.session(Level.PUBLIC, agent, session_id=f"low-{n}")
            low.memory_save("user-name", f"name of {agent}", tags=["personal"])
            low.memory_save("plan", "public plan")
            high = store.session(Level.INTERNAL, agent, session_id=f"high-{n}")
            high.memory_save("plan", "internal plan about the merger")
            high.escalate(Level.CONFIDENTIAL, reason="read payroll")
            high.memory_save("salary", "90k")
            high.memory_save("salary", "95k")
            high.memory_delete("salary")
            high.memory_save("salary", "100k")
            low.memory_delete("plan")
            low.memory_get("nothing")
            low.memory_search("plan merger")


def _everything(store: MemoryStore, agents: list[str]) -> dict:
    return {
        "sessions": store.sessions().sort_values("id").to_dict("records"),
        "taint_events": store.taint_events().sort_values(["session_id", "at"]).to_dict("records"),
        "versions": {agent: store.versions(agent).to_dict("records") for agent in agents},
        "views": {(agent, level): store.view(level, agent).to_dict("records") for agent in agents for level in Level},
        "audit": {agent: store.audit(agent).drop(columns="seq").to_dict("records") for agent in agents},
    }


def test_migrate_moves_everything_into_a_folder(tmp_path, capsys):
    old, new = tmp_path / "old.db", tmp_path / "store"
    _old_store(old)
    agents = HOSTILE_AGENTS[:6]
    with MemoryStore(old) as store:
        searches = {
            a: [h.memory.ref() for h in store.session(Level.RESTRICTED, a).memory_search("plan")] for a in agents
        }
        expected = _everything(store, agents)
    before = old.read_bytes()
    assert main(["migrate", str(old), str(new)]) == 0
    assert "6 agents" in capsys.readouterr().out
    with MemoryStore(new) as store:
        assert store.storage.agents() == sorted(agents)
        migrated = _everything(store, agents)
        assert {
            a: [h.memory.ref() for h in store.session(Level.RESTRICTED, a).memory_search("plan")] for a in agents
        } == searches
        assert migrated == expected
        # The migrated store goes on working: versions continue where they were.
        assert store.session(Level.CONFIDENTIAL, agents[0]).memory_save("salary", "110k").version == 4
    assert old.read_bytes() == before  # the source is only read


def test_migrate_refuses_an_existing_target(tmp_path, capsys):
    old = tmp_path / "old.db"
    _old_store(old)
    (tmp_path / "taken").mkdir()
    assert main(["migrate", str(old), str(tmp_path / "taken")]) == 2
    assert "exists already" in capsys.readouterr().err


FIXTURE_V1 = Path(__file__).parent / "fixtures" / "store-v1.db"  # written by memlab 0.1 (schema 1, no chain)


def test_a_schema_1_store_is_refused_with_the_way_forward(tmp_path):
    old = tmp_path / "old.db"
    shutil.copy(FIXTURE_V1, old)
    with pytest.raises(SchemaError, match="schema version 1.*memlab migrate"):
        MemoryStore(old)
    assert old.read_bytes() == FIXTURE_V1.read_bytes()


def test_a_schema_1_store_migrates_whole_and_verifies(tmp_path, capsys):
    old, new = tmp_path / "old.db", tmp_path / "store"
    shutil.copy(FIXTURE_V1, old)
    assert main(["migrate", str(old), str(new)]) == 0
    assert "4 agents, 8 sessions, 4 taint_events, 24 versions, 40 audit_rows" in capsys.readouterr().out
    assert main(["verify", str(new)]) == 0
    with MemoryStore(new) as store:
        assert store.storage.agents() == sorted(["main", "Main", "..", "ñame 名前"])
        for agent in store.storage.agents():
            public = store.view(Level.PUBLIC, agent)
            assert public["key"].tolist() == ["user-name"]  # the PUBLIC plan was deleted
            secret = store.view(Level.CONFIDENTIAL, agent).set_index("key")["content"].to_dict()
            assert secret == {
                "plan": "internal plan about the merger",
                "salary": "100k",
                "user-name": f"name of {agent}",
            }
            assert store.history("salary", agent)["version"].tolist() == [1, 2, 3]
            hits = store.session(Level.CONFIDENTIAL, agent).memory_search("merger")
            assert [hit.memory.key for hit in hits] == ["plan"]
        assert len(store.audit()) == 40 + 4  # and the four searches above
