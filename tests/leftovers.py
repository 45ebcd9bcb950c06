"""The test session stops every process it starts: at its end no ``voila`` or ``ipykernel`` process is left.

Issue 23: 35 minutes after a passing CI run, a Voila server for 06_classroom and four kernels were still running,
orphaned. An orphan is re-parented to init, out of sight of the process that started it; so the session first
makes itself the subreaper of its descendants (Linux ``prctl``), and whatever is orphaned below it becomes its
child. At the end, every live ``voila``/``ipykernel`` process below it is named, stopped, and fails the session.
Used by tests/conftest.py; ``pytest -p tests.leftovers`` loads it alone.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

import pytest

from memlab.classroom_server import descendants

SERVERS = ("voila", "ipykernel")
PR_SET_CHILD_SUBREAPER = 36


def adopt_orphans() -> None:
    """Become the subreaper of every process this one starts, however deep (Linux only)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def servers_left() -> dict[int, str]:
    """The live ``voila``/``ipykernel`` processes below this one: pid to command line."""
    found = {}
    for pid in descendants(os.getpid()):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(name in command for name in SERVERS):
            found[pid] = command.strip()
    return found


def pytest_configure(config: pytest.Config) -> None:
    adopt_orphans()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Fail the session, and stop them, if any Voila server or kernel outlived the tests."""
    left = servers_left()
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
    if left:
        named = "; ".join(f"{pid}: {command[:120]}" for pid, command in left.items())
        print(f"\nleftovers: the tests left {len(left)} process(es) running (now killed): {named}", file=sys.stderr)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
