"""The classroom (issue 12, finding 2): a clean start, a prediction and a check per exercise read from the store,
answers hidden until asked, a reset, and a teacher's view that follows the lesson."""

import html
import re
from types import SimpleNamespace

import pytest

from memlab import Level, MemoryStore
from memlab import widgets as mw
from memlab.classprogress import ClassStore, token_digest
from memlab.widgets import classpage
from memlab.widgets.classpage import CLASS_ENV, TOKEN_ENV, StudentPage, TeacherPage, agent_for, class_page, twins
from memlab.widgets.classroom import EXERCISES, GET_ANSWER, REACHES, VERSION_SEEN, Seat, _seen_by_hr


def click(lesson, session_id, tool, **form):
    """What a student does: fill in a session's form and press a tool's button."""
    panel = lesson.simulator.panel(session_id)
    for field in ("key", "content", "tags", "query", "tag"):
        getattr(panel, field).value = form.get(field, "")
    panel.buttons[tool].click()


def predict_and_check(lesson, number, prediction):
    panel = lesson.exercise(number)
    panel.predict.value = prediction
    panel.check_button.click()
    return panel


@pytest.fixture
def lesson():
    return mw.classroom()


def test_the_lesson_opens_clean_with_three_sessions_ready(lesson):
    sessions = [(p.session.id, p.session.taint) for p in lesson.simulator.panels]
    assert sessions == [("public-chat", Level.PUBLIC), ("team-chat", Level.INTERNAL), ("hr-review", Level.CONFIDENTIAL)]
    assert lesson.store.audit().empty and lesson.store.versions("main").empty
    for panel in lesson.exercises:
        assert panel.predict.value is None and not panel.predict.disabled
        assert panel.feedback.value == "" and panel.answer.value == ""  # no answer given away
    assert [tab for tab in lesson.tabs.titles] == [exercise.title for exercise in EXERCISES]
    assert "0 of 0 calls" in lesson.audit_viewer.table.value


def test_checking_before_predicting_or_doing_asks_for_it(lesson):
    first = lesson.exercise(1)
    first.check_button.click()
    assert "Predict first" in first.feedback.value
    first.predict.value = VERSION_SEEN["INTERNAL"]
    assert first.predict.disabled  # the prediction is committed before trying
    assert "Your prediction, locked in" in first.committed.value
    assert "◉ <b>the INTERNAL one (team-chat&#x27;s)</b> — your prediction" in first.committed.value
    first.check_button.click()
    assert "Not yet" in first.feedback.value and "right" not in first.feedback.value


def test_exercise_1_right_and_wrong_from_the_stores_state(lesson):
    click(lesson, "public-chat", "memory_save", key="user-name", content="Sam")
    click(lesson, "team-chat", "memory_save", key="user-name", content="Samantha Rivera")
    assert "✔ right" in predict_and_check(lesson, 1, VERSION_SEEN["INTERNAL"]).feedback.value
    lesson.reset()
    click(lesson, "public-chat", "memory_save", key="user-name", content="Sam")
    click(lesson, "team-chat", "memory_save", key="user-name", content="Samantha Rivera")
    wrong = predict_and_check(lesson, 1, VERSION_SEEN["PUBLIC"])
    assert "✘ not quite" in wrong.feedback.value and "the store says the INTERNAL one" in wrong.feedback.value
    assert wrong.answer.value == ""
    wrong.answer_button.click()
    assert "shadows" in wrong.answer.value


def test_exercise_2_the_public_chat_cannot_tell_a_secret_exists(lesson):
    click(lesson, "hr-review", "memory_save", key="salary", content="90k")
    click(lesson, "public-chat", "memory_get", key="salary")
    assert "90k" not in lesson.simulator.panel("public-chat").result.value
    assert "salary" not in lesson.simulator.panel("public-chat").view.value
    assert "✔ right" in predict_and_check(lesson, 2, GET_ANSWER["not_found"]).feedback.value


def test_exercise_3_a_delete_uncovers_the_lower_version(lesson):
    click(lesson, "public-chat", "memory_save", key="user-name", content="Sam")
    click(lesson, "team-chat", "memory_save", key="user-name", content="Samantha Rivera")
    third = predict_and_check(lesson, 3, VERSION_SEEN["INTERNAL"])
    assert "Not yet" in third.feedback.value  # nothing deleted yet
    click(lesson, "team-chat", "memory_delete", key="user-name")
    third.check_button.click()
    assert "✘ not quite" in third.feedback.value and "the store says the PUBLIC one" in third.feedback.value


def test_exercise_4_a_save_after_escalating_is_classified_at_the_new_taint(lesson):
    team = lesson.simulator.panel("team-chat")
    click(lesson, "team-chat", "memory_save", key="payslip-note", content="too early")
    assert "Not yet" in predict_and_check(lesson, 4, "CONFIDENTIAL").feedback.value  # not escalated yet
    team.escalate_buttons[Level.CONFIDENTIAL].click()
    click(lesson, "team-chat", "memory_save", key="payslip-note", content="payslip arrived")
    lesson.exercise(4).check_button.click()
    assert "✔ right" in lesson.exercise(4).feedback.value
    assert [level for level, b in team.escalate_buttons.items() if not b.disabled] == [Level.RESTRICTED]


def stranger_saves(lesson, key, content):
    """A stranger's chat: the host feeds public-chat untrusted content, and it saves ``key``."""
    public = lesson.simulator.panel("public-chat")
    public.source.value = "chat:stranger"
    public.feed_button.click()
    click(lesson, "public-chat", "memory_save", key=key, content=content)


def test_exercise_5_a_strangers_memory_reaches_labels_only_never_a_trusted_floor(lesson):
    """Issue 36: predict whether the poisoned memory reaches a trusted session under labels only and under a floor
    of TRUSTED; the check reads both views from the store, adding no session and no audit row.
    Guards: the floor ignored when the check reads the view (both halves then say yes)."""
    fifth = predict_and_check(lesson, 5, REACHES[True, False])
    assert "Not yet" in fifth.feedback.value
    click(lesson, "team-chat", "memory_save", key="dana-allergy", content="Dana is allergic to nuts")
    stranger_saves(lesson, "dana-snacks", "Dana loves nuts")
    calls, sessions = len(lesson.store.audit()), len(lesson.store.sessions())
    fifth.check_button.click()
    assert "✔ right" in fifth.feedback.value
    assert (len(lesson.store.audit()), len(lesson.store.sessions())) == (calls, sessions)
    hr = lesson.simulator.panel("hr-review")
    assert "dana-snacks" in hr.view.value and str(hr.session.integrity) == "trusted"  # seen, not read: still trusted
    fifth.answer_button.click()
    assert "floor of TRUSTED never sees" in fifth.answer.value


def test_exercise_5_an_overwrite_reaches_no_one_trust_first(lesson):
    """The stranger saves under the trusted memory's own key: no session gets it, and the check says so (the
    answer read from the store, not fixed). Guards: _stranger_reaches_hr answering the scripted choice."""
    click(lesson, "team-chat", "memory_save", key="dana-allergy", content="Dana is allergic to nuts")
    stranger_saves(lesson, "dana-allergy", "Dana is not allergic to nuts")
    fifth = predict_and_check(lesson, 5, REACHES[True, False])
    assert "✘ not quite" in fifth.feedback.value and f"the store says {REACHES[False, False]}" in fifth.feedback.value


def test_reset_starts_a_new_lesson_and_the_teacher_view_follows_it(lesson):
    click(lesson, "hr-review", "memory_save", key="salary", content="90k")
    lesson.simulator.panel("public-chat").escalate_buttons[Level.INTERNAL].click()
    assert "1 of 1 call<" in lesson.audit_viewer.table.value  # live, no refresh
    assert "audit chain verified" in lesson.audit_viewer.verified.value  # the tamper check
    predict_and_check(lesson, 2, GET_ANSWER["ok"])
    lesson.exercise(2).answer_button.click()
    old_store = lesson.store
    lesson.reset()
    assert lesson.store is not old_store and lesson.store.audit().empty
    assert lesson.simulator.panel("public-chat").session.taint == Level.PUBLIC  # exercise 2 can be redone
    assert all(p.predict.value is None and not p.answer.value for p in lesson.exercises)
    assert lesson.teacher.widget.children[1] is lesson.audit_viewer.widget
    click(lesson, "team-chat", "memory_save", key="user-name", content="Samantha Rivera")
    assert "1 of 1 call<" in lesson.audit_viewer.table.value
    assert "1 version<" in lesson.shadow_inspector.table.value
    assert "application/vnd.jupyter.widget-view+json" in lesson.teacher._repr_mimebundle_()


def test_a_student_off_the_script_is_told_what_the_store_says(lesson):
    click(lesson, "public-chat", "memory_save", key="user-name", content="Sam")
    click(lesson, "team-chat", "memory_save", key="user-name", content="Samantha Rivera")
    click(lesson, "hr-review", "memory_save", key="user-name", content="Samantha Rivera, payroll id 7")
    first = predict_and_check(lesson, 1, VERSION_SEEN["INTERNAL"])
    assert "✘ not quite" in first.feedback.value and "the store says its own CONFIDENTIAL one" in first.feedback.value


def marks(panel) -> dict[str, str]:
    """Each choice of an exercise as the locked-in list shows it, in words: its mark and what is said of it."""
    lines = re.findall(r"<li[^>]*>(.*?)</li>", panel.committed.value)
    shown = [html.unescape(re.sub(r"<[^>]+>", "", line)) for line in lines]
    return {
        choice: next(line for line in shown if choice in line).replace(choice, "…") for choice in panel.exercise.choices
    }


def test_the_locked_in_prediction_and_the_stores_answer_are_told_apart_in_words(lesson):
    """Issue 23: once locked in, the radios were all grey in the dark theme (a disabled radio is faint): the pick and
    the right answer could not be told apart. Now the radios give way to the choices in the theme's text colour,
    each marked in words, not by colour alone.
    Guards: _committed() leaving the disabled radios shown; check() not marking what the store says."""
    click(lesson, "public-chat", "memory_save", key="user-name", content="Sam")
    click(lesson, "team-chat", "memory_save", key="user-name", content="Samantha Rivera")
    first = lesson.exercise(1)
    first.predict.value = VERSION_SEEN["PUBLIC"]
    assert first.predict.layout.display == "none"
    assert marks(first) == {
        VERSION_SEEN["PUBLIC"]: "◉ … — your prediction",
        VERSION_SEEN["INTERNAL"]: "○ …",
        VERSION_SEEN[None]: "○ …",
    }
    assert "color" not in first.committed.value  # the theme's own text colour, readable in light and dark
    first.check_button.click()
    assert marks(first) == {
        VERSION_SEEN["PUBLIC"]: "◉ … — your prediction",
        VERSION_SEEN["INTERNAL"]: "✔ … — what the store says",
        VERSION_SEEN[None]: "○ …",
    }
    third = lesson.exercise(3)
    third.predict.value = VERSION_SEEN["PUBLIC"]
    click(lesson, "team-chat", "memory_delete", key="user-name")
    third.answer_button.click()  # the answer marks what the store says, as a check does
    assert marks(third)[VERSION_SEEN["PUBLIC"]] == "◉ ✔ … — your prediction, and what the store says"
    lesson.reset()
    assert lesson.exercise(1).predict.layout.display != "none" and lesson.exercise(1).committed.value == ""


@pytest.mark.parametrize("number", range(1, len(EXERCISES) + 1))
def test_the_answer_waits_for_a_locked_in_prediction(lesson, number):
    """Issue 23: "show the answer" printed the whole why before any pick, and the student then picked right.
    Guards: show_answer() without its `if self.predict.value is None: return`; answer_button never disabled."""
    panel = lesson.exercise(number)
    assert panel.answer_button.disabled and not panel.predict.disabled
    panel.answer_button.click()  # a disabled button's click still reaches the kernel from a crafted message
    panel.show_answer()
    assert panel.answer.value == ""
    panel.predict.value = panel.exercise.choices[0]
    assert panel.predict.disabled and not panel.answer_button.disabled  # locked in, and only then the answer
    panel.answer_button.click()
    assert "Why:" in panel.answer.value
    lesson.reset()
    assert lesson.exercise(number).answer_button.disabled and lesson.exercise(number).answer.value == ""


# -- a class (issue 23): pages in kernels of their own, one shared class store: a folder or a PostgreSQL URL ---------

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture(params=["folder", "postgresql"])
def where(request, tmp_path):
    """A class store: a folder, or a fresh PostgreSQL database (its owner's URL)."""
    return str(tmp_path / "class") if request.param == "folder" else request.getfixturevalue("pg_url")


@pytest.fixture
def klass(where):
    """The class store as every page opens it; what the test's pages opened is closed afterwards."""
    with ClassStore(where) as opened:
        yield opened


def join(klass, name):
    """A student's page in a kernel of its own (its own store object on the class store), joined as ``name``."""
    page = StudentPage(klass, klass.store())
    page.name.value = name
    page.join_button.click()
    return page


def test_each_student_works_in_an_agent_of_their_own_and_sees_nothing_of_another(klass):
    sam, other_sam = join(klass, "Sam"), join(klass, "Sam")
    assert sam.lesson.seat.agent != other_sam.lesson.seat.agent  # one name, two students, two agents
    assert sam.lesson.seat.agent.startswith("sam-")
    click(sam.lesson, sam.lesson.seat.id("hr-review"), "memory_save", key="salary", content="90k")
    click(sam.lesson, sam.lesson.seat.id("public-chat"), "memory_save", key="user-name", content="Sam")
    theirs = other_sam.lesson
    for panel in theirs.simulator.panels:
        assert "90k" not in panel.view.value and "user-name" not in panel.view.value
    click(theirs, theirs.seat.id("public-chat"), "memory_get", key="user-name")
    assert "&quot;found&quot;: false" in theirs.simulator.panel(theirs.seat.id("public-chat")).result.value
    mine = sam.lesson.exercise(2)
    mine.predict.value = GET_ANSWER["not_found"]
    mine.check_button.click()
    assert "Not yet" in mine.feedback.value  # Sam's exercise reads Sam's agent only


def test_a_student_page_can_start_no_session_of_another_agent(klass):
    """Guards: Classroom(alone=False) keeping the simulator's "add session" form (its agent field is free text)."""
    lesson = join(klass, "Ada").lesson
    assert lesson.simulator.add_button.comm is None and lesson.simulator.new_agent.comm is None  # closed
    assert lesson.audit_viewer is None  # no teacher's view of the shared store is made in a student's kernel


def test_joining_needs_a_name(klass):
    page = StudentPage(klass, klass.store())
    assert page.name.description == "Your name" and page.join_button.description == "Join"
    page.join_button.click()
    assert page.lesson is None and "Type your name" in page.status.value
    assert klass.progress().students() == []


def test_the_teacher_follows_every_student_across_kernels(klass):
    students = [join(klass, name) for name in ("Ada", "Bo", "Cy")]
    for page, choice in zip(students, (0, 1, 1), strict=True):
        page.lesson.exercise(1).predict.value = EXERCISES[0].choices[choice]
    click(students[0].lesson, students[0].lesson.seat.id("public-chat"), "memory_save", key="k", content="v")
    teacher = TeacherPage(klass, klass.store())  # a kernel of its own: nothing but the class store in common
    table = teacher.table.value
    assert "3 students joined" in table
    assert all(name in table for name in ("Ada", "Bo", "Cy")) and table.count(f"1 of {len(EXERCISES)}") == 3
    assert "memory_save k → ok" in table
    first = teacher.histograms.value.split("<p><b>")[1]
    assert f"{html.escape(EXERCISES[0].choices[0])}: <b>1</b>" in first
    assert f"{html.escape(EXERCISES[0].choices[1])}: <b>2</b>" in first
    click(students[1].lesson, students[1].lesson.seat.id("team-chat"), "memory_save", key="k2", content="v")
    teacher.refresh()  # the page polls this every second
    assert "memory_save k2 → ok" in teacher.table.value


def test_what_a_student_types_reaches_the_teacher_escaped(klass):
    """Guards: html.escape dropped from TeacherPage.refresh's cells."""
    page = join(klass, XSS)
    click(page.lesson, page.lesson.seat.id("public-chat"), "memory_save", key="note", content=XSS, tags=XSS)
    teacher = TeacherPage(klass, klass.store())
    shown = teacher.table.value + teacher.histograms.value
    assert "<img" not in shown and "&lt;img src=x onerror=alert(1)&gt;" in shown
    assert teacher.student.options[0][0] == XSS  # a dropdown's label is text, not markup
    assert page.lesson.seat.agent.startswith("img-src-x-onerro")


def test_the_teacher_page_opens_only_with_the_class_token(where):
    """The kernels are given the token's SHA-256, never the token: the digest itself opens nothing.
    Guards: class_page comparing the asked token itself with what the kernel was given."""
    environ = {CLASS_ENV: where, TOKEN_ENV: token_digest("s3cret")}
    assert class_page({}) is None  # outside a class: a lesson of its own
    students = dict(environ)
    pages = [class_page(students)]
    assert isinstance(pages[0], StudentPage)
    assert TOKEN_ENV not in students  # the student's kernel keeps no copy of the teacher's secret
    pages.append(class_page({**environ, "QUERY_STRING": "teacher=s3cret"}))
    assert isinstance(pages[-1], TeacherPage)
    for query in ("teacher=wrong", "teacher=", "teacher=s3cre", f"teacher={token_digest('s3cret')}"):
        refused = class_page({**environ, "QUERY_STRING": query})
        assert not isinstance(refused, TeacherPage | StudentPage) and "open the teacher" in refused.widget.value
    assert not isinstance(class_page({CLASS_ENV: where, "QUERY_STRING": "teacher="}), TeacherPage)
    for page in pages:
        page.klass.close()


def test_the_teacher_resets_one_student_or_the_class(klass):
    ada, bo = join(klass, "Ada"), join(klass, "Bo")
    for page in (ada, bo):
        click(page.lesson, page.lesson.seat.id("public-chat"), "memory_save", key="user-name", content="x")
        page.lesson.exercise(1).predict.value = EXERCISES[0].choices[0]
    teacher = TeacherPage(klass, klass.store())
    teacher.student.value = ada.student
    teacher.reset_student_button.click()
    for page in (ada, bo):
        page.follow_resets()  # each page polls this every second
    assert ada.lesson.exercise(1).predict.value is None and ada.lesson.seat.agent == f"{ada.student}-2"
    assert all("user-name" not in p.view.value for p in ada.lesson.simulator.panels)  # a new, empty lesson
    assert bo.lesson.exercise(1).predict.value is not None  # the others' lessons go on
    teacher.reset_class_button.click()
    for page in (ada, bo):
        page.follow_resets()
    assert ada.lesson.seat.agent == f"{ada.student}-3" and bo.lesson.seat.agent == f"{bo.student}-2"
    teacher.refresh()
    assert teacher.table.value.count(f"0 of {len(EXERCISES)}") == 2


# -- issue 33: an attack round by a student with only a browser (the page's own websocket) -------------------------


@pytest.mark.parametrize("after", ["check", "show the answer"])
@pytest.mark.parametrize("trait", ["index", "value"])
def test_a_locked_in_prediction_cannot_be_changed_by_a_widget_update(klass, after, trait):
    """Issue 33: the radio is hidden and disabled once a prediction is locked in, but a comm `update` of its index
    still reached the kernel: lock in a wrong answer, check ("Not quite"), send the right index, check again:
    "✔ right", and the teacher counted it. The first committed prediction is the only one check and the record use.
    Guards: _committed() without its put-back of the first pick (the update stands on the radio); check(),
    show_answer() or save_progress() reading predict.value, not the first committed prediction."""
    page = join(klass, "Eve")
    lesson = page.lesson
    click(lesson, lesson.seat.id("public-chat"), "memory_save", key="user-name", content="Sam")
    click(lesson, lesson.seat.id("team-chat"), "memory_save", key="user-name", content="Samantha Rivera")
    first = lesson.exercise(1)
    wrong, right = VERSION_SEEN["PUBLIC"], VERSION_SEEN["INTERNAL"]
    first.predict.value = wrong
    if after == "check":
        first.check_button.click()
        assert "✘ not quite" in first.feedback.value
    else:
        first.answer_button.click()
        assert "Why:" in first.answer.value
    update = {"index": first.exercise.choices.index(right)} if trait == "index" else {"value": right}
    first.predict.set_state(update)  # what a websocket `update` message on the radio's comm does in the kernel
    assert first.predict.value == wrong and first.prediction == wrong
    first.check_button.click()
    assert "✘ not quite" in first.feedback.value and "✔ right" not in first.feedback.value
    assert marks(first)[wrong] == "◉ … — your prediction"
    teacher = TeacherPage(klass, klass.store())
    (record,) = klass.progress().students()
    assert record["predictions"] == {"1": wrong} and record["verdicts"] == {"1": "wrong"}
    assert f"{html.escape(right)}: <b>0</b>" in teacher.histograms.value.split("<p><b>")[1]
    assert "<td>0</td>" in teacher.table.value  # right: none


def test_a_late_joiner_follows_only_the_resets_made_after_joining(klass):
    """Issue 33: a page counted resets from 1 while the class store returns every reset ever made: after three
    class resets a newcomer's agent was renewed at each poll (-2, -3, -4), losing their work. A page counts from
    the resets it saw when it joined. Guards: follow_resets comparing the count with the lessons started."""
    klass.store()  # on PostgreSQL the store comes first, as memlab classroom opens it before any page
    teacher = klass.progress()
    for _ in range(3):
        teacher.reset()
    late = join(klass, "Late")
    click(late.lesson, late.lesson.seat.id("public-chat"), "memory_save", key="user-name", content="Lee")
    late.lesson.exercise(1).predict.value = EXERCISES[0].choices[0]
    for _ in range(4):
        late.follow_resets()  # the page polls this every second
    assert late.lesson.seat.agent == late.student and late.lesson.exercise(1).prediction is not None
    assert "user-name" in late.lesson.simulator.panel(late.lesson.seat.id("public-chat")).view.value
    teacher.reset()
    teacher.reset(late.student)
    for _ in range(3):
        late.follow_resets()
    assert late.lesson.seat.agent == f"{late.student}-2"  # the two resets since the last poll: one new lesson
    assert late.lesson.exercise(1).prediction is None


def test_an_agent_carries_64_random_bits():
    """Issue 33: a name without ASCII letters became `student-XXXX`, 16 random bits: two such students in a class of
    30 clashed with about 0.7% chance. Guards: agent_for with secrets.token_hex(2)."""
    tags = {agent_for("東京").rsplit("-", 1)[1] for _ in range(50)}
    assert len(tags) == 50 and all(re.fullmatch(r"[0-9a-f]{16,}", tag) for tag in tags)


def test_two_students_whose_agents_clash_both_join_or_are_told_to_press_join_again(klass, monkeypatch):
    """Issue 33: when two agents clashed, Join raised InvalidArgument (the session ids exist) and the page stayed
    blank. A clash is retried with a new tag; one that keeps clashing says so on the page.
    Guards: join() without its retry; join() letting the clash's InvalidArgument out."""
    tags = iter(["c1a5", "c1a5", "f00d"])
    monkeypatch.setattr(classpage, "secrets", SimpleNamespace(token_hex=lambda nbytes=None: next(tags)))
    first, second = join(klass, "東京"), join(klass, "ÆØ")
    assert first.lesson.seat.agent == first.student == "student-c1a5"
    assert second.lesson is not None and second.lesson.seat.agent == second.student == "student-f00d"
    assert {r["student"] for r in klass.progress().students()} == {"student-c1a5", "student-f00d"}
    monkeypatch.setattr(classpage, "secrets", SimpleNamespace(token_hex=lambda nbytes=None: "c1a5"))
    unlucky = join(klass, "Ωμέγα")
    assert unlucky.lesson is None and unlucky.student is None
    assert "press Join again" in unlucky.status.value and unlucky.join_button in unlucky.widget.children[0].children


def test_the_teacher_sees_which_names_read_as_another_students(klass):
    """Issue 33: names are not authenticated: a second "Eve", or "E<RLO>ve" shown as "Eve", passed as the first.
    The teacher's page marks each student whose name reads as another's. Guards: refresh() without the mark;
    name_key keeping format characters (the right-to-left override) or case."""
    eve, again, hidden, ada = (join(klass, name) for name in ("Eve", "eve", "E\u202eve", "Ada"))
    teacher = TeacherPage(klass, klass.store())
    rows = {row.split("</td>")[0].removeprefix("<td>"): row for row in teacher.table.value.split("<tr>")[2:]}
    marked = [name for name in rows if "another student has this name" in name]
    assert len(marked) == 3 and not any(name.startswith("Ada") for name in marked)
    assert twins(klass.progress().students()) == {eve.student, again.student, hidden.student}
    assert ada.student not in twins(klass.progress().students())


def test_what_hr_review_gets_is_read_at_its_own_floor():
    # Guards: classroom._seen_by_hr asking the store for a trusted reader's view (an untrusted user-name that
    # hr-review does get then counted as "nothing", and a wrong prediction marked right).
    store = MemoryStore()
    public, team = store.session("PUBLIC", session_id="public-chat"), store.session("INTERNAL", session_id="team-chat")
    public.memory_save("user-name", "Sam")
    team.memory_save("user-name", "Samantha")
    team.memory_delete("user-name")
    public.memory_delete("user-name")
    hr = store.session("CONFIDENTIAL", session_id="hr-review", integrity="untrusted", source="web page")
    hr.memory_save("user-name", "Mallory")
    assert hr.memory_get("user-name").content == "Mallory"
    assert _seen_by_hr(store, Seat(), after_delete=True) == "its own CONFIDENTIAL@untrusted one"
