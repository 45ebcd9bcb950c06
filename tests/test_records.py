"""memlab.records: the value objects that cross module boundaries (Memory, Hit, the events, NewVersion)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from memlab.labels import Label
from memlab.levels import Level
from memlab.records import AuditEvent, Hit, Memory, NewVersion, TaintEvent


def memory(classification: str = "INTERNAL", version: int = 2) -> Memory:
    return Memory(
        "user-name", "Sam", ("personal",), Label.parse(classification), version, "2026-01-01T12:00:00+00:00", "s1"
    )


@pytest.mark.parametrize(
    ("classification", "ref", "level", "categories"),
    [
        ("PUBLIC", "user-name@PUBLIC/v2", Level.PUBLIC, frozenset()),
        ("CONFIDENTIAL:legal,hr", "user-name@CONFIDENTIAL:hr,legal/v2", Level.CONFIDENTIAL, {"hr", "legal"}),
    ],
)
def test_a_memorys_ref_level_and_categories_come_from_its_classification(classification, ref, level, categories):
    version = memory(classification)
    assert version.ref() == ref
    assert version.level is level
    assert version.categories == categories
    assert version.label is version.classification


@pytest.mark.parametrize(
    "record",
    [
        memory(),
        TaintEvent("s1", "2026-01-01T12:00:00+00:00", Label.parse("PUBLIC"), Label.parse("INTERNAL"), "asked"),
        AuditEvent("2026-01-01T12:00:00+00:00", "s1", "main", Label.parse("PUBLIC"), "memory_get", key="k"),
    ],
)
def test_records_are_immutable_and_hashable(record):
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, dataclasses.fields(record)[0].name, "other")
    assert {record: 1}[dataclasses.replace(record)] == 1


def test_an_audit_events_defaults_are_an_ok_call_with_no_records():
    event = AuditEvent("t", "s1", "main", Level.PUBLIC, "memory_list")
    assert (event.outcome, event.records, event.notes) == ("ok", (), ())
    assert event.key is event.query is event.message is None


def test_a_hits_snippet_is_made_once_when_first_read():
    # Guards: records._Snippet calling the function on every read (or never storing its text).
    calls = []

    def make() -> str:
        calls.append(1)
        return "**Sam**"

    hit = Hit(memory(), 1.5, make)
    assert calls == []
    assert hit.snippet == "**Sam**" and hit.snippet == "**Sam**"
    assert calls == [1]
    assert Hit(memory(), 1.5, "given").snippet == "given"


def test_a_hit_pickles_with_its_snippet_made():
    hit = pickle.loads(pickle.dumps(Hit(memory(), 0.5, lambda: "made")))
    assert (hit.memory, hit.score, hit.snippet) == (memory(), 0.5, "made")


def test_a_new_versions_optional_fields_default_to_none():
    version = NewVersion("k", "v", ("t",), "2026-01-01T12:00:00+00:00")
    assert (version.source, version.occurred_at) == (None, None)
    assert version._replace(source="msg-1").source == "msg-1"
