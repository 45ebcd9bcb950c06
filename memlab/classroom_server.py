"""``memlab classroom``: serve the classroom notebook with Voila, print the address once it listens, and stop
Voila with every kernel it started on Ctrl-C or SIGTERM.

Voila (the ``lab`` extra: ``pip install -e '.[lab]'``) runs the notebook in a kernel per visitor and shows its
widgets without its code; each page load is a fresh lesson. With ``--class`` every page works in one class store
(a folder, or a PostgreSQL URL: ``memlab.classprogress``), opened here first, so a store that cannot be opened is
said before Voila starts.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from memlab.classprogress import ClassStore, hand_over, hidden, token_digest
from memlab.errors import MemlabError

__all__ = ["descendants", "exposure", "find_notebook", "free_port", "serve"]

NOTEBOOK = Path("notebooks") / "06_classroom.ipynb"
TEMPLATES = Path(__file__).resolve().parent / "jupyter"
"""A Jupyter data folder holding Voila's ``memlab`` template: the lab template with no request to a CDN."""
STARTUP_SECONDS = 60
STOP_SECONDS = 10
POOL_SIZE = 3
KERNELS_IN_ALL = 40
"""The most kernels at once, the pool included: about 7 GiB at the ~180 MiB a lesson's kernel takes."""
KERNELS_PER_VISITOR = 3
"""The most kernels of one client address: a lesson, a second tab, a reload whose old page is still closing."""
IDLE_SECONDS = 120
"""A kernel no page is connected to is stopped after this long idle (a page whose tab is open stays)."""


def find_notebook(path: str | Path | None = None) -> Path:
    """The notebook to serve: ``path``, else ``notebooks/06_classroom.ipynb`` of this checkout or of the
    current folder.

    Raises:
        FileNotFoundError: no such notebook.

    Examples:
        >>> find_notebook().name
        '06_classroom.ipynb'
    """
    candidates = [Path(path)] if path else [Path(__file__).resolve().parents[1] / NOTEBOOK, Path.cwd() / NOTEBOOK]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    raise FileNotFoundError(f"no classroom notebook at {' or '.join(map(str, candidates))}; pass --notebook PATH")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def exposure(host: str) -> str | None:
    """What serving on ``host`` opens beyond this machine, or None for a loopback address.

    Examples:
        >>> exposure("127.0.0.1") is None and exposure("localhost") is None
        True
        >>> exposure("0.0.0.0")
        'every network interface of this machine: anyone who can reach it can open the lesson'
    """
    if host == "localhost":
        return None
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return f"the interface of {host}: anyone who can reach it can open the lesson"
    if address.is_loopback:
        return None
    if address.is_unspecified:
        return "every network interface of this machine: anyone who can reach it can open the lesson"
    return f"the interface {host}: anyone who can reach it can open the lesson"


def _bindable(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as tornado binds: a TIME_WAIT is no owner
        try:
            probe.bind((host, port))
        except OSError:
            return False
        return True


def _listening(host: str, port: int) -> bool:
    target = "127.0.0.1" if host in ("0.0.0.0", "") else host
    with socket.socket() as probe:
        return probe.connect_ex((target, port)) == 0


def descendants(pid: int) -> list[int]:
    """The live processes under ``pid`` (children, theirs, ...), read from ``/proc``; [] where there is none.

    Kernels are started in sessions of their own, so a signal to Voila's process group would miss them: they
    are found by parentage instead, before Voila stops and they are orphaned.
    """
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state != "Z":
            parents.setdefault(int(ppid), []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


def _stop(voila: subprocess.Popen) -> None:
    """Stop Voila, then whatever it started that outlived it (its kernels)."""
    started = descendants(voila.pid)
    if voila.poll() is None:
        voila.terminate()
        try:
            voila.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            voila.kill()
            voila.wait()
    # A kernel Voila was still starting when it stopped is orphaned to us, its subreaper (_adopt_orphans).
    started += [pid for pid in descendants(os.getpid()) if pid not in started]
    for pid in started:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + STOP_SECONDS
    while time.monotonic() < deadline and any(_alive(pid) for pid in started):
        time.sleep(0.1)
    for pid in filter(_alive, started):
        os.kill(pid, signal.SIGKILL)


def _adopt_orphans() -> None:
    """Become the subreaper of what Voila starts (Linux): a kernel it leaves behind, one it was still starting when
    told to stop, is then our descendant, and ``_stop`` finds it. Elsewhere nothing changes."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (AttributeError, OSError):  # no prctl: not Linux
        pass


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # SIGTERM stops the classroom as Ctrl-C does: through serve()'s finally


def serve(
    notebook: str | Path | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 8866,
    theme: str = "light",
    class_store: str | Path | None = None,
    max_kernels: int = KERNELS_IN_ALL,
    kernels_per_visitor: int = KERNELS_PER_VISITOR,
    idle_seconds: int = IDLE_SECONDS,
    log: str | Path | None = None,
) -> int:
    """Run Voila on ``notebook`` at ``http://HOST:PORT/`` until Ctrl-C or SIGTERM; print the URL once it listens.

    What a person reads first comes first, on standard output: the address (with a class, the students' and the
    teacher's, each labelled), then where Voila's own messages went: ``log``, a file (by default a new one in the
    temporary folder, kept after the classroom stops), or ``"-"`` for standard error. A Voila that fails to start
    has the end of its log said on standard error.

    With ``class_store`` (a folder, or a PostgreSQL owner's URL) every page works in that class store (a shared
    store and the students' records; ``memlab.widgets.classpage``): the students' URL and the teacher's, which
    carries a new secret token, are printed. A URL's password is printed nowhere and is handed to the kernels in
    a file only this user can read (``memlab.classprogress.hand_over``), removed when the classroom stops.
    Kernels are capped (``max_kernels`` at once, ``kernels_per_visitor`` per client address: a visit beyond
    gets an HTTP error page, ``memlab.classroom_voila``) and one no page is connected to is stopped after
    ``idle_seconds`` idle.

    Returns:
        The exit status: 0 after Ctrl-C or SIGTERM, 1 when the port is taken or Voila fails, 2 when Voila or the
        notebook is missing or the class store cannot be opened, else Voila's own.
    """
    if importlib.util.find_spec("voila") is None:
        print("memlab classroom needs Voila: pip install -e '.[lab]' (or pip install voila)", file=sys.stderr)
        return 2
    try:
        path = find_notebook(notebook)
    except FileNotFoundError as error:
        print(f"memlab classroom: {error}", file=sys.stderr)
        return 2
    port = port or free_port()
    if not _bindable(host, port):  # else a server already there would answer, and its URL be printed as ours
        print(f"memlab classroom: port {port} on {host} is in use (another classroom?); pass --port", file=sys.stderr)
        return 1
    command = [
        sys.executable, "-m", "memlab.classroom_voila", str(path), "--no-browser", f"--port={port}",
        f"--Voila.ip={host}", "--Voila.port_retries=0", f"--theme={theme}", "--template=memlab",
        f"--ClassroomVoila.max_kernels={max_kernels}",
        f"--ClassroomVoila.max_kernels_per_visitor={kernels_per_visitor}",
        f"--MappingKernelManager.cull_idle_timeout={idle_seconds}",
        f"--MappingKernelManager.cull_interval={max(1, min(30, idle_seconds // 4))}",
    ]  # fmt: skip
    environment = {
        **os.environ,
        "JUPYTER_PATH": os.pathsep.join(filter(None, [str(TEMPLATES), os.environ.get("JUPYTER_PATH")])),
    }
    token = secrets.token_urlsafe(24)
    private = None
    if class_store is not None:
        problem = _opening_problem(class_store)
        if problem:
            print(f"memlab classroom: {problem}", file=sys.stderr)
            return 2
        private = Path(tempfile.mkdtemp(prefix="memlab-class-"))  # this user's alone (0700)
        # Every kernel inherits them: the class store (a URL's password in a file) and the token's hash, not the token.
        environment.update(hand_over(class_store, private), MEMLAB_TEACHER_DIGEST=token_digest(token))
        # Kernels started ahead of the visits: a student's page shows in seconds, not a kernel's start-up.
        command += ["--preheat_kernel=True", f"--pool_size={POOL_SIZE}"]
    try:
        log_path, output = _voila_log(log)
    except OSError as error:
        print(f"memlab classroom: --log: cannot write {log}: {error.strerror or error}", file=sys.stderr)
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)
        return 2
    _adopt_orphans()
    previous = signal.signal(signal.SIGTERM, _interrupt)
    # In a session of its own, Voila gets no Ctrl-C from the terminal: we get it, and stop Voila and its kernels.
    voila = None
    try:
        voila = subprocess.Popen(
            command, start_new_session=True, env=environment, stdout=output, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _listening(host, port):
            if voila.poll() is not None:
                print(
                    f"memlab classroom: Voila stopped (status {voila.returncode}){_log_end(log_path)}", file=sys.stderr
                )
                return voila.returncode or 1
            if time.monotonic() > deadline:
                print(
                    f"memlab classroom: Voila did not listen on port {port} in {STARTUP_SECONDS} s{_log_end(log_path)}",
                    file=sys.stderr,
                )
                return 1
            time.sleep(0.2)
        shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
        if class_store is None:
            print(f"memlab classroom: open http://{shown}:{port}/ (Ctrl-C stops it)", flush=True)
        else:
            print(f"students: http://{shown}:{port}/", flush=True)
            print(
                f"teacher: http://{shown}:{port}/?teacher={token}  (keep it to yourself; Ctrl-C stops it)", flush=True
            )
        exposed = exposure(host)
        if exposed:
            print(f"memlab classroom: listening on {host}:{port}, which exposes {exposed}", flush=True)
        if log_path is not None:
            print(f"memlab classroom: Voila's messages go to {log_path}", flush=True)
        return voila.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        if voila is not None:
            _stop(voila)
        signal.signal(signal.SIGTERM, previous)
        if output is not None:
            output.close()
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)


def _voila_log(log: str | Path | None):
    """Where Voila's messages go: (the log file's path, its open file), or (None, None) for standard error."""
    if log == "-":
        return None, None
    if log is None:
        descriptor, name = tempfile.mkstemp(prefix="memlab-classroom-", suffix=".log")
        return Path(name), os.fdopen(descriptor, "ab")
    return Path(log), open(log, "ab")  # noqa: SIM115: closed when the classroom stops


def _log_end(log_path: Path | None, lines: int = 20) -> str:
    """The end of Voila's log, to follow a message that it failed (nothing when its messages went to stderr)."""
    if log_path is None:
        return ""
    try:
        tail = log_path.read_text(errors="replace").splitlines()[-lines:]
    except OSError:
        return f"; its log: {log_path}"
    return f"; the end of its log ({log_path}):\n" + "\n".join(f"  {line}" for line in tail)


def _opening_problem(where: str | Path) -> str | None:
    """Why the class store ``where`` cannot be opened (its password hidden), or None once it is (created if new)."""
    try:
        with ClassStore(where) as klass:
            klass.store()
            klass.progress()
    except MemlabError as error:
        return hidden(str(error), where)
    except OSError as error:
        return hidden(f"cannot open the class store {where}: {error.strerror or error}", where)
    return None
