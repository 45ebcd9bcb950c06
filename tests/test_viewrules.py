"""memlab.viewrules: which versions of a key a taint may see (maximal), the shadowing rules, and ViewRules."""

from __future__ import annotations

import itertools

import pytest

from memlab.labels import Ambiguous, Label
from memlab.levels import Level
from memlab.viewrules import AMBIGUOUS, SHADOWING, ViewRules, maximal, newest, refuse

L = Label.parse
PUBLIC, INTERNAL_HR, INTERNAL_LEGAL, CONFIDENTIAL = (
    L("PUBLIC"),
    L("INTERNAL:hr"),
    L("INTERNAL:legal"),
    L("CONFIDENTIAL"),
)
LIVE = {PUBLIC: 1, INTERNAL_HR: 2, INTERNAL_LEGAL: 3, CONFIDENTIAL: 4}


@pytest.mark.parametrize(
    ("taint", "versions"),
    [
        ("PUBLIC", {1}),
        ("INTERNAL", {1}),  # no categories: neither compartment is readable
        ("INTERNAL:hr", {2}),
        ("INTERNAL:hr,legal", {2, 3}),  # incomparable: both maximal
        ("CONFIDENTIAL", {4}),
        ("CONFIDENTIAL:hr", {2, 4}),  # INTERNAL:hr does not flow to CONFIDENTIAL: both maximal
        ("RESTRICTED:hr,legal", {2, 3, 4}),
    ],
)
def test_maximal_keeps_the_readable_versions_with_none_readable_above(taint, versions):
    assert set(maximal(LIVE, L(taint)).values()) == versions


def test_newest_and_refuse_choose_among_maximal_versions():
    two = {INTERNAL_HR: 2, INTERNAL_LEGAL: 3}
    assert newest(two, order=lambda version: version) == 3
    assert newest({}, order=lambda version: version) is None
    assert refuse({INTERNAL_HR: 2}, order=lambda version: version) == 2
    assert refuse({}, order=lambda version: version) is None
    with pytest.raises(Ambiguous, match="INTERNAL:hr, INTERNAL:legal"):
        refuse(two, order=lambda version: version)


@pytest.mark.parametrize(
    ("shadowing", "taint", "seen"),
    [
        ("newest", "INTERNAL:hr,legal", 3),
        ("refuse", "INTERNAL:hr,legal", AMBIGUOUS),
        ("refuse", "INTERNAL:hr", 2),
        ("newest", "PUBLIC", 1),
        # the faulty rule: the newest version over every label, hidden when unreadable
        ("newest-overall", "RESTRICTED", 4),
        ("newest-overall", "INTERNAL:hr", None),
    ],
)
def test_winner_follows_the_shadowing_rule(shadowing, taint, seen):
    assert ViewRules(shadowing=shadowing).winner(LIVE, L(taint)) == seen


def test_an_unknown_shadowing_rule_is_refused():
    assert set(SHADOWING) == {"newest", "refuse", "newest-overall"}
    with pytest.raises(ValueError, match="newest, refuse"):
        ViewRules(shadowing="oldest")


@pytest.mark.parametrize(
    ("classification", "taint", "readable"),
    [
        (Level.INTERNAL, Level.CONFIDENTIAL, True),
        (Level.CONFIDENTIAL, Level.INTERNAL, False),
        (L("INTERNAL:hr"), L("CONFIDENTIAL:hr"), True),
        (L("INTERNAL:hr"), Level.CONFIDENTIAL, False),
        (L("INTERNAL:hr"), L("CONFIDENTIAL:legal"), False),
        (L("INTERNAL"), L("PUBLIC:hr"), False),
        (L("PUBLIC"), L("PUBLIC:hr"), True),
    ],
)
def test_can_read_needs_the_level_and_every_category(classification, taint, readable):
    assert ViewRules.lattice().can_read(classification, taint) is readable


READ_ONE_UP = frozenset((c, t) for c in Level for t in Level if c <= min(t + 1, 3))


@pytest.mark.parametrize("rules", [ViewRules.lattice(), ViewRules(readable=READ_ONE_UP)], ids=["lattice", "one-up"])
def test_winners_is_winner_at_every_level(rules):
    # Guards: ViewRules.winners' lattice shortcut taking the first live level instead of the last one so far.
    for held in itertools.product([None, 1], repeat=len(Level)):
        live = {level: id_ for level, id_, present in zip(Level, range(10, 14), held, strict=True) if present}
        assert rules.winners(live) == tuple(rules.winner(live, taint) for taint in Level)


@pytest.mark.parametrize(
    ("rules", "signature"),
    [
        (ViewRules(), "lattice"),
        (ViewRules(global_statistics=True), "lattice global-statistics"),
        (ViewRules(shadowing="refuse"), "lattice shadowing:refuse"),
        (ViewRules(readable=frozenset({(Level.PUBLIC, Level.PUBLIC)})), "readable:PP"),
    ],
)
def test_the_signature_names_what_the_stored_views_depend_on(rules, signature):
    assert rules.signature == signature
    assert rules.lattice_visibility is (signature.split()[0] == "lattice")
