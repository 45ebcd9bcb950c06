"""Matplotlib figures of the notebooks: which version each level sees, and the audit's calls over time.

Colour is never the only carrier: levels are also named (axis labels, legends) and drawn with their own marker
shape; deleted versions and calls that did not succeed have their own markers, explained in a legend.

Examples:
    >>> figure = visibility_figure(store, ["user-name"])
    >>> [label.get_text() for label in figure.axes[0].get_xticklabels()]
    ['PUBLIC', 'INTERNAL', 'CONFIDENTIAL', 'RESTRICTED']
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from memlab.levels import Level
from memlab.store import MemoryStore
from memlab.widgets.render import LEVEL_COLOURS
from memlab.widgets.views import seen_column, shadow_table

__all__ = ["LEVEL_MARKERS", "visibility_figure", "audit_timeline_figure"]

LEVEL_MARKERS = {Level.PUBLIC: "o", Level.INTERNAL: "s", Level.CONFIDENTIAL: "D", Level.RESTRICTED: "^"}
"""A marker shape per level, so a level reads without its colour."""


def visibility_figure(store: MemoryStore, keys: Sequence[str], agent: str = "main") -> Figure:
    """Rows: every version of ``keys``; columns: the levels. A filled square where that level's sessions see the
    version, a hollow one at a deleted version's own level.

    Read from the auditor's history (``shadow_table``), so drawing adds nothing to the audit.
    """
    rows = pd.concat([shadow_table(store, key, agent) for key in keys], ignore_index=True)
    figure = Figure(figsize=(8, 0.45 * len(rows) + 1.6), layout="constrained")
    axis = figure.subplots()
    records = rows.to_dict("records")
    for y, row in enumerate(records):
        for x, level in enumerate(Level):
            if row[seen_column(level)]:
                axis.scatter(x, y, s=220, marker="s", color=LEVEL_COLOURS[level])
        if row["status"] == "deleted":
            level = Level.parse(row["classification"])
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


def audit_timeline_figure(audit: pd.DataFrame) -> Figure:
    """Each call of ``audit`` (``store.audit()``) by session and order: its taint by colour, marker shape and a
    legend; a call that did not succeed drawn hollow; the tool named above it."""
    figure = Figure(figsize=(9, 2.8), layout="constrained")
    axis = figure.subplots()
    sessions = list(dict.fromkeys(audit["session_id"]))
    for row in audit.itertuples(index=False):
        level = Level.parse(row.taint)
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
    used = [level for level in Level if level.name in set(audit["taint"])]
    handles = [
        Line2D([], [], marker=LEVEL_MARKERS[level], linestyle="", color=LEVEL_COLOURS[level], label=level.name)
        for level in used
    ]
    handles.append(Line2D([], [], marker="o", linestyle="", markerfacecolor="none", markeredgecolor="grey",
                          markeredgewidth=2, label="not ok (refused, invalid, not found)"))  # fmt: skip
    axis.legend(handles=handles, title="taint at the call", loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return figure
