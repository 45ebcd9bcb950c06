"""``memlab migrate`` killed midway: the target never exists half-made, and a rerun finishes the job."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memlab import Level, MemoryStore
from memlab.cli import main

AGENTS = 200  # a migrate of this many agents writes for seconds: long enough to be killed in the middle


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("old") / "old.db"
    with MemoryStore(path, layout="file") as store:
        for n in range(AGENTS):
            session = store.session(Level.INTERNAL, f"agent-{n}")
            session.memory_save_many([{"key": f"k{i}", "content": f"note {i} of agent {n}"} for i in range(3)])
    return path


def _agent_files(folder: Path) -> list[Path]:
    return list((folder / "agents").rglob("*.db")) if folder.is_dir() else []


def _kill_once_writing(source: Path, target: Path) -> None:
    """Start ``memlab migrate`` and SIGKILL it as soon as it has written an agent's file (into the target or a
    hidden sibling folder), long before its 200th."""
    process = subprocess.Popen([sys.executable, "-m", "memlab.cli", "migrate", str(source), str(target)])
    try:
        while process.poll() is None:
            if any(_agent_files(folder) for folder in target.parent.iterdir()):
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.005)  # the CPU is shared with the migrate being watched
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL, "the migrate ended before it could be killed"


def test_a_migrate_killed_midway_leaves_no_target_and_a_rerun_completes_it(source, tmp_path, capsys):
    target = tmp_path / "store"
    _kill_once_writing(source, target)
    # A half-made target would open and verify as a store with some of the agents: there must be none.
    assert not target.exists()
    leftovers = [entry for entry in tmp_path.iterdir() if entry.name.startswith(".")]
    assert leftovers and all(_agent_files(entry) for entry in leftovers)  # the kill did come mid-write

    assert main(["migrate", str(source), str(target)]) == 0
    out = capsys.readouterr()
    assert f"{AGENTS} agents" in out.out
    assert f"removed {leftovers[0]}" in out.err and "did not finish" in out.err
    assert [entry.name for entry in tmp_path.iterdir()] == ["store"]
    with MemoryStore(target) as store:
        assert len(store.storage.agents()) == AGENTS
        assert store.verify().ok
        assert store.session(Level.INTERNAL, f"agent-{AGENTS - 1}").memory_get("k2").content == (
            f"note 2 of agent {AGENTS - 1}"
        )
