"""How a hybrid search fuses FTS5's ranking with the dense one, per query, from the two rankings alone.

The default (``Ranking.fusion_k == 0``) is **standardized score fusion**: each ranking's scores are made z-scores
over that ranking (its mean and spread over every memory it ranked, read ``FUSION_DEPTH`` deep), a memory one
ranking did not return counts as that ranking's lowest, and the fused score is ``lexical * (z_fts5 - lowest) +
dense * (z_dense - lowest')``: how far above each ranking's lowest a memory stands, in that ranking's spreads. The
lowest is the same for every memory of a query, so it orders nothing; measured from it, a part is never negative
and a memory a ranking did not return gets nothing from it (0, as in rank fusion).

It is query-adaptive with no signal of its own: how far a ranking's first scores stand out from the rest is the
evidence, per query, of how sure it is. Where FTS5 is blind (a request that shares no word with the memory it
needs, whose matches are topic words a dozen memories share alike) its scores barely spread, and the dense
ranking's confident first memories lead; where the model is weak (short chat turns) its scores are flat near the
top, and FTS5's sharp matches lead. The weights were chosen on the project's own collections (LoCoMo's halves,
``locomo-topical``, ``locomo-turns``, ``preferences``: docs/relevance-lab.md), nowhere else.

``fusion_k > 0`` is reciprocal rank fusion, ``lexical / (k + rank) + dense * agreement / (k + rank')``, the dense
weight scaled by its agreement with FTS5 (``agreement``): a ranking file that sets it ranks by ranks alone.

Both read nothing but the two rankings, which are of the session's effective view: a fused score, and which ranking
carried it, depends on nothing the session cannot see (tests/test_noninterference.py).

Examples:
    >>> from memlab.search.ranking import Ranking
    >>> fused = contributions([("a", 9.0), ("b", 3.0), ("c", 3.0)], [("c", 0.8), ("a", 0.3)], Ranking.hybrid())
    >>> list(fused)
    ['a', 'c', 'b']
    >>> carried(fused)
    'lexical'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlab.search.ranking import Ranking

__all__ = ["contributions", "standardized", "agreement", "carried", "CARRIERS"]

Scored = Sequence[tuple[str, float]]
"""A ranking: (memory key, score) pairs, best first, each key once; scores higher-better."""

CARRIERS = ("lexical", "dense")


def contributions(lexical: Scored, dense: Scored, ranking: Ranking) -> dict[str, tuple[float, float]]:
    """Each key's fused score split into what each ranking gave it, keys in the fused order (best first; ties keep
    FTS5's order, then the dense order).

    Args:
        lexical: FTS5's ranking.
        dense: the dense ranking.
        ranking: the weights (``lexical``, ``dense``) and the rule (``fusion_k``: 0 standardized scores, above 0
            reciprocal rank fusion with that k).

    Returns:
        key -> (FTS5's part, the dense ranking's part); the fused score is their sum.
    """
    lexical, dense = _first(lexical), _first(dense)
    if ranking.fusion_k > 0:
        weight = ranking.dense * agreement(lexical, dense, ranking.fusion_k)
        lexical_part = _reciprocal(lexical, ranking.lexical, ranking.fusion_k)
        dense_part = _reciprocal(dense, weight, ranking.fusion_k)
    else:
        lexical_part, dense_part = _above_lowest(lexical, ranking.lexical), _above_lowest(dense, ranking.dense)
    # A key a ranking did not return gets nothing from it, under either rule.
    keys = dict.fromkeys([*lexical_part, *dense_part])
    split = {key: (lexical_part.get(key, 0.0), dense_part.get(key, 0.0)) for key in keys}
    order = sorted(split, key=lambda key: -sum(split[key]))  # stable: first seen first among equals
    return {key: split[key] for key in order}


def standardized(ranked: Scored) -> tuple[dict[str, float], float]:
    """The z-scores of a ranking's scores (over the ranking itself), and the value of a memory it did not return:
    its lowest. A ranking whose scores do not spread (one memory, or all tied) says nothing about the order:
    every z is 0.

    Examples:
        >>> standardized([("a", 3.0), ("b", 1.0)])
        ({'a': 1.0, 'b': -1.0}, -1.0)
        >>> standardized([("a", 2.0)])
        ({'a': 0.0}, 0.0)
    """
    scores = [score for _, score in ranked]
    if not scores:
        return {}, 0.0
    mean = math.fsum(scores) / len(scores)
    spread = math.sqrt(math.fsum((score - mean) ** 2 for score in scores) / len(scores))
    if spread <= 1e-12 * max(1.0, abs(mean)):
        return {key: 0.0 for key, _ in ranked}, 0.0
    z = {key: (score - mean) / spread for key, score in ranked}
    return z, min(z.values())


def agreement(lexical: Scored, dense: Scored, k: float) -> float:
    """How much of the dense ranking FTS5 matched too, each rank weighed as reciprocal rank fusion weighs it
    (``1 / (k + rank)``), as a share of as much as could be: the weight of the dense ranking's first ranks, as many
    as FTS5 matched keys. 1 when FTS5 matched nothing (the dense ranking is then all there is)."""
    found = {key for key, _ in lexical}
    keys = [key for key, _ in dense]
    possible = sum(1 / (k + rank) for rank in range(1, min(len(keys), len(found)) + 1))
    if possible == 0:
        return 1.0
    agreeing = sum(1 / (k + rank) for rank, key in enumerate(keys, start=1) if key in found)
    return min(1.0, agreeing / possible)


def carried(fused: dict[str, tuple[float, float]]) -> str | None:
    """Which ranking carried a fused ranking: the one that gave its first memory the larger part of its score
    (``lexical`` on a tie), or None when nothing was found."""
    if not fused:
        return None
    lexical_part, dense_part = next(iter(fused.values()))
    return "dense" if dense_part > lexical_part else "lexical"


def _first(ranked: Scored) -> list[tuple[str, float]]:
    """A ranking with each key once, where it first ranks."""
    first: dict[str, float] = {}
    for key, score in ranked:
        first.setdefault(key, score)
    return list(first.items())


def _above_lowest(ranked: Scored, weight: float) -> dict[str, float]:
    """Each key's z-score (``standardized``) above the ranking's lowest, times ``weight``."""
    z, lowest = standardized(ranked)
    return {key: weight * (value - lowest) for key, value in z.items()}


def _reciprocal(ranked: Scored, weight: float, k: float) -> dict[str, float]:
    return {key: weight / (k + rank) for rank, (key, _) in enumerate(ranked, start=1)}
