"""memlab.check.checks: the three checks' registry, their judges on known scenarios, and the effective version the
shadowing check expects by its own record.

The checks' verdicts over every shipped policy are tests/test_check.py's; here each judge meets one scenario.
"""

from __future__ import annotations

import pytest

from memlab.check.checks import CHECKS, REFUSED_AS_AMBIGUOUS, effective_version
from memlab.check.results import Actor, Step
from memlab.errors import InvalidArgument
from memlab.labels import Label
from memlab.policies import resolve
from memlab.policy import Policy
from memlab.records import Memory

L = Label.parse


def test_the_five_checks_are_registered():
    assert list(CHECKS) == ["noninterference", "write_down", "shadowing", "integrity_noninterference", "laundering"]
    with pytest.raises(InvalidArgument, match="noninterference"):
        CHECKS.get("no-such-check")


def version(key: str, label: str, number: int = 1) -> Memory:
    return Memory(key, f"{key} at {label}", (), L(label), number, "t", "s")


def current(*versions: tuple[Memory, bool]) -> dict:
    return {(memory.key, memory.label): (memory, alive, order) for order, (memory, alive) in enumerate(versions)}


@pytest.mark.parametrize(
    ("shadowing", "record", "taint", "expected"),
    [
        ("newest", current((version("k", "PUBLIC"), True), (version("k", "CONFIDENTIAL"), True)), "INTERNAL", "PUBLIC"),
        ("newest", current((version("k", "PUBLIC"), True), (version("k", "INTERNAL"), True)), "RESTRICTED", "INTERNAL"),
        ("newest", current((version("k", "INTERNAL"), False), (version("k", "PUBLIC"), True)), "INTERNAL", "PUBLIC"),
        ("newest", current((version("k", "CONFIDENTIAL"), True)), "PUBLIC", None),
        ("newest", current((version("other", "PUBLIC"), True)), "PUBLIC", None),
        (
            "newest",
            current((version("k", "INTERNAL:hr"), True), (version("k", "INTERNAL:legal"), True)),
            "INTERNAL:hr,legal",
            "INTERNAL:legal",
        ),
        (
            "refuse",
            current((version("k", "INTERNAL:hr"), True), (version("k", "INTERNAL:legal"), True)),
            "INTERNAL:hr,legal",
            REFUSED_AS_AMBIGUOUS,
        ),
    ],
)
def test_effective_version_by_the_checks_own_record(shadowing, record, taint, expected):
    policy = Policy()
    policy.shadowing = shadowing
    found = effective_version(policy, record, L(taint), "k")
    assert (found.label == L(expected)) if isinstance(found, Memory) else found == expected


LEAKS = {
    # a get of a key saved above the observer answers differently from a missing key
    "existence-oracle": (
        "noninterference",
        Label.parse("PUBLIC"),
        (Actor("low1", "PUBLIC"), Actor("high", "CONFIDENTIAL", "CONFIDENTIAL")),
        (
            Step("high", "memory_save", (("key", "k1"), ("content", "apple")), high=True),
            Step("low1", "memory_get", (("key", "k1"),)),
        ),
    ),
    # a save after an escalation is written at the session's starting level: a copy launders what it read
    "frozen-taint": (
        "write_down",
        None,
        (Actor("s1", "PUBLIC"), Actor("s2", "CONFIDENTIAL")),
        (
            Step("s2", "memory_save", (("key", "k1"), ("content", "apple"))),
            Step("s1", "escalate", (("level", "CONFIDENTIAL"),)),
            Step("s1", "copy", (("from", "k1"), ("to", "k2"))),
        ),
    ),
}


@pytest.mark.parametrize("policy", LEAKS)
def test_a_judge_finds_the_known_leak_and_not_under_strict(policy):
    # Guards: the noninterference judge comparing the second world with itself (no leak is ever found).
    check, level, actors, steps = LEAKS[policy]
    found = CHECKS.get(check).judge(resolve(policy), level, actors, steps)
    assert found is not None and found.check == check and found.replay() is not None
    assert CHECKS.get(check).judge(resolve("strict"), level, actors, steps) is None


def test_a_random_check_needs_two_levels():
    with pytest.raises(InvalidArgument, match="at least two levels"):
        CHECKS.get("shadowing").run("strict", trials=1, seed=0, levels=["PUBLIC"], max_ops=2)
