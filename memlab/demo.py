"""``memlab demo``: sessions at three levels, shadowing, a soft delete and the audit trail, as plain-text tables."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TextIO

import pandas as pd

from memlab import plaintext, tools
from memlab.errors import InvalidArgument
from memlab.levels import Level
from memlab.session import Session
from memlab.storage.postgres import is_postgres_url
from memlab.store import MemoryStore

__all__ = ["run", "effective_views"]


def effective_views(sessions: list[Session]) -> pd.DataFrame:
    """One row per key, one column per session: each session's effective view, side by side.

    Reads through each session's own ``memory_list``, so the reads appear in the audit like any others.
    """
    columns = {
        f"{session.id} @ {session.label}": {
            memory.key: f"{memory.content} ({memory.label})" for memory in session.memory_list()
        }
        for session in sessions
    }
    return pd.DataFrame(columns).sort_index().rename_axis("key").fillna("—")


def _refuse_anything_there(db: str | Path) -> None:
    """The demo's sessions must never land among someone's memories: only a new or empty path will do."""
    if is_postgres_url(db):
        raise InvalidArgument("the demo keeps its store in memory or at a new or empty path, not in a database")
    try:
        mode = os.lstat(db).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISDIR(mode) and not any(Path(db).iterdir()):
        return
    if stat.S_ISREG(mode) and os.path.getsize(db) == 0:
        return
    raise InvalidArgument(
        f"{db} is not a new or empty path (it holds a store or other files): the demo writes only there; "
        "leave out --db to run it in memory"
    )


def run(db: str | Path | None = None, out: TextIO | None = None, *, width: int | None = None) -> MemoryStore:
    """Print the walk-through to ``out`` as plain text no wider than ``width`` (None: tables as wide as they
    are) and return the store it built: in memory, or at ``db``, a new path or an empty folder or file.

    Raises:
        InvalidArgument: ``db`` holds something (a store with data, any file): nothing is written to it.
    """
    if db is not None:
        _refuse_anything_there(db)

    def show(title: str, value: object) -> None:
        print("\n" + plaintext.paragraph(f"== {title}", width), file=out)
        if isinstance(value, pd.DataFrame):
            print(plaintext.table(value, width), file=out)
        else:
            print(plaintext.paragraph(str(value), width), file=out)

    store = MemoryStore(db)
    public = store.session(Level.PUBLIC, session_id="public-chat")
    internal = store.session(Level.INTERNAL, session_id="team-chat")
    confidential = store.session(Level.CONFIDENTIAL, session_id="hr-review")

    public.memory_save("user-name", "Sam", tags=["personal"])
    public.memory_save("favourite-language", "Python, for scripting and data work", tags=["preference"])
    internal.memory_save("user-name", "Samantha Rivera, team lead", tags=["personal", "work"])
    internal.memory_save("project-deadline", "The migration ships on March 3rd", tags=["work"])
    confidential.memory_save("salary-review", "Samantha's raise is approved for April", tags=["hr"])
    show(
        "1. Shadowing: each session sees the highest version of user-name it may read",
        effective_views([public, internal, confidential]),
    )

    show(
        "2. A model asks to save at PUBLIC from the confidential session; the hook strips it",
        tools.call(
            confidential,
            "memory_save",
            {"key": "review-note", "content": "Discuss the raise", "classification": "PUBLIC"},
        ),
    )

    public.escalate(Level.INTERNAL, reason="user opened the team wiki")
    show(
        "3. After escalating, public-chat saves at its live taint",
        public.memory_save("wiki-page", "Team wiki: onboarding").classification.name,
    )

    hits = internal.memory_search("what is Samantha's name?")
    show(
        "4. Search from team-chat (confidential memories never appear, nor move its scores)",
        pd.DataFrame(
            [
                {
                    "key": h.memory.key,
                    "classification": h.memory.classification.name,
                    "score": round(h.score, 4),
                    "snippet": h.snippet,
                }
                for h in hits
            ]
        ),
    )

    internal.memory_delete("user-name")
    show(
        "5. team-chat soft-deletes its user-name: the PUBLIC version is effective again",
        effective_views([internal, confidential]),
    )
    show("6. The history of user-name keeps every version, the deleted one too", store.history("user-name"))
    show(
        "7. The audit trail (identifiers, never content)",
        store.audit()[["session_id", "taint", "tool", "key", "query", "outcome", "records", "notes"]],
    )
    show("8. Taint events", store.taint_events())
    return store
