"""memlab.widgets.render: the widgets' HTML helpers — escaping, colours that read in any theme, cell text."""

from __future__ import annotations

import pandas as pd
import pytest

from memlab.levels import Level
from memlab.widgets.render import (
    LEVEL_COLOURS,
    alert,
    badge,
    contrast,
    highlight,
    html_table,
    json_html,
    level_row,
    pill,
    plural,
    text,
)


@pytest.mark.parametrize(
    ("foreground", "background", "ratio"),
    [("#ffffff", "#000000", 21.0), ("#000000", "#ffffff", 21.0), ("#777777", "#777777", 1.0)],
)
def test_contrast_is_wcag_2(foreground, background, ratio):
    assert contrast(foreground, background) == pytest.approx(ratio)


@pytest.mark.parametrize("level", list(Level))
def test_each_levels_pill_reads_at_aa(level):
    assert contrast("#ffffff", LEVEL_COLOURS[level]) >= 4.5
    assert f"background:{LEVEL_COLOURS[level]}" in badge(level) and f">{level.name}<" in badge(level)


@pytest.mark.parametrize(
    ("value", "shown"),
    [(None, ""), (float("nan"), ""), (pd.NA, ""), (["a", 1], "a, 1"), (0.12345, "0.123"), (3, "3"), ("x", "x")],
)
def test_text(value, shown):
    assert text(value) == shown


def test_everything_shown_is_escaped():
    # Guards: render.html_table writing a cell's text unescaped (a memory's content then runs as HTML).
    hostile = "<img src=x onerror=alert(1)>"
    for made in (
        pill(hostile, "#000000", title=hostile),
        alert(hostile),
        html_table(pd.DataFrame({"content": [hostile], hostile: [1]})),
        json_html({"content": hostile}),
        highlight(f"**{hostile}**"),
    ):
        assert "<img" not in made


def test_highlight_marks_the_matched_words():
    assert highlight("She **runs** and **ran**") == "She <mark>runs</mark> and <mark>ran</mark>"


def test_a_table_with_no_rows_says_so_and_custom_cells_and_row_styles_apply():
    assert html_table(pd.DataFrame({"a": []}), empty="no memories") == "<p><i>no memories</i></p>"
    table = html_table(
        pd.DataFrame({"level": ["INTERNAL"], "n": [1]}),
        cells={"n": lambda v: f"<b>{v}</b>"},
        row_style=level_row("level"),
    )
    assert "<b>1</b>" in table and "background:" in table.split("<td", 1)[1]
    assert level_row("level")({"level": None}) == "" and level_row("level")({"level": "CONFIDENTIAL:hr"})


def test_plural():
    assert [plural(n, "row") for n in (0, 1, 2)] == ["0 rows", "1 row", "2 rows"]
