"""The session simulator: several sessions side by side, the five tools, taint escalation, untrusted input, live
views.

Every tool call goes through ``memlab.tools.call`` (the store's hooks and the audit apply) and shows its JSON
result; after any change to the store (a click here, or code calling a session) every session's effective view
is redrawn, so what one session does visibly changes what the others can and cannot see. Views are computed
from history (``memlab.widgets.views``), so drawing them adds nothing to the audit.

Each session shows its integrity and floor. "feed untrusted content" is the host's ``lower_integrity`` (as when
it hands the model a web page): the session's saves are untrusted from then on, marked ``⚠`` and hatched in every
view; a session opened with a floor of TRUSTED never sees them.

Sessions sit side by side and wrap to a grid as the page narrows (three fit a 1024 px wide page); every text
field has a visible label, which is also its accessible name.

Examples:
    >>> sim = SessionSimulator(MemoryStore(), [("public-chat", "PUBLIC"), ("hr-review", "CONFIDENTIAL")])
    >>> sim.panel("hr-review").session.taint  # ``sim`` alone in a notebook cell shows the simulator
    Label('CONFIDENTIAL')
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as widgets
import pandas as pd

from memlab import tools
from memlab.errors import InvalidArgument, MemlabError
from memlab.labels import Integrity, Label
from memlab.levels import Level
from memlab.session import Session
from memlab.store import MemoryStore
from memlab.widgets.render import (
    LEVEL_COLOURS,
    UNTRUSTED_COLOUR,
    Panel,
    alert,
    badge,
    html_table,
    integrity_badge,
    json_html,
    level_button,
    level_row,
    pill,
)
from memlab.widgets.views import effective_view, versions_table, view_changes

__all__ = ["SessionSpec", "DEFAULT_SESSIONS", "open_session", "tool_arguments", "run_tool", "SessionSimulator"]

SessionSpec = (
    Session
    | str
    | tuple[str]
    | tuple[str, Level | str]
    | tuple[str, Level | str, str]
    | tuple[str, Level | str, str, Integrity | str]
)
"""A session, or ``(session_id, taint="PUBLIC", agent="main", floor="untrusted")`` (or just the id) to start one."""
FLOORS = (("untrusted: reads every grade", "untrusted"), ("trusted: hides untrusted", "trusted"))
"""The floors a new session may have, as the simulator's form offers them (label, value)."""

DEFAULT_SESSIONS: tuple[SessionSpec, ...] = (
    ("public-chat", Level.PUBLIC),
    ("team-chat", Level.INTERNAL),
    ("hr-review", Level.CONFIDENTIAL),
)
TOOLS = tuple(schema["name"] for schema in tools.SCHEMAS)


def open_session(store: MemoryStore, spec: SessionSpec) -> Session:
    """The session ``spec`` names: itself if it is one, else a new session of ``store``.

    Raises:
        InvalidArgument: a bad level, agent or floor, a session id the store already has, or a session of another
            store.

    Examples:
        >>> open_session(MemoryStore(), ("hr-review", "CONFIDENTIAL", "main")).taint
        Label('CONFIDENTIAL')
        >>> open_session(MemoryStore(), ("careful", "INTERNAL", "main", "trusted")).floor
        <Integrity.TRUSTED: 1>
    """
    if isinstance(spec, Session):
        if spec.store is not store:
            raise InvalidArgument(f"session {spec.id!r} belongs to another store")
        return spec
    session_id, *rest = (spec,) if isinstance(spec, str) else spec
    taint = rest[0] if rest else Level.PUBLIC
    agent = rest[1] if len(rest) > 1 else "main"
    floor = rest[2] if len(rest) > 2 else Integrity.UNTRUSTED
    return store.session(taint, agent, session_id=session_id, floor=floor)


def tool_arguments(
    tool: str, *, key: str = "", content: str = "", tags: str = "", query: str = "", tag: str = ""
) -> dict[str, Any]:
    """The arguments of ``tool`` from a form's text fields; ``tags`` is comma-separated.

    Empty ``tags`` and ``tag`` are left out (no tags, no filter); other empty fields are passed on, so the
    tool itself reports them.

    Examples:
        >>> tool_arguments("memory_save", key="k", content="c", tags="a, b")
        {'key': 'k', 'content': 'c', 'tags': ['a', 'b']}
    """
    if tool == "memory_save":
        split = [part.strip() for part in tags.split(",") if part.strip()]
        return {"key": key, "content": content, **({"tags": split} if split else {})}
    if tool in ("memory_get", "memory_delete"):
        return {"key": key}
    if tool == "memory_search":
        return {"query": query}
    if tool == "memory_list":
        return {"tag": tag} if tag else {}
    return {}


def run_tool(session: Session, tool: str, **form: str) -> dict[str, Any]:
    """Call ``tool`` for ``session`` through ``memlab.tools.call`` with the form's fields (see ``tool_arguments``).

    Examples:
        >>> run_tool(MemoryStore().session(), "memory_get", key="user-name")
        {'found': False, 'key': 'user-name'}
    """
    return tools.call(session, tool, tool_arguments(tool, **form))


LABEL_WIDTH = "58px"


def _text(label: str, placeholder: str = "", *, in_row: bool = False) -> widgets.Text:
    """A text field whose visible label (``description``) is its accessible name; ``in_row``: it shares a row
    with a button and takes the room the button leaves."""
    return widgets.Text(
        description=label,
        placeholder=placeholder,
        style={"description_width": LABEL_WIDTH},
        layout=widgets.Layout(width="auto", flex="1 1 120px" if in_row else None, min_width="0"),
    )


def _changed(mark: str) -> str:
    return pill(mark, "#6a1b9a", title="appeared or changed since the last action") if mark else ""


def _button(description: str, tooltip: str = "") -> widgets.Button:
    return widgets.Button(description=description, tooltip=tooltip, layout=widgets.Layout(width="auto"))


class SessionPanel(Panel):
    """One session's column: header, tool forms, escalation buttons, untrusted input, last result and effective view.

    Attributes:
        session: the session it drives.
        key, content, tags, query, tag: the form's text fields.
        buttons: tool name -> its button.
        reason: the reason field (escalation and untrusted input); escalate_buttons: level -> its button (enabled
            only above the taint).
        source, feed_button: what the host feeds the session, and the button that does (``lower_integrity``).
        header, result, view: HTML showing who the session is (taint, integrity, floor, what lowered it), its last
            result JSON, and its effective view at its floor (entries that appeared or changed since the last
            drawing are marked ``new``; vanished keys are named; untrusted ones are marked ``⚠`` and hatched).
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.key, self.content = _text("key", "e.g. user-name"), _text("content")
        self.tags = _text("tags", "comma-separated")
        self.query = _text("query", "natural language", in_row=True)
        self.tag = _text("tag", "optional filter", in_row=True)
        self.reason = _text("reason", "why, for the audit")
        self.source = _text("source", "what was fed", in_row=True)
        self.source.value = "web page"
        self.source.layout.min_width = "170px"  # a narrow column puts the button below rather than cut the source
        self.feed_button = _button(
            "⚠ feed untrusted content", "the host hands this session content no one vouches for: lower_integrity"
        )
        self.feed_button.style.button_color, self.feed_button.style.text_color = UNTRUSTED_COLOUR, "#ffffff"
        self.feed_button.on_click(lambda _: self.feed())
        self.buttons = {tool: _button(tool.removeprefix("memory_"), tool) for tool in TOOLS}
        for tool, button in self.buttons.items():
            button.on_click(lambda _, tool=tool: self.call(tool))
        self.escalate_buttons = {
            level: _button(f"↑ {level.name}", f"raise this session's taint to {level.name}") for level in Level
        }
        for level, button in self.escalate_buttons.items():
            level_button(button, level)
            button.on_click(lambda _, level=level: self.escalate(level))
        self.header, self.result, self.view = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self._drawn: pd.DataFrame | None = None  # the view as last drawn, to mark what changed

        def row(children: list[widgets.Widget]) -> widgets.HBox:
            return widgets.HBox(children, layout=widgets.Layout(flex_flow="row wrap", align_items="center"))

        self.widget = widgets.VBox(
            [
                self.header,
                self.key,
                self.content,
                self.tags,
                row([self.buttons[name] for name in ("memory_save", "memory_get", "memory_delete")]),
                row([self.query, self.buttons["memory_search"]]),
                row([self.tag, self.buttons["memory_list"]]),
                self.reason,
                row(list(self.escalate_buttons.values())),
                row([self.source, self.feed_button]),
                self.result,
                self.view,
            ],
            # Three columns fit a 1024 px page; narrower, they wrap to a grid (two, then one, per row).
            layout=widgets.Layout(flex="1 1 290px", min_width="270px", max_width="520px", padding="4px", margin="2px"),
        )
        self.widget.add_class("memlab-session")

    def call(self, tool: str) -> dict[str, Any]:
        """Run ``tool`` with the form's values and show its result (the store's change redraws every session)."""
        form = {name: getattr(self, name).value for name in ("key", "content", "tags", "query", "tag")}
        outcome = run_tool(self.session, tool, **form)
        self.result.value = f"<b>{tool}</b>" + json_html(outcome)
        return outcome

    def escalate(self, level: Level) -> None:
        """Raise the session's taint to ``level``, keeping its categories (taint only goes up the lattice); the
        store's change redraws every session."""
        target = Label(level, self.session.label.categories)
        try:
            self.session.escalate(target, reason=self.reason.value.strip() or "simulator")
            self.result.value = f"<b>escalated</b> to {badge(target)}"
        except MemlabError as error:
            self.result.value = json_html({"error": {"code": error.code, "message": str(error)}})

    def feed(self) -> None:
        """Feed the session untrusted content from ``source`` (the host's ``lower_integrity``): its saves are
        untrusted from now on. The store's change redraws every session; a session already untrusted only notes
        the source, so its header is redrawn here."""
        source = self.source.value.strip()
        try:
            self.session.lower_integrity(source=source, reason=self.reason.value.strip())
            self.result.value = (
                f"<b>fed untrusted content</b> from {html.escape(source)}: it saves at {badge(self.session.taint)}"
            )
        except MemlabError as error:
            self.result.value = json_html({"error": {"code": error.code, "message": str(error)}})
        self.header.value = self._header()

    def _header(self) -> str:
        session = self.session
        trusting = (
            "floor <b>trusted</b>: untrusted memories hidden"
            if session.floor is Integrity.TRUSTED
            else "floor untrusted: reads every grade"
        )
        lowered = f" from {html.escape(', '.join(session.distrust))}" if session.distrust else ""
        return (
            f"<b>{html.escape(session.id)}</b> · agent <code>{html.escape(session.agent)}</code> · taint "
            f"{badge(session.taint)}<br><small>integrity {integrity_badge(session.integrity)}{lowered}<br>"
            f"{trusting}</small>"
        )

    def refresh(self, versions: pd.DataFrame | None = None) -> None:
        """Redraw the header, the escalation buttons and the effective view at the live taint and the floor.

        Args:
            versions: ``versions_table`` of the session's agent, when the caller has read it already.
        """
        session, taint, label = self.session, self.session.taint, self.session.label
        self.widget.layout.border = f"2px solid {LEVEL_COLOURS[label.level]}"
        self.header.value = self._header()
        for level, button in self.escalate_buttons.items():  # a level at or below the taint's is no escalation
            button.disabled = level <= label.level
            button.layout.display = "none" if level <= label.level else None
        view = effective_view(session.store, session.agent, taint, floor=session.floor, versions=versions)
        changes, self._drawn = view_changes(self._drawn, view), view
        # Four narrow columns fit a session's column; "new" marks the key itself.
        new = set(changes["new"])
        shown = pd.DataFrame(
            {
                "key": [html.escape(key) + (" " + _changed("new") if key in new else "") for key in view["key"]],
                "content": view["content"],
                "level": view["classification"],
                "v": view["version"],
            }
        )
        gone = (
            f"<br><small>no longer visible: {html.escape(', '.join(changes['gone']))}</small>"
            if changes["gone"]
            else ""
        )
        self.view.value = f"<b>effective view</b> ({len(view)}){gone}" + html_table(
            shown,
            cells={"key": str, "level": badge},
            row_style=level_row("level"),
            empty="nothing visible",
        )


class SessionSimulator(Panel):
    """Sessions of one store side by side; any change to the store (an action in one) redraws them all.

    Args:
        store: the store the sessions use.
        sessions: sessions or specs ``(session_id, taint, agent, floor)`` (see ``SessionSpec``); by default three
            sessions at PUBLIC, INTERNAL and CONFIDENTIAL. A spec starts a new session, so its id must be new.

    Attributes:
        panels: one ``SessionPanel`` per session, in order; ``panel(session_id)`` finds one.
        new_id, new_taint, new_agent, new_floor, add_button: the form that adds a session.

    Examples:
        >>> sim = SessionSimulator(MemoryStore(), [("alice-public", "PUBLIC", "main")])
        >>> sim.panel("alice-public").session.taint
        Label('PUBLIC')
    """

    def __init__(self, store: MemoryStore, sessions: Sequence[SessionSpec] | None = None) -> None:
        self.store = store
        self.panels: list[SessionPanel] = []
        self._listeners: list[Callable[[], Any]] = []
        self.row = widgets.HBox(layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start", width="100%"))
        small = {"description_width": "initial"}
        self.new_id = widgets.Text(
            description="new session", placeholder="an id", style=small, layout=widgets.Layout(width="230px")
        )
        self.new_taint = widgets.Dropdown(
            description="taint",
            options=[level.name for level in Level],
            style=small,
            layout=widgets.Layout(width="190px"),
        )
        self.new_agent = widgets.Text(
            value="main", description="agent", style=small, layout=widgets.Layout(width="160px")
        )
        self.new_floor = widgets.Dropdown(
            description="floor", options=FLOORS, style=small, layout=widgets.Layout(width="260px")
        )
        self.add_button = _button("add session")
        self.add_button.on_click(lambda _: self._add_from_form())
        self.status = widgets.HTML()
        adding = widgets.HBox(
            [self.new_id, self.new_taint, self.new_agent, self.new_floor, self.add_button, self.status],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        self.widget = widgets.VBox([self.row, adding], layout=widgets.Layout(width="100%"))
        self.widget.add_class("memlab-simulator")
        self._adding = True  # one redraw after the first sessions, not one per session started
        for spec in DEFAULT_SESSIONS if sessions is None else sessions:
            self.add_session(spec)
        self._adding = False
        store.listeners.append(self.refresh)
        self.refresh()

    def add_session(self, spec: SessionSpec) -> SessionPanel:
        """Add a column for a session (started from ``spec`` unless it is one) and redraw."""
        panel = SessionPanel(open_session(self.store, spec))
        self.panels.append(panel)
        self.row.children = [panel.widget for panel in self.panels]
        self.refresh()
        return panel

    def panel(self, session_id: str) -> SessionPanel:
        """The panel of the session called ``session_id``.

        Raises:
            KeyError: no such session in the simulator.
        """
        for panel in self.panels:
            if panel.session.id == session_id:
                return panel
        raise KeyError(f"no session {session_id!r} in the simulator; it has {[p.session.id for p in self.panels]}")

    def on_change(self, callback: Callable[[], Any]) -> None:
        """Call ``callback()`` after every redraw, e.g. ``sim.on_change(inspector.refresh)``."""
        self._listeners.append(callback)

    def close(self) -> None:
        """Stop following the store (the widgets stay as they are)."""
        if self.refresh in self.store.listeners:
            self.store.listeners.remove(self.refresh)

    def refresh(self) -> None:
        """Redraw every session (reading each agent's versions once), then tell the listeners."""
        if getattr(self, "_adding", False):
            return
        versions = {agent: versions_table(self.store, agent) for agent in {p.session.agent for p in self.panels}}
        for panel in self.panels:
            panel.refresh(versions[panel.session.agent])
        for callback in self._listeners:
            callback()

    def _add_from_form(self) -> None:
        spec = (self.new_id.value.strip() or f"session-{len(self.panels) + 1}", self.new_taint.value)
        try:
            self.add_session((*spec, self.new_agent.value.strip(), self.new_floor.value))
            self.status.value, self.new_id.value = "", ""
        except MemlabError as error:
            self.status.value = alert(str(error))
