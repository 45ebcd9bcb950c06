"""The classroom: a lesson in five exercises on a live simulator, each with a prediction and a check.

A student commits a prediction (picking an answer locks it in), does the exercise with the simulator's
buttons, and presses "check": the verdict is read from the store's state (its versions and its audit), never
from what the student typed into the prediction alone. The answer's explanation stays hidden until asked, and
can be asked for only once a prediction is locked in. "reset
the lesson" starts again on a new store with the three sessions ready. ``Classroom.teacher`` is the teacher's
view of the same store — the audit viewer (with the hash chain's verdict: the tamper check) and the shadow
inspector — and follows the lesson live.

Each exercise's check is a plain function of the store (``EXERCISES``), so tests and notebooks can ask it:

Examples:
    >>> first = Classroom().exercise(1)
    >>> first.predict.value = first.exercise.choices[1]  # the student's prediction, locked in
    >>> first.check()
    'Not yet: save user-name in public-chat (PUBLIC) and in team-chat (INTERNAL).'
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

import ipywidgets as widgets
import pandas as pd

from memlab.labels import Integrity, Label
from memlab.levels import Level
from memlab.store import MemoryStore
from memlab.widgets.audit import AuditViewer
from memlab.widgets.inspector import ShadowInspector
from memlab.widgets.render import Panel, pill
from memlab.widgets.simulator import SessionSimulator
from memlab.widgets.views import effective_view

__all__ = ["LESSON_SESSIONS", "EXERCISES", "Exercise", "ExercisePanel", "Classroom", "Seat"]

LESSON_SESSIONS = (("public-chat", Level.PUBLIC), ("team-chat", Level.INTERNAL), ("hr-review", Level.CONFIDENTIAL))
"""The sessions every lesson starts with (agent ``main``)."""


@dataclass(frozen=True)
class Seat:
    """Where a lesson happens in its store: the agent, and the prefix of its sessions' ids.

    A lesson of its own uses agent ``main`` and the bare ids; in a class's shared store each student's lesson has
    an agent of their own, and its session ids (unique in a store) carry the agent: ``agent/public-chat``.

    Examples:
        >>> Seat("student-sam-1a2b3c").id("team-chat")
        'student-sam-1a2b3c/team-chat'
    """

    agent: str = "main"
    prefixed: bool = True

    def id(self, role: str) -> str:
        """The session id of ``role`` (``public-chat``, ``team-chat`` or ``hr-review``) in this seat."""
        return f"{self.agent}/{role}" if self.prefixed and self.agent != "main" else role

    def sessions(self) -> tuple[tuple[str, Level, str], ...]:
        """The lesson's three sessions as ``(session_id, taint, agent)``."""
        return tuple((self.id(role), level, self.agent) for role, level in LESSON_SESSIONS)


VERSION_SEEN = {
    "PUBLIC": "the PUBLIC one (public-chat's)",
    "INTERNAL": "the INTERNAL one (team-chat's)",
    None: "nothing: not found",
}
GET_ANSWER = {
    "ok": "the salary: it is found",
    "not_found": '"not found", as for a key that never existed',
    "denied": "an error saying the key is classified",
}
SAVE_LEVELS = tuple(level.name for level in list(Level)[:3])


@dataclass(frozen=True)
class Exercise:
    """One exercise: what to do on screen, a question with its choices, and how the store answers it.

    Attributes:
        title: a short name (the tab's title).
        task: what to do with the simulator's buttons (HTML).
        question: what to predict.
        choices: the answers to pick from.
        observe: reads the store (at a ``Seat``): the right choice, or None while the exercise's steps are not done.
        todo: what is still to do when ``observe`` says None.
        why: the explanation, shown when the student asks for the answer.
    """

    title: str
    task: str
    question: str
    choices: tuple[str, ...]
    observe: Callable[[MemoryStore, Seat], str | None]
    todo: str
    why: str


def _live(store: MemoryStore, key: str, seat: Seat) -> pd.DataFrame:
    history = store.history(key, seat.agent)
    return history[history["deleted_at"].isna()]


def _seen_by_hr(store: MemoryStore, seat: Seat, *, after_delete: bool) -> str | None:
    """Which version of user-name a CONFIDENTIAL session gets, once user-name exists at PUBLIC and INTERNAL
    (and, ``after_delete``, once team-chat has deleted its version)."""
    history = store.history("user-name", seat.agent)
    saved = set(history["classification"])
    if not {"PUBLIC", "INTERNAL"} <= saved:
        return None
    internal_deleted = history[(history["classification"] == "INTERNAL") & history["deleted_at"].notna()]
    if after_delete and internal_deleted.empty:
        return None
    view = effective_view(store, seat.agent, Level.CONFIDENTIAL)  # hr-review's floor: the default one
    seen = view.loc[view["key"] == "user-name", "classification"].tolist()
    level = seen[0] if seen else None
    return VERSION_SEEN.get(level, f"its own {level} one")  # off the script: hr-review saved user-name itself


def _public_get_of_salary(store: MemoryStore, seat: Seat) -> str | None:
    """What public-chat's last get of ``salary`` answered (from the audit), once salary exists above PUBLIC."""
    if _live(store, "salary", seat).query("classification != 'PUBLIC'").empty:
        return None
    audit = store.audit(seat.agent)
    gets = audit[
        (audit["session_id"] == seat.id("public-chat")) & (audit["tool"] == "memory_get") & (audit["key"] == "salary")
    ]
    gets = gets[gets["taint"] == "PUBLIC"]
    return GET_ANSWER.get(gets["outcome"].iloc[-1], gets["outcome"].iloc[-1]) if len(gets) else None


def _payslip_level(store: MemoryStore, seat: Seat) -> str | None:
    """The level of team-chat's newest save of ``payslip-note``, once it has escalated and saved it."""
    history = store.history("payslip-note", seat.agent)
    mine = history[history["saved_by"] == seat.id("team-chat")]
    escalated = store.taint_events()
    escalated = escalated[escalated["session_id"] == seat.id("team-chat")]
    if mine.empty or escalated.empty:
        return None
    return mine.sort_values("saved_at")["classification"].iloc[-1]


REACHES = {
    (True, False): "labels only: yes, marked ⚠ untrusted · floor TRUSTED: no",
    (False, False): "labels only: no · floor TRUSTED: no",
    (True, True): "labels only: yes · floor TRUSTED: yes",
}
"""Whether a stranger's memory reaches hr-review, by (under labels only, under a floor of TRUSTED)."""


def _stranger_reaches_hr(store: MemoryStore, seat: Seat) -> str | None:
    """Whether an untrusted memory is in hr-review's effective view under labels only (its own floor: every grade)
    and under a floor of TRUSTED, once the agent's memory holds a trusted version and an untrusted one."""
    versions = store.versions(seat.agent)
    live = versions[versions["deleted_at"].isna()]
    grades = {Label.parse(label).integrity for label in live["classification"]}
    if grades != {Integrity.TRUSTED, Integrity.UNTRUSTED}:
        return None

    def reaches(floor: Integrity) -> bool:
        view = effective_view(store, seat.agent, Level.CONFIDENTIAL, floor=floor)  # read without a session
        return any(Label.parse(label).integrity is Integrity.UNTRUSTED for label in view["classification"])

    seen = (reaches(Integrity.UNTRUSTED), reaches(Integrity.TRUSTED))
    return REACHES.get(seen, "labels only: no · floor TRUSTED: yes")


EXERCISES: tuple[Exercise, ...] = (
    Exercise(
        "1 · who sees what",
        "In <b>public-chat</b> type key <code>user-name</code>, content <code>Sam</code> and press <b>save</b>. "
        "In <b>team-chat</b> save <code>user-name</code> = <code>Samantha Rivera</code>.",
        "Which version of user-name does hr-review (CONFIDENTIAL) get?",
        (VERSION_SEEN["PUBLIC"], VERSION_SEEN["INTERNAL"], VERSION_SEEN[None]),
        lambda store, seat: _seen_by_hr(store, seat, after_delete=False),
        "save user-name in public-chat (PUBLIC) and in team-chat (INTERNAL).",
        "Each session sees the highest version it may read: its effective view. hr-review has no version of its "
        "own, so the INTERNAL one shadows the PUBLIC one for it, as for team-chat; public-chat never learns that a "
        "higher version exists.",
    ),
    Exercise(
        "2 · a hidden secret",
        "In <b>hr-review</b> save <code>salary</code> = <code>90k</code>. Then, in <b>public-chat</b>, type key "
        "<code>salary</code> and press <b>get</b>; try <b>get</b> on <code>bonus</code> (a key nobody saved) too.",
        "What does public-chat's get of salary answer?",
        tuple(GET_ANSWER.values()),
        _public_get_of_salary,
        "save salary in hr-review, then press get on salary in public-chat.",
        'A hidden key and a key that never existed get the same "not found": any other answer would tell the '
        "public chat that a secret exists. A save of salary in public-chat would also succeed, as a new PUBLIC "
        "version 1 — refusing it would reveal the secret key.",
    ),
    Exercise(
        "3 · deletes uncover",
        "Do exercise 1 first. Then in <b>team-chat</b> type key <code>user-name</code> and press <b>delete</b>.",
        "Which version of user-name does hr-review get now?",
        (VERSION_SEEN["PUBLIC"], VERSION_SEEN["INTERNAL"], VERSION_SEEN[None]),
        lambda store, seat: _seen_by_hr(store, seat, after_delete=True),
        "save user-name at PUBLIC and INTERNAL (exercise 1), then delete it in team-chat.",
        "Deletes are soft and act at exactly the session's level: the INTERNAL version is marked deleted, and the "
        "next visible version — the PUBLIC one — is effective again for every session above PUBLIC.",
    ),
    Exercise(
        "4 · taint goes up",
        "team-chat is shown a payslip: press its <b>↑ CONFIDENTIAL</b> button. Then save <code>payslip-note</code> "
        "= <code>payslip arrived</code> in <b>team-chat</b>. Look for a button that would lower its taint.",
        "At which level is team-chat's payslip-note saved?",
        SAVE_LEVELS,
        _payslip_level,
        "raise team-chat to CONFIDENTIAL, then save payslip-note in it.",
        "A save is classified at the session's live taint, whatever the caller asks for: once team-chat has seen "
        "something CONFIDENTIAL, everything it writes is CONFIDENTIAL, so it cannot launder the payslip into a "
        "lower level. Taint never goes down inside a session: there is no button for it, only a new session starts "
        "low.",
    ),
    Exercise(
        "5 · a stranger's memory",
        "In <b>team-chat</b> save <code>dana-allergy</code> = <code>Dana is allergic to nuts</code>. A stranger "
        "now talks through <b>public-chat</b>: type <code>chat:stranger</code> as its source and press <b>⚠ feed "
        "untrusted content</b>, then save <code>dana-snacks</code> = <code>Dana loves nuts</code> in it. "
        "(public-chat stays untrusted for the rest of the lesson: reset the lesson to start over.)",
        "hr-review is trusted and reads every grade (labels only). Does the stranger's memory reach it — and would it "
        "reach a session opened with a floor of TRUSTED?",
        tuple(REACHES.values()),
        _stranger_reaches_hr,
        "save dana-allergy in team-chat, then feed public-chat untrusted content and save dana-snacks in it.",
        "Labels alone hide nothing: hr-review reads every grade, so the stranger's dana-snacks is in its view, marked "
        "⚠ untrusted, and a read of it would lower hr-review, so nothing it concludes from it is saved trusted. A "
        "session with a floor of TRUSTED never sees an untrusted version at all. Had the stranger saved under "
        "dana-allergy itself, no session would get it: trust first, an untrusted version never shadows a trusted one.",
    ),
)
"""The lesson's five exercises, in order."""


TAB_STYLE = (
    "<style>.memlab-classroom .jupyter-widgets.jupyter-widget-tab > .lm-TabBar .lm-TabBar-tab"
    "{color:var(--jp-ui-font-color1);flex:0 0 auto}</style>"
)
"""ipywidgets draws the titles of the tabs not shown in ``--jp-ui-font-color2`` on ``--jp-layout-color2``, 4.46:1 in
JupyterLab Light: below AA for text a student must read to pick an exercise."""


CHOICE_MARKS = {
    (True, False): ("◉", " — your prediction"),
    (False, True): ("✔", " — what the store says"),
    (True, True): ("◉ ✔", " — your prediction, and what the store says"),
    (False, False): ("○", ""),
}
"""A locked-in choice's mark and words, by (is it the prediction, is it what the store says)."""


class ExercisePanel(Panel):
    """One exercise: its task, a prediction (locked in once picked), "check" and "show the answer".

    Attributes:
        exercise: the ``Exercise``; predict (radio buttons), check_button, answer_button; feedback and answer
            (HTML: the verdict of the last check, and the explanation once asked for).
    """

    def __init__(self, exercise: Exercise, store: Callable[[], MemoryStore], seat: Callable[[], Seat] = Seat) -> None:
        self.exercise = exercise
        self._store, self._seat = store, seat
        self.listeners: list[Callable[[], object]] = []
        """Called with no argument after a prediction is locked in and after each check (a class's progress)."""
        self.verdict: str | None = None
        """The last check's outcome: "right", "wrong", "not yet", or None before any check."""
        self.observed: str | None = None
        """The choice the store says is right, as last read (by a check or the answer), or None."""
        self.prediction: str | None = None
        """The first choice picked: the one prediction a check, the answer and a class's record ever use."""
        self.predict = widgets.RadioButtons(
            options=exercise.choices,
            value=None,
            description="predict",
            style={"description_width": "60px"},
            layout=widgets.Layout(width="auto"),
        )
        self.predict.observe(lambda _: self._committed(), names="value")
        self.check_button = widgets.Button(description="check", button_style="primary", tooltip="check with the store")
        self.answer_button = widgets.Button(
            description="show the answer", tooltip="lock in a prediction first", disabled=True
        )
        self.check_button.on_click(lambda _: self.check())
        self.answer_button.on_click(lambda _: self.show_answer())
        self.feedback, self.answer, self.committed = widgets.HTML(), widgets.HTML(), widgets.HTML()
        intro = widgets.HTML(
            f"<p><b>Do:</b> {exercise.task}</p><p><b>Predict first:</b> {html.escape(exercise.question)} "
            "<small>(your pick is locked in; reset the lesson to start over)</small></p>"
        )
        buttons = widgets.HBox([self.check_button, self.answer_button], layout=widgets.Layout(flex_flow="row wrap"))
        self.widget = widgets.VBox([intro, self.predict, self.committed, buttons, self.feedback, self.answer])

    def _committed(self) -> None:
        if self.prediction is not None:
            # A hidden, disabled radio still takes a comm `update` of its index sent by hand: put the pick back.
            if self.predict.value != self.prediction:
                self.predict.value = self.prediction
            return
        if self.predict.value is not None:
            self.prediction = self.predict.value
            self.predict.disabled = True
            # A disabled radio is faint (all grey in the dark theme): the choices are shown instead, marked in words.
            self.predict.layout.display = "none"
            self._show_choices()
            self.answer_button.disabled, self.answer_button.tooltip = False, "explain the answer"
            self._tell()

    def _show_choices(self) -> None:
        """The choices in the theme's text colour, the locked-in one and what the store says marked in words."""
        lines = []
        for choice in self.exercise.choices:
            picked, said = choice == self.prediction, choice == self.observed
            mark, words = CHOICE_MARKS[picked, said]
            shown = f"<b>{html.escape(choice)}</b>" if picked or said else html.escape(choice)
            lines.append(f"<li>{mark} {shown}{words}</li>")
        self.committed.value = (
            '<p style="margin-bottom:2px">Your prediction, locked in:</p>'
            f'<ul style="list-style:none;padding-left:12px;margin-top:0">{"".join(lines)}</ul>'
        )

    def _tell(self) -> None:
        for listener in self.listeners:
            listener()

    def check(self) -> str:
        """Compare the prediction with what the store says; show and return the verdict."""
        predicted = self.prediction
        observed = None if predicted is None else self.exercise.observe(self._store(), self._seat())
        if predicted is None:
            verdict, mark = "Predict first: pick an answer, then do the steps.", ""
            self.feedback.value = f"<p>{html.escape(verdict)}</p>"
            return verdict
        self.observed = observed
        self._show_choices()
        if observed is None:
            verdict, mark, self.verdict = f"Not yet: {self.exercise.todo}", "", "not yet"
        elif observed == predicted:
            verdict, mark, self.verdict = f"Right: {observed}.", pill("✔ right", "#2e7d32"), "right"
        else:
            verdict = f"Not quite: you predicted {predicted}; the store says {observed}."
            mark, self.verdict = pill("✘ not quite", "#c62828"), "wrong"
        self.feedback.value = f"<p>{mark} {html.escape(verdict)}</p>"
        self._tell()
        return verdict

    def show_answer(self) -> None:
        """Show the explanation, once a prediction is locked in (predict-then-check is the lesson's point)."""
        if self.prediction is None:  # a disabled button still takes a click sent by hand from the page
            return
        self.observed = self.exercise.observe(self._store(), self._seat())
        self._show_choices()
        self.answer.value = f"<p><b>Why:</b> {html.escape(self.exercise.why)}</p>"

    def reset(self) -> None:
        """Clear the prediction, the verdict and the answer."""
        self.prediction = None
        self.predict.disabled = False
        self.predict.value = None
        self.predict.layout.display = None
        self.observed = None
        self.answer_button.disabled, self.answer_button.tooltip = True, "lock in a prediction first"
        self.verdict = None
        self.feedback.value = self.answer.value = self.committed.value = ""


class Classroom(Panel):
    """The lesson: exercises above a simulator of three sessions, a reset button, and a teacher's view.

    Args:
        store: a function making each lesson's fresh store (default: ``MemoryStore()``, in memory); a lesson
            in a class's shared store gets that store each time (it is closed only when a new one replaces it).
        seat: a function giving each lesson's ``Seat`` (default: agent ``main``, the bare session ids); a
            class gives a new agent at each reset, so a reset lesson starts empty in a shared store too.
        alone: False for a student's lesson in a class: no teacher's view of the (shared) store is made — its
            widgets' state would reach the student's page — and the simulator's "add session" form is closed,
            so no session of another agent can be started from the page.

    Attributes:
        store: the current lesson's store; simulator: its ``SessionSimulator`` (public-chat, team-chat,
        hr-review); exercises: one ``ExercisePanel`` each (``exercise(n)`` is number n); tabs; reset_button;
        teacher: a displayable view with the audit viewer and the shadow inspector of the same store.

    Examples:
        >>> lesson = Classroom()
        >>> [(p.session.id, p.session.taint.name) for p in lesson.simulator.panels]
        [('public-chat', 'PUBLIC'), ('team-chat', 'INTERNAL'), ('hr-review', 'CONFIDENTIAL')]
    """

    def __init__(
        self, store: Callable[[], MemoryStore] = MemoryStore, seat: Callable[[], Seat] = Seat, *, alone: bool = True
    ) -> None:
        self._new_store, self._new_seat, self.alone = store, seat, alone
        self.exercises = [ExercisePanel(exercise, lambda: self.store, lambda: self.seat) for exercise in EXERCISES]
        self.tabs = widgets.Tab(children=[panel.widget for panel in self.exercises])
        self.tabs.titles = tuple(exercise.title for exercise in EXERCISES)
        self.reset_button = widgets.Button(
            description="reset the lesson", icon="undo", tooltip="start again: empty memory, three new sessions"
        )
        self.reset_button.on_click(lambda _: self.reset())
        self._simulator_box = widgets.Box(layout=widgets.Layout(width="100%"))
        self._teacher_box = widgets.VBox(layout=widgets.Layout(width="100%"))
        self.teacher = _Shown(self._teacher_box)
        self.widget = widgets.VBox(
            [widgets.HTML(TAB_STYLE), self.tabs, self._simulator_box, self.reset_button],
            layout=widgets.Layout(width="100%"),
        )
        self.widget.add_class("memlab-classroom")
        self._start()

    def _start(self) -> None:
        self.store, self.seat = self._new_store(), self._new_seat()
        self.simulator = SessionSimulator(self.store, self.seat.sessions())
        self._simulator_box.children = [self.simulator.widget]
        if not self.alone:
            form = self.simulator.widget.children[1]
            self.simulator.widget.children = [self.simulator.row]
            for field in (*form.children, form):
                field.close()  # a closed widget takes no message: not even a click crafted by hand
            self.audit_viewer = self.shadow_inspector = None
            return
        self.audit_viewer = AuditViewer(self.store)
        self.shadow_inspector = ShadowInspector(self.store, "user-name")
        self._teacher_box.children = [
            widgets.HTML(TEACHER_HEADING),
            self.audit_viewer.widget,
            widgets.HTML("<b>Who sees which version</b> of a key"),
            self.shadow_inspector.widget,
        ]

    def exercise(self, number: int) -> ExercisePanel:
        """Exercise ``number`` (1 to 5)."""
        return self.exercises[number - 1]

    def reset(self) -> None:
        """Start the lesson again: a new store with the three sessions, every prediction and answer cleared."""
        for view in (self.simulator, self.audit_viewer, self.shadow_inspector):
            if view is not None:
                view.close()
        old = self.store
        self._start()
        if self.store is not old:
            old.close()
        for panel in self.exercises:
            panel.reset()
        self.tabs.selected_index = 0


TEACHER_HEADING = (
    "<h2>For the teacher</h2><p>Every call the class makes, live: the audit (filter by session, tool, outcome, "
    "level or time), each session's taint over time, and the audit chain's tamper check; then every version of a "
    "key and which session sees which.</p>"
)
"""The teacher's view's own heading: made with the view, so a page without the view (a student's) never shows it."""


class _Shown(Panel):
    """A box that displays itself (the teacher's view)."""

    def __init__(self, widget: widgets.Widget) -> None:
        self.widget = widget
