"""The leak checkers: strict survives, every shipped variant is caught with a short, replayable counterexample."""

from pathlib import Path

import pandas as pd
import pytest

from memlab import Level, check, policies
from memlab.cli import main
from memlab.policies import COMPARTMENTS
from memlab.policy import Policy

ROOT = Path(__file__).resolve().parent.parent

# Which check catches which variant (shadow-after-match leaks nothing across levels: it breaks shadowing).
# The integrity checks catch the confidentiality variants that also break integrity: frozen-taint saves a lowered
# session's writes as trusted, existence-oracle answers for an untrusted version a trusted floor hides,
# write-down-delete lets an untrusted session delete a trusted version, newest-over-all-labels lets a newer
# untrusted version hide a trusted one. The integrity variants are tests/test_check_integrity.py's.
CAUGHT_BY = {
    "frozen-taint": {"noninterference", "write_down", "integrity_noninterference", "laundering"},
    "shadow-after-match": {"shadowing"},
    "global-stats": {"noninterference"},
    "existence-oracle": {"noninterference", "integrity_noninterference"},
    "write-down-delete": {"noninterference", "integrity_noninterference"},
    "newest-over-all-labels": {"noninterference", "shadowing", "integrity_noninterference"},
}


@pytest.mark.parametrize("seed", range(5))
def test_strict_survives_every_check(seed):
    for result in check.run_all("strict", trials=400, seed=seed, max_ops=10).values():
        assert not result.leak, str(result)
        assert result.trials == 400 and result.operations > 400


@pytest.mark.parametrize("policy", sorted(CAUGHT_BY))
def test_every_shipped_variant_is_caught_by_its_checks(policy):
    results = check.run_all(policy)
    assert {name for name, result in results.items() if result.leak} == CAUGHT_BY[policy]
    for result in results.values():
        if result.leak:
            assert 1 <= len(result) <= 4
            assert result.replay() == result.replay() is not None  # deterministic
            replayed = result.replay()
            assert (replayed.observed, replayed.expected, replayed.step) == (
                result.observed,
                result.expected,
                result.step,
            )


def test_a_counterexample_is_one_minimal():
    found = check.noninterference("existence-oracle")
    assert [step.tool for step in found.steps] == ["memory_save", "memory_get"]
    assert [step.high for step in found.steps] == [True, False]
    for dropped in range(len(found.steps)):
        fewer = found.steps[:dropped] + found.steps[dropped + 1 :]
        assert check.Counterexample(**{**found.__dict__, "steps": fewer}).replay() is None


def test_an_inline_variant_is_caught():
    class PublicReadsInternal(Policy):
        name = "public-reads-internal"

        def readable(self, classification, taint):
            return classification <= max(taint, Level.INTERNAL)

    assert check.noninterference(PublicReadsInternal()).leak
    laundering = check.write_down(PublicReadsInternal())
    assert laundering.leak and laundering.policy.name == "public-reads-internal"


def test_counterexamples_render_as_text_and_html():
    found = check.noninterference("frozen-taint")
    text, page = str(found), found._repr_html_()
    assert text.startswith("noninterference LEAK under policy frozen-taint")
    assert "second only" in text and "<- here" in text
    assert "<table>" in page and "frozen-taint" in page
    assert [row["#"] for row in found.rows()] == [str(n) for n in range(len(found))]


def test_no_leak_says_what_it_covered():
    result = check.shadowing("strict", trials=50)
    assert str(result).startswith("shadowing: no leak under policy strict in 50 random scenarios")


def test_table_over_policies():
    frame = check.table(["strict", "global-stats"], trials=100)
    assert list(frame.columns) == ["policy", "check", "verdict", "steps", "scenarios", "seconds"]
    verdicts = {(row.policy, row.check): row.verdict for row in frame.itertuples()}
    assert verdicts[("strict", "noninterference")] == "pass"
    assert verdicts[("global-stats", "noninterference")] == "LEAK"


def test_bad_options_are_clear_errors():
    with pytest.raises(Exception, match="unknown check 'leaks'"):
        check.run_all("strict", checks=["leaks"])
    with pytest.raises(Exception, match="at least two levels"):
        check.noninterference("strict", levels=["PUBLIC"])


def test_cli_exit_status(capsys):
    assert main(["check", "--policy", "strict", "--trials", "50"]) == 0
    assert main(["check", "--policy", "write-down-delete", "--check", "noninterference"]) == 1
    assert "noninterference LEAK under policy write-down-delete" in capsys.readouterr().out
    assert main(["check", "--policy", "no-such-policy"]) == 2
    assert "unknown policy 'no-such-policy'" in capsys.readouterr().err


def test_cli_saves_the_table_it_prints(tmp_path, capsys):
    path = tmp_path / "check.json"
    assert main(["check", "--trials", "30", "--seed", "3", "--save", str(path)]) == 0
    printed = capsys.readouterr().out
    saved = check.load_table(path)
    assert check.table_text(saved) + "\n" == printed
    assert saved.attrs == {"checks": list(check.CHECKS), "trials": 30, "seed": 3, "max_ops": 8}
    assert set(saved["policy"]) == set(policies.names())  # every shipped policy, the integrity variants too
    assert main(["check", "--policy", "strict", "--save", str(tmp_path / "one.json")]) == 2  # one policy: no table
    assert "--save writes the table over all policies" in capsys.readouterr().err
    assert not (tmp_path / "one.json").exists()


def test_the_committed_check_results_are_what_memlab_check_finds_today():
    """``data/results/check.json`` feeds the policy lab's page (``tools/tables.py``): a change to a policy or a
    checker that changes a verdict, a counterexample's length or the scenarios tried fails here until the results
    are saved again with ``memlab check --save data/results/check.json``."""
    committed = check.load_table(ROOT / "data" / "results" / "check.json")
    fresh = check.table(**committed.attrs)
    assert fresh.attrs == committed.attrs
    pd.testing.assert_frame_equal(fresh.drop(columns="seconds"), committed.drop(columns="seconds"))


class _StrictOverLabels(Policy):
    name = "strict-over-labels"
    label_alphabet = COMPARTMENTS


@pytest.mark.parametrize("policy", [_StrictOverLabels(), "refuse-ambiguous"], ids=["newest", "refuse"])
def test_the_safe_shadowing_rules_pass_noninterference_over_labels(policy):
    """The random noninterference check over the compartments' labels finds nothing under newest and refuse (and
    finds newest-over-all-labels' leak, above). Guards: the check ignoring a policy's label_alphabet."""
    result = check.noninterference(policy, trials=300)
    assert not result.leak, str(result)
    leak = check.noninterference("newest-over-all-labels")
    assert leak.leak and any(":" in str(actor.taint) for actor in leak.actors)


def test_the_random_shadowing_search_draws_labels_and_finds_newest_over_all_labels():
    """The random shadowing and write-down searches draw a policy's label alphabet, as noninterference does: the
    shadowing search finds newest-over-all-labels' shadowing leak (a newer version in one compartment hides an
    older one at the join), with sessions at labels; the safe rules pass both checks over the same labels.
    Guards: ``Check.over_labels`` False for write-down and shadowing (the search then draws levels only, where
    the rule is never used, and finds nothing)."""
    leak = check.shadowing("newest-over-all-labels", trials=300)
    assert leak.leak, str(leak)
    assert any(":" in str(actor.taint) for actor in leak.actors)
    assert len(leak.steps) <= 3
    for policy in (_StrictOverLabels(), "refuse-ambiguous"):
        for run in (check.shadowing, check.write_down):
            result = run(policy, trials=300)
            assert not result.leak, str(result)
