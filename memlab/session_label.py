"""A session's label as it moves and as it gates: its integrity (a low-water mark the host lowers, and reads of
untrusted versions lower), the floor it reads at, the stamp its saves carry, and the read gate that checks every
version a read returns. ``Session`` (``memlab.session``) is made of it and the five tools."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memlab import arguments
from memlab.errors import IntegrityError, InvalidArgument
from memlab.labels import Integrity, Label, reader
from memlab.policy import Hook, Policy
from memlab.records import Memory, TaintEvent
from memlab.storage import ToolStorage

__all__ = ["Host", "SessionLabel"]


class Host(Protocol):
    """What a session needs of the store that made it (a ``MemoryStore``): its rules, hooks, storage and clock."""

    policy: Policy
    hooks: list[Hook]
    storage: ToolStorage

    def now(self) -> str: ...

    def notify(self) -> None: ...

    def check_label(self, label: Label) -> None: ...


class SessionLabel:
    """The label half of a session: what it is, how it moves, what it lets a read return."""

    store: Host
    id: str
    agent: str
    _taint: Label
    _floor: Integrity
    _distrust: tuple[str, ...]
    _read_at: tuple[Label, Label]
    _untrusted_read: list[Memory]

    @property
    def integrity(self) -> Integrity:
        """The session's integrity, a low-water mark: TRUSTED until the host lowers it (``lower_integrity``) or a
        read returns an untrusted version; nothing raises it but a new session. Its saves are stamped with it."""
        return self._taint.integrity

    @property
    def floor(self) -> Integrity:
        """The least trusted grade this session reads, chosen by the host when it opened it (UNTRUSTED: every
        grade). A version below it is invisible, exactly as one above the taint is."""
        return self._floor

    @property
    def distrust(self) -> tuple[str, ...]:
        """What lowered the session's integrity, oldest first (the sources the host named, and the untrusted
        versions it read): every untrusted save carries it (``Memory.distrust``). Empty while trusted."""
        return self._distrust

    def lower_integrity(self, *, source: str, reason: str = "") -> Integrity:
        """Lower the session's integrity to UNTRUSTED: the host's call, whenever it feeds the model content no
        trusted party vouches for (a web page, an e-mail, a stranger's message, a tool's output). Never a tool: a
        model cannot call it, and nothing raises the integrity again but a new session.

        From here on every save is classified ``...@untrusted`` and carries ``source`` (``Memory.distrust``), so a
        purge can find what it wrote (``MemoryStore.purge_source``). The change is recorded as a taint event (from
        the trusted label to the untrusted one), checked by ``verify`` like an escalation. A session already
        untrusted only notes the new source.

        Args:
            source: what was fed, as the host names it (a URL, ``email:<id>``, ``tool:<name>``): not empty.
            reason: why, for the audit.

        Returns:
            The integrity now.

        Raises:
            InvalidArgument: an empty or over-long source; nothing is recorded.

        Examples:
            >>> s.lower_integrity(source="https://example.com/page", reason="summarised a web page")
            <Integrity.UNTRUSTED: 0>
        """
        source = arguments.distrust_source(source)
        if not isinstance(reason, str):
            raise InvalidArgument(f"reason must be a string, not {type(reason).__name__}")
        self._lower(source, f"untrusted input from {source}" + (f": {reason}" if reason else ""))
        return self.integrity

    def _lower(self, source: str, reason: str) -> None:
        """Lower the integrity (a taint event when it was trusted) and note ``source`` among the distrust."""
        current = self._taint
        target = Label(current.level, current.categories, Integrity.UNTRUSTED)
        if current.trusted:
            self.store.check_label(target)  # refused before anything changes
        if source not in self._distrust:
            self._distrust = (*self._distrust, source)
        if current.trusted:
            self._move(target, reason)

    def _move(self, target: Label, reason: str) -> None:
        """Record the taint event from the current taint to ``target`` and take it."""
        event = TaintEvent(self.id, self.store.now(), self._taint, target, reason)
        self.store.storage.add_taint_event(self.agent, event)
        self._taint = target
        self.store.notify()

    def _stamp(self, level: Label) -> dict[str, tuple[str, ...]]:
        """What an untrusted save carries beside its label: the sources that lowered the session."""
        if level.integrity is Integrity.TRUSTED or not self._distrust:
            return _NO_STAMP
        return {"distrust": self._distrust}

    def _reader(self, taint: Label) -> Label:
        """The label the session reads as at ``taint``: its level and categories, and its floor
        (``labels.reader``); the last one is kept (every call of a session at one taint asks for the same)."""
        if taint is not self._read_at[0]:
            self._read_at = (taint, reader(taint, self._floor))
        return self._read_at[1]

    def _check_readable(self, taint: Label, memories: Sequence[Memory]) -> bool:
        """Fail closed unless the policy lets a session at ``taint`` (reading at its floor) read every version a
        read returned: the gate behind the storage's own, since nothing in a database guards a view's table
        against a direct write.

        Returns:
            Whether any of them is untrusted.

        Raises:
            IntegrityError: naming the table the views are read from, never the version (its key may be above the
                session's taint); the call is audited with it and nothing reaches the caller.
        """
        can_read = self.store.storage.rules.can_read
        taint = self._reader(taint)
        checked: set[int] = set()  # a view's versions share a few label objects: each is asked about once
        untrusted = False
        for memory in memories:
            label = memory.classification
            if id(label) not in checked:
                if not can_read(label, taint):
                    raise self._tampered()
                checked.add(id(label))
                untrusted = untrusted or label.integrity is not Integrity.TRUSTED
        return untrusted

    def _readable_refs(self, taint: Label, memories: Sequence[Memory]) -> tuple[str, ...]:
        """The references of ``memories`` for the call's audit row, once the gate has let every one through; the
        untrusted ones among them are noted, to lower the session once the call is done."""
        if self._check_readable(taint, memories):
            self._untrusted_read.extend(memory for memory in memories if not memory.classification.trusted)
        return tuple(memory.ref() for memory in memories)

    def _lower_for_reads(self) -> None:
        """Lower the session for the untrusted versions its call returned: each one's sources of distrust (or the
        version itself) join the session's, and the taint event names the versions."""
        read, self._untrusted_read[:] = list(self._untrusted_read), []
        sources = [source for memory in read for source in (memory.distrust or (f"memory {memory.ref()}",))]
        refs = ", ".join(dict.fromkeys(memory.ref() for memory in read))
        for source in dict.fromkeys(sources):
            self._lower(source, f"read untrusted {arguments.audit_text(refs, 400)}")

    def _tampered(self) -> IntegrityError:
        return IntegrityError(
            f"the table {self.store.storage.view_table} returned a version this session may not read: this store "
            "has been damaged or tampered with (run `memlab verify`)"
        )


_NO_STAMP: dict[str, tuple[str, ...]] = {}
"""What a trusted save carries beside its label: nothing (never written to)."""
