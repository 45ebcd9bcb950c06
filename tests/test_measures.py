"""IR measures: values checked by hand, computed by ir-measures, paired tests, bootstrap CIs, system comparison."""

import math

import ir_measures
import numpy as np
import pandas as pd
import pytest

from memlab import InvalidArgument
from memlab.eval.measures import (
    LABELS,
    MEASURES,
    compare,
    confidence_interval,
    paired_test,
    per_query,
    summarize,
)

# q1 ranks d3 (not relevant), d1 (grade 2), d9 (unjudged), d2 (grade 1); q2 finds its one document first;
# q3 retrieves nothing; "extra" is not judged and must be ignored.
QRELS = {"q1": {"d1": 2, "d2": 1, "d3": 0}, "q2": {"d4": 1}, "q3": {"d5": 1}}
RUN = {
    "q1": {"d3": 3.0, "d1": 2.0, "d9": 1.5, "d2": 1.0},
    "q2": {"d4": 5.0, "d8": 1.0},
    "extra": {"d1": 1.0},
}


def hand_checked_q1() -> dict[str, float]:
    # trec_eval's nDCG: gain = grade, discount = log2(rank + 1), ideal order d1 (2) then d2 (1).
    dcg = 2 / math.log2(3) + 1 / math.log2(5)
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    return {
        "nDCG@10": dcg / ideal,
        "R@1": 0.0,
        "R@5": 1.0,
        "R@10": 1.0,
        "MAP": (1 / 2 + 2 / 4) / 2,  # relevant at ranks 2 and 4
        "MRR": 1 / 2,
        "S@1": 0.0,
        "S@5": 1.0,
        "S@10": 1.0,
    }


def test_measures_and_labels_in_order():
    assert [str(measure) for measure in MEASURES] == list(LABELS)
    assert list(LABELS.values()) == ["nDCG@10", "R@1", "R@5", "R@10", "MAP", "MRR", "S@1", "S@5", "S@10"]


def test_per_query_matches_hand_computation():
    frame = per_query(QRELS, RUN)
    assert frame.index.name == "query"
    assert list(frame.index) == ["q1", "q2", "q3"]
    assert list(frame.columns) == list(LABELS.values())
    assert frame.loc["q1"].to_dict() == pytest.approx(hand_checked_q1())
    assert frame.loc["q2"].to_dict() == pytest.approx(dict.fromkeys(LABELS.values(), 1.0))


def test_queries_without_results_count_zero():
    frame = per_query(QRELS, RUN)
    assert frame.loc["q3"].tolist() == [0.0] * len(LABELS)
    assert per_query(QRELS, {}).to_numpy().sum() == 0.0
    assert summarize(frame)["S@10"] == pytest.approx(2 / 3)


def test_summarize_is_the_column_mean():
    frame = per_query(QRELS, RUN)
    expected = {label: (hand_checked_q1()[label] + 1.0 + 0.0) / 3 for label in LABELS.values()}
    assert summarize(frame).to_dict() == pytest.approx(expected)


def test_ties_break_by_document_id_descending():
    # trec_eval's rule (score desc, then doc id desc) puts "b" first; a stable Python sort would put "a" first.
    frame = per_query({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}})
    assert frame.loc["q", "MRR"] == 0.5
    assert frame.loc["q", "S@1"] == 0.0


def test_ir_measures_computes_the_values(monkeypatch):
    calls = []
    original = ir_measures.pytrec_eval.iter_calc

    def spy(measures, qrels, run):
        calls.append(list(measures))
        return original(measures, qrels, run)

    monkeypatch.setattr(ir_measures.pytrec_eval, "iter_calc", spy)
    per_query(QRELS, RUN)
    assert calls == [list(MEASURES)]


def test_bad_grades_are_invalid_argument():
    with pytest.raises(InvalidArgument):
        per_query({"q": {"d": "relevant"}}, {"q": {"d": 1.0}})


@pytest.mark.parametrize("method", ["randomization", "t"])
def test_identical_systems_have_p_one(method):
    values = [0.0, 1.0, 0.5, 0.25]
    assert paired_test(values, values, method=method) == 1.0


@pytest.mark.parametrize("method", ["randomization", "t"])
def test_clearly_better_system_is_significant(method):
    rng = np.random.default_rng(1)
    worse = rng.random(50)
    better = worse + 0.3 + rng.normal(0, 0.1, 50)
    assert paired_test(better, worse, method=method) < 0.01
    assert paired_test(worse, better, method=method) < 0.01


def test_randomization_p_is_never_zero():
    assert paired_test([1.0] * 30, [0.0] * 30, samples=999) == pytest.approx(1 / 1000)


def test_t_and_randomization_roughly_agree():
    rng = np.random.default_rng(1)
    a = rng.random(40)
    b = a + 0.08 + rng.normal(0, 0.25, 40)
    p_t, p_randomization = paired_test(a, b, method="t"), paired_test(a, b)
    assert 0.05 < p_t < 0.5
    assert p_randomization == pytest.approx(p_t, abs=0.02)


def test_randomization_is_seeded():
    rng = np.random.default_rng(2)
    a, b = rng.random(30), rng.random(30)
    assert paired_test(a, b, seed=7) == paired_test(a, b, seed=7)


@pytest.mark.parametrize(
    "a, b, kwargs",
    [
        ([1.0], [1.0], {"method": "wilcoxon"}),
        ([1.0, 2.0], [1.0], {}),
        ([], [], {}),
        ([1.0], [0.0], {"samples": 0}),
    ],
)
def test_paired_test_rejects_bad_arguments(a, b, kwargs):
    with pytest.raises(InvalidArgument):
        paired_test(a, b, **kwargs)


def test_confidence_interval_contains_the_mean_and_narrows_with_more_data():
    rng = np.random.default_rng(3)
    few, many = rng.random(20), rng.random(2_000)
    low_few, high_few = confidence_interval(few)
    low_many, high_many = confidence_interval(many)
    assert low_few <= few.mean() <= high_few
    assert low_many <= many.mean() <= high_many
    assert high_many - low_many < (high_few - low_few) / 4
    assert confidence_interval(few, seed=5) == confidence_interval(few, seed=5)


def test_confidence_interval_widens_with_level():
    values = np.random.default_rng(4).random(50)
    low_90, high_90 = confidence_interval(values, level=0.90)
    low_99, high_99 = confidence_interval(values, level=0.99)
    assert low_99 <= low_90 and high_90 <= high_99


@pytest.mark.parametrize("values, kwargs", [([], {}), ([1.0], {"level": 1.0}), ([1.0], {"samples": 0})])
def test_confidence_interval_rejects_bad_arguments(values, kwargs):
    with pytest.raises(InvalidArgument):
        confidence_interval(values, **kwargs)


def systems() -> dict[str, pd.DataFrame]:
    queries = pd.Index([f"q{i}" for i in range(40)], name="query")
    base = np.array([1.0, 0.0] * 20)
    better = np.ones(40)
    better[:2] = [0.0, 0.0]  # one loss (q0) and one tie (q1) against the baseline
    return {
        "plain": pd.DataFrame({"S@10": base, "MRR": base}, index=queries),
        "stemmed": pd.DataFrame({"S@10": better, "MRR": better}, index=queries),
        "same": pd.DataFrame({"S@10": base, "MRR": base}, index=queries).iloc[::-1],  # rows in another order
    }


def test_compare_columns_and_counts():
    table = compare(systems(), "plain")
    assert table.index.name == "system"
    assert list(table.index) == ["plain", "stemmed", "same"]
    assert list(table.columns) == ["mean", "ci_low", "ci_high", "p_value", "wins", "losses", "ties", "sig"]
    stemmed = table.loc["stemmed"]
    assert stemmed["mean"] == pytest.approx(38 / 40)
    assert (stemmed["wins"], stemmed["losses"], stemmed["ties"]) == (19, 1, 20)
    assert stemmed["p_value"] < 0.01 and stemmed["sig"] == "**"
    assert stemmed["ci_low"] <= stemmed["mean"] <= stemmed["ci_high"]


def test_compare_baseline_row_and_equal_system():
    table = compare(systems(), "plain", measure="MRR", method="t")
    assert math.isnan(table.loc["plain", "p_value"])
    assert table.loc["plain", "sig"] == ""
    assert table.loc["plain", ["wins", "losses", "ties"]].tolist() == [0, 0, 40]
    assert table.loc["same", "p_value"] == 1.0
    assert table.loc["same", "ties"] == 40
    assert table.loc["same", "sig"] == ""


@pytest.mark.parametrize(
    "baseline, kwargs",
    [("missing", {}), ("plain", {"measure": "P@5"}), ("plain", {"method": "sign"})],
)
def test_compare_rejects_bad_arguments(baseline, kwargs):
    with pytest.raises(InvalidArgument):
        compare(systems(), baseline, **kwargs)


def test_compare_rejects_different_queries():
    frames = systems()
    frames["stemmed"] = frames["stemmed"].iloc[1:]
    with pytest.raises(InvalidArgument):
        compare(frames, "plain")
