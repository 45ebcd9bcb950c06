"""memlab.check.configurations: the bounded checker's Alphabet and each way a check's sessions are cast.

Over labels, the configurations against the lattice at large are tests/test_exhaustive.py's.
"""

from __future__ import annotations

import pytest

from memlab.check.configurations import MAX_LABELS, Alphabet, configurations
from memlab.errors import InvalidArgument
from memlab.levels import Level


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"keys": ()}, "at least one key and one content"),
        ({"contents": ()}, "at least one key and one content"),
        ({"levels": "PUBLIC"}, "a list of levels or labels"),
        ({"levels": ("PUBLIC",)}, "at least two levels"),
        ({"levels": ("PUBLIC", "public")}, "at least two levels"),  # the same level twice
        ({"levels": ("PUBLIC", "SECRET")}, "alphabet label 'SECRET'"),
        ({"levels": tuple(f"PUBLIC:c{n}" for n in range(MAX_LABELS + 1))}, f"at most {MAX_LABELS}"),
    ],
)
def test_a_bad_alphabet_is_refused(fields, message):
    with pytest.raises(InvalidArgument, match=message):
        Alphabet(**fields)


def test_an_alphabets_levels_are_kept_in_the_lattices_order():
    alphabet = Alphabet(levels=("CONFIDENTIAL:hr,legal", "confidential:hr", Level.PUBLIC))
    assert [str(label) for label in alphabet.levels] == ["PUBLIC", "CONFIDENTIAL:hr", "CONFIDENTIAL:hr,legal"]
    assert alphabet.over_labels and not Alphabet().over_labels
    assert str(Alphabet()) == "keys k1, k2; contents apple, berry; tag t1; levels PUBLIC, INTERNAL, CONFIDENTIAL"


def test_the_compartments_alphabet():
    alphabet = Alphabet.compartments(["b", "a"], level="INTERNAL")
    assert [str(label) for label in alphabet.levels] == ["PUBLIC", "INTERNAL:a", "INTERNAL:b", "INTERNAL:a,b"]
    with pytest.raises(InvalidArgument, match="at least one category"):
        Alphabet.compartments([])
    with pytest.raises(InvalidArgument, match="at most 6"):  # 7 non-empty sets of three categories, and PUBLIC
        Alphabet.compartments(["a", "b", "c"])


@pytest.mark.parametrize("alphabet", [Alphabet(), Alphabet.compartments()], ids=["levels", "labels"])
def test_every_noninterference_configuration_raises_the_high_session_past_the_bound(alphabet):
    # Guards: configurations taking as "above" the labels above the bound only (incomparable ones never tried).
    found = configurations("noninterference", alphabet)
    assert found
    raised = set()
    for configuration in found:
        low, high = configuration.actors
        assert low.start == configuration.level
        assert not high.taint.can_flow_to(configuration.level) and high.start.can_flow_to(high.taint)
        assert configuration.rules.needs_high
        assert all(not configuration.symbols[n].step.high for n in configuration.rules.judged)
        raised.add((configuration.level, high.taint))
    expected = {
        (bound, label) for bound in alphabet.levels for label in alphabet.levels if not label.can_flow_to(bound)
    }
    assert raised == expected


@pytest.mark.parametrize(
    ("check", "judged"),
    [("shadowing", {"memory_get", "memory_list", "memory_search"}), ("write_down", {"memory_save", "copy"})],
)
def test_the_other_checks_cast_two_sessions_once_per_pair_of_levels(check, judged):
    alphabet = Alphabet()
    found = configurations(check, alphabet)
    pairs = [(first.start, second.start) for first, second in (c.actors for c in found)]
    assert len(pairs) == len(set(pairs)) == 6 and all(a <= b for a, b in pairs)  # 3 levels: 6 unordered pairs
    for configuration in found:
        assert {configuration.symbols[n].step.tool for n in configuration.rules.judged} == judged
        assert configuration.level is None
