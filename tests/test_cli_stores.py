"""memlab.cli.stores: ``memlab import``, ``migrate`` and ``verify`` on a store named by its path, their output and
exit statuses. The bulk load itself is tests/test_bulk.py's; migration's copy, tests/test_migrate_interrupted.py's."""

from __future__ import annotations

import json
import sqlite3

import pytest

from memlab import MemoryStore
from memlab.cli import main


@pytest.fixture(autouse=True)
def no_environment(monkeypatch):
    monkeypatch.delenv("MEMLAB_DB", raising=False)


@pytest.fixture
def records(tmp_path):
    path = tmp_path / "memories.jsonl"
    path.write_text('{"key": "user-name", "content": "Sam"}\n{"key": "city", "content": "Porto", "tags": ["place"]}\n')
    return path


def test_import_then_verify_a_file_store(tmp_path, records, capsys):
    db = tmp_path / "store.db"
    assert main(["import", str(records), "--db", str(db), "--taint", "internal"]) == 0
    capsys.readouterr()
    with MemoryStore(db) as store:
        assert store.view("INTERNAL")["key"].tolist() == ["city", "user-name"]
        assert store.view("PUBLIC").empty
    assert main(["verify", str(db), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["ok"] is True and document["versions"] == 2


def test_verify_exits_1_on_a_broken_store_and_2_on_no_store(tmp_path, records, capsys):
    # Guards: cli.stores.run_verify returning 0 whatever the result (a broken store then passes a script's check).
    db = tmp_path / "store.db"
    main(["import", str(records), "--db", str(db), "--taint", "PUBLIC"])
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER memories_content_frozen")
        conn.execute("UPDATE memories SET content = 'forged' WHERE key = 'city'")
    conn.close()
    capsys.readouterr()
    assert main(["verify", str(db)]) == 1
    assert capsys.readouterr().out.startswith("BROKEN: ")
    (tmp_path / "notes.txt").write_text("x")
    assert main(["verify", str(tmp_path / "notes.txt")]) == 2
    assert capsys.readouterr().err.startswith("memlab verify: ")


def test_verify_reads_its_store_from_memlab_db(tmp_path, records, monkeypatch, capsys):
    db = tmp_path / "store.db"
    main(["import", str(records), "--db", str(db), "--taint", "PUBLIC"])
    monkeypatch.setenv("MEMLAB_DB", str(db))
    capsys.readouterr()
    assert main(["verify"]) == 0


def test_migrate_copies_a_file_into_a_new_folder(tmp_path, records, capsys):
    db, folder = tmp_path / "store.db", tmp_path / "folder"
    main(["import", str(records), "--db", str(db), "--taint", "PUBLIC"])
    capsys.readouterr()
    assert main(["migrate", str(db), str(folder)]) == 0
    assert capsys.readouterr().out.startswith(f"migrated {db} to {folder}: ")
    with MemoryStore(folder) as store:
        assert store.view("PUBLIC")["content"].tolist() == ["Porto", "Sam"]
    assert main(["migrate", str(db), str(folder)]) == 2  # the target must not exist
    assert capsys.readouterr().err.startswith("memlab migrate: ")


@pytest.mark.parametrize("batch", ["0", "x"])
def test_a_batch_size_must_be_positive(records, batch, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["import", str(records), "--db", "x.db", "--taint", "PUBLIC", "--batch-size", batch])
    assert exited.value.code == 2
