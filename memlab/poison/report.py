"""The poisoning lab's table and chart: what ``memlab poison`` prints and writes, and notebook 07 shows.

``summary`` keeps, per rate, defence and ranking, the figures a reader compares (at one k); ``draw`` plots ASR-r@k
against the poison rate per defence, one panel per ranking, with the utility degradation (nDCG@10 of the
victims' questions, poisoned minus clean) beside it; ``chart`` saves that on white as a PNG. Each defence has its
own marker and line style as well as its colour, so the chart reads without colour.

Examples:
    >>> from memlab.eval import load_trec
    >>> from memlab.poison import run
    >>> table = run(load_trec("tests/fixtures/trec-tiny"), rate=[0.2, 0.4], k=(1,), seed=0)
    >>> list(summary(table, k=1).columns[:4])
    ['rate', 'row', 'ranking', 'poison rate']
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["SUMMARY", "summary", "at_rate", "draw", "chart", "write"]

SUMMARY = (
    "poison rate",
    "ISR",
    "ISR overwrite",
    "ASR-r@k",
    "ASR-r@k all",
    "target nDCG@10 clean",
    "target nDCG@10 poisoned",
    "target p nDCG@10",
    "all S@10 poisoned",
    "available reads",
    "available saves",
    "laundered saves",
    "saves caught",
)
"""The columns ``summary`` keeps, beside rate, row and ranking."""

_STYLES = {  # marker and line style per defence: the chart reads without colour
    "integrity-ignored": ("o", "-"),
    "labels-only": ("s", "--"),
    "trust-demoted": ("v", "-."),
    "floor-trusted": ("D", ":"),
    "low-water-mark": ("^", (0, (5, 1, 1, 1))),
    "no-trust-first": ("x", (0, (3, 2))),
    "reads-never-lower": ("P", (0, (1, 2))),
}


def summary(table: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """``table``'s rows at cut-off ``k``: rate, defence (``row``), ranking and the ``SUMMARY`` columns, in the order
    the run made them."""
    at_k = table[table["k"] == k]
    tiers = ["tier"] if at_k["tier"].nunique() > 1 else []
    return at_k[[*tiers, "rate", "row", "ranking", *SUMMARY]].reset_index(drop=True)


def at_rate(table: pd.DataFrame, rate: float | None = None, tier: str | None = None) -> pd.DataFrame:
    """The poisoning lab's page table: at one ``rate`` (the run's median rate when None), per ranking and defence,
    ISR, ASR-r@k at each k measured, the victims' nDCG@10 clean and poisoned with the paired test's p, the benign
    reads and answers a trusted floor still gets, and the answers laundered; of ``tier`` (the first in the table
    when None)."""
    table = table[table["tier"] == (tier if tier is not None else table["tier"].iloc[0])]
    rates = sorted(set(table["rate"]))
    rate = rates[len(rates) // 2] if rate is None else rate
    chosen = table[table["rate"] == rate]
    first = chosen[chosen["k"] == chosen["k"].min()].set_index(["ranking", "row"], drop=False)
    columns = {
        "ISR": first["ISR"],
        "ISR overwrite": first["ISR overwrite"],
        **{
            f"ASR-r@{k}": chosen[chosen["k"] == k].set_index(["ranking", "row"])["ASR-r@k"]
            for k in sorted(set(chosen["k"]))
        },
        "nDCG@10 clean": first["target nDCG@10 clean"],
        "nDCG@10 poisoned": first["target nDCG@10 poisoned"],
        "UD p": first["target p nDCG@10"],
        "reads kept": first["available reads"],
        "answers kept": first["available saves"],
        "laundered": first["laundered saves"],
    }
    found = pd.DataFrame(columns)
    found.index.names = ["ranking", "defence"]
    return found


def draw(figure, table: pd.DataFrame, k: int = 10) -> None:
    """On ``figure``, for the table's first tier: per ranking, ASR-r@k against the poison rate reached, a line per
    defence (top), and the victims' nDCG@10 poisoned minus clean (bottom)."""
    at_k = table[(table["k"] == k) & (table["tier"] == table["tier"].iloc[0])]
    rankings = list(dict.fromkeys(at_k["ranking"]))
    axes = figure.subplots(2, len(rankings), squeeze=False, sharex=True, sharey="row")
    for column, ranking in enumerate(rankings):
        top, bottom = axes[0][column], axes[1][column]
        ranked = at_k[at_k["ranking"] == ranking]
        for row in dict.fromkeys(ranked["row"]):
            line = ranked[ranked["row"] == row].sort_values("poison rate")
            marker, style = _STYLES.get(row, ("*", "-"))
            percent = line["poison rate"] * 100
            top.plot(percent, line["ASR-r@k"], marker=marker, linestyle=style, label=row)
            drop = line["target nDCG@10 poisoned"] - line["target nDCG@10 clean"]
            bottom.plot(percent, drop, marker=marker, linestyle=style, label=row)
        top.set_title(f"{ranking} ranking")
        top.set_ylim(-0.05, 1.05)
        bottom.axhline(0, linewidth=0.6, color="grey")
        bottom.set_xlabel("poisoned memories, share of all")
        rates = sorted(set(ranked["poison rate"] * 100))
        if len(rates) > 2:
            top.set_xscale("log")
        bottom.set_xticks(rates, [f"{rate:.2g}%" for rate in rates], minor=False)
        bottom.minorticks_off()
    axes[0][0].set_ylabel(f"ASR-r@{k}: a poison in the top {k}")
    axes[1][0].set_ylabel("UD: nDCG@10 poisoned - clean")
    axes[0][-1].legend(loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)


def chart(table: pd.DataFrame, path: Path, k: int = 10) -> Path:
    """``draw`` saved at ``path`` as a PNG on white (a file is seen on its own, whatever the viewer's theme)."""
    from matplotlib.figure import Figure

    rankings = table["ranking"].nunique()
    figure = Figure(figsize=(3.6 * rankings + 2.4, 6.2), layout="constrained")
    draw(figure, table, k)
    figure.savefig(path, dpi=110, facecolor="white")
    return path


def write(table: pd.DataFrame, folder: Path, k: int = 10, guarantees: pd.DataFrame | None = None) -> list[Path]:
    """The table (``poison.csv``, every k), the exact zeros beside their proofs (``guarantees.csv``) and the chart
    (``poison.png``, at ``k``) in ``folder``; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / "poison.csv"]
    table.to_csv(written[0], index=False)
    if guarantees is not None:
        written.append(folder / "guarantees.csv")
        guarantees.to_csv(written[-1], index=False)
    written.append(chart(table, folder / "poison.png", k))
    return written
