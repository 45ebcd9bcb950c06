"""Shared fixtures: a fresh store, a database path, a fixed clock; and the contract suite's parametrization.

A module marked ``pytestmark = pytest.mark.contract`` is in the contract suite: each of its tests that uses
``backend`` (or ``store``, which is opened on it) runs once per backend of ``tests.backends.BACKENDS`` that
has every capability its ``requires`` marks name. The others are not generated at all (no skips), and the
terminal summary says which backend lacked what for how many tests. Elsewhere ``backend`` is ``"memory"``:
widget, notebook and CLI tests keep the fast in-memory store. ``--backend NAME`` (repeatable) runs the
contract suite on those backends only. See docs/testing.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import settings

from tests import leftovers
from tests.backends import BACKENDS, CAPABILITIES, OPTIONAL, open_store
from tests.pgserver import running_server, stop_server

# The suite is reproducible: the same examples every run. CI (CI=true) runs the same examples and prints the
# blob to reproduce a failure; `pytest --hypothesis-profile=explore` searches anew with many more examples.
settings.register_profile("default", derandomize=True, deadline=None)
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", derandomize=False, deadline=None, max_examples=2000)
settings.load_profile("ci" if os.environ.get("CI") else "default")


FIXED_TIME = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def fixed_clock() -> datetime:
    return FIXED_TIME


@pytest.fixture
def backend() -> str:
    """The backend a test runs on: each of BACKENDS in a contract module (``pytest_generate_tests``), else memory."""
    return "memory"


@pytest.fixture
def store(backend: str):
    """A fresh, empty store on ``backend``."""
    with open_store(backend) as fresh:
        yield fresh


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memories"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh, empty database on the test session's PostgreSQL server."""
    server = running_server()
    url = server.fresh_database()
    yield url
    server.drop_database(url)


# -- the contract suite ----------------------------------------------------------------------------------

_NONE_APPLICABLE = "none-applicable"  # the parameter of a test no selected backend can run: deselected
# (backend, capability) -> the contract tests not generated on backend because it lacks capability.
_not_applicable: dict[tuple[str, str], set[str]] = {}
_generated: dict[str, int] = {}  # backend -> contract test cases collected on it


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        action="append",
        choices=BACKENDS,
        help="run the contract suite on this backend only (repeatable; default: every backend)",
    )


def _required(metafunc: pytest.Metafunc) -> set[str]:
    required = {capability for mark in metafunc.definition.iter_markers("requires") for capability in mark.args}
    unknown = required - set(OPTIONAL)
    if unknown:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: unknown capability {', '.join(sorted(unknown))} "
            f"(tests/backends.py OPTIONAL: {', '.join(OPTIONAL)})"
        )
    return required


def _names(argnames: str | Sequence[str]) -> list[str]:
    return [name.strip() for name in argnames.split(",")] if isinstance(argnames, str) else list(argnames)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """In a contract module, ``backend`` takes every selected backend that has the required capabilities."""
    if "backend" not in metafunc.fixturenames or metafunc.definition.get_closest_marker("contract") is None:
        return
    if any("backend" in _names(mark.args[0]) for mark in metafunc.definition.iter_markers("parametrize")):
        return  # a test that names its own backends
    required = _required(metafunc)
    selected = metafunc.config.getoption("backend") or BACKENDS
    runs = []
    for name in selected:
        missing = required - CAPABILITIES[name]
        for capability in missing:
            _not_applicable.setdefault((name, capability), set()).add(metafunc.definition.nodeid)
        if not missing:
            runs.append(name)
    metafunc.parametrize("backend", runs or [_NONE_APPLICABLE])


@pytest.hookimpl(trylast=True)  # after -k and -m: the summary counts what was selected
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A contract test no selected backend can run is deselected (and counted in the summary), not skipped."""
    selected = {item.nodeid.split("[")[0] for item in items}
    for tests in _not_applicable.values():
        tests &= selected
    kept, dropped = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        name = callspec.params.get("backend") if callspec is not None and item.get_closest_marker("contract") else None
        if name == _NONE_APPLICABLE:
            dropped.append(item)
            continue
        kept.append(item)
        if name is not None:
            _generated[name] = _generated.get(name, 0) + 1
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Say on which backends the contract suite ran, and which tests a backend's missing capability left out."""
    lacking = {place: len(tests) for place, tests in sorted(_not_applicable.items()) if tests}
    if not _generated and not lacking:
        return
    write = terminalreporter.write_line
    runs = ", ".join(f"{name} {_generated.get(name, 0)}" for name in BACKENDS if name in _generated)
    write(f"contract suite: test cases per backend: {runs or 'none'}")
    for (name, capability), count in lacking.items():
        write(f"capabilities: {name} lacks {capability} ({count} test{'s' * (count != 1)} not applicable)")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The PostgreSQL server, if a test started one, stops with the test session; no Voila or kernel is left."""
    stop_server()
    leftovers.pytest_sessionfinish(session)


def pytest_configure(config: pytest.Config) -> None:
    """Orphans of the tests' processes become the session's children, for the check at its end (tests/leftovers.py)."""
    leftovers.adopt_orphans()
