"""memlab.storage.postgres.views: which version a view holds among a key's readable ones, and the search statement
each set of view rules gets. What the statements return on a server is the contract suite's (tests/test_search.py
and the others, on the postgres backend)."""

from __future__ import annotations

import pytest

from memlab.labels import Ambiguous, Label
from memlab.records import Memory
from memlab.storage.postgres.views import LIVE, above, chosen, readable, search_sql
from memlab.viewrules import ViewRules


def version(label: str, number: int = 1) -> Memory:
    return Memory("k", label, (), Label.parse(label), number, "t", "s")


def no_database(*_):
    raise AssertionError("the save order is asked of the database only when a rule must choose")


@pytest.mark.parametrize(
    ("versions", "taint", "held"),
    [
        ([], "PUBLIC", None),
        (["INTERNAL"], "RESTRICTED", "INTERNAL"),
        (["PUBLIC", "INTERNAL"], "CONFIDENTIAL", "INTERNAL"),
        (["INTERNAL:hr", "CONFIDENTIAL:hr"], "CONFIDENTIAL:hr", "CONFIDENTIAL:hr"),
    ],
)
def test_a_single_maximal_version_is_held_without_asking_the_save_order(versions, taint, held):
    found = chosen(None, "newest", Label.parse(taint), [version(label) for label in versions], no_database)
    assert (found.content if found else None) == held


def test_among_several_maximal_versions_the_rule_chooses():
    # Guards: postgres.views.chosen taking the first readable version when several are maximal.
    both = [version("INTERNAL:hr"), version("INTERNAL:legal")]
    order = {"INTERNAL:hr": 2, "INTERNAL:legal": 1}
    assert (
        chosen(None, "newest", Label.parse("INTERNAL:hr,legal"), both, lambda m: order[m.content]).content
        == "INTERNAL:hr"
    )
    with pytest.raises(Ambiguous):
        chosen(None, "refuse", Label.parse("INTERNAL:hr,legal"), both, lambda m: order[m.content])


def test_the_sql_fragments_name_their_aliases():
    assert readable("h").startswith("h.agent = m.agent AND h.key = m.key")
    assert "u.classification > l.classification" in above("u", "l") and "u.categories @> l.categories" in above(
        "u", "l"
    )
    assert "m.deleted_at IS NULL" in LIVE


@pytest.mark.parametrize(
    ("rules", "has_save_order", "matches_before_shadowing"),
    [
        (ViewRules(), True, False),
        (ViewRules(shadowing="refuse"), False, False),
        (ViewRules(shadow_before_match=False), True, True),
    ],
)
def test_the_search_statement_follows_the_rules(rules, has_save_order, matches_before_shadowing):
    sql = search_sql(rules, "simple", "ts_rank(m.document, q)")
    assert sql.startswith("WITH x AS MATERIALIZED (SELECT * FROM to_tsquery('simple', %(terms)s) q")
    assert ("save_order(ARRAY[m.key])" in sql) is has_save_order
    assert ("h.document @@ q" in sql) is matches_before_shadowing
    assert sql.endswith("ORDER BY score DESC, x.saved_order LIMIT %(limit)s")
