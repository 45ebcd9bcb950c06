"""memlab.check.prefixes: traces that begin alike share their prefix's run, on stores restored from its images;
each trace's verdict must be the one its check gives it from empty stores."""

from __future__ import annotations

import pytest

from memlab.check.checks import CHECKS
from memlab.check.configurations import GROUPS, Alphabet, configurations
from memlab.check.prefixes import verdicts, walk
from memlab.check.scenarios import act, open_world
from memlab.policies import resolve

SMALL = Alphabet(keys=("k1",), contents=("apple", "berry"), tag=None, levels=("PUBLIC", "INTERNAL"))


@pytest.mark.parametrize(
    ("policy", "check", "leaks"),
    [
        ("strict", "noninterference", False),
        ("existence-oracle", "noninterference", True),
        ("frozen-taint", "write_down", False),  # its laundering takes three steps: a save, an escalation, a copy
        ("strict", "shadowing", False),
    ],
)
def test_every_shared_prefix_verdict_is_the_judges_from_empty_stores(policy, check, leaks):
    policy = resolve(policy)
    judge = CHECKS.get(check).judge
    found = 0
    for configuration in configurations(check, SMALL)[:2]:
        for steps, leaked in verdicts(policy, check, configuration, GROUPS, 2):
            assert leaked == (judge(policy, configuration.level, configuration.actors, steps) is not None), steps
            found += leaked
    assert (found > 0) is leaks


def contents(store) -> list[tuple]:
    return sorted(map(tuple, store.versions()[["key", "classification", "version", "content"]].values.tolist()))


def test_each_trace_leaves_the_store_its_steps_make_from_empty():
    # Guards: prefixes._Slot.hold skipping the restore (a sibling trace's steps then stay in the next one's store).
    policy = resolve("strict")
    for configuration in configurations("shadowing", SMALL)[:2]:
        for steps, branch in walk(policy, "shadowing", configuration, GROUPS, 2):
            fresh = open_world(policy, configuration.actors, steps, with_high=True)
            for number, step in enumerate(steps):
                act(fresh.sessions[step.actor], step, number)
            assert contents(branch.slots[0].world.store) == contents(fresh.store), steps
            fresh.store.close()


def test_a_walk_left_early_closes_its_stores():
    configuration = configurations("shadowing", SMALL)[0]
    walked = walk(resolve("strict"), "shadowing", configuration, GROUPS, 2)
    steps, branch = next(walked)
    assert steps and branch.leak is None
    walked.close()  # the generator's finally closes every world's store
