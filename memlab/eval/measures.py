"""IR measures per query (computed by ir-measures), their means, paired significance tests and bootstrap CIs.

Every measure is computed by ir-measures through its pytrec_eval provider, pinned so that results never depend
on which optional providers are installed. Ties in scores are therefore broken as trec_eval breaks them:
documents are ranked by score descending, then by document id descending (string order), so of two documents
that score alike, ``"d2"`` ranks above ``"d1"``. A run that needs another order must give distinct scores.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import ir_measures
import numpy as np
import pandas as pd
from ir_measures import AP, RR, R, Success, nDCG

from memlab.errors import InvalidArgument

__all__ = ["MEASURES", "LABELS", "per_query", "summarize", "paired_test", "confidence_interval", "compare"]

MEASURES: tuple = (nDCG @ 10, R @ 1, R @ 5, R @ 10, AP, RR, Success @ 1, Success @ 5, Success @ 10)

LABELS: dict[str, str] = {
    "nDCG@10": "nDCG@10",
    "R@1": "R@1",
    "R@5": "R@5",
    "R@10": "R@10",
    "AP": "MAP",
    "RR": "MRR",
    "Success@1": "S@1",
    "Success@5": "S@5",
    "Success@10": "S@10",
}

# The provider is pinned: its tie-breaking (score desc, doc id desc) is the documented one.
_PROVIDER = ir_measures.pytrec_eval

# Random draws are made this many resamples at a time, so memory stays small for thousands of queries.
_CHUNK = 1_000


def per_query(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> pd.DataFrame:
    """Every measure of ``MEASURES`` for every query of ``qrels``, one row a query.

    A query of ``qrels`` that is missing from ``run`` (nothing retrieved) scores 0 on every measure; queries of
    ``run`` that ``qrels`` lacks are ignored. Tied scores rank by document id descending (trec_eval's rule).

    Args:
        qrels: query id -> document id -> relevance grade (0 = not relevant).
        run: query id -> document id -> score (higher ranks first).

    Returns:
        A frame indexed by query id (index name ``"query"``, in ``qrels`` order) with one float column per
        label of ``LABELS``, in ``MEASURES`` order.

    Raises:
        InvalidArgument: ir-measures refused the input.

    Examples:
        >>> per_query({"q1": {"d1": 1}}, {"q1": {"d0": 2.0, "d1": 1.0}})["MRR"].tolist()
        [0.5]
    """
    columns = [LABELS[str(measure)] for measure in MEASURES]
    queries = pd.Index(list(qrels), name="query")
    frame = pd.DataFrame(0.0, index=queries, columns=columns)
    judged = {query: docs for query, docs in qrels.items() if docs}
    retrieved = {query: docs for query, docs in run.items() if query in judged and docs}
    if not retrieved:
        return frame
    try:
        metrics = list(_PROVIDER.iter_calc(MEASURES, judged, retrieved))
    except (TypeError, ValueError) as error:
        raise InvalidArgument(f"ir-measures could not evaluate the run: {error}") from error
    values: dict[str, dict[str, float]] = {column: {} for column in columns}
    for metric in metrics:
        values[LABELS[str(metric.measure)]][metric.query_id] = float(metric.value)
    # One column at a time, not one cell: setting 14,000 cells through pandas took seconds per row.
    return frame.assign(**{column: pd.Series(found, dtype=float) for column, found in values.items()}).fillna(0.0)


def summarize(frame: pd.DataFrame) -> pd.Series:
    """The mean of every column of a :func:`per_query` frame (e.g. ``MRR`` is the mean of per-query RR).

    Args:
        frame: per-query values, one column a measure.

    Returns:
        The column means, indexed by label.

    Examples:
        >>> summarize(pd.DataFrame({"MRR": [1.0, 0.5]})).to_dict()
        {'MRR': 0.75}
    """
    return frame.mean(axis=0).astype(float)


def paired_test(
    a: Sequence[float], b: Sequence[float], *, method: str = "randomization", samples: int = 10_000, seed: int = 0
) -> float:
    """The two-sided p-value that two systems' per-query values (same query order) differ in mean.

    ``"randomization"`` is a paired sign-flip permutation test: each resample flips the sign of every query's
    difference at random, and p = (resamples with |mean| >= |observed mean| + 1) / (samples + 1), so it is
    never 0. ``"t"`` is the paired t-test (``scipy.stats.ttest_rel``). When every difference is 0 the answer is
    1.0 under both methods; a t-test with too few queries to estimate a variance also answers 1.0.

    Args:
        a: one system's per-query values.
        b: the other system's values for the same queries, in the same order.
        method: ``"randomization"`` or ``"t"``.
        samples: resamples of the randomization test.
        seed: seed of the randomization test's generator; the same seed gives the same p.

    Returns:
        The p-value, in (0, 1].

    Raises:
        InvalidArgument: unknown method, lengths differ, no values, or ``samples`` < 1.

    Examples:
        >>> paired_test([1.0] * 8, [0.0] * 8) < 0.01
        True
    """
    diffs = _differences(a, b)
    if method not in ("randomization", "t"):
        raise InvalidArgument(f"unknown method {method!r}; known methods: 'randomization', 't'")
    if not diffs.any():
        return 1.0
    if method == "t":
        from scipy import stats  # 1-2 s to import, for the t-test alone: not on the default (randomization) path

        p = float(stats.ttest_rel(np.asarray(a, dtype=float), np.asarray(b, dtype=float)).pvalue)
        return 1.0 if math.isnan(p) else p
    if samples < 1:
        raise InvalidArgument(f"samples must be at least 1, not {samples}")
    # Only the queries where the systems differ move a sign-flipped sum (flipping a 0 changes nothing), so the
    # test flips those alone: the same distribution of |sum|, at the cost of the differing queries only.
    diffs = diffs[diffs != 0]
    observed = abs(diffs.sum())
    # Sign-flipped sums that equal the observed one in exact arithmetic may differ from it in the last bits.
    threshold = observed - 1e-12 * max(1.0, observed)
    rng = np.random.default_rng(seed)
    extreme = 0
    for size in _chunk_sizes(samples):
        bits = np.unpackbits(rng.integers(0, 256, size=(size, (diffs.size + 7) // 8), dtype=np.uint8), axis=1)
        signs = 1.0 - 2.0 * bits[:, : diffs.size]
        extreme += int(np.count_nonzero(np.abs(signs @ diffs) >= threshold))
    return (extreme + 1) / (samples + 1)


def confidence_interval(
    values: Sequence[float], *, level: float = 0.95, samples: int = 2_000, seed: int = 0
) -> tuple[float, float]:
    """A percentile-bootstrap confidence interval of the mean of ``values``.

    Args:
        values: per-query values of one system and measure.
        level: the coverage, strictly between 0 and 1.
        samples: bootstrap resamples (each draws ``len(values)`` values with replacement).
        seed: seed of the generator; the same seed gives the same interval.

    Returns:
        ``(low, high)``, the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the resampled means.

    Raises:
        InvalidArgument: no values, ``level`` outside (0, 1), or ``samples`` < 1.

    Examples:
        >>> confidence_interval([0.5, 0.5, 0.5])
        (0.5, 0.5)
    """
    data = np.asarray(values, dtype=float)
    if data.ndim != 1 or data.size == 0:
        raise InvalidArgument("confidence_interval needs a non-empty sequence of numbers")
    if not 0.0 < level < 1.0:
        raise InvalidArgument(f"level must be strictly between 0 and 1, not {level}")
    if samples < 1:
        raise InvalidArgument(f"samples must be at least 1, not {samples}")
    rng = np.random.default_rng(seed)
    means = np.concatenate(
        [data[rng.integers(0, data.size, size=(size, data.size))].mean(axis=1) for size in _chunk_sizes(samples)]
    )
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return float(low), float(high)


def compare(
    per_query_by_system: dict[str, pd.DataFrame],
    baseline: str,
    *,
    measure: str = "S@10",
    method: str = "randomization",
) -> pd.DataFrame:
    """Each system against ``baseline`` on one measure: mean, bootstrap CI, p-value, per-query wins and losses.

    Args:
        per_query_by_system: system name -> its :func:`per_query` frame; all over the same queries.
        baseline: the name of the system the others are tested against.
        measure: the column label to compare (a value of ``LABELS``).
        method: the :func:`paired_test` method.

    Returns:
        One row per system (index ``"system"``, in the given order) with columns ``mean``, ``ci_low``,
        ``ci_high``, ``p_value`` (NaN for the baseline), ``wins``, ``losses``, ``ties`` (queries where the
        system scores above, below, equal to the baseline) and ``sig`` (``"**"`` if p < 0.01, ``"*"`` if
        p < 0.05, else ``""``).

    Raises:
        InvalidArgument: unknown baseline or measure, frames over different queries, or an unknown method.

    Examples:
        >>> frames = {"a": pd.DataFrame({"S@10": [0.0, 1.0]}), "b": pd.DataFrame({"S@10": [1.0, 1.0]})}
        >>> compare(frames, "a").loc["b", ["wins", "losses", "ties"]].tolist()
        [1, 0, 1]
    """
    if baseline not in per_query_by_system:
        raise InvalidArgument(f"unknown baseline {baseline!r}; systems: {sorted(per_query_by_system)}")
    base = per_query_by_system[baseline]
    if measure not in base.columns:
        raise InvalidArgument(f"unknown measure {measure!r}; columns: {list(base.columns)}")
    base_values = base[measure].to_numpy(dtype=float)
    rows = []
    for system, frame in per_query_by_system.items():
        if measure not in frame.columns or set(frame.index) != set(base.index) or len(frame) != len(base):
            raise InvalidArgument(f"system {system!r} is not over the same queries and measures as {baseline!r}")
        values = frame[measure].reindex(base.index).to_numpy(dtype=float)
        low, high = confidence_interval(values)
        p = math.nan if system == baseline else paired_test(values, base_values, method=method)
        rows.append(
            {
                "system": system,
                "mean": float(values.mean()),
                "ci_low": low,
                "ci_high": high,
                "p_value": p,
                "wins": int(np.count_nonzero(values > base_values)),
                "losses": int(np.count_nonzero(values < base_values)),
                "ties": int(np.count_nonzero(values == base_values)),
                "sig": _significance_mark(p),
            }
        )
    return pd.DataFrame(rows).set_index("system")


def _differences(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    left, right = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if left.ndim != 1 or left.shape != right.shape:
        raise InvalidArgument(f"paired values need two sequences of one length, not {left.shape} and {right.shape}")
    if left.size == 0:
        raise InvalidArgument("paired values need at least one query")
    return left - right


def _chunk_sizes(samples: int) -> Iterator[int]:
    for start in range(0, samples, _CHUNK):
        yield min(_CHUNK, samples - start)


def _significance_mark(p: float) -> str:
    if math.isnan(p):
        return ""
    return "**" if p < 0.01 else "*" if p < 0.05 else ""
