"""memlab.plaintext: cells, paragraphs and tables as plain text that fits a terminal."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pandas as pd
import pytest

from memlab.plaintext import NARROWEST, cell, clock_time, paragraph, table


@pytest.mark.parametrize(
    ("column", "value", "text"),
    [
        ("content", None, ""),
        ("score", float("nan"), ""),
        ("content", pd.NA, ""),
        ("tags", ["a", "b"], "a, b"),
        ("tags", ("x", None, "y"), "x, , y"),
        ("snippet", "**Sam**  said\nhi", "Sam said hi"),
        ("at", "2026-01-01T12:00:05.5+00:00", "12:00:05"),
        ("saved_at", "2026-01-01T14:00:05+02:00", "12:00:05"),
        ("at", "not a time", "not a time"),
        ("version", 3, "3"),
        ("format", "12:00", "12:00"),  # not a time column: left as it is
    ],
)
def test_cell(column, value, text):
    assert cell(column, value) == text


@pytest.mark.parametrize(
    ("at", "shown"),
    [
        ("2026-01-01T23:59:59.999+00:00", "23:59:59"),
        ("2026-01-01T01:00:00-03:00", "04:00:00"),
        (datetime(2026, 1, 1, 9, 5, 7, tzinfo=timezone(timedelta(hours=1))), "08:05:07"),
        (datetime(2026, 1, 1, 9, 5, 7), "09:05:07"),  # naive: taken as it is
        (datetime(2026, 1, 1, 9, 5, 7, tzinfo=UTC), "09:05:07"),
    ],
)
def test_clock_time_is_utc_to_the_second(at, shown):
    assert clock_time(at) == shown


def test_clock_time_refuses_what_is_not_a_time():
    with pytest.raises(ValueError):
        clock_time("noon")


def test_paragraph_wraps_each_line_and_keeps_blank_lines():
    text = "one two three four five six seven eight nine ten eleven twelve\n\nshort"
    lines = paragraph(text, 30).splitlines()
    assert all(len(line) <= 30 for line in lines)
    assert "" in lines and lines[-1] == "short"
    assert " ".join(lines[:-2]) == text.splitlines()[0]
    assert paragraph(text, None) == text
    # a width below NARROWEST is raised to it: the words still wrap, never one letter a line
    assert all(len(line) <= NARROWEST for line in paragraph(text, 3).splitlines())
    assert max(len(line) for line in paragraph(text, 3).splitlines()) > 3


def test_paragraph_keeps_hyphenated_keys_whole():
    assert "user-name-of-the-day" in paragraph("the key user-name-of-the-day is long", 22).splitlines()


FRAME = pd.DataFrame(
    {
        "key": ["user-name", "favourite-language"],
        "classification": ["a long classification line ending in (INTERNAL)", "(PUBLIC)"],
        "version": [1, 12],
    }
)


def test_a_table_that_fits_is_columns_with_numbers_to_the_right():
    lines = table(FRAME, None).splitlines()
    assert lines[0].split() == ["key", "classification", "version"]
    assert lines[1].startswith("user-name ") and lines[1].endswith(" 1")
    assert lines[2].endswith("12") and len(lines[1]) == len(lines[2])


def test_a_narrow_table_wraps_the_widest_cell_on_word_boundaries_keeping_its_end():
    # Guards: a cell cut in its middle with "…" (issue 37: `memlab demo` cut words mid-way at 80 columns).
    lines = table(FRAME, 60).splitlines()
    assert all(len(line) <= 60 for line in lines)
    assert "…" not in "".join(lines) and lines[1].split()[0] == "user-name"
    words = " ".join(lines).split()
    assert all(word in words for word in "a long classification line ending in (INTERNAL)".split())
    assert "favourite-language" in words  # a hyphenated key is one word, never split at its hyphen


def test_a_column_is_never_narrower_than_its_longest_word():
    # Guards: a column narrowed below its longest word (textwrap then breaks the word); blocks are printed instead.
    frame = pd.DataFrame({"key": ["k"], "content": ["incomprehensibilities and more"]})
    for width in (24, 26, 40):
        text = table(frame, width)
        assert "incomprehensibilities" in text.split() and all(len(line) <= width for line in text.splitlines())


def test_a_word_longer_than_a_line_stays_whole_on_a_line_of_its_own():
    text = table(pd.DataFrame({"key": ["k"], "url": ["see https://example.org/" + "x" * 40]}), 30)
    assert "https://example.org/" + "x" * 40 in text.splitlines()


def test_dates_keeps_a_times_date():
    frame = pd.DataFrame({"saved_at": ["2026-01-01T14:00:05.5+02:00"]})
    assert table(frame, None, dates=True).splitlines()[1] == "2026-01-01 12:00:05"
    assert table(frame, None).splitlines()[1] == "12:00:05"


def test_a_table_too_narrow_for_columns_is_blocks_of_column_and_value():
    text = table(FRAME.assign(notes=["notes " * 8, None]), 30)
    blocks = text.split("-- ")[1:]
    assert [block.splitlines()[0] for block in blocks] == ["1", "2"]
    assert all(len(line) <= 30 for line in text.splitlines())
    assert "notes" in blocks[0] and "notes" not in blocks[1]  # a blank value is left out


def test_a_named_index_is_the_first_column():
    assert table(FRAME.set_index("key"), None).splitlines()[0].split()[0] == "key"
