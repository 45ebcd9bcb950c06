"""memlab.poison.report: the table at one k, the chart (a panel per ranking, a line per defence), the files."""

import pandas as pd
import pytest
from matplotlib.figure import Figure

from memlab.poison import run
from memlab.poison.report import SUMMARY, chart, draw, summary, write
from tests.poison_toy import toy


@pytest.fixture(scope="module")
def table():
    return run(toy(), rate=[0.3, 0.5], k=(1, 5), seed=0)


def test_the_summary_is_one_line_per_rate_defence_and_ranking_at_k(table):
    at_one = summary(table, k=1)
    assert list(at_one.columns) == ["rate", "row", "ranking", *SUMMARY]
    assert len(at_one) == 2 * 5  # two rates, five defences, one ranking
    assert at_one["ASR-r@k"].tolist() == table.loc[table["k"] == 1, "ASR-r@k"].tolist()
    assert summary(table, k=10).empty  # k=10 was not measured


def test_the_chart_draws_asr_and_ud_per_defence_against_the_poison_rate(table):
    figure = Figure()
    draw(figure, table, k=5)
    top, bottom = figure.axes
    assert [line.get_label() for line in top.get_lines()] == list(dict.fromkeys(table["row"]))
    floor = next(line for line in top.get_lines() if line.get_label() == "floor-trusted")
    assert list(floor.get_ydata()) == [0.0, 0.0]
    rates = sorted(set(table["poison rate"] * 100))
    assert list(floor.get_xdata()) == pytest.approx(rates)
    ignored = next(line for line in bottom.get_lines() if line.get_label() == "integrity-ignored")
    measured = table[(table["row"] == "integrity-ignored") & (table["k"] == 5)].sort_values("poison rate")
    assert list(ignored.get_ydata()) == pytest.approx(
        (measured["target nDCG@10 poisoned"] - measured["target nDCG@10 clean"]).tolist()
    )
    markers = {line.get_marker() for line in top.get_lines()}
    assert len(markers) == len(top.get_lines())  # a defence reads without its colour


def test_write_puts_the_table_the_guarantees_and_the_chart_in_the_folder(table, tmp_path):
    guarantees = pd.DataFrame({"row": ["floor-trusted"], "measured": [0.0]})
    paths = write(table, tmp_path / "out", k=5, guarantees=guarantees)
    assert [path.name for path in paths] == ["poison.csv", "guarantees.csv", "poison.png"]
    pd.testing.assert_frame_equal(pd.read_csv(paths[0]), table.reset_index(drop=True), check_dtype=False)
    assert chart(table, tmp_path / "again.png", k=1).read_bytes()[:4] == b"\x89PNG"
