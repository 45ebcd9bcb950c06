"""The random search every check shares (memlab.check.base.Check.run): it samples, judges, shrinks the first leak
and refuses a policy the check cannot examine before sampling anything."""

import pytest

from memlab.check.base import Check
from memlab.check.results import Actor, Step
from memlab.errors import InvalidArgument
from memlab.policies import resolve


class _SavesOfK2(Check):
    """A toy check: a scenario leaks when it holds a step with key k2 (so shrinking keeps exactly that step)."""

    name = "toy"
    explanation = "a step named k2"
    sampled = 0

    def sample(self, rng, levels, length):
        self.sampled += 1
        keys = [rng.choice(("k1", "k2")) for _ in range(length)]
        return None, (Actor("s", levels[0]),), tuple(Step("s", "memory_get", (("key", key),)) for key in keys)

    def judge(self, policy, level, actors, steps):
        hits = [number for number, step in enumerate(steps) if ("key", "k2") in step.arguments]
        return self.leak(policy, level, actors, steps, hits[0], "k2", "no k2") if hits else None


def test_the_first_leak_is_shrunk_to_the_one_step_that_shows_it():
    found = _SavesOfK2().run("strict", trials=50, seed=0, levels=["PUBLIC", "INTERNAL"], max_ops=6)
    assert found.leak and [step.arguments for step in found.steps] == [(("key", "k2"),)]
    assert found.replay().observed == "k2"


class _Refusing(_SavesOfK2):
    def inapplicable(self, policy):
        return "it keeps no views per reader" if policy.name == "global-stats" else ""


def test_a_policy_the_check_cannot_examine_is_refused_before_anything_is_sampled():
    """Guards: ``Check.run`` sampling before asking ``inapplicable`` (the integrity checks need trusted floors)."""
    refusing = _Refusing()
    with pytest.raises(InvalidArgument, match="check toy cannot examine policy 'global-stats': it keeps no views"):
        refusing.run("global-stats", trials=5, seed=0, levels=["PUBLIC", "INTERNAL"], max_ops=2)
    assert refusing.sampled == 0
    assert refusing.run(resolve("strict"), trials=5, seed=0, levels=["PUBLIC", "INTERNAL"], max_ops=2).leak in (
        True,
        False,
    )
    assert refusing.sampled > 0


def test_a_check_needs_two_levels():
    with pytest.raises(InvalidArgument, match="at least two levels"):
        _SavesOfK2().run("strict", trials=1, seed=0, levels=["PUBLIC"], max_ops=1)
