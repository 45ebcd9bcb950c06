"""The poisoning lab's rows: the defences and the rankings, named and refused as the lab's arguments."""

import dataclasses

import pytest

from memlab import InvalidArgument
from memlab.poison import DEFENCES
from memlab.poison.rows import defences_of, rankings_of
from memlab.search import dense
from memlab.search.ranking import DEMOTED_UNTRUSTED


def test_all_five_defences_by_default_in_order():
    assert [row.name for row in defences_of(None)] == [
        "integrity-ignored",
        "labels-only",
        "trust-demoted",
        "floor-trusted",
        "low-water-mark",
    ]
    assert DEFENCES["floor-trusted"].floor == "trusted" and DEFENCES["integrity-ignored"].trusted_writes


def test_the_policy_lab_variants_are_rows_when_named():
    assert [(row.name, row.policy) for row in defences_of(["no-trust-first", "reads-never-lower"])] == [
        ("no-trust-first", "untrusted-shadows"),
        ("reads-never-lower", "reads-never-lower"),
    ]


def test_the_trust_demoted_row_ranks_by_the_documented_factor_and_no_other_row_does():
    base = rankings_of(["lexical"])[0]["lexical"].ranking
    assert DEFENCES["trust-demoted"].ranking(base) == dataclasses.replace(base, untrusted=DEMOTED_UNTRUSTED)
    assert DEMOTED_UNTRUSTED == 0.5
    assert all(row.ranking(base) == base for row in DEFENCES.values() if row.name != "trust-demoted")


@pytest.mark.parametrize("rows", [["trust-promoted"], [], "labels-only", ["labels-only", "labels-only"]])
def test_an_unknown_repeated_or_missing_row_is_refused_naming_rows(rows):
    with pytest.raises(InvalidArgument, match="rows"):
        defences_of(rows)


def test_rankings_are_the_relevance_labs_rows():
    chosen, skipped = rankings_of(["lexical", "dense", "hybrid"])
    assert chosen["lexical"].name == "memlab"
    if dense.missing():
        assert set(skipped) == {"dense", "hybrid"} and "memlab[dense]" in skipped["dense"]
    else:
        assert [chosen[name].embedder for name in ("dense", "hybrid")] == ["minilm", "minilm"] and not skipped


@pytest.mark.parametrize("rankings", [["bm25"], [], "lexical", ["lexical", "lexical"]])
def test_an_unknown_repeated_or_missing_ranking_is_refused_naming_rankings(rankings):
    with pytest.raises(InvalidArgument, match="rankings"):
        rankings_of(rankings)
