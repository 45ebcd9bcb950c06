"""memlab.storage.label_codes: a label's stored form in a SQLite file, and back."""

from __future__ import annotations

import pytest

from memlab.labels import Integrity, Label, reader
from memlab.levels import Level
from memlab.storage.label_codes import as_label, as_taint, read_label, read_view, stored, view_key, view_table


@pytest.mark.parametrize(
    ("value", "form"),
    [
        (Level.PUBLIC, 0),
        (Level.RESTRICTED, 3),
        (Label.parse("CONFIDENTIAL"), 2),  # no categories: the level's integer
        (Label.parse("confidential:legal,hr"), "CONFIDENTIAL:hr,legal"),
        (Label.parse("PUBLIC:x"), "PUBLIC:x"),
    ],
)
def test_stored_and_read_label_round_trip(value, form):
    # Guards: label_codes.stored writing a label without categories as its text (integers only where none are).
    assert stored(value) == form
    assert type(stored(value)) is type(form)
    assert read_label(form) == value


@pytest.mark.parametrize(
    ("value", "taint"),
    [
        (Label.parse("INTERNAL"), Level.INTERNAL),
        (Level.INTERNAL, Level.INTERNAL),
        (Label.parse("INTERNAL:hr"), Label.parse("INTERNAL:hr")),
    ],
)
def test_as_taint_is_a_level_when_there_are_no_categories(value, taint):
    assert as_taint(value) == taint and type(as_taint(value)) is type(taint)


@pytest.mark.parametrize("value", [Level.CONFIDENTIAL, 2, Label.parse("CONFIDENTIAL"), Label.parse("CONFIDENTIAL:a")])
def test_as_label_is_always_a_label(value):
    label = as_label(value)
    assert type(label) is Label and label.level is Level.CONFIDENTIAL
    assert as_label(Level.PUBLIC) is as_label(Level.PUBLIC)  # made once


def test_view_table_names_a_readers_index():
    """A session reading every grade has the index stores kept before integrity; a trusted floor one of its own."""
    assert view_table(7, reader(Label.parse("CONFIDENTIAL:legal,hr"))) == "fts_7_confidential:hr,legal"
    assert view_table(7, Label.parse("CONFIDENTIAL:legal,hr")) == "fts_7_confidential:hr,legal|trusted"
    assert view_table(7, Level.INTERNAL) == "fts_7_internal|trusted"  # never a level's own index, fts_7_internal
    assert view_table(7, Label.parse("INTERNAL:hr")) != view_table(8, Label.parse("INTERNAL:hr"))


@pytest.mark.parametrize(
    "text", ["PUBLIC", "CONFIDENTIAL:hr", "CONFIDENTIAL:hr,legal@untrusted", "RESTRICTED@untrusted"]
)
@pytest.mark.parametrize("floor", list(Integrity))
def test_a_readers_view_key_reads_back_as_the_reader(text, floor):
    """view_key and read_view are inverses, and no two readers share a view."""
    label = reader(Label.parse(text), floor)
    assert read_view(view_key(label)) == label
    others = {view_key(reader(Label.parse(t), f)) for t in ("PUBLIC", "CONFIDENTIAL:hr") for f in Integrity}
    assert len(others) == 4
