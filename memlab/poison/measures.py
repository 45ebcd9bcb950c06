"""The poisoning lab's measures, named as the papers name them, on rankings already mapped to ids.

A *ranking* is, per query id, the ids of what a victim session's search returned, best first: a collection
document's id, or a poison's id (``Poison.id``) for a version whose content is the poison's (an overwrite's new
version included). The measures are pure: ``memlab.poison.runner`` makes the rankings from the store.

- ``injection_success`` (ISR): the share of attacker writes a victim session reads as the key's value.
- ``retrieval_success`` (ASR-r@k): the share of target questions with at least one poison in the top k
  (``any``), and with only poisons there (``all``: the top k non-empty and every one of them a poison).
- ``utility`` (UD): S@10 and nDCG@10 clean and poisoned over the given questions, with the relevance lab's paired
  randomization test (``memlab.eval.measures.compare``) of poisoned against clean.
- ``availability``: the share of what a victim still gets: its benign reads (of the benign documents in each
  question's clean top 10, those still in its poisoned top 10) and its own later saves that a trusted-floor
  session reads.
"""

from __future__ import annotations

from collections.abc import Collection as Container
from collections.abc import Iterable, Mapping, Sequence

from memlab.errors import InvalidArgument
from memlab.eval.measures import compare, per_query

__all__ = ["injection_success", "retrieval_success", "utility", "benign_reads", "share"]

Ranking = Mapping[str, Sequence[str]]


def share(flags: Iterable[bool]) -> float:
    """The share of true flags; NaN when there are none.

    Examples:
        >>> share([True, False, False, True])
        0.5
    """
    flags = list(flags)
    return sum(map(bool, flags)) / len(flags) if flags else float("nan")


def injection_success(read_as_value: Iterable[bool]) -> float:
    """ISR: per attacker write, whether a victim session reads it as its key's value; the share that do."""
    return share(read_as_value)


def retrieval_success(ranking: Ranking, targets: Sequence[str], poisons: Container[str], k: int) -> dict[str, float]:
    """ASR-r@k over ``targets`` (query ids): ``any`` (a poison in the top k) and ``all`` (only poisons there).

    Raises:
        InvalidArgument: ``k`` not a positive integer, or no targets.

    Examples:
        >>> ranking = {"q1": ["p", "d1"], "q2": ["d2", "p"], "q3": []}
        >>> retrieval_success(ranking, ["q1", "q2", "q3"], {"p"}, 1)
        {'any': 0.3333333333333333, 'all': 0.3333333333333333}
    """
    if type(k) is not int or k < 1:
        raise InvalidArgument(f"k must be a positive integer, not {k!r}")
    if not targets:
        raise InvalidArgument("retrieval success needs at least one target question")
    tops = [list(ranking.get(query, ()))[:k] for query in targets]
    return {
        "any": share(any(found in poisons for found in top) for top in tops),
        "all": share(bool(top) and all(found in poisons for found in top) for top in tops),
    }


def _scored(ranking: Ranking, queries: Sequence[str]) -> dict[str, dict[str, float]]:
    """A ranking as ir-measures reads it: the first of n ids scores n, the next n - 1, ... (``runner.in_order``)."""
    return {query: {found: float(len(ranking[query]) - rank) for rank, found in enumerate(ranking[query])}
            for query in queries if query in ranking}  # fmt: skip


def utility(
    qrels: Mapping[str, Mapping[str, int]], clean: Ranking, poisoned: Ranking, queries: Sequence[str]
) -> dict[str, float]:
    """UD over ``queries``: S@10 and nDCG@10 clean and poisoned, and the p-value of the paired randomization test
    of poisoned against clean (``memlab.eval.measures.compare``, the relevance lab's), per measure.

    Returns:
        ``S@10 clean``, ``S@10 poisoned``, ``p S@10``, ``nDCG@10 clean``, ``nDCG@10 poisoned``, ``p nDCG@10``.

    Raises:
        InvalidArgument: no queries.
    """
    if not queries:
        raise InvalidArgument("utility needs at least one question")
    judged = {query: dict(qrels.get(query, {})) for query in queries}
    frames = {
        name: per_query(judged, _scored(ranking, queries))
        for name, ranking in (("clean", clean), ("poisoned", poisoned))
    }
    result: dict[str, float] = {}
    for measure in ("S@10", "nDCG@10"):
        compared = compare(frames, "clean", measure=measure)
        result |= {
            f"{measure} clean": float(compared.loc["clean", "mean"]),
            f"{measure} poisoned": float(compared.loc["poisoned", "mean"]),
            f"p {measure}": float(compared.loc["poisoned", "p_value"]),
        }
    return result


def benign_reads(
    clean: Ranking, poisoned: Ranking, queries: Sequence[str], benign: Container[str], depth: int = 10
) -> float:
    """Availability of reads: of the benign ids in each query's clean top ``depth``, the share still in its
    poisoned top ``depth`` (NaN when the clean rankings hold none).

    Examples:
        >>> benign_reads({"q": ["d1", "d2"]}, {"q": ["p", "d1"]}, ["q"], {"d1", "d2"}, depth=2)
        0.5
    """
    kept = []
    for query in queries:
        still = set(list(poisoned.get(query, ()))[:depth])
        kept += [found in still for found in list(clean.get(query, ()))[:depth] if found in benign]
    return share(kept)
