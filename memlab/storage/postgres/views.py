"""How a PostgreSQL session's effective view is chosen: the SQL conditions a read stands on, the shadowing rule's
choice among a key's maximal versions, and the search statement that keeps only the version a key's view holds.

Row-level security admits only what the session's claim may read; these conditions keep each query right on its
own and pick, per key, the version the view holds (``memlab.viewrules``' rules, computed in SQL or here).
"""

from __future__ import annotations

from collections.abc import Callable

from memlab.labels import Integrity, Label
from memlab.levels import Level
from memlab.records import Memory
from memlab.storage.postgres.sql import COLUMNS
from memlab.viewrules import SHADOWING_RULES, ViewRules, maximal

__all__ = ["LIVE", "readable", "above", "chosen", "save_order", "search_sql"]


def readable(alias: str, also: str = "") -> str:
    """SQL: ``alias`` is a live version of ``m``'s key that the session at ``%(level)s`` and ``%(categories)s``
    reading at ``%(floor)s`` may read (row-level security admits no other; the condition keeps the query right on
    its own)."""
    return (
        f"{alias}.agent = m.agent AND {alias}.key = m.key AND {alias}.classification <= %(level)s "
        f"AND {alias}.categories <@ %(categories)s::text[] AND {alias}.integrity >= %(floor)s "
        f"AND {alias}.current AND {alias}.deleted_at IS NULL {also}"
    )


def above(upper: str, lower: str) -> str:
    """SQL: ``upper``'s label is strictly above ``lower``'s."""
    return (
        f"{upper}.classification >= {lower}.classification AND {upper}.categories @> {lower}.categories "
        f"AND ({upper}.classification > {lower}.classification OR {upper}.categories <> {lower}.categories)"
    )


# The live versions a session's read stands on: its agent's, readable at its label and floor.
LIVE = (
    "m.agent = %(agent)s AND m.classification <= %(level)s AND m.categories <@ %(categories)s::text[] "
    "AND m.integrity >= %(floor)s AND m.current AND m.deleted_at IS NULL"
)


def chosen(
    cursor, shadowing: str, label: Label, versions: list[Memory], order: Callable[[Memory], object] | None = None
) -> Memory | None:
    """The version of one key the view at ``label`` holds among its readable live ``versions``: trusted ones
    first (untrusted versions compete only when none is trusted, ``ViewRules.winner``), then the only maximal
    one, or the policy's shadowing rule's choice among several (which may raise ``Ambiguous``)."""
    trusted = [memory for memory in versions if memory.classification.integrity is Integrity.TRUSTED]
    if trusted:
        versions = trusted
    if len(versions) < 2:
        return versions[0] if versions else None
    candidates = maximal({memory.label: memory for memory in versions}, label)
    if len(candidates) == 1:
        return next(iter(candidates.values()))
    rule = SHADOWING_RULES[shadowing]
    return rule(candidates, order or save_order(cursor, [versions[0].key]))


def save_order(cursor, keys: list[str]) -> Callable[[Memory], object]:
    """The order in which versions of ``keys`` the session may read were saved, asked of the database the
    first time a rule needs it (never under the four-level order, where no key has two maximal versions)."""
    ranks: dict[tuple[str, Level, frozenset[str], Integrity, int], int] = {}

    def order(memory: Memory) -> object:
        if not ranks:
            found = cursor.execute(
                "SELECT order_key, order_level, order_categories, order_integrity, order_version, saved_order "
                "FROM save_order(%s::text[])",
                (keys,),
            )
            for key, level, categories, integrity, version, rank in found.fetchall():
                ranks[key, Level(level), frozenset(categories), Integrity(integrity), version] = rank
        return ranks[memory.key, memory.level, memory.categories, memory.integrity, memory.version]

    return order


def search_sql(rules: ViewRules, indexing: str, ranking: str) -> str:
    """The search statement of a view under ``rules``: the matches (a ``to_tsquery`` in ``indexing``'s
    configuration) ranked by the SQL expression ``ranking``, each the version its key's view holds."""
    # The GIN index finds the candidates through ``matches`` (see ``gate._gate_sql``); row-level security still
    # gates every row read here. Shadowing first: a match counts only if it is the version its key's view
    # holds; after the match (a policy variant): shadowing only among the matching versions.
    # Ties go in save order: ``matches`` numbers the matches it finds in that order (the session cannot read
    # the table-wide id, which counts every label's saves). The matches are found once, in a materialized
    # query of their own: joined in place, the plan for any parameters (a prepared statement's) rescanned
    # ``matches`` once per readable version of the agent (200 look-ups for 200 memories, about 10x the time).
    also = "" if rules.shadow_before_match else "AND {}.document @@ q"
    beside = "NOT (h.classification <= m.classification AND h.categories <@ m.categories)"
    if rules.shadowing == "refuse":
        # Only a version every other readable one of its grade flows to: one maximal version, and it is this.
        rival = beside
    else:
        # A version above it, or one beside it (never, under the four-level order) that is maximal among its
        # grade and was saved after it; the save order is the one ``save_order`` numbers among the readable
        # versions.
        rank = "max(saved_order) FILTER (WHERE order_level = {0}.classification AND order_categories = "
        rank += "{0}.categories AND order_integrity = {0}.integrity AND order_version = {0}.version)"
        rival = (
            f"({above('h', 'm')} OR {beside} AND NOT EXISTS (SELECT 1 FROM memories g WHERE "
            f"{readable('g', also.format('g'))} AND g.integrity = h.integrity AND {above('g', 'h')}) "
            f"AND (SELECT {rank.format('h')} > {rank.format('m')} FROM save_order(ARRAY[m.key])))"
        )
    # Trust first: a readable trusted version holds the key against every untrusted one; versions of one grade
    # compete by the rule.
    rival = f"(h.integrity > m.integrity OR h.integrity = m.integrity AND {rival})"
    held = f"NOT EXISTS (SELECT 1 FROM memories h WHERE {readable('h', also.format('h'))} AND {rival})"
    return (
        f"WITH x AS MATERIALIZED (SELECT * FROM to_tsquery('{indexing}', %(terms)s) q, "
        f"matches(q)) SELECT {COLUMNS}, {ranking} AS score "
        "FROM x, memories m WHERE m.key = x.match_key AND m.classification = x.match_level "
        "AND m.categories = x.match_categories AND m.integrity = x.match_integrity AND m.version = x.match_version "
        f"AND {LIVE} AND m.document @@ q AND {held} "
        "ORDER BY score DESC, x.saved_order LIMIT %(limit)s"
    )
