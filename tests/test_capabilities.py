"""memlab.storage.capabilities: the declaration of what each backend can do, and ``require``.

Whether each backend does what it declares is tests/test_contract.py's (it tries every feature).
"""

from __future__ import annotations

import pytest

from memlab import MemoryStore
from memlab.errors import InvalidArgument
from memlab.storage.capabilities import BACKENDS, CAPABILITIES, require


def test_every_backend_declares_known_capabilities_only():
    assert set(BACKENDS) == {"memory", "file", "folder", "postgres"}
    for declared in BACKENDS.values():
        assert declared <= set(CAPABILITIES)


@pytest.mark.parametrize(
    ("backend", "capability", "has"),
    [
        ("memory", "copy", True),
        ("memory", "persistent", False),
        ("file", "files", True),
        ("folder", "copy", False),
        ("postgres", "compartments", True),
        ("postgres", "fts5_ranking", False),
    ],
)
def test_require_refuses_exactly_what_a_backend_lacks(backend, capability, has):
    # Guards: capabilities.require checking only that the capability is known (never that the backend has it).
    if has:
        require(BACKENDS[backend], capability, "a fork", backend)
    else:
        with pytest.raises(InvalidArgument, match=f"a fork: {backend} lacks {capability} \\("):
            require(BACKENDS[backend], capability, "a fork", backend)


def test_an_unknown_capability_is_an_error_listing_the_known_ones():
    with pytest.raises(InvalidArgument, match="unknown capability 'teleport'; known capabilities: compartments"):
        require(BACKENDS["memory"], "teleport", "x", "memory")


@pytest.mark.parametrize(("path", "kind"), [(None, "memory"), ("store.db", "file"), ("store", "folder")])
def test_a_storages_capabilities_are_its_kinds_declaration(tmp_path, path, kind):
    with MemoryStore(None if path is None else tmp_path / path) as store:
        assert store.storage.capabilities == BACKENDS[kind]
