"""HTML building blocks shared by the widgets: level colours, tables, highlighted snippets, JSON.

Everything here turns data into an HTML string, so a widget shows it in a ``widgets.HTML`` whose ``.value``
a test can read without a kernel.

Untrusted is marked as well as a level: a badge of an untrusted label starts with ``⚠``, a row holding one is
hatched, and ``integrity_badge`` names a grade in words (``UNTRUSTED_COLOUR`` behind white text), never by colour
alone.

Colours follow the page's theme: text, backgrounds and borders are JupyterLab's CSS variables
(``--jp-layout-color1``, ``--jp-ui-font-color1``, …, which Voila's ``?theme=dark`` sets too), and a level's
tint is its hue mixed into the theme's background. Wherever a level's hue carries text (badges, pills,
timeline bars), the text is white on a hue dark enough for WCAG AA (``contrast`` >= 4.5) in any theme.

Examples:
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

from memlab.labels import Integrity, Label, LabelLike
from memlab.levels import Level
from memlab.plaintext import clock_time

__all__ = [
    "LEVEL_COLOURS",
    "LEVEL_TINTS",
    "UNTRUSTED_COLOUR",
    "THEME",
    "level_button",
    "contrast",
    "badge",
    "integrity_badge",
    "pill",
    "alert",
    "plural",
    "clock_time",
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
    Level.CONFIDENTIAL: "#b45309",
    Level.RESTRICTED: "#c62828",
}
"""The hue of each level (green, blue, orange, red), the same in light and dark themes: white text on it
has a contrast of at least 4.5:1."""

THEME = {
    "text": "var(--jp-ui-font-color1, #212121)",
    "background": "var(--jp-layout-color1, #ffffff)",
    "header": "var(--jp-layout-color2, #eeeeee)",
    "border": "var(--jp-border-color2, #e0e0e0)",
}
"""The theme's colours, as JupyterLab's CSS variables (with light fallbacks outside JupyterLab and Voila)."""

UNTRUSTED_COLOUR = "#ad1457"
"""The hue that marks what is untrusted (magenta, no level's): white text on it has a contrast of 6.97:1."""

LEVEL_TINTS: dict[Level, str] = {
    level: f"color-mix(in srgb, {colour} 16%, {THEME['background']})" for level, colour in LEVEL_COLOURS.items()
}
"""A background of each level's hue for table rows: light in a light theme, dark in a dark one."""

_HATCH = (
    "repeating-linear-gradient(135deg,{tint} 0 6px,"
    f"color-mix(in srgb, {UNTRUSTED_COLOUR} 38%, {THEME['background']}) 6px 10px)"
)
_TABLE = 'style="border-collapse:collapse;font-size:12px;margin:2px 0"'
_CELL = f"border:1px solid {THEME['border']};padding:2px 6px;text-align:left;vertical-align:top"
_SCROLL = "overflow-x:auto;max-width:100%"
_MARKED = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)


def contrast(foreground: str, background: str) -> float:
    """The WCAG 2 contrast ratio of two opaque ``#rrggbb`` colours, from 1 to 21.

    Examples:
        >>> round(contrast("#ffffff", LEVEL_COLOURS[Level.CONFIDENTIAL]), 2)
        5.02
    """

    def luminance(colour: str) -> float:
        channels = [int(colour.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def pill(label: str, colour: str, *, title: str = "") -> str:
    """``label`` (escaped) in white on ``colour``: a small rounded label, readable in any theme.

    Examples:
        >>> pill("ok", "#2e7d32")[:5]
        '<span'
    """
    tip = f' title="{html.escape(title)}"' if title else ""
    return (
        f'<span{tip} style="background:{colour};color:#ffffff;padding:0 6px;border-radius:8px;'
        f'font-size:85%;font-weight:bold;white-space:nowrap">{html.escape(label)}</span>'
    )


def alert(message: str) -> str:
    """An error message (escaped) in the theme's text colour, marked by a red bar and a cross, not by colour alone.

    Examples:
        >>> "✘ bad &lt;key&gt;" in alert("bad <key>")
        True
    """
    return f'<div role="alert" style="border-left:4px solid #c62828;padding-left:6px">✘ {html.escape(message)}</div>'


def plural(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless the count is one.

    Examples:
        >>> plural(1, "version"), plural(2, "version"), plural(0, "row")
        ('1 version', '2 versions', '0 rows')
    """
    return f"{count} {noun}{'' if count == 1 else 's'}"


def badge(level: LabelLike) -> str:
    """A small label naming ``level`` (a level, or a label with categories: named whole), in its level's hue; an
    untrusted label starts with ``⚠``.

    Examples:
        >>> "#c62828" in badge(Level.RESTRICTED), ">CONFIDENTIAL:hr<" in badge("confidential:hr")
        (True, True)
        >>> ">⚠ INTERNAL@untrusted<" in badge("INTERNAL@untrusted")
        True
    """
    label = Label.parse(level)
    return pill(str(label) if label.trusted else f"⚠ {label}", LEVEL_COLOURS[label.level])


def integrity_badge(integrity: Integrity | str) -> str:
    """A grade in words: ``⚠ untrusted`` in white on ``UNTRUSTED_COLOUR``; ``trusted`` in the theme's text, outlined.

    Examples:
        >>> ">⚠ untrusted<" in integrity_badge("untrusted"), ">trusted<" in integrity_badge(Integrity.TRUSTED)
        (True, True)
    """
    if Integrity.parse(integrity) is Integrity.UNTRUSTED:
        return pill("⚠ untrusted", UNTRUSTED_COLOUR, title="written by a session fed content no one vouches for")
    return (
        f'<span style="border:1px solid {THEME["border"]};padding:0 5px;border-radius:8px;font-size:85%;'
        'white-space:nowrap">trusted</span>'
    )


def level_button(button: Any, level: Level) -> None:
    """Colour an ipywidgets ``Button`` with ``level``'s hue and white text (``button_style`` has no such blue).

    Examples:
        >>> import ipywidgets
        >>> button = ipywidgets.Button(); level_button(button, Level.INTERNAL); button.style.button_color
        '#1565c0'
    """
    button.style.button_color = LEVEL_COLOURS[level]
    button.style.text_color = "#ffffff"


def text(value: Any) -> str:
    """A cell value as plain text: missing values are empty, lists are comma-separated, floats short.

    Examples:
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

    Examples:
        >>> html_table(pd.DataFrame({"key": ["a<b"]})).count("a&lt;b")
        1
    """
    if frame.empty:
        return f"<p><i>{html.escape(empty)}</i></p>"
    cells = cells or {}
    head = "".join(
        f'<th style="{_CELL};background:{THEME["header"]}">{html.escape(str(name))}</th>' for name in frame.columns
    )
    body = []
    for row in frame.to_dict("records"):
        style = f"{_CELL};{row_style(row)}" if row_style else _CELL
        tds = "".join(
            f'<td style="{style}">{cells[name](value) if name in cells else html.escape(text(value))}</td>'
            for name, value in row.items()
        )
        body.append(f"<tr>{tds}</tr>")
    # A table wider than its panel scrolls inside it (the panel stays put); the callers say so where it may.
    return f'<div style="{_SCROLL}"><table {_TABLE}><tr>{head}</tr>{"".join(body)}</table></div>'


def highlight(snippet: str) -> str:
    """A snippet as HTML, its ``**matched**`` words in ``<mark>``.

    Examples:
        >>> highlight("She **runs** & <b>")
        'She <mark>runs</mark> &amp; &lt;b&gt;'
    """
    return _MARKED.sub(r"<mark>\1</mark>", html.escape(snippet))


def json_html(data: Any) -> str:
    """Tool-call data as pretty-printed JSON in a ``<pre>``.

    Examples:
        >>> json_html({"found": False}).count("found")
        1
    """
    shown = json.dumps(data, indent=1, ensure_ascii=False, default=str)
    return f'<pre style="font-size:11px;line-height:1.3;margin:2px 0;white-space:pre-wrap">{html.escape(shown)}</pre>'


def level_row(column: str) -> Callable[[Mapping[str, Any]], str]:
    """A ``row_style`` tinting each row by the level named in ``column``, and hatching it when that label is
    untrusted (stripes of the level's tint and a stronger one: seen in any theme, without reading the badge)."""

    def style(row: Mapping[str, Any]) -> str:
        value = row.get(column)
        if not isinstance(value, (str, Level, Label)) or not value:
            return ""
        label = Label.parse(value)
        if label.trusted:
            return f"background:{LEVEL_TINTS[label.level]}"
        return f"background:{_HATCH.format(tint=LEVEL_TINTS[label.level])}"

    return style


class Panel:
    """A widget's plain-Python face: ``.widget`` is what a notebook displays, and the object shows it too.

    Examples:
        >>> from memlab.widgets import AuditViewer
        >>> type(AuditViewer(store).widget).__name__
        'VBox'
    """

    widget: Any

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
