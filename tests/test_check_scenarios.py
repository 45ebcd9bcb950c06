"""memlab.check.scenarios: worlds forked from a template, steps acted out, random steps, shrinking."""

from __future__ import annotations

import random

import pytest

from memlab.check.results import Actor, Step
from memlab.check.scenarios import (
    KEYS,
    TAGS,
    WORDS,
    act,
    drawn,
    is_read,
    memories_of,
    observe,
    open_world,
    random_arguments,
    random_step,
    shrink,
    writes,
)
from memlab.policy import Policy


@pytest.mark.parametrize(
    ("steps", "needed", "kept"),
    [
        ((1, 2, 3, 4), {3}, (3,)),
        ((1, 2, 3, 4), {1, 4}, (1, 4)),
        ((5, 5, 5), {5}, (5,)),
        ((1, 2), {1, 2}, (1, 2)),
    ],
)
def test_shrink_drops_every_step_the_leak_does_not_need(steps, needed, kept):
    # Guards: scenarios.shrink stopping after its first pass (a step that can go only after another stays).
    assert shrink(steps, lambda candidate: needed <= set(candidate)) == kept


def test_shrink_keeps_at_least_one_step():
    assert shrink((1, 2), lambda candidate: True) in {(1,), (2,)}


def test_the_tools_drawn_are_the_tables_and_writes_change_memory():
    assert set(drawn()) == {"memory_save", "memory_get", "memory_search", "memory_list", "memory_delete"}
    assert drawn().count("memory_save") == 2
    assert set(writes()) == {"memory_save", "memory_delete"}
    assert [is_read(tool) for tool in ("memory_get", "memory_search", "memory_save", "copy", "escalate")] == [
        True,
        True,
        False,
        False,
        False,
    ]


@pytest.mark.parametrize("tool", ["memory_save", "memory_search", "memory_list", "memory_get", "copy"])
def test_random_arguments_come_from_the_small_alphabet_and_the_seed(tool):
    arguments = dict(random_arguments(random.Random(7), tool))
    assert arguments == dict(random_arguments(random.Random(7), tool))
    assert arguments.get("key", KEYS[0]) in KEYS and arguments.get("tag") in (None, *TAGS)
    assert set(arguments.get("content", WORDS[0]).split()) <= set(WORDS)
    assert "classification" not in arguments
    step = random_step(random.Random(1), "s1", [tool], high=True)
    assert (step.actor, step.tool, step.high) == ("s1", tool, True)


def test_act_makes_content_unique_to_its_step_and_errors_observations():
    world = open_world(Policy(), [Actor("s", "PUBLIC")], [Step("s", "memory_get", ())], with_high=True)
    session = world.sessions["s"]
    saved = act(session, Step("s", "memory_save", (("key", "k1"), ("content", "apple"))), 3)
    assert saved.content == "apple #3"
    copied = act(session, Step("s", "copy", (("from", "k1"), ("to", "k2"))), 4)
    assert (copied.key, copied.content) == ("k2", "apple #3")
    assert act(session, Step("s", "copy", (("from", "none"), ("to", "k2"))), 5) is None
    assert act(session, Step("s", "escalate", (("level", "SECRET"),)), 6)[0:2] == ("error", "invalid_argument")
    assert memories_of(act(session, Step("s", "memory_search", (("query", "apple"),)), 7)) == [saved, copied]
    world.store.close()


def test_observe_hides_high_steps_in_both_worlds():
    actors = (Actor("low", "PUBLIC"), Actor("high", "CONFIDENTIAL"))
    steps = (
        Step("high", "memory_save", (("key", "k1"), ("content", "x")), high=True),
        Step("low", "memory_get", (("key", "k1"),)),
    )
    assert observe(Policy(), actors, steps, with_high=False) == [None]
    assert observe(Policy(), actors, steps, with_high=True) == [None, None]
