"""``ViewRules``: what storage must know of a policy to keep its views — a small, hashable value — and the
shadowing rules a view chooses a key's version by.

Storage never sees a ``Policy`` or a ``Session``. It is told which classifications each taint may read,
whether shadowing comes before search and tag filters, and how far bm25 statistics reach; from that it
materialises the effective views. A second backend implements the same rules from the same value.

Under a total order a session's view of a key is one version, the newest at the highest level it may read. Under
a partial order (labels with categories) "the highest" may be several versions: ``maximal`` finds them, and
``SHADOWING_RULES`` are the choices a policy can make among them, for the policy lab to compare.

Examples:
    >>> ViewRules.lattice().can_read(Level.PUBLIC, Level.INTERNAL)
    True
    >>> ViewRules.lattice().signature
    'lattice'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from itertools import product
from typing import TypeVar

from memlab.labels import Ambiguous, Integrity, Label
from memlab.levels import Level, can_flow_to

__all__ = ["ViewRules", "AMBIGUOUS", "SHADOWING", "SHADOWING_RULES", "maximal", "newest", "refuse"]

Version = TypeVar("Version")


def maximal(
    live: Mapping[Label, Version], taint: Label, can_read: Callable[[Label, Label], bool] = Label.can_flow_to
) -> dict[Label, Version]:
    """The versions a session at ``taint`` might see of one key: those it may read (``can_read``: the lattice's
    flow, or a policy's rules) with no readable version strictly above them. ``live`` maps each label holding a
    live version to that version.

    Under the total order (no categories) there is at most one; under compartments there may be several.

    Examples:
        >>> live = {Label.parse("PUBLIC"): 1, Label.parse("INTERNAL:hr"): 2, Label.parse("INTERNAL:legal"): 3}
        >>> sorted(maximal(live, Label.parse("CONFIDENTIAL:hr,legal")).values())
        [2, 3]
        >>> list(maximal(live, Label.parse("INTERNAL:hr")).values())
        [2]
    """
    readable = [label for label in live if can_read(label, taint)]
    return {
        label: live[label]
        for label in readable
        if not any(other != label and label.can_flow_to(other) for other in readable)
    }


def newest(candidates: Mapping[Label, Version], order: Callable[[Version], object]) -> Version | None:
    """Among several maximal versions, the newest (the greatest by ``order``, e.g. the save order)."""
    return max(candidates.values(), key=order) if candidates else None


def refuse(candidates: Mapping[Label, Version], order: Callable[[Version], object]) -> Version | None:
    """Only a single maximal version is an answer; several are refused as ambiguous, naming their labels.

    Raises:
        Ambiguous: more than one version is maximal.
    """
    if len(candidates) > 1:
        labels = ", ".join(sorted(str(label) for label in candidates))
        raise Ambiguous(f"this key has several versions you may read, none above the others: {labels}")
    return next(iter(candidates.values()), None)


SHADOWING_RULES: dict[str, Callable[[Mapping[Label, object], Callable[[object], object]], object]] = {
    "newest": newest,
    "refuse": refuse,
}
"""How a policy may choose among several maximal versions; both look only at versions the session may read."""


AMBIGUOUS = 0
"""What a view holds for a key whose maximal versions the ``refuse`` rule will not choose among (no version has
id 0): the key is left out of lists and searches, and a get of it fails as ambiguous."""
FAULTY_SHADOWING = {"newest-overall"}
SHADOWING = (*SHADOWING_RULES, *sorted(FAULTY_SHADOWING))
"""The shadowing rules a policy may choose: ``SHADOWING_RULES`` and ``newest-overall``, a faulty rule the
policy lab studies (the newest live version over every label of the key, the key hidden when the session may
not read it: a key's view then depends on versions the session cannot read)."""

_LEVELS = tuple(Level)
_NONE = (None,) * len(_LEVELS)


def _plain(label: Label | Level) -> bool:
    """Whether ``label`` is an untrusted label without categories: in the levels' views below trusted versions."""
    return type(label) is Label and not label.categories and label.integrity is Integrity.UNTRUSTED


_LATTICE = frozenset(
    (classification, taint) for classification, taint in product(Level, Level) if can_flow_to(classification, taint)
)


@dataclass(frozen=True)
class ViewRules:
    """The rules the materialised views follow."""

    readable: frozenset[tuple[Level, Level]] = _LATTICE
    """The (classification, taint) pairs for which a session at ``taint`` may read a version."""
    shadow_before_match: bool = True
    """False: search and tag filters run on every readable version, and shadowing only among the matches."""
    global_statistics: bool = False
    """True: bm25 statistics come from one index over every level (a leak the policy lab studies)."""
    shadowing: str = "newest"
    """Under compartments, how a view chooses among several maximal versions of a key: a name in
    ``SHADOWING_RULES``. Without categories there is never more than one, so it changes nothing."""
    trust_first: bool = True
    """False (the ``untrusted-shadows`` variant, a mistake the policy lab studies): shadowing by label order only.
    Every version the reader's level and categories admit competes, whatever its integrity (an untrusted version
    is above a trusted one of its level), and a winner below the reader's floor hides the key from it."""
    shared_ranking: bool = False
    """True (the ``shared-ranking`` variant, a mistake the policy lab studies): a reader whose floor is trusted
    searches its level's index (every grade's versions) filtered to its view, so bm25 statistics count untrusted
    versions it cannot read."""

    def __post_init__(self) -> None:
        if self.shadowing not in SHADOWING:
            raise ValueError(f"unknown shadowing rule {self.shadowing!r}; expected one of {', '.join(SHADOWING)}")

    @classmethod
    def lattice(cls) -> ViewRules:
        """The design's rules: reads follow ``can_flow_to``, shadowing first, statistics per view."""
        return cls()

    def can_read(self, classification: Label, taint: Label) -> bool:
        """May a session at ``taint`` read a version classified ``classification``: its level by the rules, its
        categories all within the taint's, and its integrity at least the taint's (a reader's integrity is its
        floor, ``label_codes.reader``; a ``Level`` is the trusted label without categories).

        Examples:
            >>> rules = ViewRules.lattice()
            >>> rules.can_read(Label.parse("INTERNAL:hr"), Label.parse("CONFIDENTIAL:hr")), rules.can_read(
            ...     Label.parse("INTERNAL:hr"), Level.CONFIDENTIAL)
            (True, False)
        """
        if type(classification) is Label:
            if classification.categories and (
                type(taint) is not Label or not classification.categories <= taint.categories
            ):
                return False
            # Integrity: a version less trusted than the reader's floor is not there for it (a Level is trusted).
            if classification.integrity is not Integrity.TRUSTED and (
                type(taint) is not Label or classification.integrity < taint.integrity
            ):
                return False
            classification = classification.level
        # The pair is looked up as levels (a Level hashes as its integer, in C).
        return (classification, taint.level if type(taint) is Label else taint) in self.readable

    def winner(self, live: Mapping[Label, int], taint: Label) -> int | None:
        """What a session reading as ``taint`` sees of a key whose live version at each label is ``live`` (label ->
        version id, ids in save order): trusted versions first (untrusted ones only when it may read no trusted
        one), then among the maximal ones the one ``shadowing`` picks (under a total order the one at the highest
        level it may read), None, or ``AMBIGUOUS`` (the ``refuse`` rule, several maximal versions).

        Examples:
            >>> ViewRules.lattice().winner({Level.PUBLIC: 1, Level.CONFIDENTIAL: 2}, Level.INTERNAL)
            1
            >>> hr, legal = Label.parse("CONFIDENTIAL:hr"), Label.parse("CONFIDENTIAL:legal")
            >>> both = Label.parse("CONFIDENTIAL:hr,legal")
            >>> ViewRules().winner({hr: 4, legal: 9}, both), ViewRules().winner({hr: 4, legal: 9}, hr)
            (9, 4)
            >>> ViewRules(shadowing="refuse").winner({hr: 4, legal: 9}, both) == AMBIGUOUS
            True
        """
        if self.shadowing == "newest-overall":
            newest = max(live, key=live.__getitem__, default=None)
            return None if newest is None or not self.can_read(newest, taint) else live[newest]
        taint = Label.parse(taint)
        if not self.trust_first:
            return self._by_label_order(live, taint)
        readable = {
            label: version
            for label, version in ((Label.parse(label), version) for label, version in live.items())
            if self.can_read(label, taint)
        }
        # Trust first: untrusted versions compete only when no trusted version is readable, so an untrusted write
        # never replaces a trusted value for anyone.
        trusted = {label: version for label, version in readable.items() if label.integrity is Integrity.TRUSTED}
        candidates = maximal(trusted or readable, taint, self.can_read)
        if not candidates:
            return None
        if len(candidates) > 1 and self.shadowing == "refuse":
            return AMBIGUOUS
        return max(candidates.values())

    def _by_label_order(self, live: Mapping[Label, int], taint: Label) -> int | None:
        """``winner`` without trust first (the ``untrusted-shadows`` variant): the versions compete as the reader
        accepting every grade sees them, and the one that wins is hidden when it is below the reader's floor."""
        everything = Label(taint.level, taint.categories, Integrity.UNTRUSTED)
        readable = {
            label: version
            for label, version in ((Label.parse(label), version) for label, version in live.items())
            if self.can_read(label, everything)
        }
        candidates = maximal(readable, everything, self.can_read)
        if not candidates:
            return None
        if len(candidates) > 1 and self.shadowing == "refuse":
            return AMBIGUOUS
        label, version = max(candidates.items(), key=lambda item: item[1])
        return version if self.can_read(label, taint) else None

    def winners(self, live: Mapping[Label, int]) -> tuple[int | None, ...]:
        """A key's view at each level, in level order, for the sessions that accept every grade (the levels'
        views): ``winner(live, reader)`` for each level's such reader, computed at once (a save refreshes the views
        of every level). Versions with categories are in none of these views.

        Examples:
            >>> ViewRules.lattice().winners({Level.INTERNAL: 7})
            (None, 7, 7, 7)
            >>> ViewRules.lattice().winners({Level.CONFIDENTIAL: 7, Label.parse("PUBLIC@untrusted"): 9})
            (9, 9, 7, 7)
        """
        untrusted = _NONE
        if not self.trust_first:
            return tuple(self.winner(live, Label(level, frozenset(), Integrity.UNTRUSTED)) for level in _LEVELS)
        if any(type(label) is not Level for label in live):
            # Trust first: a level's untrusted version shows only where no trusted version is readable.
            untrusted = self.winners({label.level: memory_id for label, memory_id in live.items() if _plain(label)})
            live = {label: memory_id for label, memory_id in live.items() if type(label) is Level}
        if self._lattice:
            # Under the lattice a taint reads every level up to its own: the winner is the last live one so far.
            current, shown = None, []
            for level, fallback in zip(_LEVELS, untrusted, strict=True):
                current = live.get(level, current)
                shown.append(fallback if current is None else current)
            return tuple(shown)
        return tuple(
            next((live[c] for c in self._readable_from[taint] if c in live), fallback)
            for taint, fallback in zip(_LEVELS, untrusted, strict=True)
        )

    @cached_property
    def _lattice(self) -> bool:
        return self.lattice_visibility

    @cached_property
    def _readable_from(self) -> dict[Level, list[Level]]:
        """For each taint, the levels it may read, highest first."""
        return {taint: [level for level in reversed(Level) if self.can_read(level, taint)] for taint in Level}

    @property
    def lattice_visibility(self) -> bool:
        """True when reads follow the lattice: a version then changes only the views at or above its level."""
        return self.readable == _LATTICE

    @property
    def signature(self) -> str:
        """What the stored views depend on; a store keeps it and refuses to open under other rules."""
        if self.lattice_visibility:
            visibility = "lattice"
        else:
            pairs = ",".join(f"{c.name[0]}{t.name[0]}" for c, t in sorted(self.readable))
            visibility = f"readable:{pairs}"
        shadowing = "" if self.shadowing == "newest" else f" shadowing:{self.shadowing}"
        integrity = "" if self.trust_first else " label-order-only"
        integrity += " shared-ranking" if self.shared_ranking else ""
        return visibility + (" global-statistics" if self.global_statistics else "") + shadowing + integrity
