"""The poisoning lab's widget: move the poison rate and watch ASR-r@k and UD move, defence by defence.

Everything is read from a results table (``memlab.poison.results``: ``memlab.poison.run`` tables, cached as CSV):
its tiers, rates, rankings, k and defence rows are offered as they are found in it, so a table with more rows
(another defence, another rate) needs no change here, and a text column it does not know (a poison variant,
say) tells rows apart in the table and the chart, never averaged over. ``at_rate`` is the table at one rate,
``poisoning_figure`` the chart (ASR-r@k against the poison rate per defence, UD beside it), ``PoisoningLab`` the
two under a slider.

UD here is what the attack costs the victim's own questions: ``target S@10 clean`` minus ``target S@10
poisoned`` (the share of target questions that had a relevant memory in the top 10 and lost it).

Examples:
    >>> from memlab.poison import results
    >>> at_rate(results("data/results/poison/locomo/poison.csv"), 0.01, ranking="lexical").loc[0, "ASR-r@10"].item()
    1.0
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import ipywidgets as widgets
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter

from memlab.errors import InvalidArgument
from memlab.widgets.figures import INK, ThemedFigure, themed
from memlab.widgets.render import Panel, html_table

__all__ = ["UD", "choices", "at_rate", "by_rate", "poisoning_figure", "PoisoningLab"]

UD = "UD S@10"
"""The column of UD as the widget shows it: the victim's questions' S@10, clean minus poisoned."""
MEASURES = ("ISR", "ISR overwrite", "ASR-r@k", "ASR-r@k all", UD, "available reads", "available saves")
COUNTS = ("laundered saves",)
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")
"""A defence's colour and marker shape, by its place in the table: the shape tells it without the colour."""


def _ordered(values: pd.Series) -> list:
    return list(dict.fromkeys(values.tolist()))


def _kinds(table: pd.DataFrame) -> list[str]:
    """Columns of text beside ``row``, ``ranking`` and ``tier`` (a poison variant, say): each tells rows apart too."""
    known = {"row", "ranking", "tier"}
    return [name for name in table.columns if name not in known and not pd.api.types.is_numeric_dtype(table[name])]


def _series(rows: pd.DataFrame) -> pd.Series:
    """Each row's defence as the chart names it: ``row``, with any other text column's value beside it."""
    kinds = _kinds(rows)
    if not kinds:
        return rows["row"]
    return rows[["row", *kinds]].astype(str).agg(" · ".join, axis=1)


def choices(table: pd.DataFrame, tier: str | None = None) -> dict[str, list]:
    """What ``table`` offers: its ``tiers`` (in table order), and for ``tier`` (the first by default) its ``rates``
    (ascending), ``rankings``, ``k`` (ascending) and defence ``rows`` (in table order).

    Examples:
        >>> from memlab.poison import results
        >>> choices(results("data/results/poison/locomo/poison.csv"), "query")["rates"]
        [0.001, 0.005, 0.01, 0.02, 0.05]
    """
    tiers = _ordered(table["tier"])
    tier = tiers[0] if tier is None else _known("tier", tier, tiers)
    rows = table[table["tier"] == tier]
    return {
        "tiers": tiers,
        "rates": sorted(set(rows["rate"].tolist())),
        "rankings": _ordered(rows["ranking"]),
        "k": sorted(set(rows["k"].tolist())),
        "rows": _ordered(_series(rows)),
    }


def _known(name: str, value: object, known: Sequence) -> object:
    """``value`` as the table has it (a rate matched to within rounding); else an InvalidArgument naming ``name``
    and what the table has."""
    for each in known:
        if each == value or (isinstance(each, float) and isinstance(value, int | float) and np.isclose(each, value)):
            return each
    raise InvalidArgument(f"the table has no {name} {value!r}; it has {', '.join(map(str, known))}")


def _picked(table: pd.DataFrame, tier: str | None, ranking: str | None, k: int | None) -> tuple[pd.DataFrame, int]:
    """The rows of ``tier`` and ``ranking`` (all rankings when None) at ``k`` (10 when the table has it, else its
    largest), and that k."""
    offered = choices(table, tier)
    tier = tier if tier is not None else offered["tiers"][0]
    k = _known("k", k, offered["k"]) if k is not None else (10 if 10 in offered["k"] else offered["k"][-1])
    rows = table[(table["tier"] == tier) & (table["k"] == k)]
    if ranking is not None:
        rows = rows[rows["ranking"] == _known("ranking", ranking, offered["rankings"])]
    return rows, k


def _with_ud(rows: pd.DataFrame) -> pd.DataFrame:
    rows = rows.copy()
    if {"target S@10 clean", "target S@10 poisoned"} <= set(rows.columns):
        rows[UD] = rows["target S@10 clean"] - rows["target S@10 poisoned"]
    return rows


def at_rate(
    table: pd.DataFrame, rate: float, *, tier: str | None = None, ranking: str | None = None, k: int | None = None
) -> pd.DataFrame:
    """The defences × rankings of ``table`` at one ``rate`` (of ``tier``, the table's first by default): ``row``,
    ``ranking``, ``poison rate``, ISR, ``ISR overwrite``, ``ASR-r@{k}``, ``ASR-r@{k} all``, UD (``UD S@10``),
    ``available reads``, ``available saves`` and ``laundered saves`` — those the table has.

    Args:
        table: ``memlab.poison.results()`` or ``memlab.poison.run(...)`` tables, concatenated.
        rate: one of the table's rates for the tier (as asked of ``run``).
        tier: the attack tier.
        ranking: one ranking, or None for all.
        k: the cut-off of ASR-r@k; 10 when the table has it, else its largest.

    Raises:
        InvalidArgument: a tier, rate, ranking or k the table does not have, naming it and those it has.

    Examples:
        >>> from memlab.poison import results
        >>> at_rate(results("data/results/poison/locomo/poison.csv"), 0.01, tier="query", ranking="dense")["row"][0]
        'integrity-ignored'
    """
    rows, k = _picked(table, tier, ranking, k)
    rate = _known("rate", rate, choices(table, tier)["rates"])
    rows = _with_ud(rows[rows["rate"] == rate])
    kept = [c for c in ("row", *_kinds(rows), "ranking", "poison rate", *MEASURES, *COUNTS) if c in rows.columns]
    shown = rows[kept].rename(columns={"ASR-r@k": f"ASR-r@{k}", "ASR-r@k all": f"ASR-r@{k} all"})
    return shown.reset_index(drop=True)


def by_rate(
    table: pd.DataFrame, measure: str = "ASR-r@k", *, tier: str | None = None, ranking: str | None = None,
    k: int | None = None,
) -> pd.DataFrame:  # fmt: skip
    """``measure`` (a column of the table, or ``UD S@10``) per poison rate reached (rows, ascending) and defence
    (columns, in table order), for one ranking (the tier's first by default).

    Examples:
        >>> from memlab.poison import results
        >>> set(by_rate(results("data/results/poison/locomo/poison.csv"), ranking="lexical")["floor-trusted"])
        {0.0}
    """
    ranking = ranking if ranking is not None else choices(table, tier)["rankings"][0]
    rows, _ = _picked(table, tier, ranking, k)
    rows = _with_ud(rows).assign(series=lambda frame: _series(frame))
    if measure not in rows.columns:
        raise InvalidArgument(f"the table has no measure {measure!r}")
    wide = rows.pivot_table(index="poison rate", columns="series", values=measure, sort=True)
    return wide[_ordered(rows["series"])].rename_axis(columns="row")


def _percent(value: float) -> str:
    """A share as a person reads it: 0.0101 as ``1%``, 0.000786 as ``0.079%``."""
    return f"{value * 100:.2g}%"


@themed
def poisoning_figure(
    table: pd.DataFrame, *, tier: str | None = None, ranking: str | None = None, k: int | None = None,
    rate: float | None = None,
) -> ThemedFigure:  # fmt: skip
    """Two panels over the poison rate reached (log scale): ASR-r@k per defence, and UD (the victim's questions'
    S@10 lost) per defence; each defence its own colour and marker shape, drawn hollow and smaller in table order
    so defences with equal values show as nested shapes. ``rate`` (one of the table's) is marked by a dotted line.

    Examples:
        >>> from memlab.poison import results
        >>> [axis.get_ylabel() for axis in poisoning_figure(results("data/results/poison/locomo/poison.csv")).axes]
        ['ASR-r@10 (target questions)', 'UD: S@10 lost (target questions)']
    """
    tier = tier if tier is not None else choices(table)["tiers"][0]
    ranking = ranking if ranking is not None else choices(table, tier)["rankings"][0]
    _, k = _picked(table, tier, ranking, k)
    marked = None if rate is None else at_rate(table, rate, tier=tier, ranking=ranking, k=k)["poison rate"].iloc[0]
    attack, ud = by_rate(table, tier=tier, ranking=ranking, k=k), by_rate(table, UD, tier=tier, ranking=ranking, k=k)
    figure = ThemedFigure(figsize=(10, 3.8), layout="constrained")
    axes = figure.subplots(1, 2, sharex=True)
    for axis, wide, label in ((axes[0], attack, f"ASR-r@{k} (target questions)"),
                              (axes[1], ud, "UD: S@10 lost (target questions)")):  # fmt: skip
        for place, row in enumerate(wide.columns):
            axis.plot(
                wide.index, wide[row], color=COLOURS[place % len(COLOURS)], marker=MARKERS[place % len(MARKERS)],
                markersize=max(4, 12 - 2 * place), markerfacecolor="none", markeredgewidth=1.8, linewidth=1.2,
            )  # fmt: skip
        axis.set_xscale("log")
        axis.set_xticks(list(wide.index), [_percent(value) for value in wide.index])  # the rates measured
        axis.xaxis.set_minor_formatter(FuncFormatter(lambda *_: ""))
        axis.set_ylim(-0.05, 1.05)
        axis.set_ylabel(label)
        axis.set_xlabel("poison rate (poisoned / all memories)")
        if marked is not None:
            axis.axvline(marked, color=INK, linestyle=":", linewidth=1, alpha=0.6, gid="rate")
    axes[0].set_title(f"{tier} tier, {ranking} ranking", loc="left", fontsize=10)
    handles = [
        Line2D([], [], color=COLOURS[place % len(COLOURS)], marker=MARKERS[place % len(MARKERS)],
               markerfacecolor="none", markeredgewidth=1.8, label=row)
        for place, row in enumerate(attack.columns)
    ]  # fmt: skip
    figure.legend(handles=handles, loc="outside lower center", ncols=min(4, len(handles)), frameon=False)
    return figure


class PoisoningLab(Panel):
    """A slider over the table's poison rates, a ranking, a tier and a k: the defences' table at that rate and the
    chart with the rate marked.

    Args:
        table: ``memlab.poison.results()`` (or ``run`` tables, concatenated).

    Attributes:
        tier, rate, ranking, k: the controls (a dropdown, a slider over the tier's rates, dropdowns), each offering
            what the table has.
        table: the defences at the picked rate (HTML); chart: the figure (HTML, in the page's colours).
        shown: the rows the table shows (``at_rate``).

    Examples:
        >>> from memlab.poison import results
        >>> lab = PoisoningLab(results("data/results/poison/locomo/poison.csv"))
        >>> lab.rate.value = 0.05; lab.shown.set_index("row").loc["floor-trusted", "ASR-r@10"].item()
        0.0
    """

    def __init__(self, table: pd.DataFrame) -> None:
        self.results = table
        offered = choices(table)
        self.tier = widgets.Dropdown(options=offered["tiers"], description="tier")
        self.rate = widgets.SelectionSlider(options=[("?", 0.0)], description="poison rate", continuous_update=False)
        self.ranking = widgets.Dropdown(description="ranking")
        self.k = widgets.Dropdown(description="k")
        self.table, self.chart = widgets.HTML(), widgets.HTML()
        self.shown = pd.DataFrame()
        self._updating = False
        self._offer()
        self.tier.observe(lambda _: self._offer(), names="value")
        for control in (self.rate, self.ranking, self.k):
            control.observe(lambda _: self.draw(), names="value")
        controls = widgets.HBox(
            [self.tier, self.rate, self.ranking, self.k], layout=widgets.Layout(flex_flow="row wrap")
        )
        self.widget = widgets.VBox([controls, self.table, self.chart])
        self.draw()

    def _offer(self) -> None:
        """The rates, rankings and k of the picked tier (keeping the picks the tier also has)."""
        offered = choices(self.results, self.tier.value)
        self._updating = True
        try:
            rate, ranking, k = self.rate.value, self.ranking.value, self.k.value
            self.rate.options = [(_percent(value), value) for value in offered["rates"]]
            self.rate.value = rate if rate in offered["rates"] else offered["rates"][min(2, len(offered["rates"]) - 1)]
            self.ranking.options = offered["rankings"]
            self.ranking.value = ranking if ranking in offered["rankings"] else offered["rankings"][0]
            self.k.options = offered["k"]
            self.k.value = k if k in offered["k"] else (10 if 10 in offered["k"] else offered["k"][-1])
        finally:
            self._updating = False
        self.draw()

    def draw(self) -> None:
        """Show the defences at the picked rate and the chart with that rate marked."""
        if self._updating:
            return
        picks = {"tier": self.tier.value, "k": self.k.value}
        self.shown = at_rate(self.results, self.rate.value, ranking=self.ranking.value, **picks)
        reached = self.shown["poison rate"].iloc[0] if len(self.shown) else self.rate.value
        self.table.value = (
            f"<p><b>{html.escape(self.ranking.value)}</b>, {html.escape(self.tier.value)} tier: "
            f"{reached:.2%} of the memories poisoned</p>"
            + html_table(self.shown.round(3).assign(**{"poison rate": self.shown["poison rate"].map("{:.2%}".format)}))
        )
        figure = poisoning_figure(self.results, ranking=self.ranking.value, rate=self.rate.value, **picks)
        self.chart.value = figure._repr_html_()
