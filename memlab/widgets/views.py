"""Who sees what, from the auditor's views (``MemoryStore.versions``, ``history`` and ``view``): no session
reads, so looking adds nothing to the audit.

``shadow_table`` lays out every version of a key and marks the one a session at each level sees, as the
store's own effective view at that level says; ``effective_view`` is that view for one taint.

Examples:
    >>> shadow_table(store, "user-name")[["classification", "version", "seen at PUBLIC"]]
      classification  version  seen at PUBLIC
    0         PUBLIC        1            True
    1       INTERNAL        1           False
"""

from __future__ import annotations

import pandas as pd

from memlab.labels import Label, LabelLike
from memlab.levels import Level
from memlab.store import MemoryStore

__all__ = ["saved_keys", "shadow_table", "versions_table", "effective_view", "view_changes", "seen_column"]

VIEW_COLUMNS = ["key", "content", "tags", "classification", "version", "saved_by"]


def seen_column(level: LabelLike) -> str:
    """The ``shadow_table`` column saying which version sessions at ``level`` see.

    Examples:
        >>> seen_column("internal")
        'seen at INTERNAL'
    """
    return f"seen at {Label.parse(level).level.name}"


def saved_keys(store: MemoryStore, agent: str = "main") -> list[str]:
    """Every key ``agent`` has ever saved (at any level, deleted or not), in key order.

    Examples:
        >>> saved_keys(store)  # favourite-language was deleted
        ['favourite-language', 'salary', 'user-name']
    """
    return sorted(set(store.versions(agent)["key"]))


def _annotate(history: pd.DataFrame, store: MemoryStore, agent: str) -> pd.DataFrame:
    """Add ``status`` and the ``seen at LEVEL`` columns to history rows of one or more keys.

    Who sees which version is asked of the store's own effective views (``MemoryStore.view``), so the
    widgets show exactly what sessions get, under any policy, and reading adds no audit row.
    """
    for column in ("deleted_at", "deleted_by"):  # one representation of "not deleted", whatever pandas inferred
        history[column] = history[column].astype(object).where(history[column].notna(), None)
    newest = history.groupby(["key", "classification"])["version"].transform("max")
    deleted = history["deleted_at"].notna()
    status = [
        "deleted" if gone else "current" if version == top else "superseded"
        for gone, version, top in zip(deleted, history["version"], newest, strict=True)
    ]
    history.insert(4, "status", status)
    rows = list(zip(history["key"], history["classification"], history["version"], strict=True))
    for taint in Level:
        view = store.view(taint, agent)
        seen = set(zip(view["key"], view["classification"], view["version"], strict=True))
        history[seen_column(taint)] = pd.Series([row in seen for row in rows], index=history.index, dtype=bool)
    return history


def shadow_table(store: MemoryStore, key: str, agent: str = "main") -> pd.DataFrame:
    """Every version of ``key`` at every level, and which one sessions at each level see.

    Args:
        store: the store.
        key: the memory key.
        agent: the namespace.
    Returns:
        ``store.history(key, agent)`` (by level, then version) with a ``status`` column (``current``,
        ``superseded`` or ``deleted``) and one boolean ``seen at LEVEL`` column per level: True on the row of
        the version a session at that taint gets from ``memory_get``.

    Examples:
        >>> shadow_table(store, "user-name")["seen at CONFIDENTIAL"].tolist()
        [False, True]
    """
    return _annotate(store.history(key, agent), store, agent)


def versions_table(store: MemoryStore, agent: str = "main") -> pd.DataFrame:
    """``shadow_table`` for every key ``agent`` has saved, one after another in key order.

    Examples:
        >>> versions_table(store)["key"].unique().tolist()
        ['favourite-language', 'salary', 'user-name']
    """
    return _annotate(store.versions(agent), store, agent)


def effective_view(
    store: MemoryStore, agent: str, taint: LabelLike, *, versions: pd.DataFrame | None = None
) -> pd.DataFrame:
    """What a session of ``agent`` at ``taint`` sees: per key, its effective version, in key order.

    The same rows ``memory_list()`` returns, read without a session so that looking adds no audit row.

    Args:
        store: the store.
        agent: the namespace.
        taint: the session's taint.
        versions: ``versions_table(store, agent)`` when already at hand (several views, one reading).

    Examples:
        >>> effective_view(store, "main", "PUBLIC")["content"].tolist()
        ['Sam']
    """
    if versions is None or Label.parse(taint).categories:  # the history's columns are the four levels'
        return store.view(taint, agent)[VIEW_COLUMNS]
    return versions[versions[seen_column(taint)]].reset_index(drop=True)[VIEW_COLUMNS]


def view_changes(before: pd.DataFrame | None, after: pd.DataFrame) -> dict[str, list[str]]:
    """How an effective view changed between two drawings: keys whose entry is ``new`` (appeared or now a
    different version) and keys now ``gone``; nothing when there was no drawing before.

    Examples:
        >>> before = effective_view(store, "main", "PUBLIC")
        >>> s.memory_delete("user-name")  # doctest: +ELLIPSIS
        Memory(key='user-name', content='Sam', ...)
        >>> view_changes(before, effective_view(store, "main", "PUBLIC"))
        {'new': [], 'gone': ['user-name']}
    """
    if before is None:
        return {"new": [], "gone": []}
    old, now = (
        dict(zip(f["key"], zip(f["classification"], f["version"], strict=True), strict=True)) for f in (before, after)
    )
    return {"new": [key for key in now if old.get(key) != now[key]], "gone": [key for key in old if key not in now]}
