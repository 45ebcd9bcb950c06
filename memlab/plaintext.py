"""Tables and paragraphs as plain text that fits a terminal's width (``memlab demo``).

A table is printed as columns when they fit, each cell cut in its middle with ``…`` if it must be (so a cell's end,
often a level such as ``(INTERNAL)``, stays), but no column to less than about half of what it needs; otherwise each
row is printed as a block of ``column  value`` lines, wrapped. Missing values are blank, lists their items, times
of day to the second (the demo's sessions last seconds), and nothing is Markdown.

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


def cell(column: str, value: Any) -> str:
    """One value as plain text on one line: blank when missing, a list as its items, a time (a column named ``at``
    or ``..._at``) as the time of day to the second, snippet markers (``**``) dropped."""
    if isinstance(value, list | tuple):
        return ", ".join(cell("", item) for item in value)
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return ""
    text = " ".join(str(value).split()).replace("**", "")
    if column == "at" or column.endswith("_at"):
        try:
            return clock_time(text)
        except ValueError:
            return text
    return text


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


def table(frame: pd.DataFrame, width: int | None) -> str:
    """``frame`` as plain text no wider than ``width`` (None: as wide as it is); a named index is its first column."""
    if frame.index.name is not None:
        frame = frame.reset_index()
    headers = [str(name) for name in frame.columns]
    rows = [[cell(name, value) for name, value in zip(headers, row, strict=True)] for row in frame.itertuples(False)]
    natural = [max([len(header)] + [len(row[index]) for row in rows]) for index, header in enumerate(headers)]
    widths = natural if width is None else _shrunk(natural, max(width, NARROWEST))
    if widths is None:
        return _blocks(headers, rows, max(width or 0, NARROWEST))
    numeric = [pd.api.types.is_numeric_dtype(frame[name]) for name in frame.columns]
    return "\n".join(
        GAP.join(
            (_clip(text, w).rjust(w) if right else _clip(text, w).ljust(w))
            for text, w, right in zip(line, widths, numeric, strict=True)
        ).rstrip()
        for line in [headers, *rows]
    )


def _shrunk(natural: list[int], width: int) -> list[int] | None:
    """Column widths that fit ``width``, the widest cut first, none below its floor; None if they cannot."""
    floors = [min(n, max(12, n // 2), 30) for n in natural]
    widths = list(natural)
    while sum(widths) + len(GAP) * (len(widths) - 1) > width:
        widest = max(range(len(widths)), key=lambda index: widths[index] - floors[index])
        if widths[widest] <= floors[widest]:
            return None
        widths[widest] -= 1
    return widths


def _clip(text: str, width: int) -> str:
    """``text`` cut in its middle to ``width`` characters: its start and its end stay."""
    if len(text) <= width:
        return text
    tail = (width - 1) // 2
    return text[: width - 1 - tail] + "…" + (text[-tail:] if tail else "")


def _blocks(headers: list[str], rows: list[list[str]], width: int) -> str:
    """Each row as a block of ``column  value`` lines (blank values left out), values wrapped under themselves."""
    label = min(max(map(len, headers)), width // 3)
    indent = " " * (label + len(GAP))
    blocks = []
    for number, row in enumerate(rows, start=1):
        lines = [f"-- {number}"]
        for header, text in zip(headers, row, strict=True):
            if text:
                lines.extend(
                    textwrap.wrap(
                        text,
                        width,
                        initial_indent=_clip(header, label).ljust(label) + GAP,
                        subsequent_indent=indent,
                        break_on_hyphens=False,
                    )
                )
        blocks.append("\n".join(lines))
    return "\n".join(blocks)
