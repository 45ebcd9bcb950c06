"""What a new path becomes, and where a store folder keeps things: the catalogue, the lock, and each agent's file
named by a hash of its name.

Examples:
    >>> agent_file("main")
    '0d/0d6e4079e36703ebd37c00722f5891d2.db'
    >>> new_layout("notes.db"), new_layout("memories")
    ('file', 'folder')
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["CATALOGUE", "LOCK", "FORMAT", "FILE_SUFFIXES", "agent_file", "new_layout"]

CATALOGUE = "catalogue.db"
LOCK = ".lock"
FORMAT = "memlab-folder"
FILE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
"""A new path ending so (in any case) becomes one SQLite file, as sqlite3 and sqlite-utils would make it."""


def new_layout(path: str | Path) -> str:
    """The layout a store at a new ``path`` gets: ``"file"`` for a name ending in ``FILE_SUFFIXES``, else
    ``"folder"``."""
    return "file" if Path(path).suffix.lower() in FILE_SUFFIXES else "folder"


def agent_file(agent: str) -> str:
    """An agent's file under ``agents/``: named by a hash of the name (no path traversal, no case folding, any
    Unicode name), two hex digits of fan-out."""
    digest = hashlib.sha256(agent.encode("utf-8")).hexdigest()[:32]
    return f"{digest[:2]}/{digest}.db"
