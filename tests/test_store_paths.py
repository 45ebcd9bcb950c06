"""What a path becomes: a new ``.db``, ``.sqlite`` or ``.sqlite3`` path one SQLite file, any other new path a store
folder, an existing path what it is; ``layout=`` wins on a new path and contradicts an existing one only loudly."""

from __future__ import annotations

import sqlite3

import pytest

from memlab import InvalidArgument, Level, MemoryStore
from memlab.cli import main
from memlab.storage import FolderStorage, SqliteStorage


def _snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", ["notes.db", "notes.sqlite", "notes.sqlite3", "NOTES.DB"])
def test_a_new_path_named_like_a_database_file_becomes_one_sqlite_file(tmp_path, name):
    # As in sqlite3 and sqlite-utils: the user expects a file they can open with `sqlite3 notes.db`.
    with MemoryStore(tmp_path / name) as store:
        assert isinstance(store.storage, SqliteStorage)
        store.session(Level.INTERNAL, "sam").memory_save("plan", "the plan")
    assert (tmp_path / name).is_file()
    with sqlite3.connect(tmp_path / name) as conn:
        assert conn.execute("SELECT content FROM memories").fetchone() == ("the plan",)


@pytest.mark.parametrize("name", ["memories", "notes.json", "store.d", "notes.db.d"])
def test_any_other_new_path_becomes_a_store_folder(tmp_path, name):
    with MemoryStore(tmp_path / name) as store:
        assert isinstance(store.storage, FolderStorage)
        store.session().memory_save("k", "v")
    assert (tmp_path / name).is_dir()


@pytest.mark.parametrize(
    ("name", "layout", "kind"),
    [("notes.db", "folder", FolderStorage), ("memories", "file", SqliteStorage)],
    ids=["a-folder-named-notes-db", "a-file-without-the-suffix"],
)
def test_an_existing_path_opens_as_what_it_is_whatever_its_name_says(tmp_path, name, layout, kind):
    # A store folder an earlier memlab made at notes.db keeps opening as itself, its memories there; so does a
    # file whose name has no SQLite suffix.
    path = tmp_path / name
    with MemoryStore(path, layout=layout) as store:
        store.session().memory_save("kept", f"in the {layout}")
    with MemoryStore(path) as store:
        assert isinstance(store.storage, kind)
        assert store.session().memory_get("kept").content == f"in the {layout}"


@pytest.mark.parametrize(
    ("name", "layout", "kind"), [("notes.db", "folder", FolderStorage), ("memories", "file", SqliteStorage)]
)
def test_an_explicit_layout_wins_on_a_new_path(tmp_path, name, layout, kind):
    with MemoryStore(tmp_path / name, layout=layout) as store:
        assert isinstance(store.storage, kind)


@pytest.mark.parametrize(("name", "made", "asked"), [("notes.db", "file", "folder"), ("memories", "folder", "file")])
def test_a_layout_contradicting_an_existing_path_is_refused_and_touches_nothing(tmp_path, name, made, asked):
    with MemoryStore(tmp_path / name, layout=made) as store:
        store.session().memory_save("k", "v")
    before = _snapshot(tmp_path)
    with pytest.raises(InvalidArgument, match=f"is a {made} store, not a {asked} store"):
        MemoryStore(tmp_path / name, layout=asked)
    assert _snapshot(tmp_path) == before


def test_the_command_line_makes_the_same_choice(tmp_path, capsys):
    source = tmp_path / "notes.jsonl"
    source.write_text('{"key": "k", "content": "imported"}\n', encoding="utf-8")
    assert main(["import", str(source), "--db", str(tmp_path / "notes.sqlite"), "--taint", "public"]) == 0
    assert (tmp_path / "notes.sqlite").is_file()
    assert main(["verify", str(tmp_path / "notes.sqlite")]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("ok: ")


def test_memory_as_sqlite3_spells_it_keeps_the_store_in_memory(tmp_path, monkeypatch):
    # As sqlite3.connect(":memory:"): a user who writes it expects nothing on disk, least of all their CONFIDENTIAL
    # memories in a folder named ":memory:" in the working directory.
    # Guards: ":memory:" taken as any other new path (a store folder of that name).
    monkeypatch.chdir(tmp_path)
    with MemoryStore(":memory:") as store:
        assert isinstance(store.storage, SqliteStorage) and store.storage.path is None
        store.session(Level.CONFIDENTIAL, "sam").memory_save("salary", "90k")
        assert store.session(Level.CONFIDENTIAL, "sam").memory_get("salary").content == "90k"
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InvalidArgument, match="needs a path"):
        MemoryStore(":memory:", layout="folder")
    assert list(tmp_path.iterdir()) == []
