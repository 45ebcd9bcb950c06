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


def test_the_page_table_is_one_line_per_ranking_and_defence_at_one_rate(table):
    from memlab.poison.report import at_rate

    found = at_rate(table, 0.5)
    assert list(found.index.names) == ["ranking", "defence"] and len(found) == 5
    assert [column for column in found.columns if column.startswith("ASR")] == ["ASR-r@1", "ASR-r@5"]
    measured = table[(table["rate"] == 0.5) & (table["k"] == 5)].set_index("row")["ASR-r@k"]
    assert found.xs("lexical")["ASR-r@5"].to_dict() == measured.to_dict()
    assert found.loc[("lexical", "floor-trusted"), ["ISR", "ASR-r@1", "laundered"]].tolist() == [0, 0, 0]
    assert at_rate(table).equals(at_rate(table, 0.5))  # the median of two rates is the higher
