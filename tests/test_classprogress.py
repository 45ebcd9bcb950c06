"""memlab.classprogress: where a class lives — a folder's records and resets, what a student's page may do, and
a URL's password kept out of what is printed and handed to kernels. On PostgreSQL, with the database's own
refusals, the records are tests/test_classroom_progress.py's."""

from __future__ import annotations

import os
import stat

import pytest

from memlab.classprogress import (
    CLASS_ENV,
    SECRET_ENV,
    ClassStore,
    hand_over,
    hidden,
    printable,
    taken_over,
    token_digest,
)
from memlab.errors import Denied, InvalidArgument


@pytest.mark.parametrize(
    ("where", "shown"),
    [
        ("postgresql://teacher:s3cret@db/class", "postgresql://teacher:***@db/class"),
        ("postgresql://db/class?sslmode=require&password=s3cret", "postgresql://db/class?sslmode=require&password=***"),
        ("postgresql://teacher@db/class", "postgresql://teacher@db/class"),
        ("/srv/class", "/srv/class"),
    ],
)
def test_printable_hides_a_urls_password(where, shown):
    assert printable(where) == shown


def test_hidden_removes_the_password_from_any_message():
    assert (
        hidden("login as teacher with s3cret failed", "postgresql://teacher:s3cret@db/x")
        == "login as teacher with *** failed"
    )
    assert hidden("nothing secret", "/srv/class") == "nothing secret"


def test_a_urls_password_is_handed_over_in_a_private_file(tmp_path):
    # Guards: classprogress.hand_over putting the URL with its password in the kernels' environment.
    url = "postgresql://teacher:s3cret@db/class"
    environ = hand_over(url, tmp_path)
    assert "s3cret" not in "".join(environ.values())
    assert stat.S_IMODE(os.stat(environ[SECRET_ENV]).st_mode) == 0o600
    assert taken_over(environ) == url
    assert hand_over("postgresql://db/class", tmp_path) == {CLASS_ENV: "postgresql://db/class"}
    assert taken_over(hand_over(tmp_path / "class", tmp_path)) == str((tmp_path / "class").resolve())


def test_a_token_is_handed_over_as_its_digest():
    assert len(token_digest("s3cret")) == 64 and token_digest("s3cret") != token_digest("s3cret ")


def test_a_folder_class_keeps_records_and_resets(tmp_path):
    with ClassStore(tmp_path / "class") as where:
        teacher, ana = where.progress(), where.progress("ana")
        ana.record("ana", {"joined": 2, "step": 3})
        where.progress("ben").record("ben", {"joined": 1, "step": 1})
        assert [(r["student"], r["step"]) for r in teacher.students()] == [("ben", 1), ("ana", 3)]
        teacher.reset("ana")
        teacher.reset()
        assert ana.resets("ana") == 2 and where.progress("ben").resets("ben") == 1
        where.store().session(agent="ana").memory_save("k", "v")
    assert (tmp_path / "class" / "store").is_dir()


@pytest.mark.parametrize(
    "call",
    [
        lambda ana: ana.record("ben", {}),
        lambda ana: ana.resets("ben"),
        lambda ana: ana.students(),
        lambda ana: ana.reset("ana"),
    ],
    ids=["record another's", "read another's resets", "list the class", "reset"],
)
def test_a_students_page_keeps_its_own_records_only(tmp_path, call):
    with ClassStore(tmp_path) as where, pytest.raises(Denied):
        call(where.progress("ana"))


def test_a_url_that_is_not_postgresql_is_refused_without_its_password():
    with pytest.raises(InvalidArgument) as refused:
        ClassStore("mysql://teacher:s3cret@db/class")
    assert "s3cret" not in str(refused.value)
