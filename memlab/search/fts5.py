"""What SQLite FTS5's own tokenizers make of text: the one place that asks SQLite.

Examples:
    >>> tokenize(["She runs; he ran."], "porter unicode61")
    [['she', 'run', 'he', 'ran']]
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections import defaultdict
from collections.abc import Sequence

from memlab.errors import InvalidArgument

__all__ = ["tokenize"]


def tokenize(texts: Sequence[str], option: str) -> list[list[str]]:
    """The terms an FTS5 index with ``tokenize=option`` holds for each text, in order.

    Each text is indexed as a row of an in-memory FTS5 table and read back through ``fts5vocab``'s
    ``instance`` table, so the answer is SQLite's, not a Python imitation of it.

    Raises:
        InvalidArgument: SQLite refused the ``tokenize`` option.
    """
    quoted = "'" + option.replace("'", "''") + "'"
    with contextlib.closing(sqlite3.connect(":memory:")) as db:
        try:
            db.execute(f"CREATE VIRTUAL TABLE texts USING fts5(text, tokenize = {quoted})")
        except sqlite3.Error as error:
            raise InvalidArgument(f"SQLite refused tokenize={option!r}: {error}") from error
        db.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(texts, 'instance')")
        db.executemany("INSERT INTO texts(rowid, text) VALUES (?, ?)", enumerate(texts, start=1))
        found: dict[int, list[str]] = defaultdict(list)
        for rowid, term in db.execute('SELECT doc, term FROM terms ORDER BY doc, "offset"'):
            found[rowid].append(term)
    return [found[rowid] for rowid in range(1, len(texts) + 1)]
