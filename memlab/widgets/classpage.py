"""A class (``memlab classroom --class DIR|URL``): a page per student and the teacher's view, over one shared store.

Every page is a kernel of its own; they meet in the class store (``memlab.classprogress``): a folder, or a
PostgreSQL database, holding the shared store and a small record per student, written by the student's kernel
(which can write no other student's record nor read any). A student
types a name and joins: their lesson runs in an agent of their own, ``<letters of the name>-<random>``,
so no two students share one and a student sees nothing of another. The teacher's page (its URL carries the
class's secret token) reads the store and the records every second: each student's progress, the class's
locked-in predictions per exercise, their calls; it can reset one student or the class. Whatever a student
typed reaches it escaped, never as markup.

Examples:
    >>> agent_for("Zoë <b>").startswith("zoe-b-")
    True
"""

from __future__ import annotations

import asyncio
import hmac
import html
import os
import re
import secrets
import time
import unicodedata
from collections import Counter
from collections.abc import Callable
from urllib.parse import parse_qs

import ipywidgets as widgets

from memlab import arguments
from memlab.classprogress import CLASS_ENV, ClassFull, ClassStore, taken_over, token_digest
from memlab.errors import InvalidArgument
from memlab.store import MemoryStore
from memlab.widgets.classroom import EXERCISES, Classroom, Seat
from memlab.widgets.render import Panel, alert

__all__ = ["CLASS_ENV", "TOKEN_ENV", "StudentPage", "TeacherPage", "agent_for", "class_page", "in_class"]

TOKEN_ENV = "MEMLAB_TEACHER_DIGEST"
"""Where ``memlab classroom --class`` gives Voila (and so every kernel) the SHA-256 of the teacher's token
(``memlab.classprogress.token_digest``), never the token; the class store is in ``CLASS_ENV``."""
MAX_NAME_CHARS = 60
TABLE_STYLE = (
    "<style>.memlab-class{border-collapse:collapse}.memlab-class th,.memlab-class td{text-align:left;"
    "padding:2px 10px 2px 0;border-bottom:1px solid var(--jp-border-color2)}</style>"
)
POLL_SECONDS = 1.0
SAME_NAME = "⚠ (another student has this name)"
"""The mark beside a name that reads as another student's: a name is typed, never proven."""
TAG_BYTES = 8
"""An agent's random tag: 64 bits, so two students of one name (or none in ASCII) clash about once in 10^16 joins."""
JOIN_ATTEMPTS = 3


def agent_for(name: str) -> str:
    """A student's agent: the ASCII letters and digits of ``name`` (lowercase, at most 16) and a random tag, so
    two students with one name never share an agent and nothing typed becomes part of a name unchecked."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    letters = re.sub(r"[^a-z0-9]+", "-", ascii_name).strip("-")[:16].strip("-") or "student"
    return arguments.agent(f"{letters}-{secrets.token_hex(TAG_BYTES)}")


def name_key(name: str) -> str:
    """What a name looks like on screen, to compare: compatibility forms folded, case folded, invisible format
    characters (right-to-left overrides, zero-width joiners) dropped.

    Examples:
        >>> name_key("E\u202eve") == name_key("ＥVE") == name_key("eve")
        True
    """
    folded = unicodedata.normalize("NFKC", name).casefold()
    return " ".join("".join(c for c in folded if unicodedata.category(c) != "Cf").split())


def twins(records: list[dict]) -> set[str]:
    """The students whose name reads as another student's (``name_key``): names are not authenticated, so the
    teacher's page marks each of them."""
    seen = Counter(name_key(str(record.get("name", ""))) for record in records)
    return {record["student"] for record in records if seen[name_key(str(record.get("name", "")))] > 1}


def in_class() -> bool:
    """Whether this kernel serves a class (``memlab classroom --class DIR|URL`` set its environment)."""
    return bool(os.environ.get(CLASS_ENV))


def _every(seconds: float, callback: Callable[[], object]) -> asyncio.Task | None:
    """Call ``callback`` every ``seconds`` on the kernel's running loop; None where no loop runs (tests)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None

    async def ticking() -> None:
        while True:
            await asyncio.sleep(seconds)
            callback()

    return loop.create_task(ticking())


class StudentPage(Panel):
    """A student's page: "Your name" and "Join", then their own lesson in the class's store.

    Attributes:
        name, join_button, status: the form; lesson: the ``Classroom`` once joined (None before); student: the
        student's id (their first agent); progress: that student's own records (``ClassStore.progress``), once
        joined.
    """

    def __init__(self, klass: ClassStore, store: MemoryStore | None = None) -> None:
        self.klass, self.store = klass, store  # no store: opened at Join (on PostgreSQL no connection before)
        self.progress = None  # the student's own records, once joined
        self.lesson: Classroom | None = None
        self.student: str | None = None
        self.name = widgets.Text(description="Your name", placeholder="how the teacher knows you")
        self.join_button = widgets.Button(description="Join", button_style="primary")
        self.join_button.on_click(lambda _: self.join())
        self.status = widgets.HTML()
        self.widget = widgets.VBox([widgets.HBox([self.name, self.join_button]), self.status])
        self._lessons = 0

    def join(self) -> None:
        """Join the class under the name typed: a lesson in an agent of one's own."""
        name = " ".join(self.name.value.split())
        if not name or len(name) > MAX_NAME_CHARS:
            self.status.value = alert(f"Type your name (1 to {MAX_NAME_CHARS} characters), then press Join.")
            return
        if self.lesson is not None:
            return
        try:
            lesson = self._seated(name)
        except ClassFull as error:
            self.status.value = alert(f"{error} Ask your teacher.")
            return
        if lesson is None:
            self.status.value = alert(
                "Another student's agent has the name made for you (a rare clash): press Join again."
            )
            return
        self.lesson, self.joined_as = lesson, name
        # The class store counts every reset ever asked for: this page follows only those made after it joined.
        self._resets_seen = self.progress.resets(self.student)
        for panel in self.lesson.exercises:
            panel.listeners.append(self.save_progress)
        self.store.listeners.append(self.save_progress)
        self.widget.children = [widgets.HTML(f"<p>Welcome, <b>{html.escape(name)}</b>.</p>"), self.lesson.widget]
        self.save_progress()
        self._poll = _every(POLL_SECONDS, self.follow_resets)

    def _seated(self, name: str) -> Classroom | None:
        """A lesson in a new agent for ``name`` with that student's records (on PostgreSQL: the page's seat, then
        its store, opened only now), or None when every try's agent was already another student's.

        Raises:
            ClassFull: on PostgreSQL, every seat of the class is taken.
        """
        for _ in range(JOIN_ATTEMPTS):
            self.student, self._lessons = agent_for(name), 0
            self.progress = self.klass.progress(self.student)
            if self.store is None:
                self.store = self.klass.store(pool_size=1)  # a kernel's widget callbacks run one at a time
            try:
                return Classroom(lambda: self.store, self._seat, alone=False)
            except InvalidArgument:  # its sessions' ids are in the store already: the agent is taken
                self.progress.close()
        self.student = self.progress = None
        return None

    def _seat(self) -> Seat:
        self._lessons += 1
        return Seat(self.student if self._lessons == 1 else f"{self.student}-{self._lessons}")

    def follow_resets(self) -> None:
        """Start the lesson again (once) if the teacher asked for a reset since the last look."""
        if self.lesson is None:
            return
        resets = self.progress.resets(self.student)
        if resets > self._resets_seen:
            self._resets_seen = resets
            self.lesson.reset()
            self.save_progress()

    def save_progress(self) -> None:
        """Write this student's record: name, current agent, locked-in predictions, verdicts."""
        if self.lesson is None:
            return
        exercises = list(enumerate(self.lesson.exercises, 1))
        self.progress.record(
            self.student,
            {
                "student": self.student,
                "name": self.joined_as,
                "agent": self.lesson.seat.agent,
                "joined": getattr(self, "_joined", None) or self._stamp(),
                "predictions": {str(n): p.prediction for n, p in exercises if p.prediction is not None},
                "verdicts": {str(n): p.verdict for n, p in exercises if p.verdict},
            },
        )

    def _stamp(self) -> float:
        self._joined = time.time()
        return self._joined


class TeacherPage(Panel):
    """The teacher's view of the class: every student's progress, the class's predictions, their calls.

    Attributes:
        table, histograms (HTML); student (a dropdown), reset_student_button, reset_class_button; progress: every
        student's records.
    """

    def __init__(self, klass: ClassStore, store: MemoryStore | None = None) -> None:
        self.klass, self.store = klass, store  # no store: opened at Join (on PostgreSQL no connection before)
        self.progress = klass.progress()
        self.table, self.histograms, self.status = widgets.HTML(), widgets.HTML(), widgets.HTML()
        self.student = widgets.Dropdown(description="student", options=[])
        wide = widgets.Layout(width="auto")
        self.reset_student_button = widgets.Button(description="reset this student", icon="undo", layout=wide)
        self.reset_class_button = widgets.Button(description="reset the class", icon="undo", layout=wide)
        self.reset_student_button.on_click(lambda _: self.student.value and self.progress.reset(self.student.value))
        self.reset_class_button.on_click(lambda _: self.progress.reset())
        controls = widgets.HBox(
            [self.student, self.reset_student_button, self.reset_class_button],
            layout=widgets.Layout(flex_flow="row wrap"),
        )
        self.widget = widgets.VBox(
            [widgets.HTML(f"{TABLE_STYLE}<h3>The class</h3>"), self.table, controls, self.histograms, self.status],
            layout=widgets.Layout(width="100%"),
        )
        self.widget.add_class("memlab-teacher")
        self.refresh()
        self._poll = _every(POLL_SECONDS, self.refresh)

    def refresh(self) -> None:
        """Read the records and the store's audit again, and redraw."""
        students = self.progress.students()
        audit = self.store.audit()
        doubled = twins(students)
        rows = []
        for record in students:
            calls = audit[audit["agent"] == record.get("agent")]
            last = "; ".join(f"{c.tool} {c.key or ''} → {c.outcome}" for c in calls.tail(3).itertuples())
            verdicts = record.get("verdicts", {})
            rows.append(
                "<tr>"
                + "".join(
                    f"<td>{html.escape(str(cell))}</td>"
                    for cell in (
                        record.get("name", "?") + (f" {SAME_NAME}" if record["student"] in doubled else ""),
                        f"{len(record.get('predictions', {}))} of {len(EXERCISES)}",
                        sum(v == "right" for v in verdicts.values()),
                        len(calls),
                        last,
                    )
                )
                + "</tr>"
            )
        head = "".join(f"<th>{h}</th>" for h in ("student", "predicted", "right", "calls", "last calls"))
        self.table.value = (
            f"<p>{len(students)} student{'s' * (len(students) != 1)} joined</p>"
            f"<table class='memlab-class'><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
        self.histograms.value = "".join(self._histogram(n, e, students) for n, e in enumerate(EXERCISES, 1))
        options = [(record.get("name", "?"), record["student"]) for record in students if "student" in record]
        if options != list(self.student.options):
            chosen = self.student.value
            self.student.options = options  # a dropdown shows its labels as text: a name stays a name
            ids = [student for _, student in options]
            self.student.value = chosen if chosen in ids else (ids[0] if ids else None)

    @staticmethod
    def _histogram(number: int, exercise, students: list[dict]) -> str:
        picked = Counter(record.get("predictions", {}).get(str(number)) for record in students)
        bars = "".join(
            f"<div>{html.escape(choice)}: <b>{picked[choice]}</b> "
            f"<span style='display:inline-block;height:0.8em;width:{12 * picked[choice]}px;"
            "background:var(--jp-brand-color1)'></span></div>"
            for choice in exercise.choices
        )
        return f"<p><b>{html.escape(exercise.title)}</b>: {html.escape(exercise.question)}</p>{bars}"


def class_page(environ: dict[str, str] | None = None) -> Panel | None:
    """The page this kernel serves in a class, or None outside one (a lesson of its own).

    ``?teacher=TOKEN`` in the page's address (Voila passes it as ``QUERY_STRING``) asks for the teacher's view;
    it opens only with the class's token, whose SHA-256 the kernel was given (compared in constant time), else the
    page says it refuses. The digest is taken out of ``environ`` (every kernel inherits it from Voila).
    """
    environ = os.environ if environ is None else environ
    if not environ.get(CLASS_ENV):
        return None
    if environ.get("VOILA_PREHEAT") == "True":  # a kernel started before its visit: wait for the visit's address
        from voila.utils import wait_for_request

        wait_for_request()
    klass = ClassStore(taken_over(environ))
    digest = environ.pop(TOKEN_ENV, "")  # read once, and only ever the token's hash: no kernel holds the token
    asked = parse_qs(environ.get("QUERY_STRING", ""), keep_blank_values=True).get("teacher")
    if asked is None:
        return StudentPage(klass)  # holds nothing open in the class store until its student joins
    if not digest or not hmac.compare_digest(token_digest(asked[0]), digest):
        return _Refusal()
    return TeacherPage(klass, klass.store())


class _Refusal(Panel):
    """What a teacher's address with a wrong token shows."""

    def __init__(self) -> None:
        self.widget = widgets.HTML(
            alert("This is the teacher's page: open the teacher's address that memlab classroom printed.")
        )
