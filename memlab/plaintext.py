"""Tables and paragraphs as plain text that fits a terminal's width (``memlab demo``).

A table is printed as columns when they fit, a cell too wide for its column wrapped onto more lines on word
boundaries (no word is cut: a column is never narrower than its longest word, and a cell's end, often a level such
as ``(INTERNAL)``, stays whole); otherwise each row is printed as a block of ``column  value`` lines, wrapped.
Missing values are blank, lists their items, times of day to the second (the demo's sessions last seconds; with
``dates=True`` the date too), and nothing is Markdown.

Examples:
    >>> import pandas as pd
    >>> print(table(pd.DataFrame({"key": ["user-name"], "snippet": ["**Samantha** Rivera"], "x": [None]}), 40))
    key        snippet          x
    user-name  Samantha Rivera
"""

from __future__ import annotations

import math
import textwrap
from datetime import UTC, datetime
from typing import Any

import pandas as pd

__all__ = ["table", "paragraph", "cell", "clock_time"]

GAP = "  "
NARROWEST = 20
"""Below this many columns nothing is fitted: lines are cut to it."""


def paragraph(text: str, width: int | None) -> str:
    """``text`` wrapped to ``width`` (None: as it is), each of its lines on its own."""
    if width is None:
        return text
    width = max(width, NARROWEST)
    return "\n".join(
        wrapped
        for line in text.splitlines() or [""]
        for wrapped in textwrap.wrap(line, width, break_on_hyphens=False) or [""]
    )


def cell(column: str, value: Any, *, dates: bool = False) -> str:
    """One value as plain text on one line: blank when missing, a list as its items, a time (a column named ``at``
    or ``..._at``) as the time of day to the second (``dates``: after its date, ``2026-01-01 12:00:05``), snippet
    markers (``**``) dropped."""
    if isinstance(value, list | tuple):
        return ", ".join(cell("", item) for item in value)
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    text = " ".join(str(value).split()).replace("**", "")
    if column == "at" or column.endswith("_at"):
        try:
            return f"{_utc(text).date()} {clock_time(text)}" if dates else clock_time(text)
        except ValueError:
            return text
    return text


def _utc(at: str) -> datetime:
    moment = datetime.fromisoformat(at)
    return moment if moment.tzinfo is None else moment.astimezone(UTC)


def clock_time(at: str | datetime) -> str:
    """A time the store recorded, as a person reads a clock in UTC: hours, minutes, seconds (no fraction); the
    one way the demo, the widgets and the audit viewer show a time.

    Raises:
        ValueError: ``at`` is not an ISO time.

    Examples:
        >>> clock_time("2026-01-01T12:00:05.123456+00:00"), clock_time("2026-01-01T14:00:05+02:00")
        ('12:00:05', '12:00:05')
    """
    moment = at if isinstance(at, datetime) else datetime.fromisoformat(at)
    return (moment if moment.tzinfo is None else moment.astimezone(UTC)).strftime("%H:%M:%S")


def table(frame: pd.DataFrame, width: int | None, *, dates: bool = False) -> str:
    """``frame`` as plain text no wider than ``width`` (None: as wide as it is, one line a row); a named index is its
    first column; ``dates``: times with their date (``cell``)."""
    if frame.index.name is not None:
        frame = frame.reset_index()
    headers = [str(name) for name in frame.columns]
    rows = [
        [cell(name, value, dates=dates) for name, value in zip(headers, row, strict=True)]
        for row in frame.itertuples(False)
    ]
    natural = [max([len(header)] + [len(row[index]) for row in rows]) for index, header in enumerate(headers)]
    if width is None:
        widths: list[int] | None = natural
    else:
        longest = [
            max([len(header)] + [_longest_word(row[index]) for row in rows]) for index, header in enumerate(headers)
        ]
        widths = _shrunk(natural, longest, max(width, NARROWEST))
    if widths is None:
        return _blocks(headers, rows, max(width or 0, NARROWEST))
    numeric = [pd.api.types.is_numeric_dtype(frame[name]) for name in frame.columns]
    lines = []
    for row in [headers, *rows]:
        wrapped = [textwrap.wrap(text, w, break_on_hyphens=False) or [""] for text, w in zip(row, widths, strict=True)]
        for depth in range(max(map(len, wrapped))):
            parts = ((cell_lines[depth] if depth < len(cell_lines) else "") for cell_lines in wrapped)
            lines.append(
                GAP.join(
                    (text.rjust(w) if right else text.ljust(w))
                    for text, w, right in zip(parts, widths, numeric, strict=True)
                ).rstrip()
            )
    return "\n".join(lines)


def _longest_word(text: str) -> int:
    return max(map(len, text.split()), default=0)


def _shrunk(natural: list[int], floors: list[int], width: int) -> list[int] | None:
    """Column widths that fit ``width``, the one with the most room above its floor (its longest word) narrowed
    first; None if they cannot."""
    widths = list(natural)
    while sum(widths) + len(GAP) * (len(widths) - 1) > width:
        widest = max(range(len(widths)), key=lambda index: widths[index] - floors[index])
        if widths[widest] <= floors[widest]:
            return None
        widths[widest] -= 1
    return widths


def _blocks(headers: list[str], rows: list[list[str]], width: int) -> str:
    """Each row as a block of ``column  value`` lines (blank values left out), values wrapped under themselves, no
    word cut."""
    label = min(max(map(len, headers)), width // 3)
    indent = " " * (label + len(GAP))
    blocks = []
    for number, row in enumerate(rows, start=1):
        lines = [f"-- {number}"]
        for header, text in zip(headers, row, strict=True):
            if not text:
                continue
            # A name too long for the margin, or a word too long to sit beside it, puts the value under its name.
            under = len(header) > label or len(indent) + _longest_word(text) > width
            if under:
                lines.append(header)
            first, rest = ("", "") if under else (header.ljust(label) + GAP, indent)
            lines.extend(
                textwrap.wrap(
                    text, width, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False,
                    break_long_words=False,  # a word longer than a whole line (a URL) stays whole and copyable
                )
            )  # fmt: skip
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
