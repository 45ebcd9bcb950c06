"""The poisoning lab's results as kept on disk: a CSV of ``memlab.poison.run`` tables, read back as one DataFrame.

A run of every tier, rate and ranking on LoCoMo takes minutes; notebook 07 and the poisoning widget read the
bundled table (``data/results/poison/locomo/poison.csv``) instead, in the columns ``run`` returns. The table may hold
any rows, tiers, rates, rankings and k: readers take them from it, never from a list of their own.

Examples:
    >>> table = results("data/results/poison/locomo/poison.csv")
    >>> sorted(table["tier"].unique())
    ['content', 'direct', 'query']
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from memlab.errors import InvalidArgument

__all__ = ["RESULTS_PATH", "REQUIRED", "results"]

RESULTS_PATH = Path("data") / "results" / "poison" / "locomo" / "poison.csv"
"""The bundled results on LoCoMo, relative to the working directory (as ``memlab.eval.LOCOMO_PATH`` is)."""

REQUIRED = ("row", "ranking", "tier", "k", "rate", "poison rate", "ISR", "ISR overwrite", "ASR-r@k")
"""The columns a results table must have: what says which row a figure is, and the measures every reader shows."""


def results(path: str | Path | None = None) -> pd.DataFrame:
    """The poisoning lab's results at ``path`` (default ``RESULTS_PATH``): one row per defence, ranking, tier, rate
    and k, in the columns of ``memlab.poison.run``.

    Raises:
        InvalidArgument: no file at ``path``, or one without the columns of ``REQUIRED`` (naming those missing).

    Examples:
        >>> results("data/results/poison/locomo/poison.csv").query("row == 'floor-trusted'")["ASR-r@k"].max().item()
        0.0
    """
    path = Path(path) if path is not None else RESULTS_PATH
    if not path.is_file():
        raise InvalidArgument(f"no poisoning lab results at {path}: make them with `memlab poison`")
    try:
        table = pd.read_csv(path)
    except pd.errors.EmptyDataError:  # an empty file: no columns at all
        table = pd.DataFrame()
    missing = [column for column in REQUIRED if column not in table.columns]
    if missing:
        raise InvalidArgument(f"{path} is not a table of memlab.poison.run: it has no column {', '.join(missing)}")
    return table
