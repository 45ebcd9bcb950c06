"""A class's progress records (issue 23: the class store a folder or a PostgreSQL URL): a student's kernel writes
only its own student's record and reads only its own resets, through the API on both stores and, on PostgreSQL,
under row-level security that raw SQL on the student's own connection cannot get past; the URL's password stays
out of the kernels' environment."""

from __future__ import annotations

import hashlib
import hmac
import os
import shutil
import stat
import tempfile
from pathlib import Path

import psycopg
import pytest

from memlab.classprogress import (
    CLASS_ENV,
    SECRET_ENV,
    STUDENT_CONNECTIONS,
    TEACHER_CONNECTIONS,
    ClassStore,
    hand_over,
    hidden,
    printable,
    taken_over,
    token_digest,
)
from memlab.errors import Denied, InvalidArgument
from memlab.widgets.classpage import TOKEN_ENV, StudentPage, TeacherPage, class_page
from tests.pgserver import PostgresServer, find_bindir

REFUSED = psycopg.errors.InsufficientPrivilege


@pytest.fixture(params=["folder", "postgresql"])
def klass(request, tmp_path):
    where = str(tmp_path / "class") if request.param == "folder" else request.getfixturevalue("pg_url")
    with ClassStore(where) as opened:
        opened.store()  # on PostgreSQL the store comes first (memlab classroom opens it before any page)
        yield opened


def joined(klass, name: str) -> StudentPage:
    page = StudentPage(klass, klass.store())
    page.name.value = name
    page.join_button.click()
    return page


def test_a_students_records_serve_that_student_only(klass):
    """Guards: Progress._own or Progress._teachers not called (a student's records reaching another's)."""
    ada, bo = joined(klass, "Ada"), joined(klass, "Bo")
    with pytest.raises(Denied, match="its own records only"):
        ada.progress.record(bo.student, {"name": "Bo", "predictions": {"1": "forged"}})
    with pytest.raises(Denied, match="its own records only"):
        ada.progress.resets(bo.student)
    with pytest.raises(Denied, match="only the teacher"):
        ada.progress.students()
    with pytest.raises(Denied, match="only the teacher"):
        ada.progress.reset(bo.student)
    teacher = klass.progress()
    assert [record["name"] for record in teacher.students()] == ["Ada", "Bo"]
    assert all(record["predictions"] == {} for record in teacher.students())
    assert teacher.resets(bo.student) == 0


def test_a_record_is_the_students_who_wrote_it_whatever_it_says(klass):
    """A record that names another student (as a student's raw write could) is listed as its writer's: the
    teacher's "reset this student" resets the writer. Guards: students() taking "student" from the record."""
    ada, bo = joined(klass, "Ada"), joined(klass, "Bo")
    ada.progress.record(ada.student, {"student": bo.student, "name": "Bo", "joined": 1})
    teacher = TeacherPage(klass, klass.store())
    assert sorted(teacher.student.options) == sorted([("Bo", ada.student), ("Bo", bo.student)])


# -- on PostgreSQL: the student's own connection, attacked with raw SQL -------------------------------------------


@pytest.fixture
def pg_class(pg_url):
    with ClassStore(pg_url) as opened:
        opened.store()
        yield opened


def _raw(page: StudentPage) -> psycopg.Connection:
    """The student's kernel's own connection for its records (the session role), for SQL written by hand."""
    return page.progress.table._conn


def _as_claimed(conn: psycopg.Connection, claim: str) -> None:
    conn.execute("BEGIN")
    conn.execute("SELECT set_config('memlab.claim', %s, true)", (claim,))


def _true_claim(page: StudentPage, student: str) -> str:
    """The claim memlab makes for ``student`` in the connection's open transaction (with the owner's key)."""
    conn = _raw(page)
    txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
    message = f"{student}|0|{txid}"
    return f"{message}|{hmac.new(page.progress.table._key, message.encode(), hashlib.sha256).hexdigest()}"


def _filled(klass):
    ada, bo = joined(klass, "Ada"), joined(klass, "Bo")
    teacher = klass.progress()
    teacher.reset(bo.student)
    teacher.reset()
    return ada, bo


def test_a_students_connection_reads_and_writes_its_own_row_only(pg_class):
    """With its own true claim, raw SQL on a student's connection sees and changes only that student's record and
    reads only that student's resets and the class's. Guards: class_progress_read as USING (true);
    class_progress_add as WITH CHECK (true); class_resets_read without its student clause. (Moving its row to
    another name is refused by the SELECT policy, applied to an UPDATE's new row, even with class_progress_write's
    WITH CHECK (true): that mutation was tried and is not caught here.)"""
    ada, bo = _filled(pg_class)
    conn = _raw(ada)
    conn.execute("BEGIN")
    conn.execute("SELECT set_config('memlab.claim', %s, true)", (_true_claim(ada, ada.student),))
    assert [row[0] for row in conn.execute("SELECT student FROM class_progress")] == [ada.student]
    assert sorted(row[0] for row in conn.execute("SELECT student FROM class_resets")) == [""]
    assert conn.execute("UPDATE class_progress SET record = '{}' WHERE student = %s", (bo.student,)).rowcount == 0
    conn.execute("SAVEPOINT probe")
    with pytest.raises(REFUSED):  # moving its own row onto another student's name
        conn.execute("UPDATE class_progress SET student = %s WHERE student = %s", (bo.student + "x", ada.student))
    conn.execute("ROLLBACK TO SAVEPOINT probe")
    with pytest.raises(REFUSED):
        conn.execute("INSERT INTO class_progress (student, record) VALUES ('someone-else', '{}')")
    conn.execute("ROLLBACK")
    assert {r["student"]: r["name"] for r in pg_class.progress().students()} == {ada.student: "Ada", bo.student: "Bo"}


def test_a_students_own_resets_are_read_but_never_written(pg_class):
    """Guards: a GRANT of INSERT, UPDATE or DELETE on class_resets (or DELETE on class_progress) to the role."""
    ada, bo = _filled(pg_class)
    assert ada.progress.resets(ada.student) == 1 and bo.progress.resets(bo.student) == 2
    conn = _raw(ada)
    for statement in (
        "INSERT INTO class_resets (student, resets) VALUES ('x', 1)",
        "UPDATE class_resets SET resets = 0",
        "DELETE FROM class_resets",
        "DELETE FROM class_progress",
        "TRUNCATE class_progress",
    ):
        conn.execute("BEGIN")
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (_true_claim(ada, ada.student),))
        with pytest.raises(REFUSED):
            conn.execute(statement)
        conn.execute("ROLLBACK")
    with pytest.raises(Denied, match="refused"):
        ada.progress.table.reset(ada.student)  # past the API's own check: the database refuses too
    assert pg_class.progress().resets(bo.student) == 2


FORGED = {
    "no claim": None,
    "another student's, without its mac": "{other}|0|{txid}",
    "another student's, a made-up mac": "{other}|0|{txid}|" + "ab" * 32,
    "another student's, hashed without the key": "sha256",
    "its own, edited to another student": "edited",
}


@pytest.mark.parametrize("forgery", list(FORGED))
def test_a_students_connection_cannot_forge_its_way_to_another_students_row(pg_class, forgery):
    """The policies rest on the store's signed claim, which the session role cannot make: a claim of its own
    making admits nothing, not even the class's reset counter. Guards: the class_resets_read policy without its
    `claimed_agent() IS NOT NULL` (the class's counter seen with no claim)."""
    ada, bo = _filled(pg_class)
    conn = _raw(ada)
    conn.execute("BEGIN")
    txid = conn.execute("SELECT pg_current_xact_id()::text").fetchone()[0]
    pattern = FORGED[forgery]
    if pattern == "sha256":
        message = f"{bo.student}|0|{txid}"
        claim = f"{message}|{hashlib.sha256(message.encode()).hexdigest()}"
    elif pattern == "edited":
        claim = _true_claim(ada, ada.student).replace(ada.student, bo.student, 1)
    else:
        claim = pattern and pattern.format(other=bo.student, txid=txid)
    if claim:
        conn.execute("SELECT set_config('memlab.claim', %s, true)", (claim,))
    assert conn.execute("SELECT count(*) FROM class_progress").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM class_resets").fetchone()[0] == 0
    assert conn.execute("UPDATE class_progress SET record = '{}'").rowcount == 0
    with pytest.raises(REFUSED):
        conn.execute("INSERT INTO class_progress (student, record) VALUES (%s, '{}')", (bo.student,))
    conn.execute("ROLLBACK")


def test_a_students_kernel_holds_no_owners_connection_for_its_records(pg_class):
    ada = joined(pg_class, "Ada")
    (user,) = _raw(ada).execute("SELECT current_user").fetchone()
    assert user == "memlab_session"


# -- where the URL's password goes ---------------------------------------------------------------------------


def test_a_urls_password_is_handed_to_the_kernels_in_a_private_file_not_their_environment(tmp_path, pg_url):
    """Guards: hand_over putting the URL itself in MEMLAB_CLASS."""
    url = pg_url.replace("postgres@", "postgres:hunter2@")
    environment = hand_over(url, tmp_path)
    assert "hunter2" not in "".join(environment.values())
    assert environment[CLASS_ENV] == printable(url) == pg_url.replace("postgres@", "postgres:***@")
    assert stat.S_IMODE(os.stat(environment[SECRET_ENV]).st_mode) == 0o600
    assert taken_over(environment) == url
    with ClassStore(url) as made:  # memlab classroom makes the store before Voila starts
        made.store()
    page = class_page({**environment, TOKEN_ENV: token_digest("t")})  # the same path a kernel takes
    try:
        page.name.value = "Ada"
        page.join_button.click()
        assert page.klass.progress().students()[0]["name"] == "Ada"
    finally:
        page.klass.close()
    assert hand_over(pg_url, tmp_path) == {CLASS_ENV: pg_url}  # no password, nothing to hide
    assert hand_over(tmp_path / "c", tmp_path) == {CLASS_ENV: str((tmp_path / "c").resolve())}


def test_a_password_in_the_query_is_hidden_too():
    assert (
        printable("postgresql:///db?host=/s&password=p%40ss&user=u") == "postgresql:///db?host=/s&password=***&user=u"
    )
    assert printable("postgres://u:p@h:5/d") == "postgres://u:***@h:5/d"
    assert printable("/srv/class") == "/srv/class"
    url = "postgresql://u:hunter1@/d?password=hunter2"
    assert (
        hidden(f"cannot connect to {url}: refused", url)
        == "cannot connect to postgresql://u:***@/d?password=***: refused"
    )


@pytest.mark.parametrize("where", ["mysql://teacher:hunter2@db/class", "postgresq://teacher@db/class"])
def test_a_url_that_is_not_postgresql_is_refused_not_made_a_folder(tmp_path, monkeypatch, where):
    """Guards: ClassStore taking any other URL for a folder path (`mysql:/...` made in the current folder)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        InvalidArgument, match=r"a folder or a postgresql:// URL, not mysql://teacher:\*\*\*@|postgresq://"
    ):
        ClassStore(where).store()
    assert list(tmp_path.iterdir()) == []


def test_the_session_roles_grants_on_the_records_are_made_anew_at_each_open(pg_class, pg_url):
    """A store upgrade that revokes the session role's grants on every table of the schema (as schema 2 to 3 did)
    leaves the class's records writable once the class is opened again. Guards: _grants_sql run only with the
    tables' creation."""
    pg_class.progress()  # the tables made
    with psycopg.connect(pg_url, autocommit=True) as owner:
        owner.execute("REVOKE ALL ON memlab.class_progress, memlab.class_resets FROM memlab_session")
    with ClassStore(pg_url) as reopened:
        reopened.store()
        ada = joined(reopened, "Ada")
        assert reopened.progress().students()[0]["student"] == ada.student


# -- on PostgreSQL: the server's connections (issue 33) --------------------------------------------------------


@pytest.fixture
def small_server():
    """A PostgreSQL server of its own with max_connections=20 (3 of them reserved for superusers)."""
    folder = Path(tempfile.mkdtemp(prefix="memlab-pg-small-"))
    server = PostgresServer(folder, find_bindir(), max_connections=20)
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _held(server: PostgresServer, database: str) -> int:
    """The connections to ``database`` now, this count's own left out."""
    with psycopg.connect(server.url(), autocommit=True) as conn:
        query = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()"
        return conn.execute(query, (database,)).fetchone()[0]


def test_unjoined_pages_hold_no_connection_and_students_never_take_the_teachers(small_server):
    """Issue 33: each visit held connections before anyone joined: with max_connections=20, eight page loads held
    17 and the teacher's page failed ("remaining connection slots are reserved"). A page holds none before its
    student joins; a joined page holds three; joins beyond the class's budget are told the class is full, so the
    teacher's connections are always there. Guards: class_page opening the store before Join; no seat taken at
    join (ClassStore.progress without its budget)."""
    url = small_server.fresh_database()
    database = url.split("@/")[1].split("?")[0]
    with ClassStore(url) as opened:  # as memlab classroom opens it, before Voila starts
        opened.store()
        opened.progress()
    environ = {CLASS_ENV: url, TOKEN_ENV: token_digest("t")}
    pages = [class_page(dict(environ)) for _ in range(10)]
    try:
        assert _held(small_server, database) == 0
        for number, page in enumerate(pages):
            page.name.value = f"Student {number}"
            page.join_button.click()
        joined = [page for page in pages if page.lesson is not None]
        assert len(joined) == (20 - 3 - TEACHER_CONNECTIONS) // STUDENT_CONNECTIONS == 3
        assert all("The class is full" in page.status.value for page in pages if page.lesson is None)
        assert _held(small_server, database) == 3 * STUDENT_CONNECTIONS
        teacher = class_page({**environ, "QUERY_STRING": "teacher=t"})
        pages.append(teacher)
        assert isinstance(teacher, TeacherPage) and "3 students joined" in teacher.table.value
        joined[0].klass.close()  # a student's kernel stops: its seat is free again
        pages[5].join_button.click()
        assert pages[5].lesson is not None
    finally:
        for page in pages:
            page.klass.close()
