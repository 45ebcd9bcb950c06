"""Where a store folder keeps things: the catalogue, the lock, and each agent's file named by a hash of its name.

Examples:
    >>> agent_file("main")
    '0d/0d6e4079e36703ebd37c00722f5891d2.db'
"""

from __future__ import annotations

import hashlib

__all__ = ["CATALOGUE", "LOCK", "FORMAT", "agent_file"]

CATALOGUE = "catalogue.db"
LOCK = ".lock"
FORMAT = "memlab-folder"


def agent_file(agent: str) -> str:
    """An agent's file under ``agents/``: named by a hash of the name (no path traversal, no case folding, any
    Unicode name), two hex digits of fan-out."""
    digest = hashlib.sha256(agent.encode("utf-8")).hexdigest()[:32]
    return f"{digest[:2]}/{digest}.db"
