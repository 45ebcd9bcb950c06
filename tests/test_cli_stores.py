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


# -- importing into keys already there: refused by default, --replace, --ignore -----------------------------------


def _import(records, db, *options: str) -> int:
    return main(["import", str(records), "--db", str(db), "--taint", "INTERNAL", *options])


def _versions(db) -> list[tuple[str, str, int]]:
    with MemoryStore(db) as store:
        frame = store.versions()
    return sorted(zip(frame["key"], frame["classification"], frame["version"], strict=True))


def _counts(db) -> tuple[int, int]:
    with MemoryStore(db) as store:
        return len(store.audit()), len(store.sessions())


def test_importing_the_same_file_twice_is_refused_not_a_version_2_of_every_key(tmp_path, records, capsys):
    # Guards: a second import silently saving version 2 of every key (issue 37).
    db = tmp_path / "store"
    assert _import(records, db) == 0
    before, counts = _versions(db), _counts(db)
    capsys.readouterr()
    assert _import(records, db) == 2
    err = capsys.readouterr().err
    assert err.startswith("memlab import: 2 keys of ") and "(city, user-name)" in err
    assert "--replace" in err and "--ignore" in err and len(err.splitlines()) == 1
    assert _versions(db) == before == [("city", "INTERNAL", 1), ("user-name", "INTERNAL", 1)]
    assert _counts(db) == counts  # no session, no audit row: nothing written


def test_replace_saves_a_new_version_only_where_a_record_differs(tmp_path, records, capsys):
    db = tmp_path / "store"
    assert _import(records, db) == 0
    assert _import(records, db, "--replace") == 0
    assert _versions(db) == [("city", "INTERNAL", 1), ("user-name", "INTERNAL", 1)]  # unchanged: nothing saved
    changed = tmp_path / "changed.jsonl"
    changed.write_text(
        '{"key": "user-name", "content": "Samantha"}\n'
        '{"key": "city", "content": "Porto", "tags": ["place"]}\n'
        '{"key": "pet", "content": "a cat"}\n'
    )
    capsys.readouterr()
    assert _import(changed, db, "--replace") == 0
    assert capsys.readouterr().out.rstrip().endswith("; 1 skipped (unchanged)")
    assert _versions(db) == [
        ("city", "INTERNAL", 1), ("pet", "INTERNAL", 1), ("user-name", "INTERNAL", 1), ("user-name", "INTERNAL", 2)
    ]  # fmt: skip
    retagged = tmp_path / "retagged.jsonl"
    retagged.write_text('{"key": "city", "content": "Porto", "tags": ["place", "home"]}\n')
    assert _import(retagged, db, "--replace") == 0  # tags differ: a new version
    assert ("city", "INTERNAL", 2) in _versions(db)


def test_replace_of_an_unchanged_file_reports_everything_skipped(tmp_path, records, capsys):
    db = tmp_path / "store"
    assert _import(records, db) == 0
    capsys.readouterr()
    assert _import(records, db, "--replace", "--json") == 0
    document = json.loads(capsys.readouterr().out)
    assert document["imported"] == 0 and document["skipped"] == 2


def test_ignore_skips_keys_already_there_even_changed_and_imports_the_rest(tmp_path, records, capsys):
    db = tmp_path / "store"
    assert _import(records, db) == 0
    changed = tmp_path / "changed.jsonl"
    changed.write_text('{"key": "user-name", "content": "Samantha"}\n{"key": "pet", "content": "a cat"}\n')
    capsys.readouterr()
    assert _import(changed, db, "--ignore") == 0
    assert capsys.readouterr().out.rstrip().endswith("; 1 skipped (already there)")
    assert _versions(db) == [("city", "INTERNAL", 1), ("pet", "INTERNAL", 1), ("user-name", "INTERNAL", 1)]
    with MemoryStore(db) as store:
        assert store.view("INTERNAL").set_index("key").loc["user-name", "content"] == "Sam"


def test_replace_and_ignore_together_are_refused(tmp_path, records, capsys):
    with pytest.raises(SystemExit) as exited:
        _import(records, tmp_path / "store", "--replace", "--ignore")
    assert exited.value.code == 2
    assert "--ignore: not allowed with argument --replace" in capsys.readouterr().err
    assert not (tmp_path / "store").exists()


def test_a_key_only_above_the_imports_taint_is_not_there_for_it(tmp_path, records, capsys):
    # The refusal reads the importing taint's view only: a CONFIDENTIAL key neither blocks nor shows.
    db = tmp_path / "store"
    with MemoryStore(db) as store:
        store.session("CONFIDENTIAL").memory_save("city", "the secret city")
    assert _import(records, db) == 0
    assert ("city", "INTERNAL", 1) in _versions(db) and ("city", "CONFIDENTIAL", 1) in _versions(db)
    assert "secret" not in capsys.readouterr().out


def test_a_trusted_import_is_not_stopped_by_an_untrusted_version_but_an_untrusted_one_is(tmp_path, records, capsys):
    db = tmp_path / "store"
    with MemoryStore(db) as store:
        store.session("INTERNAL", integrity="untrusted", source="web:x").memory_save("city", "Mallory's town")
    assert main(["import", str(records), "--db", str(db), "--taint", "INTERNAL@untrusted"]) == 2
    assert "(city)" in capsys.readouterr().err
    assert _import(records, db) == 0  # trusted: it shadows the untrusted version (trust first)
    with MemoryStore(db) as store:
        assert store.view("INTERNAL").set_index("key").loc["city", "content"] == "Porto"


def test_q_imports_without_a_word(tmp_path, records, capsys):
    assert _import(records, tmp_path / "store", "-q") == 0
    assert capsys.readouterr() == ("", "")
    assert len(_versions(tmp_path / "store")) == 2


# -- one way to name the store: --db, the positional path still taken ----------------------------------------------


def test_verify_and_migrate_take_db_as_every_command_does(tmp_path, records, capsys):
    db = tmp_path / "store.db"
    main(["import", str(records), "--db", str(db), "--taint", "PUBLIC"])
    capsys.readouterr()
    assert main(["verify", "--db", str(db)]) == 0
    by_flag = capsys.readouterr().out
    assert main(["verify", str(db)]) == 0
    assert capsys.readouterr().out == by_flag and by_flag.startswith("ok: ")
    assert main(["migrate", "--db", str(db), str(tmp_path / "folder")]) == 0
    assert capsys.readouterr().out.startswith(f"migrated {db} to {tmp_path / 'folder'}: ")
    assert main(["migrate", str(db), str(tmp_path / "other")]) == 0


@pytest.mark.parametrize("command", [["verify"], ["migrate", "{target}"]])
def test_a_store_named_twice_differently_is_refused(tmp_path, records, capsys, command):
    db = tmp_path / "store.db"
    main(["import", str(records), "--db", str(db), "--taint", "PUBLIC"])
    capsys.readouterr()
    argv = [part.format(target=tmp_path / "folder") for part in command]
    with pytest.raises(SystemExit) as exited:
        main([argv[0], "--db", str(db), str(tmp_path / "elsewhere.db"), *argv[1:]])
    assert exited.value.code == 2
    assert "the store is named twice" in capsys.readouterr().err
    assert not (tmp_path / "folder").exists()
    assert main([argv[0], "--db", str(db), str(db), *argv[1:]]) == 0  # the same store twice is one store


def test_migrate_without_a_source_is_refused(tmp_path, capsys):
    assert main(["migrate", str(tmp_path / "folder")]) == 2
    assert "name the store file (--db SOURCE, or SOURCE)" in capsys.readouterr().err
    assert not (tmp_path / "folder").exists()


def test_import_twice_into_postgresql_is_refused_and_replace_writes_nothing_new(pg_url, records, capsys):
    assert _import(records, pg_url) == 0
    assert _import(records, pg_url) == 2
    assert "(city, user-name)" in capsys.readouterr().err
    assert _import(records, pg_url, "--replace") == 0
    assert _versions(pg_url) == [("city", "INTERNAL", 1), ("user-name", "INTERNAL", 1)]
