"""What each storage backend can do beyond the contract: one declaration that the code and the tests both read.

Every backend keeps the contract (the semantics, the audit, verify, purge, bulk saves, context). The optional
capabilities are declared here, per kind of backend, and nowhere else: a storage's ``capabilities`` is its kind's
entry, ``MemoryStore`` refuses what its backend lacks by reading it, and the contract suite runs a test that needs
a capability only on the backends declaring it (``tests/test_contract.py`` checks each declaration against what
the backend does when each feature is tried).

Examples:
    >>> "copy" in BACKENDS["file"], "copy" in BACKENDS["folder"]
    (True, False)
"""

from __future__ import annotations

from memlab.errors import InvalidArgument
from memlab.labels import Integrity, Label

__all__ = ["CAPABILITIES", "BACKENDS", "require", "refuse_label"]

CAPABILITIES = {
    "compartments": "labels with categories: a view per label, gated by level and categories (memlab.labels)",
    "integrity": "untrusted versions and sessions, and floors: views per reader, trust first (memlab.labels)",
    "dense": "per-version vectors and dense or hybrid rankings (an embedder)",
    "analyzers": "every registered analyzer (trigram, nltk-porter, ...), not only porter, snowball and none",
    "view_rules": "views other than the lattice's with per-view statistics (the global-stats policy's, say)",
    "fts5_ranking": "FTS5 bm25 scores, with the Ranking's column weights and tag boost (not ts_rank)",
    "copy": "an in-memory image of the whole store: MemoryStore.fork, snapshot and restore",
    "files": "the store is files on disk: reopened by path, shared with other processes, its bytes scanned",
    "persistent": "the store outlives its MemoryStore and reopens from a location (a path or a URL: --db)",
}
"""Each optional capability, and what having it means."""

_SQLITE = frozenset({"compartments", "integrity", "dense", "analyzers", "view_rules", "fts5_ranking"})
BACKENDS: dict[str, frozenset[str]] = {
    "memory": _SQLITE | {"copy"},
    "file": _SQLITE | {"copy", "files", "persistent"},
    "folder": _SQLITE | {"files", "persistent"},
    "postgres": frozenset({"compartments", "integrity", "persistent"}),
}
"""The capabilities of each kind of backend: one in-memory SQLite database, one SQLite file, a folder of SQLite
files (one per agent), a PostgreSQL database."""


def require(capabilities: frozenset[str], capability: str, what: str, backend: str) -> None:
    """Refuse ``what`` on a backend whose ``capabilities`` lack ``capability``.

    Raises:
        InvalidArgument: naming what was asked, the backend, and what it would need.

    Examples:
        >>> require(BACKENDS["folder"], "copy", "a snapshot", "FolderStorage")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
            ...
        memlab.errors.InvalidArgument: a snapshot: FolderStorage lacks copy (an in-memory image of the whole ...)
    """
    if capability not in CAPABILITIES:
        raise InvalidArgument(f"unknown capability {capability!r}; known capabilities: {', '.join(CAPABILITIES)}")
    if capability not in capabilities:
        raise InvalidArgument(f"{what}: {backend} lacks {capability} ({CAPABILITIES[capability]})")


def refuse_label(
    label: Label, floor: Integrity, capabilities: frozenset[str], backend: str, *, policy: str, views_per_label: bool
) -> None:
    """Refuse a label (and a floor) a store cannot keep: categories, or an integrity or floor other than the
    defaults, on a backend without ``compartments`` or ``integrity``; categories or a floor under a policy whose
    views are not kept per label (``views_per_label`` False: shadowing after matching, global statistics).

    Raises:
        InvalidArgument: naming the backend, the policy, or the integrity.
    """
    if not label.trusted or floor is not Integrity.UNTRUSTED:
        what = f"label {label}" if floor is Integrity.UNTRUSTED else f"floor {floor}"
        if "integrity" not in capabilities:
            raise InvalidArgument(
                f"{what}: integrity not supported by this store's backend ({backend}); "
                "use trusted labels and the default floor"
            )
        if floor is not Integrity.UNTRUSTED and not views_per_label:
            raise InvalidArgument(
                f"{what}: integrity not supported under policy {policy!r} (its views are not kept per "
                "reader); use the default floor"
            )
    if not label.categories:
        return
    if "compartments" not in capabilities:
        raise InvalidArgument(
            f"label {label}: compartments not supported by this store's backend ({backend}); "
            "use a level without categories"
        )
    if not views_per_label:
        raise InvalidArgument(
            f"label {label}: compartments not supported under policy {policy!r} (its views are not "
            "kept per label); use a level without categories"
        )
