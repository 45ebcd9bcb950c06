"""The namespace memlab's doctests run in (``pytest --doctest-modules``, set in pyproject.toml).

Every doctest gets its own small in-memory store on a fixed clock, so examples show stable output and
cannot affect each other. What it holds (agent ``main``):

- session ``public-chat`` starts at PUBLIC, saves ``user-name`` "Sam" and ``favourite-language`` "Python"
  (then deletes the latter), escalates to INTERNAL and saves ``user-name`` "Samantha Rivera";
- session ``hr-review`` at CONFIDENTIAL saves ``salary`` "85k", then "90k".

``s`` (also ``session``) is a fresh session ``example`` at PUBLIC on that store.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import memlab
from memlab import Level, MemoryStore
from memlab.eval import load_locomo, load_trec
from memlab.policy import Policy

PACKAGE = Path(__file__).parent / "memlab"
FIXED_TIME = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)  # as tests/conftest.py


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    """Doctests come from the package only, never from tests/, notebooks/, benchmarks/ or tools/."""
    collected = yield
    if PACKAGE in file_path.parents:
        return collected
    # pytest exports DoctestItem but not the module collector, so it is recognised by name.
    return [node for node in collected if type(node).__name__ != "DoctestModule"]


def fixed_clock() -> datetime:
    return FIXED_TIME


def example_store() -> MemoryStore:
    """The store every doctest sees as ``store``."""
    store = MemoryStore(clock=fixed_clock)
    chat = store.session("PUBLIC", "main", session_id="public-chat")
    chat.memory_save("user-name", "Sam", tags=["personal"])
    chat.memory_save("favourite-language", "Python", tags=["preferences"])
    chat.memory_delete("favourite-language")
    chat.escalate(Level.INTERNAL, reason="user shared their full name")
    chat.memory_save("user-name", "Samantha Rivera", tags=["personal"])
    hr = store.session("CONFIDENTIAL", "main", session_id="hr-review")
    hr.memory_save("salary", "85k", tags=["hr"])
    hr.memory_save("salary", "90k", tags=["hr"])
    return store


@pytest.fixture(autouse=True)
def _doctest_names(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Fill ``doctest_namespace`` for doctests only; other tests keep their own fixtures."""
    if not isinstance(request.node, pytest.DoctestItem):
        return
    namespace = request.getfixturevalue("doctest_namespace")
    store = example_store()
    session = store.session("PUBLIC", "main", session_id="example")
    namespace.update(
        memlab=memlab,
        Level=Level,
        MemoryStore=MemoryStore,
        Policy=Policy,
        load_locomo=load_locomo,
        load_trec=load_trec,
        store=store,
        s=session,
        session=session,
        tmp=tmp_path_factory.mktemp("doctest"),
    )
    request.addfinalizer(store.close)
