"""HTML building blocks shared by the widgets: level colours, tables, highlighted snippets, JSON.

Everything here turns data into an HTML string, so a widget shows it in a ``widgets.HTML`` whose ``.value``
a test can read without a kernel.

>>> badge("confidential")[:5]
'<span'
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from memlab.levels import Level

__all__ = [
    "LEVEL_COLOURS",
    "LEVEL_TINTS",
    "BUTTON_STYLES",
    "badge",
    "text",
    "html_table",
    "level_row",
    "highlight",
    "json_html",
    "Panel",
]

LEVEL_COLOURS: dict[Level, str] = {
    Level.PUBLIC: "#2e7d32",
    Level.INTERNAL: "#1565c0",
    Level.CONFIDENTIAL: "#ef6c00",
    Level.RESTRICTED: "#c62828",
}
"""The colour of each level: green, blue, orange, red."""

LEVEL_TINTS: dict[Level, str] = {
    Level.PUBLIC: "#e8f5e9",
    Level.INTERNAL: "#e3f2fd",
    Level.CONFIDENTIAL: "#fff3e0",
    Level.RESTRICTED: "#ffebee",
}
"""A light background of each level's colour, for table rows."""

BUTTON_STYLES: dict[Level, str] = {
    Level.PUBLIC: "success",
    Level.INTERNAL: "info",
    Level.CONFIDENTIAL: "warning",
    Level.RESTRICTED: "danger",
}
"""The ipywidgets ``button_style`` closest to each level's colour."""

_TABLE = 'style="border-collapse:collapse;font-size:12px;margin:2px 0"'
_CELL = "border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top"
_MARKED = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)


def badge(level: Level | str) -> str:
    """A small coloured label naming ``level``.

    >>> "#c62828" in badge(Level.RESTRICTED)
    True
    """
    level = Level.parse(level)
    return (
        f'<span style="background:{LEVEL_COLOURS[level]};color:white;padding:0 6px;border-radius:8px;'
        f'font-size:85%;font-weight:bold">{level.name}</span>'
    )


def text(value: Any) -> str:
    """A cell value as plain text: missing values are empty, lists are comma-separated, floats short.

    >>> text(["a", "b"]), text(None), text(0.12345)
    ('a, b', '', '0.123')
    """
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value))
    if value is None or (isinstance(value, float) and pd.isna(value)) or value is pd.NA:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def html_table(
    frame: pd.DataFrame,
    *,
    cells: Mapping[str, Callable[[Any], str]] | None = None,
    row_style: Callable[[Mapping[str, Any]], str] | None = None,
    empty: str = "nothing to show",
) -> str:
    """``frame`` as a compact HTML table (its index is left out).

    Args:
        frame: the rows to show.
        cells: per column, a function making a value's HTML (by default the escaped ``text(value)``).
        row_style: a function of the row (a dict) giving CSS for each of its cells, e.g. a background.
        empty: what to say when ``frame`` has no rows.

    >>> html_table(pd.DataFrame({"key": ["a<b"]})).count("a&lt;b")
    1
    """
    if frame.empty:
        return f"<p><i>{html.escape(empty)}</i></p>"
    cells = cells or {}
    head = "".join(f'<th style="{_CELL};background:#f5f5f5">{html.escape(str(name))}</th>' for name in frame.columns)
    body = []
    for row in frame.to_dict("records"):
        style = f"{_CELL};{row_style(row)}" if row_style else _CELL
        tds = "".join(
            f'<td style="{style}">{cells[name](value) if name in cells else html.escape(text(value))}</td>'
            for name, value in row.items()
        )
        body.append(f"<tr>{tds}</tr>")
    return f"<table {_TABLE}><tr>{head}</tr>{''.join(body)}</table>"


def highlight(snippet: str) -> str:
    """A snippet as HTML, its ``**matched**`` words in ``<mark>``.

    >>> highlight("She **runs** & <b>")
    'She <mark>runs</mark> &amp; &lt;b&gt;'
    """
    return _MARKED.sub(r"<mark>\1</mark>", html.escape(snippet))


def json_html(data: Any) -> str:
    """Tool-call data as pretty-printed JSON in a ``<pre>``.

    >>> json_html({"found": False}).count("found")
    1
    """
    shown = json.dumps(data, indent=1, ensure_ascii=False, default=str)
    return f'<pre style="font-size:11px;margin:2px 0;white-space:pre-wrap">{html.escape(shown)}</pre>'


def level_row(column: str) -> Callable[[Mapping[str, Any]], str]:
    """A ``row_style`` tinting each row by the level named in ``column``."""

    def style(row: Mapping[str, Any]) -> str:
        value = row.get(column)
        return f"background:{LEVEL_TINTS[Level.parse(value)]}" if isinstance(value, (str, Level)) and value else ""

    return style


class Panel:
    """A widget's plain-Python face: ``.widget`` is what a notebook displays, and the object shows it too.

    >>> from memlab.widgets import AuditViewer
    >>> type(AuditViewer(store).widget).__name__
    'VBox'
    """

    widget: Any

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
