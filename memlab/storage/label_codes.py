"""How a SQLite file stores a label: a level as its integer; a label with categories as its text.

``memories.classification`` and ``effective.taint`` hold the stored form. SQLite keeps a text that is not a
number as text even in an INTEGER column, so a store that never sees categories holds integers only there,
and a categorised label needs no table of ids: its stored form is ``str(label)``, the same in every file of a
folder and in the audit. The views of categorised labels are listed per agent in ``label_views``, a table made
on the first such view.

Examples:
    >>> stored(Label.parse("CONFIDENTIAL")), stored(Label.parse("confidential:legal,hr"))
    (2, 'CONFIDENTIAL:hr,legal')
    >>> read_label(2), str(read_label("CONFIDENTIAL:hr"))
    (<Level.CONFIDENTIAL: 2>, 'CONFIDENTIAL:hr')
"""

from __future__ import annotations

from memlab.labels import Integrity, Label, reader
from memlab.levels import Level

__all__ = [
    "stored",
    "read_label",
    "as_taint",
    "as_label",
    "reader",
    "view_key",
    "read_view",
    "view_table",
    "LABEL_VIEWS",
]

LABEL_VIEWS = "label_views"


_PLAIN_LABELS = {level: Label(level) for level in Level}
"""Each level's label without categories, made once (a label is immutable): every save asks for one."""


def as_label(value: Level | Label) -> Label:
    """``value`` as a ``Label`` (a level is the label without categories)."""
    if type(value) is Label:
        return value
    return _PLAIN_LABELS[value] if type(value) is Level else Label(Level(value))


def as_taint(value: Level | Label) -> Level | Label:
    """A label that equals its ``Level`` (trusted, without categories) as that level, any other as it is: the
    storage's own keys for views and live versions, a level's integer when stored."""
    if type(value) is Label:
        return value.level if not value.categories and value.integrity is Integrity.TRUSTED else value
    return value


def stored(value: Level | Label) -> int | str:
    """The stored form of a classification or taint: a level's integer, or a categorised label's text."""
    value = as_taint(value)
    return str(value) if type(value) is Label else int(value)


def read_label(value: int | str) -> Level | Label:
    """The level or label a stored form names."""
    return Label.parse(value) if type(value) is str else Level(value)


_FLOOR_MARK = "|"


def view_key(reader: Label | Level) -> int | str:
    """The stored form (``effective.taint``) of the view a session reading as ``reader`` sees.

    A reader that accepts every grade has the views stores kept before integrity: a level's integer, a categorised
    label's text. A reader whose floor is trusted has a view of its own, the label's text marked ``|trusted``
    (never a label's text, so never confused with one). A ``Level`` is a trusted label, so as a reader it accepts
    trusted versions only.

    Examples:
        >>> view_key(reader(Level.INTERNAL)), view_key(reader(Label.parse("CONFIDENTIAL:hr")))
        (1, 'CONFIDENTIAL:hr')
        >>> view_key(Level.INTERNAL), view_key(Label.parse("CONFIDENTIAL:hr"))
        ('INTERNAL|trusted', 'CONFIDENTIAL:hr|trusted')
    """
    label = as_label(reader)
    if label.integrity is Integrity.UNTRUSTED:
        return str(Label(label.level, label.categories)) if label.categories else int(label.level)
    return f"{Label(label.level, label.categories)}{_FLOOR_MARK}{label.integrity}"


def read_view(stored: int | str) -> Label:
    """The reader (``labels.reader``) whose view ``stored`` names (``view_key``'s inverse).

    Examples:
        >>> read_view("CONFIDENTIAL:hr|trusted"), read_view(1)
        (Label('CONFIDENTIAL:hr'), Label('INTERNAL@untrusted'))
    """
    if type(stored) is not str:
        return reader(Level(stored))
    text, mark, floor = stored.partition(_FLOOR_MARK)
    label = Label.parse(text)
    return Label(label.level, label.categories, Integrity.parse(floor) if mark else Integrity.UNTRUSTED)


def view_table(agent_id: int, reader: Label) -> str:
    """The name of the FTS5 index holding the effective view of ``agent_id`` read as ``reader``, when that view is
    not a level's (``fts_tables.fts_table``)."""
    return f"fts_{agent_id}_{str(view_key(reader)).lower()}"
