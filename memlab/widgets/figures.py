"""Matplotlib figures of the notebooks: which version each level sees, the audit's calls over time, and the
relevance lab's measures.

Colour is never the only carrier: levels are also named (axis labels, legends) and drawn with their own marker
shape; deleted versions and calls that did not succeed have their own markers, explained in a legend.

Each is a ``ThemedFigure``: in a notebook it shows as an SVG with no background, its text, axes and ticks in the
page's own text colour, so it reads in JupyterLab's and Voila's light and dark themes alike.

Examples:
    >>> figure = visibility_figure(store, ["user-name"])
    >>> [label.get_text() for label in figure.axes[0].get_xticklabels()]
    ['PUBLIC', 'INTERNAL', 'CONFIDENTIAL', 'RESTRICTED']
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence
from functools import wraps

import pandas as pd
from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from memlab.labels import Label
from memlab.levels import Level
from memlab.store import MemoryStore
from memlab.widgets.render import LEVEL_COLOURS
from memlab.widgets.views import seen_column, shadow_table

__all__ = ["INK", "LEVEL_MARKERS", "ThemedFigure", "visibility_figure", "audit_timeline_figure", "measures_figure"]

LEVEL_MARKERS = {Level.PUBLIC: "o", Level.INTERNAL: "s", Level.CONFIDENTIAL: "D", Level.RESTRICTED: "^"}
"""A marker shape per level, so a level reads without its colour."""

INK = "#010203"
"""What text, axes and ticks are drawn in: a near-black no chart uses for anything else, which a notebook's SVG
turns into ``currentColor`` (the page's text colour); a PNG of the figure shows it as black."""
THEMED = {
    "text.color": INK,
    "axes.labelcolor": INK,
    "axes.edgecolor": INK,
    "xtick.color": INK,
    "ytick.color": INK,
    "axes.facecolor": "none",
    "figure.facecolor": "none",
    "legend.facecolor": "none",
}
_SIZE = re.compile(r'<svg([^>]*?) width="([\d.]+)pt" height="[\d.]+pt"')


class ThemedFigure(Figure):
    """A figure that a notebook shows in the page's colours: an SVG with no background, its ink ``currentColor``.

    Examples:
        >>> "currentColor" in visibility_figure(store, ["user-name"])._repr_html_()
        True
    """

    def _repr_html_(self) -> str:
        drawn = io.StringIO()
        self.savefig(drawn, format="svg", transparent=True, metadata={"Date": None})
        svg = drawn.getvalue()
        svg = svg[svg.index("<svg") :].replace(INK, "currentColor")  # HTML takes no XML prolog
        # As wide as drawn at most, narrower with the page: a chart shrinks, it is never cut.
        svg = _SIZE.sub(r'<svg\1 style="width:100%;max-width:\2pt;height:auto"', svg, count=1)
        return f'<div class="memlab-figure" style="max-width:100%">{svg}</div>'


def themed(draw: Callable[..., Figure]) -> Callable[..., Figure]:
    """Draw with the theme's ink on no background (each artist reads its colours when made)."""

    @wraps(draw)
    def drawing(*args, **kwargs) -> Figure:
        with rc_context(THEMED):
            return draw(*args, **kwargs)

    return drawing


@themed
def visibility_figure(store: MemoryStore, keys: Sequence[str], agent: str = "main") -> ThemedFigure:
    """Rows: every version of ``keys``; columns: the levels. A filled square where that level's sessions see the
    version, a hollow one at a deleted version's own level.

    Read from the auditor's history (``shadow_table``), so drawing adds nothing to the audit.
    """
    rows = pd.concat([shadow_table(store, key, agent) for key in keys], ignore_index=True)
    figure = ThemedFigure(figsize=(8, 0.45 * len(rows) + 1.6), layout="constrained")
    axis = figure.subplots()
    records = rows.to_dict("records")
    for y, row in enumerate(records):
        for x, level in enumerate(Level):
            if row[seen_column(level)]:
                axis.scatter(x, y, s=220, marker="s", color=LEVEL_COLOURS[level])
        if row["status"] == "deleted":
            level = Label.parse(row["classification"]).level  # an untrusted version's column is its level's
            axis.scatter(
                level.value, y, s=220, marker="s", facecolors="none", edgecolors=LEVEL_COLOURS[level], linewidths=2
            )
    labels = [
        f"{row['key']}@{row['classification']} v{row['version']}" + (" (deleted)" if row["status"] == "deleted" else "")
        for row in records
    ]
    axis.set_yticks(range(len(rows)), labels, fontsize=9)
    axis.set_xticks(range(len(Level)), [level.name for level in Level], fontsize=9)
    axis.set_xlim(-0.5, len(Level) - 0.5)
    axis.invert_yaxis()
    axis.set_xlabel("sessions at this taint")
    axis.set_title("which version each level sees")
    axis.legend(
        handles=[
            Line2D([], [], marker="s", linestyle="", color="grey", markersize=10, label="seen by that level"),
            Line2D(
                [],
                [],
                marker="s",
                linestyle="",
                markerfacecolor="none",
                markeredgecolor="grey",
                markeredgewidth=2,
                markersize=10,
                label="deleted (seen by none)",
            ),
        ],  # fmt: skip
        loc="upper center",
        bbox_to_anchor=(0.5, -0.18),
        ncols=2,
        frameon=False,
    )
    return figure


@themed
def audit_timeline_figure(audit: pd.DataFrame) -> ThemedFigure:
    """Each call of ``audit`` (``store.audit()``) by session and order: its taint by colour, marker shape and a
    legend; a call that did not succeed drawn hollow; the tool named above it."""
    figure = ThemedFigure(figsize=(9, 2.8), layout="constrained")
    axis = figure.subplots()
    sessions = list(dict.fromkeys(audit["session_id"]))
    for row in audit.itertuples(index=False):
        level = Label.parse(row.taint).level  # a label's categories are named in the audit, its hue is its level's
        y = sessions.index(row.session_id)
        fill = LEVEL_COLOURS[level] if row.outcome == "ok" else "none"
        axis.scatter(
            row.seq,
            y,
            s=90,
            marker=LEVEL_MARKERS[level],
            facecolors=fill,
            edgecolors=LEVEL_COLOURS[level],
            linewidths=2,
        )
        axis.annotate(
            row.tool.removeprefix("memory_"), (row.seq, y), textcoords="offset points", xytext=(0, 9), ha="center",
            fontsize=7,
        )  # fmt: skip
    axis.set_yticks(range(len(sessions)), sessions)
    axis.set_ylim(-0.6, len(sessions) - 0.3)
    axis.set_xlabel("call (audit order)")
    axis.set_title("calls by session and taint")
    levels = {Label.parse(taint).level for taint in audit["taint"]}  # INTERNAL@untrusted is drawn as INTERNAL
    used = [level for level in Level if level in levels]
    handles = [
        Line2D([], [], marker=LEVEL_MARKERS[level], linestyle="", color=LEVEL_COLOURS[level], label=level.name)
        for level in used
    ]
    handles.append(Line2D([], [], marker="o", linestyle="", markerfacecolor="none", markeredgecolor="grey",
                          markeredgewidth=2, label="not ok (refused, invalid, not found)"))  # fmt: skip
    axis.legend(handles=handles, title="taint at the call", loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return figure


@themed
def measures_figure(results, measures: tuple[str, ...] = ("S@1", "S@5", "S@10", "nDCG@10")) -> ThemedFigure:
    """The relevance lab's chart (``memlab.eval.report.chart``) of ``results``: each row's ``measures`` with 95%
    confidence intervals, in the page's colours."""
    from memlab.eval.report import draw_measures

    figure = ThemedFigure(figsize=(max(8, len(results.summary.index) * 0.8), 4.5), layout="constrained")
    draw_measures(figure.subplots(), results, measures)
    return figure
