"""Who sees what, from the auditor's views (``MemoryStore.versions``, ``history`` and ``view``): no session
reads, so looking adds nothing to the audit.

``shadow_table`` lays out every version of a key and marks the one a session at each level sees, as the
store's own effective view at that level says, for the default floor (every grade read) and for a floor of
TRUSTED (untrusted versions invisible); ``effective_view`` is that view for one taint and floor.

Examples:
    >>> shadow_table(store, "user-name")[["classification", "version", "seen at PUBLIC"]]
      classification  version  seen at PUBLIC
    0         PUBLIC        1            True
    1       INTERNAL        1           False
"""

from __future__ import annotations

import pandas as pd

from memlab.errors import InvalidArgument
from memlab.labels import Integrity, Label, LabelLike
from memlab.levels import Level
from memlab.store import MemoryStore

__all__ = ["saved_keys", "shadow_table", "versions_table", "effective_view", "view_changes", "seen_column", "floors"]

VIEW_COLUMNS = ["key", "content", "tags", "classification", "version", "saved_by"]


def seen_column(level: LabelLike, floor: Integrity | str = Integrity.UNTRUSTED) -> str:
    """The ``shadow_table`` column saying which version sessions at ``level`` with ``floor`` see.

    Examples:
        >>> seen_column("internal"), seen_column("internal", "trusted")
        ('seen at INTERNAL', 'seen at INTERNAL, floor trusted')
    """
    name = f"seen at {Label.parse(level).level.name}"
    return name if Integrity.parse(floor) is Integrity.UNTRUSTED else f"{name}, floor {Integrity.parse(floor)}"


def floors(store: MemoryStore) -> tuple[Integrity, ...]:
    """The floors a session of ``store`` may have: the default (every grade read), and TRUSTED where the store
    keeps it (``MemoryStore.check_label``: not on a backend without integrity, nor under a policy whose views are
    not kept per reader).

    Examples:
        >>> floors(MemoryStore()), floors(MemoryStore(policy="global-stats"))
        ((<Integrity.UNTRUSTED: 0>, <Integrity.TRUSTED: 1>), (<Integrity.UNTRUSTED: 0>,))
    """
    try:
        store.check_label(Label.parse("PUBLIC"), floor=Integrity.TRUSTED)
    except InvalidArgument:
        return (Integrity.UNTRUSTED,)
    return (Integrity.UNTRUSTED, Integrity.TRUSTED)


def saved_keys(store: MemoryStore, agent: str = "main") -> list[str]:
    """Every key ``agent`` has ever saved (at any level, deleted or not), in key order.

    Examples:
        >>> saved_keys(store)  # favourite-language was deleted
        ['favourite-language', 'salary', 'user-name']
    """
    return sorted(set(store.versions(agent)["key"]))


def _annotate(history: pd.DataFrame, store: MemoryStore, agent: str) -> pd.DataFrame:
    """Add ``status``, ``integrity`` and the ``seen at LEVEL`` columns (each floor's) to history rows of one or
    more keys.

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
    history.insert(2, "integrity", [str(Label.parse(label).integrity) for label in history["classification"]])
    rows = list(zip(history["key"], history["classification"], history["version"], strict=True))
    for floor in floors(store):
        for taint in Level:
            view = store.view(taint, agent, floor=floor)
            seen = set(zip(view["key"], view["classification"], view["version"], strict=True))
            column = pd.Series([row in seen for row in rows], index=history.index, dtype=bool)
            history[seen_column(taint, floor)] = column
    return history


def shadow_table(store: MemoryStore, key: str, agent: str = "main") -> pd.DataFrame:
    """Every version of ``key`` at every level, and which one sessions at each level see.

    Args:
        store: the store.
        key: the memory key.
        agent: the namespace.
    Returns:
        ``store.history(key, agent)`` (by level, then version) with an ``integrity`` column (``trusted`` or
        ``untrusted``), a ``status`` column (``current``, ``superseded`` or ``deleted``) and one boolean column
        per level and floor, ``seen at LEVEL`` (the default floor, every grade read) and, where the store keeps
        that floor (``floors``), ``seen at LEVEL, floor trusted``: True on the row of the version a session at
        that taint and floor gets from ``memory_get``. Trust first: the two differ only where no trusted version
        is readable.

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
    store: MemoryStore,
    agent: str,
    taint: LabelLike,
    *,
    floor: Integrity | str = Integrity.UNTRUSTED,
    versions: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """What a session of ``agent`` at ``taint`` with ``floor`` sees: per key, its effective version, in key order.

    The same rows ``memory_list()`` returns, read without a session so that looking adds no audit row.

    Args:
        store: the store.
        agent: the namespace.
        taint: the session's taint (its integrity does not change what it reads; its floor does).
        floor: the session's floor: UNTRUSTED (the default) reads every grade, TRUSTED no untrusted version.
        versions: ``versions_table(store, agent)`` when already at hand (several views, one reading).

    Examples:
        >>> effective_view(store, "main", "PUBLIC")["content"].tolist()
        ['Sam']
    """
    taint, floor = Label.parse(taint), Integrity.parse(floor)
    if versions is None or taint.categories:  # the history's columns are the four levels'
        return store.view(taint, agent, floor=floor)[VIEW_COLUMNS]
    return versions[versions[seen_column(taint, floor)]].reset_index(drop=True)[VIEW_COLUMNS]


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
