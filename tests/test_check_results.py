"""memlab.check.results: actors, steps, a Counterexample (text, rows, JSON, HTML, replay) and a NoLeak."""

from __future__ import annotations

import json

import pytest

from memlab.check.results import Actor, Counterexample, NoLeak, Step
from memlab.errors import InvalidArgument
from memlab.labels import Label
from memlab.policy import Policy


def test_an_actors_taint_is_where_it_is_raised_to():
    assert Actor("a", "public").taint == Label.parse("PUBLIC")
    assert Actor("a", "PUBLIC", "confidential:hr").taint == Label.parse("CONFIDENTIAL:hr")


@pytest.mark.parametrize(
    ("step", "text"),
    [
        (Step("low1", "memory_get", (("key", "k1"),)), "low1.memory_get(key='k1')"),
        (Step("s", "memory_save", (("key", "k"), ("tags", ("t",)))), "s.memory_save(key='k', tags=('t',))"),
        (Step("s", "memory_list", ()), "s.memory_list()"),
    ],
)
def test_a_step_describes_its_call(step, text):
    assert step.describe() == text


def leak(judge=None) -> Counterexample:
    actors = (Actor("low", "PUBLIC"), Actor("high", "PUBLIC", "CONFIDENTIAL"))
    steps = (
        Step("high", "memory_save", (("key", "k1"), ("content", "<b>secret</b>")), high=True),
        Step("low", "memory_get", (("key", "k1"),)),
    )
    return Counterexample(
        "noninterference", Policy(), Label.parse("PUBLIC"), actors, steps, 1, "seen", None, "why", judge=judge
    )


def test_a_counterexamples_rows_mark_the_step_and_the_worlds():
    # Guards: Counterexample.rows marking the first step instead of `step` (the arrow then on the wrong call).
    rows = leak().rows()
    assert [row["world"] for row in rows] == ["second only", "both"]
    assert [row["note"] for row in rows] == ["", "<- here"]
    assert rows[0]["session"] == "high (PUBLIC->CONFIDENTIAL)" and rows[1]["session"] == "low (PUBLIC)"
    assert len(leak()) == 2


def test_a_counterexample_as_text_json_and_html():
    found = leak()
    text = str(found)
    assert text.splitlines()[0] == "noninterference LEAK under policy strict at PUBLIC: 2 steps"
    assert "observed: 'seen'" in text and "expected: None" in text
    document = json.loads(json.dumps(found.as_dict()))
    assert (document["policy"], document["level"], document["leak"]) == ("strict", "PUBLIC", True)
    assert "<b>secret</b>" not in found._repr_html_() and "&lt;b&gt;secret" in found._repr_html_()


def test_replay_runs_the_judge_again_and_refuses_without_one():
    with pytest.raises(InvalidArgument, match="cannot replay"):
        leak().replay()
    calls = []
    found = leak(judge=lambda *arguments: calls.append(arguments) or "again")
    assert found.replay() == "again"
    assert calls[0][1:] == (found.level, found.actors, found.steps)


def test_a_no_leak_says_what_it_covered():
    covered = NoLeak("shadowing", "strict", 10, 42, 1.25)
    assert str(covered) == "shadowing: no leak under policy strict in 10 random scenarios (42 operations, 1.2 s)"
    assert covered.as_dict()["leak"] is False and covered.leak is False
