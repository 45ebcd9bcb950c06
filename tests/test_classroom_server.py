"""``memlab classroom`` as a process (issue 23): the URL only once its own Voila listens, SIGTERM and Ctrl-C stop
Voila and its kernels and free the port, ``--host`` beyond loopback says what it exposes, and the test session
stops whatever it started (tests/leftovers.py)."""

from __future__ import annotations

import http.client
import re
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

from memlab.classroom_server import descendants, exposure, free_port
from memlab.classroom_voila import Visits

ROOT = Path(__file__).resolve().parent.parent


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "memlab.cli", "classroom", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


def port_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def test_a_taken_port_is_said_and_no_url_printed():
    """Issue 23: with a server left on the port, the next start printed a URL (the old server's), then failed.
    Guards: serve() without its _bindable check."""
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        classroom = start("--port", str(port))
        out, err = classroom.communicate(timeout=60)
    assert classroom.returncode == 1
    assert "http://" not in out and f"port {port} on 127.0.0.1 is in use" in err


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_signal_stops_voila_and_its_kernels_and_frees_the_port(stop):
    """Issue 23: SIGTERM on `memlab classroom` left Voila on the port. Ctrl-C is SIGINT to the foreground group.
    Guards: no SIGTERM handler in serve(). (Voila stops its kernels on SIGTERM itself; _stop() kills what is left
    after a Voila that had to be killed, which this test does not reach.)"""
    port = free_port()
    classroom = start("--port", str(port))
    try:
        line = classroom.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=120) as page:  # a visit: a kernel starts
            page.read()
        started = descendants(classroom.pid)
        commands = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in started]
        assert any(b"voila" in c for c in commands) and any(b"ipykernel" in c for c in commands), commands
        classroom.send_signal(stop)
        assert classroom.wait(timeout=60) == 0
    finally:
        if classroom.poll() is None:
            classroom.kill()
    time.sleep(0.2)  # the kernels' last exit is reaped by their subreaper
    alive = [
        pid for pid in started if Path(f"/proc/{pid}/cmdline").exists() and Path(f"/proc/{pid}/cmdline").read_bytes()
    ]
    assert alive == [] and port_free(port)


def test_a_host_beyond_loopback_says_what_it_exposes():
    assert exposure("127.0.0.1") is None and exposure("::1") is None and exposure("localhost") is None
    assert "every network interface" in exposure("0.0.0.0")
    assert "192.168.1.5" in exposure("192.168.1.5")


def test_the_session_end_check_finds_and_stops_an_orphaned_kernel(tmp_path):
    """Issue 23: orphaned Voila servers and kernels were running 35 minutes after a CI run that had passed.
    Guards: adopt_orphans() not called (the orphan goes to init, out of sight); the sessionfinish hook not failing."""
    pidfile = tmp_path / "orphan.pid"
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_orphan.py").write_text(
        textwrap.dedent(f"""
        import subprocess, sys, time
        from pathlib import Path

        def test_leaves_an_orphan():
            sleeper = "import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(120)"
            middle = "import subprocess as s, sys; s.Popen([sys.executable, '-c', sys.argv[1], 'ipykernel_launcher'])"
            subprocess.run([sys.executable, "-c", middle, sleeper], check=True)  # the sleeper is orphaned
            while not Path({str(pidfile)!r}).exists():
                time.sleep(0.05)
        """)
    )
    inner = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.leftovers", "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert inner.returncode == pytest.ExitCode.TESTS_FAILED, inner.stdout + inner.stderr
    assert "1 passed" in inner.stdout and "leftovers: the tests left 1 process(es)" in inner.stderr
    orphan = int(pidfile.read_text())
    assert not Path(f"/proc/{orphan}").exists() or b"ipykernel" not in Path(f"/proc/{orphan}/cmdline").read_bytes()


def test_a_class_prints_the_students_and_the_teachers_urls_once_bound(tmp_path):
    port = free_port()
    classroom = start("--port", str(port), "--class", str(tmp_path / "class"))
    try:
        students, teacher = classroom.stdout.readline(), classroom.stdout.readline()
        assert students == f"students: http://127.0.0.1:{port}/\n" and not port_free(port)
        token = re.fullmatch(rf"teacher: http://127\.0\.0\.1:{port}/\?teacher=([\w-]{{32}})  \(.*\)\n", teacher)
        assert token, teacher
        assert classroom.stdout.readline().startswith("memlab classroom: Voila's messages go to ")  # after, not among
        classroom.send_signal(signal.SIGTERM)
        assert classroom.wait(timeout=60) == 0
    finally:
        if classroom.poll() is None:
            classroom.kill()


def test_the_address_comes_first_and_voilas_messages_go_to_a_log(tmp_path):
    """Issue 37: the addresses were printed among Voila's notices (its own unlabelled "Voilà is running at: URL"
    among them). Guards: serve() letting Voila write to the terminal (stdout=None, stderr=None). The class's two
    labelled addresses: the test below."""
    port, log = free_port(), tmp_path / "voila.log"
    classroom = start("--port", str(port), "--log", str(log))
    try:
        lines = [classroom.stdout.readline() for _ in range(2)]
        assert lines == [
            f"memlab classroom: open http://127.0.0.1:{port}/ (Ctrl-C stops it)\n",
            f"memlab classroom: Voila's messages go to {log}\n",
        ]
        classroom.send_signal(signal.SIGTERM)
        out, err = classroom.communicate(timeout=60)
    finally:
        if classroom.poll() is None:
            classroom.kill()
    assert classroom.returncode == 0 and out == "" and err == "", (out, err)
    assert "Voilà is running at" in log.read_text()


def test_a_log_that_cannot_be_written_is_refused_before_voila_starts(tmp_path):
    port = free_port()
    classroom = start("--port", str(port), "--log", str(tmp_path / "missing" / "voila.log"))
    out, err = classroom.communicate(timeout=60)
    assert classroom.returncode == 2 and out == ""
    assert err.startswith(f"memlab classroom: --log: cannot write {tmp_path / 'missing' / 'voila.log'}: ")
    assert port_free(port)


@pytest.mark.parametrize("where", ["user", "query"])
def test_a_class_store_that_does_not_connect_is_said_before_voila_starts(tmp_path, where):
    """Issue 23: a PostgreSQL URL as the class store. One that does not connect is said, its password hidden, with
    no traceback, and nothing is served. Guards: serve() without its _opening_problem check (Voila starts, the URLs
    are printed and every page fails); _opening_problem without hidden() (a password in the query is printed)."""
    missing = tmp_path / "no-server"
    url = {
        "user": f"postgresql://teacher:hunter2@/class?host={missing}",
        "query": f"postgresql:///class?host={missing}&user=teacher&password=hunter2",
    }[where]
    port = free_port()
    classroom = start("--port", str(port), "--class", url)
    out, err = classroom.communicate(timeout=120)
    assert classroom.returncode == 2 and out == "", (out, err)
    assert err.startswith("memlab classroom: cannot connect to postgresql://"), err
    assert "***" in err and "hunter2" not in err and "Traceback" not in err
    assert port_free(port)


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes() + Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""  # gone since it was listed


def test_a_class_on_postgresql_keeps_its_urls_password_from_the_output_the_kernels_and_the_page(pg_url):
    """Issue 23: `memlab classroom --class postgresql://owner:PASSWORD@...` prints no password, and neither Voila's
    nor any kernel's environment or command line carries it (the kernels read the URL from a file of this user's
    alone, removed on stop); the page a student loads does not show it. Nor do they carry the teacher's token:
    only its SHA-256, which opens nothing. Guards: hand_over putting the whole URL in MEMLAB_CLASS; serve()
    handing the kernels the token itself."""
    url = pg_url.replace("postgres@", "postgres:hunter2@")
    port = free_port()
    classroom = start("--port", str(port), "--class", url)
    try:
        students, teacher = classroom.stdout.readline(), classroom.stdout.readline()
        assert students == f"students: http://127.0.0.1:{port}/\n" and "?teacher=" in teacher, (students, teacher)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=120) as page:  # a visit: a kernel runs
            shown = page.read()
        started = descendants(classroom.pid)
        assert any(b"ipykernel" in _environ(pid) for pid in started)
        assert [pid for pid in started if b"hunter2" in _environ(pid)] == []
        token = teacher.split("?teacher=")[1].split()[0].encode()
        assert [pid for pid in started if token in _environ(pid)] == []
        assert b"hunter2" not in shown
        voila = next(pid for pid in started if b"voila" in Path(f"/proc/{pid}/cmdline").read_bytes())
        handed = dict(
            line.split(b"=", 1) for line in Path(f"/proc/{voila}/environ").read_bytes().split(b"\0") if b"=" in line
        )
        secret = Path(handed[b"MEMLAB_CLASS_SECRET"].decode())
        assert secret.read_text() == url and stat.S_IMODE(secret.stat().st_mode) == 0o600
        assert stat.S_IMODE(secret.parent.stat().st_mode) == 0o700
        assert handed[b"MEMLAB_CLASS"].decode() == pg_url.replace("postgres@", "postgres:***@")
        classroom.send_signal(signal.SIGTERM)
        out, err = classroom.communicate(timeout=60)
        assert classroom.returncode == 0
    finally:
        if classroom.poll() is None:  # a failed assertion: stopped as a teacher would, so it removes the URL's file
            classroom.terminate()
            try:
                classroom.wait(timeout=60)
            except subprocess.TimeoutExpired:
                classroom.kill()
    assert "hunter2" not in students + teacher + out + err
    assert not secret.exists() and not secret.parent.exists()


def _kernels(pid: int) -> list[int]:
    return [pid for pid in descendants(pid) if b"ipykernel" in _environ(pid)]


def _visit(port: int, source: str = "127.0.0.1") -> tuple[int, str]:
    """A plain GET of the page, no JavaScript, from ``source`` (every 127.x address is this machine): its status
    and text."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=180, source_address=(source, 0))
    try:
        connection.request("GET", "/")
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def _stopped(classroom: subprocess.Popen) -> None:
    classroom.terminate()
    try:
        classroom.wait(timeout=60)
    except subprocess.TimeoutExpired:
        classroom.kill()


def test_plain_page_loads_start_no_more_kernels_than_the_caps(tmp_path):
    """Issue 33: each plain GET (no JavaScript, so no page ever connects) started a ~180 MiB kernel that stayed:
    40 GETs held 7 GiB. Kernels are capped per visitor's address and in all, the preheated pool included; a
    visit beyond gets an HTTP error page and starts nothing. Guards: serve() running plain `voila` (no
    memlab.classroom_voila handler); Visits.refusal without its per-visitor or its in-all check."""
    port = free_port()
    classroom = start(
        "--port", str(port), "--class", str(tmp_path / "class"),
        "--max-kernels", "5", "--kernels-per-visitor", "2", "--idle-seconds", "600",
    )  # fmt: skip
    try:
        assert classroom.stdout.readline().startswith("students: ")
        classroom.stdout.readline()
        one = [_visit(port) for _ in range(3)]
        assert [status for status, _ in one] == [200, 200, 429], one[-1]
        assert "Your name" not in one[2][1] and "the most one visitor may have" in one[2][1]
        other = [_visit(port, "127.0.0.2") for _ in range(2)]  # another visitor: the class is full (3 pooled + 2)
        assert [status for status, _ in other] == [503, 503] and "the most it starts" in other[0][1]
        deadline = time.monotonic() + 120
        while len(_kernels(classroom.pid)) < 5 and time.monotonic() < deadline:
            time.sleep(0.5)  # the pool refills the two kernels the visits took
        time.sleep(2)
        assert len(_kernels(classroom.pid)) == 5
    finally:
        _stopped(classroom)


def test_a_kernel_no_page_is_connected_to_is_stopped_once_idle():
    """Issue 33: nothing ever culled a plain GET's kernel. One no page is connected to is stopped after
    --idle-seconds (here 4), which frees its visitor's place. Guards: serve() without the culler's options."""
    port = free_port()
    classroom = start("--port", str(port), "--kernels-per-visitor", "1", "--idle-seconds", "4")
    try:
        assert "http://" in classroom.stdout.readline()
        assert _visit(port)[0] == 200 and len(_kernels(classroom.pid)) == 1
        assert _visit(port)[0] == 429  # its place is taken while the kernel runs
        deadline = time.monotonic() + 60
        while _kernels(classroom.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _kernels(classroom.pid) == []
        # The kernel's process ends a moment before the server's manager drops it: the place frees then.
        deadline = time.monotonic() + 10
        while (status := _visit(port)[0]) == 429 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert status == 200
    finally:
        _stopped(classroom)


def test_the_caps_count_each_visitors_kernels_and_those_starting():
    """Guards: Visits.refusal counting kernels that have stopped, or not the visits still starting."""
    visits = Visits(per_visitor=2, in_all=4, pooled=1)
    assert visits.refusal("a", set()) is None
    visits.starting["a"] += 1
    visits.kernels["k1"] = "a"
    assert visits.refusal("a", {"k1"})[0] == 429  # one running, one starting
    assert visits.refusal("b", {"k1"}) is None
    visits.kernels["k2"] = "b"
    assert visits.refusal("b", {"k1", "k2"})[0] == 503  # 1 pooled + 2 running + 1 starting
    visits.starting["a"] -= 1
    assert visits.refusal("a", {"k2"}) is None and visits.kernels == {"k2": "b"}  # k1 culled: its place is free
