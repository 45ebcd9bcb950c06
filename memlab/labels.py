"""Compartments, opt-in: a ``Label`` pairs a level with a set of categories, ordered as a lattice.

Military and commercial label systems (Bell–LaPadula, Denning's lattice model, Oracle Label Security,
SELinux MLS) classify data by a level *and* a set of categories. A session at label T may read data at label
L when ``L.can_flow_to(T)``: T's level is at least L's and T's categories include L's. Two labels can be
incomparable (``CONFIDENTIAL:hr`` and ``CONFIDENTIAL:legal``); their ``join`` is the least label both flow
to. A label without categories is just its level, and labels without categories order exactly as levels do,
so the four-level total order is the special case every store uses by default.

With a partial order "the highest visible version of a key" may be several versions: ``memlab.viewrules`` finds
them and holds the rules a policy may choose among them by.

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

import enum
import re
from dataclasses import dataclass
from functools import cached_property

from memlab.errors import InvalidArgument, MemlabError
from memlab.levels import Level

__all__ = [
    "Integrity",
    "Label",
    "LabelLike",
    "reader",
    "MAX_CATEGORIES",
    "MAX_CATEGORY_LENGTH",
    "Ambiguous",
]

MAX_CATEGORIES = 16
"""At most this many categories in one label: a label is a few compartments, not a list of people."""
MAX_CATEGORY_LENGTH = 32
_CATEGORY = re.compile(r"[a-z][a-z0-9_-]*\Z")


class Integrity(enum.IntEnum):
    """Whether a trusted decision may rest on what a label marks: who wrote it. Ordered, ``TRUSTED`` above
    ``UNTRUSTED``: trusted data may enter an untrusted context, never the reverse (``Label.can_flow_to``).

    Examples:
        >>> Integrity.parse("Untrusted"), str(Integrity.TRUSTED)
        (<Integrity.UNTRUSTED: 0>, 'trusted')
    """

    UNTRUSTED = 0
    TRUSTED = 1

    @classmethod
    def parse(cls, value: Integrity | str) -> Integrity:
        """The grade named by ``value``, in any letter case.

        Raises:
            InvalidArgument: ``value`` names no grade.
        """
        if isinstance(value, Integrity):
            return value
        if isinstance(value, str) and value.strip().upper() in cls.__members__:
            return cls[value.strip().upper()]
        known = ", ".join(name.lower() for name in cls.__members__)
        raise InvalidArgument(f"unknown integrity {value!r}; expected one of {known}")

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, eq=False)
class Label:
    """A taint or a classification: a level, a set of categories and an integrity grade; immutable and hashable.
    Make one with ``Label.parse`` or ``Label.of``; it is written ``LEVEL``, ``LEVEL:cat,cat``, and with
    ``@untrusted`` after either when it is not trusted.

    A trusted label without categories *is* its level: it equals the ``Level`` (and hashes like it), so
    ``Level``'s constants are accepted wherever a label is. ``<=`` is the flow order (``can_flow_to``), a partial
    order as ``frozenset``'s ``<=`` is: two labels may be incomparable.

    Examples:
        >>> Label.parse("INTERNAL") == Level.INTERNAL, Label.parse("INTERNAL:hr") == Level.INTERNAL
        (True, False)
        >>> Level.PUBLIC <= Label.parse("INTERNAL:hr") <= Label.parse("CONFIDENTIAL:hr,legal")
        True
        >>> Label.parse("CONFIDENTIAL:hr"), Label.parse("internal@Untrusted")
        (Label('CONFIDENTIAL:hr'), Label('INTERNAL@untrusted'))
    """

    level: Level
    categories: frozenset[str] = frozenset()
    integrity: Integrity = Integrity.TRUSTED

    def __eq__(self, other: object) -> bool:
        if type(other) is Label:
            return (
                self.level is other.level and self.categories == other.categories and self.integrity is other.integrity
            )
        if type(other) is Level:
            return self.level is other and not self.categories and self.integrity is Integrity.TRUSTED
        return NotImplemented

    def __hash__(self) -> int:
        # Equal to its level's hash when it is that level: a plain label and its Level are one dict key.
        if not self.categories and self.integrity is Integrity.TRUSTED:
            return hash(self.level)
        return hash((self.level, self.categories, self.integrity))

    def __le__(self, other: Label | Level) -> bool:
        return self.can_flow_to(other) if type(other) in (Label, Level) else NotImplemented

    def __ge__(self, other: Label | Level) -> bool:
        return Label.parse(other).can_flow_to(self) if type(other) in (Label, Level) else NotImplemented

    def __lt__(self, other: Label | Level) -> bool:
        return self <= other and self != other if type(other) in (Label, Level) else NotImplemented

    def __gt__(self, other: Label | Level) -> bool:
        return self >= other and self != other if type(other) in (Label, Level) else NotImplemented

    def __repr__(self) -> str:
        return f"Label({str(self)!r})"

    @property
    def name(self) -> str:
        """How the label is written (``CONFIDENTIAL``, ``CONFIDENTIAL:hr``), as a ``Level``'s ``name`` is."""
        return str(self)

    @classmethod
    def of(cls, level: Level | str, categories: object = (), integrity: Integrity | str = Integrity.TRUSTED) -> Label:
        """The label of ``level``, ``categories`` (names, in any order and letter case) and ``integrity``, each
        checked.

        Raises:
            InvalidArgument: an unknown level or integrity, or a category that is empty, too long, not a name (a
                lower-case letter, then letters, digits, ``-`` or ``_``), repeated, or one too many.
        """
        if isinstance(categories, str) or not isinstance(categories, (list, tuple, set, frozenset)):
            raise InvalidArgument(f"categories must be a list of names, not {categories!r}")
        if len(categories) > MAX_CATEGORIES:
            raise InvalidArgument(f"a label has at most {MAX_CATEGORIES} categories, not {len(categories)}")
        names = [_category(name) for name in categories]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise InvalidArgument(f"category {repeated[0]!r} is named twice")
        return cls(Level.parse(level), frozenset(names), Integrity.parse(integrity))

    @classmethod
    def parse(cls, value: Label | Level | str) -> Label:
        """The label written ``LEVEL`` or ``LEVEL:cat,cat``, either with ``@untrusted`` (or ``@trusted``) after it
        (a ``Label`` or ``Level`` is taken as it is).

        Raises:
            InvalidArgument: ``value`` is not a label; the message says what is wrong with it.

        Examples:
            >>> str(Label.parse("restricted:Legal, hr"))
            'RESTRICTED:hr,legal'
            >>> Label.parse("CONFIDENTIAL:")
            Traceback (most recent call last):
                ...
            memlab.errors.InvalidArgument: label 'CONFIDENTIAL:' has a ':' but no categories after it
            >>> str(Label.parse("confidential:hr@UNTRUSTED")), str(Label.parse("PUBLIC@trusted"))
            ('CONFIDENTIAL:hr@untrusted', 'PUBLIC')
        """
        if type(value) is Label:
            return value
        if isinstance(value, Level):
            return _PLAIN[value]
        if not isinstance(value, str):
            raise InvalidArgument(f"a label is a string like 'CONFIDENTIAL:hr,legal', not {value!r}")
        text, at, grade = value.partition("@")
        if at and not grade.strip():
            raise InvalidArgument(f"label {value!r} has an '@' but no integrity after it")
        integrity = Integrity.parse(grade) if at else Integrity.TRUSTED
        level, colon, rest = text.partition(":")
        if not colon:
            label = _PLAIN[Level.parse(level)]
            return label if integrity is Integrity.TRUSTED else cls(label.level, frozenset(), integrity)
        if not rest.strip():
            raise InvalidArgument(f"label {value!r} has a ':' but no categories after it")
        return cls.of(level, [name.strip() for name in rest.split(",")], integrity)

    def can_flow_to(self, other: Label | Level) -> bool:
        """True when data labelled ``self`` may be read by a session at ``other``: the level no higher, the
        categories within ``other``'s, and at least as trusted as ``other`` requires.

        Examples:
            >>> Label.parse("PUBLIC").can_flow_to(Label.parse("INTERNAL@untrusted"))
            True
            >>> Label.parse("PUBLIC@untrusted").can_flow_to(Label.parse("INTERNAL"))
            False
        """
        if type(other) is not Label:
            other = Label.parse(other)
        return self.level <= other.level and self.categories <= other.categories and self.integrity >= other.integrity

    def join(self, other: Label) -> Label:
        """The least label both ``self`` and ``other`` flow to: the higher level, every category of either, the
        lower integrity.

        Raises:
            InvalidArgument: the union would hold more than ``MAX_CATEGORIES`` categories.
        """
        return Label.of(
            max(self.level, other.level), self.categories | other.categories, min(self.integrity, other.integrity)
        )

    def meet(self, other: Label) -> Label:
        """The greatest label that flows to both: the lower level, the categories they share, the higher
        integrity."""
        return Label(
            min(self.level, other.level), self.categories & other.categories, max(self.integrity, other.integrity)
        )

    @property
    def trusted(self) -> bool:
        """Whether a trusted decision may rest on what this label marks."""
        return self.integrity is Integrity.TRUSTED

    @cached_property
    def _text(self) -> str:
        text = self.level.name if not self.categories else f"{self.level.name}:{','.join(sorted(self.categories))}"
        return text if self.integrity is Integrity.TRUSTED else f"{text}@{self.integrity}"

    def __str__(self) -> str:
        # Written once per label object: every audit row and reference writes its version's label.
        return self._text


LabelLike = Label | Level | str
"""What every door that takes a taint accepts: a ``Label``, a ``Level`` (the label without categories), or the text
``Label.parse`` reads. Inside memlab it is a ``Label``."""

_PLAIN = {level: Label(level) for level in Level}
"""Each level as a label, made once: a label is immutable, and every session and version asks for one."""
_UNTRUSTED_READERS = {level: Label(level, frozenset(), Integrity.UNTRUSTED) for level in Level}


def reader(taint: Label | Level, floor: Integrity = Integrity.UNTRUSTED) -> Label:
    """The label a session reads as: its taint's level and categories, and as integrity its *floor*, the least
    trusted grade it accepts. A version is in its view when the version's label flows to this one
    (``Label.can_flow_to``: no higher level, no other categories, at least as trusted as the floor).

    Examples:
        >>> reader(Level.INTERNAL), reader(Label.parse("CONFIDENTIAL:hr@untrusted"), Integrity.TRUSTED)
        (Label('INTERNAL@untrusted'), Label('CONFIDENTIAL:hr'))
    """
    if type(taint) is Level:
        level, categories = taint, frozenset()
    else:
        level, categories = taint.level, taint.categories
    if floor is Integrity.UNTRUSTED and not categories:
        return _UNTRUSTED_READERS[level]
    return Label(level, categories, floor)


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


class Ambiguous(MemlabError):
    """Several versions of a key are maximal in the session's view, and the policy refuses to pick one."""

    code = "ambiguous"
