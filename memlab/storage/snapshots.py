"""A snapshot: an in-memory image of a whole SQLite store, to put the store back to later.

The exhaustive checker replays the common prefix of many traces once: it keeps each world's store as a snapshot
after every step and restores the store to its parent's before the next (``memlab.check.prefixes``), so every step
runs the store's own code on a database in exactly the state its trace left (the same rows, ids and audit chain).
SQLite's backup API copies the pages both ways; a restore is far cheaper than building a store again.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

__all__ = ["Snapshot", "take", "put_back"]


@dataclass(frozen=True, eq=False)
class Snapshot:
    """An image of a store's database: what ``MemoryStore.snapshot`` returns and ``MemoryStore.restore`` takes."""

    image: sqlite3.Connection
    """A private in-memory database holding the store's pages as they were."""


def take(connection: sqlite3.Connection) -> Snapshot:
    """The image of ``connection``'s database now; taken outside a write transaction of that connection (the
    storage takes it under its lock, between transactions)."""
    image = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    connection.backup(image)
    return Snapshot(image)


def put_back(snapshot: Snapshot, connection: sqlite3.Connection) -> None:
    """Make ``connection``'s database the image ``snapshot`` holds, page for page."""
    snapshot.image.backup(connection)
