"""The audit trail viewer: the audit as a filterable table, each session's taint over time, and where integrity
was lowered.

``filter_audit`` narrows ``store.audit()`` by session, tool, outcome, level, integrity and time; ``taint_timeline``
turns ``store.sessions()`` and ``store.taint_events()`` into one row per stretch of time a session spent at a label;
``integrity_events`` are the taint events that lowered a session's integrity (untrusted input, or a read of an
untrusted version). Every row shows the integrity of the taint it was made at; untrusted rows and stretches are
hatched.

``AuditViewer(store)`` alone in a notebook cell shows the viewer, and follows the store live (it listens to
``store.listeners``): every call, session or escalation redraws it. Its table is HTML:

Examples:
    >>> AuditViewer(store).table.value.startswith("<b>6 of 6 calls</b>")
    True
"""

from __future__ import annotations

import html
from collections.abc import Collection

import ipywidgets as widgets
import pandas as pd

from memlab import Verification
from memlab.labels import Integrity, Label
from memlab.levels import Level
from memlab.store import MemoryStore
from memlab.widgets.render import (
    LEVEL_COLOURS,
    THEME,
    UNTRUSTED_COLOUR,
    Panel,
    badge,
    clock_time,
    html_table,
    integrity_badge,
    level_row,
    pill,
    plural,
)

__all__ = [
    "filter_audit",
    "taint_timeline",
    "integrity_events",
    "timeline_html",
    "integrity_events_html",
    "verification_html",
    "AuditViewer",
]

_SHOWN = [
    "seq",
    "at",
    "session_id",
    "agent",
    "taint",
    "integrity",
    "tool",
    "key",
    "query",
    "outcome",
    "records",
    "notes",
    "message",
]
_OUTCOME_COLOURS = {"ok": "#2e7d32", "not_found": "#616161"}
_SHORT = 18  # a stretch narrower than this (% of the bar) shows its level's initial; the legend names them
HINT = "Ctrl-click (⌘-click on a Mac) picks several; nothing picked shows every row."


def filter_audit(
    audit: pd.DataFrame,
    *,
    sessions: Collection[str] = (),
    tools: Collection[str] = (),
    outcomes: Collection[str] = (),
    levels: Collection[Level | str] = (),
    integrity: Collection[Integrity | str] = (),
    since: str | pd.Timestamp | None = None,
    until: str | pd.Timestamp | None = None,
) -> pd.DataFrame:
    """The rows of ``audit`` that match every filter given; an empty filter keeps everything.

    Args:
        audit: ``store.audit()``.
        sessions: values of ``session_id`` to keep.
        tools: values of ``tool`` to keep.
        outcomes: values of ``outcome`` to keep.
        levels: taints at the call to keep, by level and categories: ``INTERNAL`` keeps ``INTERNAL@untrusted``
            too, ``INTERNAL@untrusted`` only itself.
        integrity: the integrity of the taint at the call to keep (``trusted``, ``untrusted``).
        since: the start of the time range, included (ISO 8601 text or a timestamp).
        until: the end of the time range, included (ISO 8601 text or a timestamp).

    Examples:
        >>> filter_audit(store.audit(), tools=["memory_save"], levels=["PUBLIC"])["key"].tolist()
        ['user-name', 'favourite-language']
    """
    keep = pd.Series(True, index=audit.index)
    for column, wanted in (("session_id", sessions), ("tool", tools), ("outcome", outcomes)):
        if wanted:
            keep &= audit[column].isin(list(wanted))
    taints = [Label.parse(taint) for taint in audit["taint"]]
    if levels:
        wanted = [Label.parse(level) for level in levels]
        keep &= pd.Series([any(_matches(taint, label) for label in wanted) for taint in taints], index=audit.index)
    if integrity:
        grades = {Integrity.parse(grade) for grade in integrity}
        keep &= pd.Series([taint.integrity in grades for taint in taints], index=audit.index)
    at = pd.to_datetime(audit["at"], utc=True, format="ISO8601")
    if since is not None:
        keep &= at >= _utc(since)
    if until is not None:
        keep &= at <= _utc(until)
    return audit[keep]


def _matches(taint: Label, wanted: Label) -> bool:
    """Whether a row's ``taint`` is the ``wanted`` label: the same level and categories, and, when ``wanted`` is
    untrusted, untrusted too (a level written plainly names both grades)."""
    same = (taint.level, taint.categories) == (wanted.level, wanted.categories)
    return same and (wanted.trusted or not taint.trusted)


def integrity_events(store: MemoryStore) -> pd.DataFrame:
    """The taint events that lowered a session's integrity, oldest first: what the host fed it, or the untrusted
    versions it read (the ``reason`` says which).

    Examples:
        >>> browser = MemoryStore().session("INTERNAL", session_id="browser")
        >>> _ = browser.lower_integrity(source="https://example.com/page")
        >>> integrity_events(browser.store)[["session_id", "to_level"]].values.tolist()
        [['browser', 'INTERNAL@untrusted']]
    """
    events = store.taint_events()
    lowered = [
        Label.parse(start).trusted and not Label.parse(end).trusted
        for start, end in zip(events["from_level"], events["to_level"], strict=True)
    ]
    return events[pd.Series(lowered, index=events.index, dtype=bool)].reset_index(drop=True)


def integrity_events_html(events: pd.DataFrame) -> str:
    """``integrity_events`` as a short table (time, session, from, to, why), or a line saying there were none.

    Examples:
        >>> "no session was lowered" in integrity_events_html(integrity_events(MemoryStore()))
        True
    """
    title = f"<b>integrity lowered</b> ({len(events)})"
    if events.empty:
        return f"{title} <small>no session was lowered: every save is trusted</small>"
    shown = events[["at", "session_id", "from_level", "to_level", "reason"]].rename(
        columns={"from_level": "from", "to_level": "to"}
    )
    return title + html_table(shown, cells={"at": _time, "from": badge, "to": badge}, row_style=level_row("to"))


def _utc(value: str | pd.Timestamp) -> pd.Timestamp:
    """A timestamp in UTC; one without a zone is read as UTC, as every time the store records is."""
    stamp = pd.Timestamp(value)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def taint_timeline(store: MemoryStore, *, until: str | None = None) -> pd.DataFrame:
    """Each session's taint over time: one row per stretch a session spent at one level.

    Args:
        store: the store.
        until: where open stretches end; by default the latest time the store recorded (audit, sessions,
            escalations).
    Returns:
        Columns ``session_id``, ``agent``, ``level`` (a name), ``start``, ``end`` (ISO text) and ``reason``
        (the escalation that began the stretch; empty for a session's start), by session then time.

    Examples:
        >>> timeline = taint_timeline(store)
        >>> timeline[timeline["session_id"] == "public-chat"][["level", "reason"]].values.tolist()
        [['PUBLIC', ''], ['INTERNAL', 'user shared their full name']]
    """
    sessions, events = store.sessions(), store.taint_events()
    if until is None:
        times = [*store.audit()["at"], *sessions["created_at"], *events["at"]]
        until = max(times) if times else store.now()
    rows = []
    for session in sessions.itertuples():
        stretches = [(session.initial_taint, session.created_at, "")]
        mine = events[events["session_id"] == session.id]
        stretches += list(zip(mine["to_level"], mine["at"], mine["reason"], strict=True))
        ends = [start for _, start, _ in stretches[1:]] + [until]
        rows += [
            {
                "session_id": session.id,
                "agent": session.agent,
                "level": level,
                "start": start,
                "end": end,
                "reason": why,
            }
            for (level, start, why), end in zip(stretches, ends, strict=True)
        ]
    return pd.DataFrame(rows, columns=["session_id", "agent", "level", "start", "end", "reason"])


def timeline_html(timeline: pd.DataFrame) -> str:
    """``taint_timeline`` as coloured bars, one per session, each stretch as wide as the time it lasted.

    When all times are equal (a fixed clock) each of a session's stretches gets an equal share instead.

    Examples:
        >>> timeline_html(taint_timeline(store)).count("<div title=")  # one bar per row of the timeline
        4
    """
    if timeline.empty:
        return "<p><i>no sessions yet</i></p>"
    start = pd.to_datetime(timeline["start"], utc=True, format="ISO8601")
    end = pd.to_datetime(timeline["end"], utc=True, format="ISO8601")
    origin, span = start.min(), (end.max() - start.min()).total_seconds()
    lines = []
    for session_id, stretches in timeline.groupby("session_id", sort=False):
        bars = []
        for index, row in stretches.iterrows():
            if span > 0:
                left = 100 * (start[index] - origin).total_seconds() / span
                width = 100 * (end[index] - start[index]).total_seconds() / span
            else:
                position = list(stretches.index).index(index)
                left, width = 100 * position / len(stretches), 100 / len(stretches)
            taint = Label.parse(row["level"])  # a label is drawn in its level's hue, named whole
            level = taint.level
            tip = html.escape(f"{row['level']} from {row['start']} to {row['end']} {row['reason']}".strip())
            label = str(taint) if width >= _SHORT else level.name[0]
            # An untrusted stretch says so in its text and under it, in the untrusted hue.
            untrusted = "" if taint.trusted else f"box-shadow:inset 0 -4px 0 {UNTRUSTED_COLOUR};"
            bars.append(
                f'<div title="{tip}" style="position:absolute;left:{left:.2f}%;width:max({width:.2f}%,1.2em);'
                f"top:0;bottom:0;background:{LEVEL_COLOURS[level]};color:#ffffff;font-size:11px;line-height:18px;"
                f"overflow:hidden;white-space:nowrap;box-sizing:border-box;padding:0 3px;{untrusted}"
                f'border-right:1px solid {THEME["background"]}">{"" if taint.trusted else "⚠ "}{label}</div>'
            )
        lines.append(
            '<div style="display:flex;align-items:center;margin:2px 0;gap:6px">'
            f'<div style="flex:0 0 auto;min-width:90px;font-size:12px;white-space:nowrap">'
            f"{html.escape(str(session_id))}</div>"
            f'<div style="position:relative;flex:1 1 auto;min-width:120px;height:18px;background:{THEME["header"]}">'
            f"{''.join(bars)}</div></div>"
        )
    legend = " ".join(f"{badge(level)} = {level.name[0]}" for level in Level)
    return (
        f"<b>taint over time</b> <small>(narrow stretches show the initial: {legend}; ⚠ and an underline: "
        "untrusted)</small>" + "".join(lines)
    )


def verification_html(result: Verification) -> str:
    """The audit chain's verdict in one line: verified (rows, head hash) or the first broken link.

    Examples:
        >>> "verified" in verification_html(MemoryStore().verify())
        True
    """
    if result.ok:
        return (
            f"{pill('✔ audit chain verified', '#2e7d32')}: {plural(result.audit_rows, 'row')}, "
            f"{plural(result.versions, 'version')}; head <code>{result.head[:16]}…</code>"
        )
    return f"{pill('✘ audit chain BROKEN', '#c62828')}: {html.escape(result.problems[0])}" + (
        f" (and {len(result.problems) - 1} more)" if len(result.problems) > 1 else ""
    )


def _time(at: str) -> str:
    """A row's time of day to the second (a full ISO time wraps over two lines; ``seq`` orders calls within a
    second); the whole time is its tip."""
    return f'<span title="{html.escape(at)}" style="white-space:nowrap">{clock_time(at)}</span>'


def _span(since: str | None, until: str | None) -> str:
    """The time range picked, as a clock reads it, and its day: "12:00:01 to 12:00:06 UTC, 1 Jan 2026".

    Examples:
        >>> _span("2026-01-01T12:00:01.000000+00:00", "2026-01-02T08:30:00.000000+00:00")
        '12:00:01 UTC, 1 Jan 2026 to 08:30:00 UTC, 2 Jan 2026'
        >>> _span(None, None)
        'no calls yet'
    """
    if not since or not until:
        return "no calls yet"
    first, last = (pd.Timestamp(at).tz_convert("UTC") for at in (since, until))
    day = [f"{stamp.day} {stamp:%b %Y}" for stamp in (first, last)]
    if day[0] == day[1]:
        return f"{clock_time(since)} to {clock_time(until)} UTC, {day[0]}"
    return f"{clock_time(since)} UTC, {day[0]} to {clock_time(until)} UTC, {day[1]}"


def _outcome(value: str) -> str:
    return pill(value, _OUTCOME_COLOURS.get(value, "#c62828"))


def _select(description: str) -> widgets.SelectMultiple:
    return widgets.SelectMultiple(
        description=description,
        rows=4,
        tooltip=HINT,
        style={"description_width": "64px"},
        layout=widgets.Layout(width="220px"),
    )


class AuditViewer(Panel):
    """The store's audit, filtered as you pick sessions, tools, outcomes, levels, integrity and a time range.

    Nothing picked in a list means no filter on that column (``hint`` says so, and how to pick several). The
    viewer re-reads the store whenever it records a change (``refresh``); ``close()`` stops that.

    Attributes:
        sessions: a multiple-choice filter on sessions.
        tools: a multiple-choice filter on tools.
        outcomes: a multiple-choice filter on outcomes.
        levels: a multiple-choice filter on the taint at the call (its level, whatever its integrity).
        integrity: a multiple-choice filter on the integrity of the taint at the call.
        times: a range slider over the audit's times.
        span: the range slider's readout, in full.
        verified: the audit chain's verdict (``verification_html``).
        table: the rows (HTML, with a count; it scrolls sideways inside the viewer).
        timeline: each session's taint over time (HTML bars).
        lowered: the integrity events (``integrity_events_html``).

    Examples:
        >>> viewer = AuditViewer(MemoryStore())
        >>> "0 of 0" in viewer.table.value
        True
    """

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.audit = store.audit()
        self.sessions, self.tools = _select("session"), _select("tool")
        self.outcomes, self.levels = _select("outcome"), _select("level")
        self.levels.options = [level.name for level in Level]
        self.integrity = _select("integrity")
        self.integrity.options = [str(grade) for grade in sorted(Integrity, reverse=True)]
        # The slider's own readout is a fixed width that cuts two timestamps; ``span`` shows them in full.
        self.times = widgets.SelectionRangeSlider(
            options=[""],
            description="time",
            readout=False,
            style={"description_width": "56px"},
            layout=widgets.Layout(width="auto", flex="1 1 240px", max_width="640px"),
        )
        self.span = widgets.HTML()
        self.hint = widgets.HTML(f"<small>{html.escape(HINT)}</small>")
        self.table, self.timeline, self.verified = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.lowered = widgets.HTML()
        for control in (self.sessions, self.tools, self.outcomes, self.levels, self.integrity, self.times):
            control.observe(lambda _: self.show(), names="value")
        wrap = widgets.Layout(flex_flow="row wrap", align_items="center")
        filters = widgets.HBox([self.sessions, self.tools, self.outcomes, self.levels, self.integrity], layout=wrap)
        self.widget = widgets.VBox(
            [
                self.verified,
                filters,
                self.hint,
                widgets.HBox([self.times, self.span], layout=wrap),
                self.table,
                self.timeline,
                self.lowered,
            ],
            layout=widgets.Layout(width="100%"),
        )
        self.refresh()
        store.listeners.append(self.refresh)

    def close(self) -> None:
        """Stop following the store."""
        if self.refresh in self.store.listeners:
            self.store.listeners.remove(self.refresh)

    def refresh(self) -> None:
        """Re-read the audit and the sessions, keep what is still picked, and redraw."""
        self._showing = False  # one redraw at the end, not one per control updated
        self.audit = self.store.audit()
        self.verified.value = verification_html(self.store.verify())
        for control, column in ((self.sessions, "session_id"), (self.tools, "tool"), (self.outcomes, "outcome")):
            picked = control.value
            control.options = sorted(set(self.audit[column]))
            control.value = tuple(value for value in picked if value in control.options)
        times = sorted(set(self.audit["at"])) or [""]
        self.times.options = [(clock_time(time) if time else "-", time) for time in times]
        self.times.index = (0, len(times) - 1)
        self._showing = True
        self.show()

    def show(self) -> None:
        """Redraw the table and the timeline with the current filters."""
        if not getattr(self, "_showing", True):
            return
        since, until = self.times.value if self.times.value and self.times.value[0] else (None, None)
        self.span.value = f"<small>{_span(since, until)}</small>"
        shown = filter_audit(
            self.audit,
            sessions=self.sessions.value,
            tools=self.tools.value,
            outcomes=self.outcomes.value,
            levels=self.levels.value,
            integrity=self.integrity.value,
            since=since,
            until=until,
        )
        self.table.value = (
            f"<b>{len(shown)} of {plural(len(self.audit), 'call')}</b> <small>(scroll sideways for all columns)</small>"
            + html_table(
                shown.assign(integrity=[str(Label.parse(taint).integrity) for taint in shown["taint"]])[_SHOWN],
                cells={"taint": badge, "integrity": integrity_badge, "outcome": _outcome, "at": _time},
                row_style=level_row("taint"),
                empty="no call matches",
            )
        )
        self.timeline.value = timeline_html(taint_timeline(self.store))
        self.lowered.value = integrity_events_html(integrity_events(self.store))
