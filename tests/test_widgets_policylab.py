"""memlab.widgets.policylab: a check run from the policy lab, its verdict as data and as HTML."""

from __future__ import annotations

import pytest

from memlab.errors import InvalidArgument
from memlab.policy import Policy
from memlab.widgets.policylab import PolicyLab, result_html, run_check, steps_table, verdict


def test_a_pass_is_a_green_banner_with_no_steps():
    result = run_check("strict", "write_down", trials=5)
    found = verdict(result)
    assert (found["verdict"], found["steps"], found["scenarios"]) == ("pass", None, 5)
    assert steps_table(result).empty
    assert result_html(result).count("#2e7d32") == 1


def test_a_leak_is_its_steps_and_what_was_observed():
    # Guards: policylab.verdict counting the scenarios tried as the steps (a leak then reported 30 steps long).
    result = run_check("existence-oracle", trials=50)
    found = verdict(result)
    assert found["verdict"] == "LEAK" and found["steps"] == len(result) == len(steps_table(result))
    assert found["summary"].startswith("noninterference leak under existence-oracle")
    assert steps_table(result)["note"].tolist().count("<- here") == 1
    assert "#c62828" in result_html(result) and "observed: <code>" in result_html(result)


def test_an_unknown_check_is_refused():
    with pytest.raises(InvalidArgument):
        run_check("strict", "no-such-check", trials=1)


def test_a_check_that_cannot_examine_the_policy_says_why():
    """Integrity noninterference needs a trusted floor, which global-stats' stores refuse: the lab says so instead of
    failing. Guards: ``run_check`` indexing ``run_all``'s results, which leave the pair out (a KeyError)."""
    with pytest.raises(InvalidArgument, match="cannot examine policy 'global-stats'"):
        run_check("global-stats", "integrity_noninterference", trials=1)
    lab = PolicyLab(["global-stats", "strict"])
    lab.check.value = "integrity_noninterference"
    lab.trials.value = 5
    lab.run_button.click()
    assert lab.last is None and "its stores refuse a trusted floor" in lab.output.value
    lab.policy.value = lab.policy.options[1][1]
    lab.run_button.click()
    assert lab.last is not None and not lab.last.leak


def test_the_lab_offers_a_notebooks_own_policy_and_says_what_it_models():
    class Mine(Policy):
        name = "mine"
        description = "reads <everything>"

        def readable(self, classification, taint):
            return True

    lab = PolicyLab([Mine(), "strict"])
    assert "reads &lt;everything&gt;" in lab.about.value
    lab.trials.value = 30
    lab.run_button.click()
    assert lab.last.leak and "LEAK" in lab.output.value
