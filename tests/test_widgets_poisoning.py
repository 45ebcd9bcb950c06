"""memlab.widgets.poisoning: the defences at one poison rate, the chart, and the widget's slider, read from a
results table (whatever rows, rates and rankings it holds) with no browser."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from poison_toy import toy

from memlab import widgets as mw
from memlab.errors import InvalidArgument
from memlab.poison import run
from memlab.widgets.figures import INK
from memlab.widgets.poisoning import UD, at_rate, by_rate, choices, poisoning_figure

ROWS = ["integrity-ignored", "labels-only", "floor-trusted", "no-trust-first"]


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    """The toy attacked directly at two rates (one target, then two) and by query at one, with a defence the
    LoCoMo table does not have (no-trust-first) and k of 1 and 2 only."""
    runs = [run(toy(), rate=rate, k=(1, 2), rows=ROWS) for rate in (0.2, 0.5)]
    runs.append(run(toy(), tier="query", rate=0.3, k=(1, 2), rows=ROWS))
    return pd.concat(runs, ignore_index=True)


def test_the_choices_are_the_tables_own(table):
    assert choices(table) == {"tiers": ["direct", "query"], "rates": [0.2, 0.5], "rankings": ["lexical"],
                              "k": [1, 2], "rows": ROWS}  # fmt: skip
    assert choices(table, "query")["rates"] == [0.3]


def test_the_defences_at_one_rate_with_ud_as_the_target_questions_s10_lost(table):
    shown = at_rate(table, 0.5)  # no k asked and no 10 in the table: its largest, 2
    assert shown["row"].tolist() == ROWS
    source = table[(table["tier"] == "direct") & (table["rate"] == 0.5) & (table["k"] == 2)].reset_index(drop=True)
    assert shown["ASR-r@2"].tolist() == source["ASR-r@k"].tolist()
    assert shown[UD].tolist() == (source["target S@10 clean"] - source["target S@10 poisoned"]).tolist()
    by_row = shown.set_index("row")
    assert by_row.loc["integrity-ignored", UD] == 1.0  # the overwrite replaced both judged answers
    assert by_row.loc["floor-trusted", "ASR-r@2"] == 0 and by_row.loc["floor-trusted", UD] == 0
    assert by_row.loc["no-trust-first", "ISR overwrite"] == 1 and by_row.loc["labels-only", "ISR overwrite"] == 0
    assert at_rate(table, 0.2, k=1)["poison rate"].iloc[0] == pytest.approx(2 / 5)


@pytest.mark.parametrize(
    "asked, message",
    [
        ({"rate": 0.01}, "no rate 0.01; it has 0.2, 0.5"),
        ({"rate": 0.2, "tier": "content"}, "no tier 'content'; it has direct, query"),
        ({"rate": 0.2, "ranking": "dense"}, "no ranking 'dense'; it has lexical"),
        ({"rate": 0.2, "k": 10}, "no k 10; it has 1, 2"),
    ],
)
def test_what_the_table_does_not_have_is_refused_naming_what_it_has(table, asked, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        at_rate(table, **asked)


def test_a_measure_per_poison_rate_and_defence(table):
    wide = by_rate(table, k=1)
    assert list(wide.columns) == ROWS and list(wide.index) == pytest.approx([2 / 5, 4 / 7])
    assert wide["floor-trusted"].tolist() == [0.0, 0.0] and wide["integrity-ignored"].tolist() == [1.0, 1.0]


def _lines(axis) -> list:
    return [line for line in axis.get_lines() if line.get_gid() != "rate"]  # not the picked rate's marker


def test_the_chart_draws_every_defence_with_its_own_shape_in_the_pages_colours(table):
    figure = poisoning_figure(table, rate=0.5)
    attack, ud = figure.axes
    assert [axis.get_ylabel() for axis in figure.axes] == [
        "ASR-r@2 (target questions)",
        "UD: S@10 lost (target questions)",
    ]
    for axis, measure in ((attack, "ASR-r@k"), (ud, UD)):
        lines = _lines(axis)
        assert [list(line.get_ydata()) for line in lines] == by_rate(table, measure).T.values.tolist()
        assert len({line.get_marker() for line in lines}) == len(ROWS)  # the shape alone tells the defence
    assert [text.get_text() for text in figure.legends[0].get_texts()] == ROWS
    for axis in figure.axes:
        marked = [line for line in axis.get_lines() if line.get_gid() == "rate"]
        assert len(marked) == 1 and marked[0].get_xdata()[0] == pytest.approx(4 / 7)  # the picked rate, as reached
    assert not [line for line in poisoning_figure(table).axes[0].get_lines() if line.get_gid() == "rate"]
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    assert np.asarray(canvas.buffer_rgba())[0, 0, 3] == 0  # no background
    shown = figure._repr_html_()
    assert "currentColor" in shown and INK.lower() not in shown.lower() and "#ffffff" not in shown.lower()


def test_the_slider_moves_over_the_tables_rates_and_the_table_and_chart_follow(table):
    lab = mw.poisoning_lab(table)
    assert [value for _, value in lab.rate.options] == [0.2, 0.5] and lab.k.options == (1, 2)
    assert lab.shown["poison rate"].iloc[0] == pytest.approx(4 / 7) and lab.k.value == 2
    before = lab.chart.value
    lab.rate.value = 0.2
    assert lab.shown["poison rate"].iloc[0] == pytest.approx(2 / 5)
    assert "40.00% of the memories poisoned" in lab.table.value and "no-trust-first" in lab.table.value
    assert ">40.00%</td>" in lab.table.value  # the rate reached, unrounded
    assert lab.chart.value != before and "currentColor" in lab.chart.value
    lab.k.value = 1
    assert "ASR-r@1" in lab.table.value and "ASR-r@1" in lab.chart.value
    lab.tier.value = "query"
    assert [value for _, value in lab.rate.options] == [0.3] and lab.rate.value == 0.3
    assert (lab.shown["poison rate"] == table.loc[table["tier"] == "query", "poison rate"].iloc[0]).all()
    assert lab.k.value == 1  # a pick the new tier also has is kept


def test_a_column_the_widget_does_not_know_tells_rows_apart_and_is_never_averaged(table):
    """A table may gain a text column (a poison variant, say): its rows are shown and drawn apart, named by it.
    Guards: by_rate's pivot averaging the rows a column it does not know tells apart."""
    trigger = table.assign(variant="plain")
    trigger = pd.concat([trigger, trigger.assign(variant="trigger", **{"ASR-r@k": 0.5})], ignore_index=True)
    shown = at_rate(trigger, 0.5)
    assert shown.columns[:2].tolist() == ["row", "variant"] and len(shown) == 2 * len(ROWS)
    wide = by_rate(trigger)
    assert "labels-only · trigger" in wide.columns and set(wide["integrity-ignored · trigger"]) == {0.5}
    assert set(wide["integrity-ignored · plain"]) == {1.0}
    assert choices(trigger)["rows"][:2] == ["integrity-ignored · plain", "labels-only · plain"]
    lab = mw.poisoning_lab(trigger)
    assert "floor-trusted · trigger" in lab.chart.value
