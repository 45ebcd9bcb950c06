"""LangGraph's TTL over memlab (``MemlabStore(..., ttl=...)``, ``put(..., ttl=minutes)``): an item expires a number of
minutes after it was last saved, by the store's clock.

Where the expiry lives. A put with a TTL saves its version with the tag ``ttl-minutes:<minutes>``; the version
expires at its ``saved_at`` plus those minutes. Both halves are the version's own, written by the session that saved
it: ``saved_at`` is the store's clock (``MemoryStore.clock``), never the caller's, and a tag belongs to its version
alone, so a lower session cannot make a higher version expire (its own versions are not what a higher view shows
when a higher version exists), nor can any writer move another label's expiry. An expired version leaves the view
of every ``MemlabStore`` operation (``get``, ``search``, ``list_namespaces``) at once, before any sweep; its key reads
as not found at that view until the sweep erases it (a lower version then shows again, as after a delete).

Refresh on read saves the item again, same value and TTL, at the reading store's label: only a version saved at
exactly that label is refreshed (a higher store writing a lower version would be a write down, and would let a
lower view observe the read). The sweep (``sweep``) is an auditor's act on the memlab store: every version whose
newest saved state at its label has expired is purged (``MemoryStore.purge``: content erased at that label, audited
with the reason ``LangGraph TTL expired``), at every label, whatever the calling store's taint.

Examples:
    >>> ttl_tag(30)
    'ttl-minutes:30.0'
    >>> minutes_of(("notes", "ttl-minutes:0.5"))
    0.5
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from memlab import InvalidArgument, Memory

if TYPE_CHECKING:
    from memlab import MemoryStore

__all__ = [
    "TAG",
    "SWEEP_REASON",
    "check_config",
    "check_minutes",
    "ttl_tag",
    "minutes_of",
    "expired",
    "sweep",
    "Sweeper",
]

TAG = "ttl-minutes:"
"""The prefix of the tag that holds a version's time to live, in minutes."""
SWEEP_REASON = "LangGraph TTL expired"
"""The reason a sweep's purges carry in the audit."""
_CONFIG_KEYS = ("default_ttl", "refresh_on_read", "sweep_interval_minutes", "omit_expired")


def check_minutes(minutes: Any, what: str = "ttl") -> float | None:
    """A TTL in minutes, checked: None (no expiry) or a finite number above 0.

    Raises:
        InvalidArgument: naming ``what``.
    """
    if minutes is None:
        return None
    if isinstance(minutes, bool) or not isinstance(minutes, int | float) or not math.isfinite(minutes) or minutes <= 0:
        raise InvalidArgument(f"{what} must be None or a number of minutes above 0, not {minutes!r}")
    return float(minutes)


def check_config(config: Any) -> dict[str, Any] | None:
    """LangGraph's ``TTLConfig``, checked: ``default_ttl`` (minutes or None), ``refresh_on_read`` (a bool, default
    True), ``sweep_interval_minutes`` (minutes or None: LangGraph types it an integer, its stores take any number)
    and ``omit_expired`` (memlab always omits them).

    Raises:
        InvalidArgument: an unknown key or a bad value, named.

    Examples:
        >>> check_config({"default_ttl": 5})
        {'default_ttl': 5.0, 'refresh_on_read': True, 'sweep_interval_minutes': None, 'omit_expired': True}
    """
    if config is None:
        return None
    if not isinstance(config, Mapping):
        raise InvalidArgument(f"ttl must be a dict like {{'default_ttl': minutes}}, not {config!r}")
    unknown = sorted(set(config) - set(_CONFIG_KEYS))
    if unknown:
        raise InvalidArgument(f"ttl has unknown keys {unknown}; LangGraph's are {', '.join(_CONFIG_KEYS)}")
    refresh = config.get("refresh_on_read", True)
    if not isinstance(refresh, bool):
        raise InvalidArgument(f"ttl['refresh_on_read'] must be True or False, not {refresh!r}")
    return {
        "default_ttl": check_minutes(config.get("default_ttl"), "ttl['default_ttl']"),
        "refresh_on_read": refresh,
        "sweep_interval_minutes": check_minutes(config.get("sweep_interval_minutes"), "ttl['sweep_interval_minutes']"),
        "omit_expired": True,
    }


def ttl_tag(minutes: float) -> str:
    """The tag a version saved with a TTL of ``minutes`` carries."""
    return f"{TAG}{float(minutes)!r}"


def minutes_of(tags: Iterable[str]) -> float | None:
    """A version's TTL in minutes from its tags (the shortest, should several say one), or None."""
    found = []
    for tag in tags:
        if tag.startswith(TAG):
            try:
                minutes = float(tag[len(TAG) :])
            except ValueError:
                continue
            if minutes > 0:  # NaN and nonsense say nothing; a tag cannot make a version expire before it is saved
                found.append(minutes)
    return min(found) if found else None


def expired(memory: Memory, now: datetime) -> bool:
    """Whether ``memory`` (a version) has expired at ``now``: saved ``minutes_of`` its tags or more before it."""
    minutes = minutes_of(memory.tags)
    if minutes is None:
        return False
    return datetime.fromisoformat(memory.saved_at) + timedelta(minutes=minutes) <= now


def sweep(store: MemoryStore, agents: Iterable[str]) -> int:
    """Purge every expired item of ``agents`` at every label: the auditor's act (``MemoryStore.purge``, audited
    with ``SWEEP_REASON``). Returns how many (key, label) items were purged."""
    now = store.clock()
    purged = 0
    for agent in agents:
        versions = store.versions(agent)
        for (key, label), rows in versions.groupby(["key", "classification"], sort=True):
            newest = rows.sort_values("version").iloc[-1]
            if newest["deleted_at"] is not None and newest["deleted_at"] == newest["deleted_at"]:
                continue  # deleted already (NaN is pandas' None)
            minutes = minutes_of(newest["tags"] or ())
            saved = datetime.fromisoformat(newest["saved_at"])
            if minutes is not None and saved + timedelta(minutes=minutes) <= now:
                store.purge(agent, key, label, reason=SWEEP_REASON, by="ttl-sweep")
                purged += 1
    return purged


class Sweeper:
    """A thread that calls ``sweep_once`` every ``minutes`` until stopped (LangGraph's ``start_ttl_sweeper``)."""

    def __init__(self, sweep_once: Callable[[], int]) -> None:
        self._sweep_once = sweep_once
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, minutes: float) -> Future:
        """Start sweeping every ``minutes``; the future completes when the sweeper stops."""
        done: Future = Future()
        if self._thread is not None and self._thread.is_alive():
            done.set_result(None)
            return done
        self._stop.clear()

        def loop() -> None:
            try:
                while not self._stop.wait(minutes * 60):
                    self._sweep_once()
                done.set_result(None)
            except BaseException as error:  # the future reports it; the host decides
                done.set_exception(error)

        self._thread = threading.Thread(target=loop, name="memlab-ttl-sweeper", daemon=True)
        self._thread.start()
        return done

    def stop(self, timeout: float | None = None) -> bool:
        """Stop sweeping; whether the thread ended within ``timeout`` seconds."""
        self._stop.set()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()
