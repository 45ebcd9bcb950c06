"""Compartments, opt-in: a ``Label`` pairs a level with a set of categories, ordered as a lattice.

Military and commercial label systems (Bell–LaPadula, Denning's lattice model, Oracle Label Security,
SELinux MLS) classify data by a level *and* a set of categories. A session at label T may read data at label
L when ``L.can_flow_to(T)``: T's level is at least L's and T's categories include L's. Two labels can be
incomparable (``CONFIDENTIAL:hr`` and ``CONFIDENTIAL:legal``); their ``join`` is the least label both flow
to. A label without categories is just its level, and labels without categories order exactly as levels do,
so the four-level total order is the special case every store uses by default.

With a partial order "the highest visible version of a key" may be several versions. ``maximal`` finds them,
and ``SHADOWING_RULES`` are the choices a policy can make among them, for the policy lab to compare.

Examples:
    >>> hr, legal = Label.parse("CONFIDENTIAL:hr"), Label.parse("confidential:legal")
    >>> hr.can_flow_to(legal), legal.can_flow_to(hr)
    (False, False)
    >>> str(hr.join(legal))
    'CONFIDENTIAL:hr,legal'
    >>> Label.parse("INTERNAL").can_flow_to(hr)
    True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from memlab.errors import InvalidArgument, MemlabError
from memlab.levels import Level

__all__ = [
    "Label",
    "MAX_CATEGORIES",
    "MAX_CATEGORY_LENGTH",
    "Ambiguous",
    "maximal",
    "newest",
    "refuse",
    "SHADOWING_RULES",
]

MAX_CATEGORIES = 16
"""At most this many categories in one label: a label is a few compartments, not a list of people."""
MAX_CATEGORY_LENGTH = 32
_CATEGORY = re.compile(r"[a-z][a-z0-9_-]*\Z")


@dataclass(frozen=True)
class Label:
    """A level and a set of categories; immutable and hashable. Make one with ``Label.parse`` or ``Label.of``."""

    level: Level
    categories: frozenset[str] = frozenset()

    @classmethod
    def of(cls, level: Level | str, categories: object = ()) -> Label:
        """The label of ``level`` and ``categories`` (names, in any order and letter case), each checked.

        Raises:
            InvalidArgument: an unknown level, or a category that is empty, too long, not a name (a lower-case
                letter, then letters, digits, ``-`` or ``_``), repeated, or one too many.
        """
        if isinstance(categories, str) or not isinstance(categories, (list, tuple, set, frozenset)):
            raise InvalidArgument(f"categories must be a list of names, not {categories!r}")
        if len(categories) > MAX_CATEGORIES:
            raise InvalidArgument(f"a label has at most {MAX_CATEGORIES} categories, not {len(categories)}")
        names = [_category(name) for name in categories]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise InvalidArgument(f"category {repeated[0]!r} is named twice")
        return cls(Level.parse(level), frozenset(names))

    @classmethod
    def parse(cls, value: Label | Level | str) -> Label:
        """The label written ``LEVEL`` or ``LEVEL:cat,cat`` (a ``Label`` or ``Level`` is taken as it is).

        Raises:
            InvalidArgument: ``value`` is not a label; the message says what is wrong with it.

        Examples:
            >>> str(Label.parse("restricted:Legal, hr"))
            'RESTRICTED:hr,legal'
            >>> Label.parse("CONFIDENTIAL:")
            Traceback (most recent call last):
                ...
            memlab.errors.InvalidArgument: label 'CONFIDENTIAL:' has a ':' but no categories after it
        """
        if isinstance(value, Label):
            return value
        if isinstance(value, Level):
            return cls(value)
        if not isinstance(value, str):
            raise InvalidArgument(f"a label is a string like 'CONFIDENTIAL:hr,legal', not {value!r}")
        level, colon, rest = value.partition(":")
        if not colon:
            return cls(Level.parse(level))
        if not rest.strip():
            raise InvalidArgument(f"label {value!r} has a ':' but no categories after it")
        return cls.of(level, [name.strip() for name in rest.split(",")])

    def can_flow_to(self, other: Label) -> bool:
        """True when data labelled ``self`` may be read by a session at ``other``: level and categories both."""
        return self.level <= other.level and self.categories <= other.categories

    def join(self, other: Label) -> Label:
        """The least label both ``self`` and ``other`` flow to: the higher level, every category of either.

        Raises:
            InvalidArgument: the union would hold more than ``MAX_CATEGORIES`` categories.
        """
        return Label.of(max(self.level, other.level), self.categories | other.categories)

    def meet(self, other: Label) -> Label:
        """The greatest label that flows to both: the lower level, the categories they share."""
        return Label(min(self.level, other.level), self.categories & other.categories)

    def __str__(self) -> str:
        if not self.categories:
            return self.level.name
        return f"{self.level.name}:{','.join(sorted(self.categories))}"


def _category(name: object) -> str:
    if not isinstance(name, str):
        raise InvalidArgument(f"a category is a name, not {name!r}")
    folded = name.strip().lower()
    if not folded:
        raise InvalidArgument("a category is empty")
    if len(folded) > MAX_CATEGORY_LENGTH:
        raise InvalidArgument(f"category {folded[:MAX_CATEGORY_LENGTH]!r}... is over {MAX_CATEGORY_LENGTH} characters")
    if not _CATEGORY.match(folded):
        raise InvalidArgument(f"category {name!r} is not a name: a lower-case letter, then letters, digits, '-' or '_'")
    return folded


Version = TypeVar("Version")


class Ambiguous(MemlabError):
    """Several versions of a key are maximal in the session's view, and the policy refuses to pick one."""

    code = "ambiguous"


def maximal(live: Mapping[Label, Version], taint: Label) -> dict[Label, Version]:
    """The versions a session at ``taint`` might see of one key: those it may read with no readable version
    strictly above them. ``live`` maps each label holding a live version to that version.

    Under the total order (no categories) there is at most one; under compartments there may be several.

    Examples:
        >>> live = {Label.parse("PUBLIC"): 1, Label.parse("INTERNAL:hr"): 2, Label.parse("INTERNAL:legal"): 3}
        >>> sorted(maximal(live, Label.parse("CONFIDENTIAL:hr,legal")).values())
        [2, 3]
        >>> list(maximal(live, Label.parse("INTERNAL:hr")).values())
        [2]
    """
    readable = [label for label in live if label.can_flow_to(taint)]
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
