"""Integrity noninterference (DESIGN.md section 9): what a session whose floor is TRUSTED observes does not depend
on what untrusted writers did — results, order, scores, snippets, versions, errors, the tool layer's JSON.

Two stores get the same operations from "careful" sessions (floor TRUSTED, any level, reading and writing); one of
them also gets operations from untrusted writers: a session started untrusted ("web"), and one the host lowers
part-way ("lowered", which starts trusted with a trusted floor: its operations count as trusted until the host
lowers it, as untrusted after). This is the confidentiality property of tests/test_noninterference.py turned on its
side: there the secret is above the observer's taint, here the poison is below its floor.
"""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import Phase, find, given, settings

from memlab import Level, MemlabError, tools
from tests.backends import open_store
from tests.conftest import fixed_clock
from tests.test_noninterference import KEYS, READS, WORDS, operation

CAREFUL = ("careful-a", "careful-b")


def integrity_operation(actor: str):
    """An operation of ``actor``: a tool call or an escalation, or for ``lowered`` the host's lowering."""
    base = operation(actor, list(Level))
    if actor == "lowered":
        return st.one_of(base, st.tuples(st.just(actor), st.just("lower"), st.just("web:page")))
    return base


@st.composite
def two_worlds(draw, words: list[str] = WORDS, keys: list[str] = KEYS):
    levels = st.sampled_from(list(Level))
    starts = {name: draw(levels) for name in (*CAREFUL, "web", "lowered")}
    actors = st.sampled_from([*CAREFUL, "web", "lowered"])
    ops = draw(st.lists(actors.flatmap(integrity_operation), min_size=1, max_size=30))
    return starts, ops


def observe(case, *, with_untrusted: bool, backend: str = "memory", **options) -> list[object]:
    starts, ops = case
    with open_store(backend, clock=fixed_clock, **options) as store:
        sessions = {
            name: store.session(starts[name], "main", session_id=name, floor="trusted")
            for name in (*CAREFUL, "lowered")
        }
        if with_untrusted:
            sessions["web"] = store.session(starts["web"], "main", session_id="web", integrity="untrusted")
        lowered, seen = False, []
        for actor, tool, arguments in ops:
            if actor == "web" and not with_untrusted:
                continue
            if actor == "lowered":
                lowered = lowered or tool == "lower"
                if lowered and not with_untrusted:
                    continue  # from the host's lowering on, its operations are untrusted ones
            session = sessions[actor]
            try:
                if tool == "escalate":
                    result = session.escalate(arguments)
                elif tool == "lower":
                    result = session.lower_integrity(source=arguments)
                else:
                    result = session.call(tool, arguments)
            except MemlabError as error:
                result = (type(error).__name__, str(error))
            if actor in CAREFUL:
                shown = tools.call(session, tool, arguments) if tool in READS else None
                seen.append((actor, tool, result, shown, session.taint))
        return seen


def interferes(case, **options) -> bool:
    return observe(case, with_untrusted=False, **options) != observe(case, with_untrusted=True, **options)


@settings(max_examples=600)
@given(two_worlds())
def test_a_trusted_floor_cannot_observe_untrusted_writers(case):
    assert not interferes(case)


@pytest.mark.parametrize("backend", ["file", "folder"])
@settings(max_examples=60)
@given(case=two_worlds())
def test_a_trusted_floor_cannot_observe_untrusted_writers_on_disk(backend, case):
    assert not interferes(case, backend=backend)


@st.composite
def ranking_pressure(draw):
    """A random scenario, then saves of several keys by a careful and the untrusted session, of the same few
    words, and a careful search naming them: untrusted versions that would move the bm25 statistics (document
    frequency, lengths) of a shared index."""
    starts, ops = draw(two_worlds(words=["alice", "coffee"]))
    starts = {**starts, "web": starts["careful-a"]}
    text = st.lists(st.sampled_from(["alice", "coffee", "march"]), min_size=1, max_size=3).map(" ".join)
    save = st.tuples(st.sampled_from(["careful-a", "web"]), st.sampled_from(KEYS), text)
    saves = draw(st.lists(save, min_size=1, max_size=10))
    ending = [(actor, "memory_save", {"key": key, "content": words}) for actor, key, words in saves]
    ending.append(("careful-a", "memory_search", {"query": draw(text), "max_results": 5}))
    return starts, ops + ending


@settings(max_examples=200)
@given(case=ranking_pressure())
def test_scores_come_from_the_trusted_view_alone(case):
    """Ranking statistics are partitioned by floor: untrusted versions never weigh in a careful session's scores."""
    assert not interferes(case)


def test_the_property_finds_a_shared_ranking_index(monkeypatch):
    """The generator is not vacuous: searching a floor-TRUSTED view in the levels' index (which holds untrusted
    versions too: one ranking index for both grades) is found, with a counterexample."""
    from memlab.storage import lexical

    real = lexical.view_key

    def shared(reader):  # every reader searches the index of its level, whatever its floor
        key = real(reader)
        return int(reader.level) if isinstance(key, str) and not reader.categories else key

    monkeypatch.setattr(lexical, "view_key", shared)
    quick = settings(max_examples=2_000, phases=[Phase.generate], database=None)
    found = find(ranking_pressure(), interferes, settings=quick)
    assert interferes(found)
