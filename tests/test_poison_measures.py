"""The poisoning lab's measures on rankings written by hand, each figure worked out in the comments."""

import math

import pytest

from memlab import InvalidArgument
from memlab.eval.measures import paired_test
from memlab.poison import benign_reads, injection_success, retrieval_success, utility

# Three target questions. q1: the poison first, then its judged d1. q2: the judged d2 first, a poison third.
# q3: only poisons. q4 (not a target) keeps its judged d4 first.
POISONS = {"p1", "p2", "p3a", "p3b"}
QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}, "q4": {"d4": 1}}
CLEAN = {"q1": ["d1", "d9"], "q2": ["d2", "d9"], "q3": ["d3"], "q4": ["d4"]}
POISONED = {"q1": ["p1", "d1"], "q2": ["d2", "d9", "p2"], "q3": ["p3a", "p3b"], "q4": ["d4"]}
TARGETS = ["q1", "q2", "q3"]


def test_isr_is_the_share_of_writes_read_as_the_keys_value():
    assert injection_success([True, False, False, False]) == 0.25
    assert math.isnan(injection_success([]))


@pytest.mark.parametrize(
    ("k", "any_", "all_"),
    [
        (1, 2 / 3, 2 / 3),  # q1 and q3 have a poison first
        (2, 2 / 3, 1 / 3),  # q1's top 2 is p1, d1: not all poisoned; q3's is
        (3, 1.0, 1 / 3),  # q2's third is p2
    ],
)
def test_asr_r_at_k_any_and_all(k, any_, all_):
    assert retrieval_success(POISONED, TARGETS, POISONS, k) == pytest.approx({"any": any_, "all": all_})


def test_an_empty_top_k_is_neither_any_nor_all_poisoned():
    assert retrieval_success({"q": []}, ["q"], POISONS, 1) == {"any": 0.0, "all": 0.0}


def test_ud_is_s_and_ndcg_at_10_clean_against_poisoned_with_the_relevance_labs_paired_test():
    found = utility(QRELS, CLEAN, POISONED, TARGETS)
    # Clean: every judged document first. Poisoned: q1's at rank 2 (nDCG 1 / log2 3), q2's first, q3's gone.
    assert found["S@10 clean"] == 1.0 and found["S@10 poisoned"] == pytest.approx(2 / 3)
    assert found["nDCG@10 clean"] == 1.0
    assert found["nDCG@10 poisoned"] == pytest.approx((1 / math.log2(3) + 1 + 0) / 3)
    # the p-values are the relevance lab's randomization test on the per-query values, poisoned against clean
    assert found["p S@10"] == paired_test([1.0, 1.0, 0.0], [1.0, 1.0, 1.0])
    assert found["p nDCG@10"] == paired_test([1 / math.log2(3), 1.0, 0.0], [1.0, 1.0, 1.0])
    everyone = utility(QRELS, CLEAN, POISONED, [*TARGETS, "q4"])
    assert everyone["S@10 poisoned"] == pytest.approx(3 / 4)


def test_availability_of_reads_is_the_share_of_clean_benign_hits_still_returned():
    # clean benign hits in the top 2: q1 d1 d9, q2 d2 d9, q3 d3 (5); still there: d1, d2, d9 (q2) (3)
    assert benign_reads(CLEAN, POISONED, TARGETS, {"d1", "d2", "d3", "d9"}, depth=2) == pytest.approx(3 / 5)


@pytest.mark.parametrize("k", [0, -1, 1.0, None])
def test_k_must_be_a_positive_integer(k):
    with pytest.raises(InvalidArgument, match="k must be a positive integer"):
        retrieval_success(POISONED, TARGETS, POISONS, k)


def test_measures_need_questions():
    with pytest.raises(InvalidArgument, match="at least one target question"):
        retrieval_success(POISONED, [], POISONS, 1)
    with pytest.raises(InvalidArgument, match="at least one question"):
        utility(QRELS, CLEAN, POISONED, [])
