"""Jupyter widgets (ipywidgets 8) over memlab's public API, each thin over plain, tested functions.

Every widget object displays itself in a notebook cell (its ``.widget`` is the ipywidgets box):

Examples:
    >>> from memlab import MemoryStore, widgets as mw
    >>> sim = mw.simulator(MemoryStore())  # sessions at PUBLIC, INTERNAL, CONFIDENTIAL side by side

    - ``simulator(store, sessions)`` — sessions side by side: the five tools, taint escalation, untrusted input
      ("feed untrusted content"), live effective views at each session's floor.
    - ``shadow_inspector(store, key, agent)`` — every version of a key, its integrity, and which one each level
      sees (for either floor).
    - ``audit_viewer(store)`` — the audit as a filterable table (integrity too), each session's taint over time,
      and where integrity was lowered.
    - ``stemming_lab(collection, analyzers, agent)`` — terms per analyzer and side-by-side results.
    - ``policy_lab(choices)`` — run a leak check on a policy variant and read its counterexample.
    - ``poisoning_lab(table)`` — the poisoning lab's results: a slider over the poison rate, ASR-r@k and UD per
      defence as a table and a chart.
    - ``classroom()`` — a lesson: five exercises (predict, do, check) on a simulator, and a teacher's view.
    - ``class_page()`` — under ``memlab classroom --class DIR|URL``: a student's page or the teacher's; else None.
    - ``table(frame, level_column)`` — a DataFrame as a compact table that fits the page (or scrolls inside it).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
from IPython.display import HTML

from memlab.demo import effective_views
from memlab.eval.collections import Collection
from memlab.policy import Policy
from memlab.store import MemoryStore
from memlab.widgets.audit import AuditViewer, filter_audit, taint_timeline
from memlab.widgets.classroom import Classroom
from memlab.widgets.figures import audit_timeline_figure, measures_figure, visibility_figure
from memlab.widgets.inspector import ShadowInspector
from memlab.widgets.poisoning import PoisoningLab, at_rate, poisoning_figure
from memlab.widgets.policylab import PolicyLab, run_check, steps_table, verdict
from memlab.widgets.render import clock_time, highlight, html_table, level_row
from memlab.widgets.simulator import SessionSimulator, SessionSpec, run_tool, tool_arguments
from memlab.widgets.stemming import DEFAULT_ANALYZERS, StemmingLab, analyze_table, indexed_session, top_results
from memlab.widgets.views import effective_view, saved_keys, shadow_table, versions_table, view_changes

__all__ = [
    "simulator",
    "shadow_inspector",
    "audit_viewer",
    "stemming_lab",
    "policy_lab",
    "poisoning_lab",
    "classroom",
    "class_page",
    "in_class",
    "table",
    "Classroom",
    "SessionSimulator",
    "ShadowInspector",
    "AuditViewer",
    "StemmingLab",
    "PolicyLab",
    "PoisoningLab",
    "at_rate",
    "poisoning_figure",
    "tool_arguments",
    "run_tool",
    "shadow_table",
    "versions_table",
    "view_changes",
    "effective_view",
    "saved_keys",
    "filter_audit",
    "taint_timeline",
    "analyze_table",
    "top_results",
    "indexed_session",
    "run_check",
    "verdict",
    "steps_table",
    "effective_views",
    "highlight",
    "audit_timeline_figure",
    "measures_figure",
    "visibility_figure",
]


def simulator(store: MemoryStore, sessions: Sequence[SessionSpec] | None = None) -> SessionSimulator:
    """A ``SessionSimulator`` over ``store`` (by default sessions at PUBLIC, INTERNAL and CONFIDENTIAL).

    Examples:
        >>> specs = [("alice-public", "PUBLIC", "main"), ("bob-hr", "CONFIDENTIAL", "main")]
        >>> simulator(MemoryStore(), specs).panel("bob-hr").session.taint
        Label('CONFIDENTIAL')
    """
    return SessionSimulator(store, sessions)


def shadow_inspector(store: MemoryStore, key: str = "", agent: str = "main") -> ShadowInspector:
    """A ``ShadowInspector`` showing ``key`` of ``agent``.

    Examples:
        >>> "2 versions" in shadow_inspector(store, "user-name").table.value
        True
    """
    return ShadowInspector(store, key, agent)


def audit_viewer(store: MemoryStore) -> AuditViewer:
    """An ``AuditViewer`` of ``store``'s audit and taint events.

    Examples:
        >>> "6 of 6 calls" in audit_viewer(store).table.value
        True
    """
    return AuditViewer(store)


def stemming_lab(
    collection: Collection, analyzers: Sequence[str] = DEFAULT_ANALYZERS, agent: str | None = None
) -> StemmingLab:
    """A ``StemmingLab`` on ``collection`` (e.g. ``memlab.eval.load_locomo("../data/locomo10.json")``).

    Examples:
        >>> stemming_lab(load_locomo(), ["none", "porter", "snowball"], agent="conv-26").agent.value
        'conv-26'
    """
    return StemmingLab(collection, analyzers, agent)


def policy_lab(choices: Sequence[Policy | str] | None = None) -> PolicyLab:
    """A ``PolicyLab`` offering ``choices`` (default: every registered policy).

    Examples:
        >>> [name for name, _ in policy_lab(["strict", "frozen-taint"]).policy.options]
        ['strict', 'frozen-taint']
    """
    return PolicyLab(choices)


def poisoning_lab(table: pd.DataFrame) -> PoisoningLab:
    """A ``PoisoningLab`` over ``table`` (``memlab.poison.results()``: the bundled LoCoMo results by default).

    Examples:
        >>> from memlab.poison import results
        >>> [label for label, _ in poisoning_lab(results("data/results/poison/locomo/poison.csv")).rate.options][:3]
        ['0.1%', '0.5%', '1%']
    """
    return PoisoningLab(table)


def classroom() -> Classroom:
    """A ``Classroom``: the lesson on a fresh in-memory store, three sessions ready; ``.teacher`` is its teacher's view.

    Examples:
        >>> classroom().exercise(2).check()
        'Predict first: pick an answer, then do the steps.'
    """
    return Classroom()


def class_page():
    """Under ``memlab classroom --class DIR|URL``: this visit's page of the class (a student's, or the teacher's with
    the class's token); None outside a class. See ``memlab.widgets.classpage``."""
    from memlab.widgets.classpage import class_page as page

    return page()


def in_class() -> bool:
    """Whether this kernel serves a class (``memlab classroom --class DIR|URL``)."""
    from memlab.widgets.classpage import in_class as serving

    return serving()


def table(frame: pd.DataFrame, level_column: str | None = None) -> HTML:
    """``frame`` as a notebook shows it best: a compact table, its cells wrapping at words and the whole scrolling
    sideways inside its output when wider than the page (never cut); lists comma-separated, missing values empty,
    times (``*_at`` columns) to the second, and each row tinted by the level in ``level_column``.

    Examples:
        >>> shown = table(store.history("user-name")[["classification", "saved_at"]], "classification").data
        >>> "2026-01-01 12:00:00" in shown and "overflow-x:auto" in shown
        True
    """
    times = {name: _when for name in frame.columns if str(name) == "at" or str(name).endswith("_at")}
    return HTML(html_table(frame, cells=times, row_style=level_row(level_column) if level_column else None))


def _when(at: object) -> str:
    """A recorded time as a person reads it, to the second: ``2026-01-01 09:00:00`` (empty when missing)."""
    if not isinstance(at, str) or not at:
        return ""
    return f"{at[:10]} {clock_time(at)}"
