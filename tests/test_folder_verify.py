"""memlab.storage.folder_verify: a store folder verified read-only as a whole, never trusting the catalogue's paths.

Damage inside one agent's file (an edited version, a broken chain) is tests/test_tampering.py's.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from memlab import MemoryStore
from memlab.errors import SchemaError
from memlab.storage.folder_verify import verify_folder
from memlab.storage.layout import CATALOGUE, agent_file
from memlab.viewrules import ViewRules


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A closed store folder of two agents, each with a save."""
    path = tmp_path / "store"
    with MemoryStore(path) as store:
        for agent in ("main", "bob"):
            store.session("PUBLIC", agent).memory_save("k", f"{agent}'s")
    return path


def problems(path: Path) -> tuple[str, ...]:
    return verify_folder(path, ViewRules.lattice()).problems


def catalogue(path: Path, *statements: str) -> None:
    with sqlite3.connect(path / CATALOGUE) as conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()


def test_an_intact_folder_verifies_and_its_head_covers_every_agent(folder):
    result = verify_folder(folder, ViewRules.lattice())
    assert result.ok and result.audit_rows == 2 and result.versions == 2
    with MemoryStore(folder) as store:
        store.session("PUBLIC", "bob").memory_get("k")
    assert verify_folder(folder, ViewRules.lattice()).head != result.head


def swap(path: Path) -> None:
    main, bob = (path / "agents" / agent_file(agent) for agent in ("main", "bob"))
    main.rename(path / "swap")
    bob.rename(main)
    (path / "swap").rename(bob)


DAMAGE = {
    "a stray file": (
        lambda path: (path / "agents" / "stray.txt").write_text("x"),
        "agents/stray.txt is not the file of any agent",
    ),
    "a missing file": (lambda path: (path / "agents" / agent_file("bob")).unlink(), "agent 'bob': its file"),
    "an empty file": (lambda path: (path / "agents" / agent_file("bob")).write_bytes(b""), "is empty"),
    "a catalogue naming another file": (
        lambda path: catalogue(path, "UPDATE agents SET file = 'elsewhere.db' WHERE name = 'bob'"),
        "the catalogue names the file elsewhere.db",
    ),
    "swapped files": (swap, "holds agent 'bob', not 'main' (swapped or copied)"),
    "a forged agent": (
        lambda path: catalogue(path, "INSERT INTO agents (name, file) VALUES ('eve', 'x.db')"),
        "agent 'eve': in the catalogue, but its creation is not logged (forged)",
    ),
    "an edited log": (
        lambda path: catalogue(
            path, "DROP TRIGGER agent_log_no_update", "UPDATE agent_log SET file = 'x' WHERE seq = 1"
        ),
        "the catalogue's log of agents, entry 1: removed, edited or forged",
    ),
    "a removed log": (
        lambda path: catalogue(path, "DROP TABLE agent_log"),
        "the catalogue's log of agents is missing",
    ),
    "a linked agents folder": (
        lambda path: (
            (path / "agents").rename(path.parent / "moved"),
            (path / "agents").symlink_to(path.parent / "moved"),
        ),
        "is a symbolic link",
    ),
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_damage_to_the_folder_is_named(folder, damage):
    # Guards: folder_verify skipping the check that an agent's file holds that agent only (swapped files then
    # named only as rolled back).
    make, problem = DAMAGE[damage]
    make(folder)
    assert any(problem in found for found in problems(folder)), problems(folder)


def test_a_rolled_back_agent_file_is_named(folder, tmp_path):
    saved = tmp_path / "saved.db"
    shutil.copy(folder / "agents" / agent_file("main"), saved)
    with MemoryStore(folder) as store:
        store.session("PUBLIC", "main").memory_save("k2", "later")
    shutil.copy(saved, folder / "agents" / agent_file("main"))
    assert any("its audit ends before seq" in found for found in problems(folder))


def test_a_folder_without_a_catalogue_is_not_a_store(tmp_path):
    with pytest.raises(SchemaError, match="not a memlab store folder"):
        verify_folder(tmp_path, ViewRules.lattice())
