"""memlab.check.reductions: which traces the exhaustive checker keeps, counted and enumerated alike.

That every trace of the full product reduces to a kept one with the same verdict is tests/test_exhaustive.py's.
"""

from __future__ import annotations

import itertools
import random

import pytest

from memlab.check.configurations import GROUPS, Alphabet, configurations
from memlab.check.reductions import count_traces, enumerate_traces, normalise, random_prefix, walk_traces

SMALL = Alphabet(keys=("k1", "k2"), contents=("apple",), tag=None, levels=("PUBLIC", "INTERNAL"))


def indices(configuration, trace):
    steps = [symbol.step for symbol in configuration.symbols]
    return tuple(steps.index(step) for step in trace)


@pytest.mark.parametrize("check", ["noninterference", "write_down", "shadowing"])
def test_count_traces_is_how_many_are_enumerated(check):
    # Guards: reductions.count_traces counting every trace that advances instead of those that may end.
    for configuration in configurations(check, SMALL)[:3]:
        counts = count_traces(configuration.symbols, GROUPS, configuration.rules, 3)
        enumerated = [
            len(list(enumerate_traces(configuration.symbols, GROUPS, configuration.rules, depth)))
            for depth in (1, 2, 3)
        ]
        assert counts == enumerated


@pytest.mark.parametrize("check", ["noninterference", "shadowing"])
def test_a_kept_trace_is_its_own_normal_form_and_every_other_reduces_to_a_kept_one(check):
    configuration = configurations(check, SMALL)[0]
    symbols, rules = configuration.symbols, configuration.rules
    kept = {
        indices(configuration, trace) for depth in (1, 2) for trace in enumerate_traces(symbols, GROUPS, rules, depth)
    }
    assert all(normalise(trace, symbols, GROUPS, rules) == trace for trace in kept)
    for depth in (1, 2):
        for trace in itertools.product(range(len(symbols)), repeat=depth):
            reduced = normalise(trace, symbols, GROUPS, rules)
            assert reduced is None or reduced in kept


def test_names_are_used_in_order_k1_before_k2():
    configuration = configurations("shadowing", SMALL)[0]
    for trace in enumerate_traces(configuration.symbols, GROUPS, configuration.rules, 2):
        keys = [value for step in trace for name, value in step.arguments if name == "key"]
        assert keys[:1] in ([], ["k1"])


def test_a_walk_from_a_random_prefix_begins_with_it():
    configuration = configurations("shadowing", SMALL)[1]
    prefix = random_prefix(configuration.symbols, GROUPS, 1, random.Random(3))
    walked = list(
        walk_traces(configuration.symbols, GROUPS, configuration.rules, 2, None, lambda *_: None, prefix=prefix)
    )
    assert walked and all(steps[0] == configuration.symbols[prefix[0]].step for steps, _ in walked)
    with pytest.raises(ValueError, match="does not begin a trace"):
        list(walk_traces(configuration.symbols, GROUPS, configuration.rules, 1, None, lambda *_: None, prefix=prefix))
