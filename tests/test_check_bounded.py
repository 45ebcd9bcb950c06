"""memlab.check.bounded: exhaustive checking to a depth — a bounded proof or the shortest counterexample — its
estimate and its budget.

Every shipped policy's verdicts, and the reductions against brute force, are tests/test_exhaustive.py's.
"""

from __future__ import annotations

import json

import pytest

from memlab.check import bounded
from memlab.check.bounded import Alphabet, BudgetExceeded, Estimate, estimate, exhaustive, keeps_compartments
from memlab.errors import InvalidArgument

SMALL = Alphabet(keys=("k1",), contents=("apple",), tag=None, levels=("PUBLIC", "INTERNAL"))


def test_strict_has_a_bounded_proof_and_says_what_it_covered():
    result = exhaustive("strict", check="noninterference", depth=2, alphabet=SMALL, budget=None)
    assert not result.leak and result.traces == result.traces_after <= result.traces_before
    assert result.describe(seconds=False).startswith(
        "bounded proof: noninterference holds under policy strict for every trace of at most 2 steps over keys k1"
    )
    assert json.loads(json.dumps(result.as_dict()))["verdict"] == "bounded proof"


def test_a_leak_is_the_shortest_counterexample():
    # Guards: bounded.exhaustive enumerating the deepest traces first (a longer counterexample returned).
    result = exhaustive("existence-oracle", check="noninterference", depth=3, alphabet=SMALL, budget=None)
    assert result.leak and len(result.counterexample) == 2
    assert result.as_dict()["counterexample"]["steps"][0].endswith("[second world]")
    assert result.counterexample.replay() is not None


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"depth": 0}, "at least 1"),
        ({"depth": True}, "at least 1"),
        ({"check": "nope"}, "noninterference"),
        ({"policy": "global-stats", "alphabet": Alphabet.compartments()}, "does not keep compartments"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(arguments, message):
    arguments = {"policy": "strict", "depth": 1, **arguments}
    with pytest.raises(InvalidArgument, match=message):
        exhaustive(arguments.pop("policy"), budget=None, **arguments)


def test_a_run_over_its_budget_is_refused_saying_how_long(monkeypatch):
    monkeypatch.setattr(bounded, "estimate", lambda *a, **k: Estimate(traces=10_000, seconds_per_trace=0.5))
    with pytest.raises(BudgetExceeded, match=r"about 83 min \(noninterference: 10,000 traces at 500\.0 ms"):
        exhaustive("strict", depth=2, alphabet=SMALL, budget=60)


def test_the_estimate_counts_the_traces_the_run_judges():
    guess = estimate("strict", check="shadowing", depth=2, alphabet=SMALL, sample=2)
    run = exhaustive("strict", check="shadowing", depth=2, alphabet=SMALL, budget=None)
    assert guess.traces == run.traces_after and guess.seconds_per_trace > 0
    assert guess.seconds == guess.traces * guess.seconds_per_trace


@pytest.mark.parametrize(
    ("policy", "keeps"), [("strict", True), ("global-stats", False), ("shadow-after-match", False)]
)
def test_keeps_compartments(policy, keeps):
    assert keeps_compartments(policy) is keeps
