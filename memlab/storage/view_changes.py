"""The one piece of state the parts of a ``SqliteStorage`` share: how often its connection changed a view."""

from __future__ import annotations

__all__ = ["ViewChanges"]


class ViewChanges:
    """A count of the changes one connection made to an effective view or to its vectors.

    What is derived from a view's contents and kept between calls (the tag boost's decisions in
    ``LexicalSearch``, a view's matrix of vectors in ``VectorSearch``) is kept under the count it was worked out
    at, and is stale once the count moves. ``IndexUpkeep`` counts every view it changes or makes,
    ``VectorSearch`` every backfill of vectors. A change by another connection does not move it: each cache
    also reads SQLite's ``data_version``, or is dropped when ``SqliteStorage`` finds the file changed.

    Examples:
        >>> changes = ViewChanges()
        >>> changes.count += 1
        >>> changes.count
        1
    """

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0
