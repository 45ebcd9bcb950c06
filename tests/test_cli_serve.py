"""memlab.cli.serve: ``memlab serve``'s store, taint and agent, from flags or the environment, refused before any
protocol starts. Serving over stdio to a real MCP client is tests/test_mcp.py's."""

from __future__ import annotations

import argparse
import os
import pty
import select
import subprocess
import sys

import pytest

from memlab import Ranking
from memlab.cli import main
from memlab.cli.serve import serving_store, shown
from memlab.errors import InvalidArgument
from tests.mcp_client import ROOT


@pytest.fixture(autouse=True)
def no_environment(monkeypatch):
    for name in ("MEMLAB_DB", "MEMLAB_TAINT", "MEMLAB_AGENT", "MEMLAB_INTEGRITY", "MEMLAB_FLOOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("argv", "environment", "message"),
    [
        (["--db", "{db}", "--taint", "SECRET"], {}, "unknown level 'SECRET'"),
        (["--db", "{db}"], {"MEMLAB_TAINT": "TOP"}, "MEMLAB_TAINT='TOP'"),
        (["--db", "{db}", "--agent", "a\x00b"], {}, "memlab serve: "),
        (["--db", "{db}", "--policy", "nope"], {}, "nope"),
    ],
)
def test_a_bad_taint_agent_or_policy_exits_2_before_serving(tmp_path, monkeypatch, capsys, argv, environment, message):
    # Guards: cli.serve calling from_environment without the variable's origin (the message then not naming it).
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    argv = [part.format(db=tmp_path / "store.db") for part in argv]
    assert main(["serve", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "environment", "message"),
    [
        (["--integrity", "trusty"], {}, "unknown integrity 'trusty'; expected one of untrusted, trusted"),
        (["--floor", "high"], {}, "unknown integrity 'high'; expected one of untrusted, trusted"),
        ([], {"MEMLAB_INTEGRITY": "raised"}, "(MEMLAB_INTEGRITY='raised')"),
        ([], {"MEMLAB_FLOOR": "top"}, "(MEMLAB_FLOOR='top')"),
        (["--taint", "INTERNAL@trusty"], {}, "memlab serve: "),
        (["--integrity", "untrusted", "--floor", "trusted", "--taint", "SECRET@untrusted"], {}, "unknown level"),
    ],
)
def test_a_bad_integrity_or_floor_exits_2_in_one_line_and_touches_nothing(
    tmp_path, monkeypatch, capsys, argv, environment, message
):
    # Guards: serve parsing --integrity and --floor after the store is opened (the file then exists).
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert main(["serve", "--db", str(tmp_path / "store.db"), *argv]) == 2
    error = capsys.readouterr().err
    assert error.startswith("memlab serve: ") and message in error and error.count("\n") == 1
    assert not (tmp_path / "store.db").exists()


def test_without_a_store_serve_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["serve"])
    assert exited.value.code == 2 and "--db is required (or set MEMLAB_DB)" in capsys.readouterr().err


def namespace(**given) -> argparse.Namespace:
    return argparse.Namespace(**{"db": None, "policy": None, "analyzer": None, "ranking": None, "origins": {}} | given)


def test_the_served_store_is_opened_with_its_policy_and_ranking(tmp_path):
    path = Ranking(tag_boost=3.0).save(tmp_path / "ranking.json")
    with serving_store(namespace(db=str(tmp_path / "s.db"), policy="global-stats", ranking=str(path))) as store:
        assert store.policy.name == "global-stats" and store.ranking.tag_boost == 3.0


def test_a_dense_ranking_file_is_refused_before_the_store_is_opened(tmp_path):
    path = Ranking.hybrid().save(tmp_path / "ranking.json")
    with pytest.raises(InvalidArgument, match="ranking.dense: this ranking uses dense retrieval"):
        serving_store(namespace(db=str(tmp_path / "s.db"), ranking=str(path)))
    assert not (tmp_path / "s.db").exists()


def serve_by_hand(db, *, terminal: bool) -> str:
    """What ``memlab serve`` writes to stderr before any host speaks, stderr a terminal (a pty) or a pipe; stdin is
    then closed, so the server ends."""
    command = [sys.executable, "-m", "memlab.cli", "serve", "--db", str(db), "--taint", "INTERNAL", "--agent", "sam"]
    if not terminal:
        done = subprocess.run(command, input="", capture_output=True, text=True, timeout=120, cwd=ROOT)
        assert done.returncode == 0 and done.stdout == ""
        return done.stderr
    main_fd, terminal_fd = pty.openpty()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=terminal_fd, cwd=ROOT)
    os.close(terminal_fd)
    written = b""
    try:
        while not written.endswith(b"\n") and select.select([main_fd], [], [], 60)[0]:
            written += os.read(main_fd, 1024)
        process.stdin.close()
        assert process.wait(timeout=120) == 0 and process.stdout.read() == b""
        while select.select([main_fd], [], [], 0.2)[0]:  # anything more it wrote before it ended
            try:
                written += os.read(main_fd, 1024)
            except OSError:  # the terminal's other end is closed: nothing more
                break
    finally:
        os.close(main_fd)
    return written.decode().replace("\r\n", "\n")


def test_serve_run_by_hand_in_a_terminal_says_in_one_line_it_is_waiting_for_a_host(tmp_path):
    # Guards: run_serve printing nothing (a person at a terminal sees a server that looks hung).
    db = tmp_path / "memories"
    assert serve_by_hand(db, terminal=True) == (
        f"memlab serve: serving agent 'sam' at INTERNAL in {db} over stdio; waiting for a host (it speaks MCP on "
        "stdin; Ctrl-C stops)\n"
    )


def test_serve_started_by_a_host_writes_nothing_to_stderr(tmp_path):
    # Guards: the line printed whatever stderr is (a host's log of the server then fills with it).
    assert serve_by_hand(tmp_path / "memories", terminal=False) == ""


def test_the_store_is_shown_without_a_urls_user_or_password():
    assert shown("postgresql://memlab:s3cret@db.example:5433/memories") == "postgresql://db.example:5433/memories"
    assert shown("/home/sam/.memlab/memories") == "/home/sam/.memlab/memories"
