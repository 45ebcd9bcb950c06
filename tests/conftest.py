"""Shared fixtures: a fresh in-memory store, a database path, a fixed clock."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import settings

from memlab import MemoryStore
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
def store():
    with MemoryStore() as fresh:
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


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The PostgreSQL server, if a test started one, stops with the test session."""
    stop_server()
