"""memlab.widgets.classpage: a class's pages — a student's agent and name checks, who is shown as a twin, which
page a kernel serves. A class in a browser is tests/test_browser.py's; on PostgreSQL, test_classroom_progress.py's."""

from __future__ import annotations

import re

import pytest

from memlab.classprogress import CLASS_ENV, token_digest
from memlab.widgets.classpage import (
    TOKEN_ENV,
    StudentPage,
    TeacherPage,
    _Refusal,
    agent_for,
    class_page,
    name_key,
    twins,
)


@pytest.mark.parametrize(
    ("name", "prefix"),
    [("Ana María", "ana-maria"), ("社員", "student"), ("../../etc", "etc"), ("A" * 40, "a" * 16)],
)
def test_a_students_agent_is_their_ascii_name_and_a_random_tag(name, prefix):
    agent = agent_for(name)
    assert re.fullmatch(rf"{re.escape(prefix)}-[0-9a-f]{{16}}", agent)
    assert agent_for(name) != agent


@pytest.mark.parametrize("lookalike", ["E\u202eve", "ＥVE", "eve", " Eve ", "e\u200bve"])
def test_names_that_read_alike_have_one_key(lookalike):
    assert name_key(lookalike) == name_key("Eve")


def test_twins_are_the_students_whose_names_read_alike():
    # Guards: classpage.twins comparing names as typed (a fullwidth "ＥVE" then passes as a different student).
    records = [{"student": "s1", "name": "Eve"}, {"student": "s2", "name": "ＥVE"}, {"student": "s3", "name": "Bob"}]
    assert twins(records) == {"s1", "s2"}


@pytest.mark.parametrize(
    ("query", "page"),
    [("", StudentPage), ("teacher=s3cret", TeacherPage), ("teacher=wrong", _Refusal), ("teacher=", _Refusal)],
)
def test_the_page_a_kernel_serves(tmp_path, query, page):
    environ = {CLASS_ENV: str(tmp_path / "class"), TOKEN_ENV: token_digest("s3cret"), "QUERY_STRING": query}
    assert type(class_page(environ)) is page
    assert TOKEN_ENV not in environ  # taken out: no later code of the kernel reads it


def test_no_class_no_page():
    assert class_page({}) is None


def test_a_student_joins_under_a_name_of_1_to_60_characters(tmp_path):
    page = class_page({CLASS_ENV: str(tmp_path / "class")})
    page.name.value = "   "
    page.join_button.click()
    assert page.lesson is None and "Type your name" in page.status.value
    page.name.value = "Ana"
    page.join_button.click()
    assert page.lesson is not None and page.student.startswith("ana-")
    (record,) = page.klass.progress().students()
    assert (record["name"], record["student"]) == ("Ana", page.student)
