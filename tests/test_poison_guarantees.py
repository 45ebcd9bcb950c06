"""The poisoning lab's exact zeros and the policy lab's bounded proofs they rest on (memlab.poison.guarantees)."""

from types import SimpleNamespace

import pytest

from memlab.errors import InternalError
from memlab.poison import run
from memlab.poison.guarantees import GUARANTEES, checked, verdicts
from tests.poison_toy import toy


@pytest.fixture(scope="module")
def proofs():
    return verdicts(depth=1)  # the same checks as the CLI's depth 2, in a fraction of a second


@pytest.fixture(scope="module")
def table():
    return run(toy(), rate=0.5, k=(1, 5), seed=0)


def test_every_zero_the_rules_promise_is_measured_zero_and_proved(table, proofs):
    found = checked(table, proofs)
    assert not any(proof.leak for proof in proofs.values())
    assert (found["measured"] == 0).all()
    assert set(found["column"]) == {guarantee.column for guarantee in GUARANTEES}
    floor = found[found["row"] == "floor-trusted"].set_index("column")
    assert floor.loc["ASR-r@k", "check"] == "integrity_noninterference"
    assert floor.loc["ASR-r@k", "policy lab"].startswith("bounded proof")
    assert "integrity-ignored" not in set(found["row"])  # its poisons are trusted: nothing is promised there


def test_a_proved_zero_measured_otherwise_is_refused_as_a_contradiction(table, proofs):
    """The attack a broken store would be: a floor-trusted victim that ranks a poison first."""
    broken = table.copy()
    broken.loc[broken["row"] == "floor-trusted", "ASR-r@k"] = 0.5
    with pytest.raises(InternalError, match="floor-trusted: ASR-r@k measured 0.5 where integrity_noninterference"):
        checked(broken, proofs)


def test_a_check_with_a_counterexample_promises_nothing(table, proofs):
    """Under a policy whose check leaks (e.g. untrusted-shadows' integrity noninterference), a nonzero is reported
    beside the counterexample, not refused."""
    leak = SimpleNamespace(leak=True, depth=3, counterexample=SimpleNamespace(steps=(1, 2, 3)))
    broken = table.copy()
    broken.loc[broken["row"] == "labels-only", "ISR overwrite"] = 1.0
    found = checked(broken, {**proofs, "integrity_noninterference": leak}).set_index(["row", "column"])
    assert found.loc[("labels-only", "ISR overwrite"), "measured"] == 1.0
    assert found.loc[("labels-only", "ISR overwrite"), "policy lab"] == "LEAK in 3 steps"


def test_only_rows_present_are_listed(table, proofs):
    found = checked(table[table["row"] == "labels-only"], proofs)
    assert set(found["row"]) == {"labels-only"}
    assert set(found["column"]) == {"ISR overwrite", "laundered saves"}


def test_the_variant_rows_break_the_zeros_where_the_policy_lab_found_the_counterexample():
    """no-trust-first (untrusted-shadows) and reads-never-lower measure what their policy-lab counterexamples show
    (data/results/check.json, the policy lab's committed table): the zeros are the rules', not the collection's."""
    from memlab import check

    committed = check.load_table(check_path()).set_index(["policy", "check"])["verdict"]
    assert committed[("untrusted-shadows", "integrity_noninterference")] == "LEAK"
    assert committed[("reads-never-lower", "laundering")] == "LEAK"
    variants = run(toy(), rate=0.5, k=(1,), seed=0, rows=["no-trust-first", "reads-never-lower"]).set_index("row")
    assert variants.loc["no-trust-first", "ISR overwrite"] == 1.0  # the overwrite replaces the trusted value
    assert variants.loc["reads-never-lower", "laundered saves"] == 2  # both poisoned answers saved trusted


def check_path():
    from pathlib import Path

    return Path(__file__).resolve().parents[1] / "data" / "results" / "check.json"
