"""How a mem0 memory is kept in memlab's tags and read back (memlab.integrations.mem0_records): any JSON metadata
round-trips, the scope comes only from the arguments, what does not fit a tag is refused before a save, and a
history is built from the versions given."""

from __future__ import annotations

import datetime

import pytest

from memlab import InvalidArgument, arguments
from memlab.integrations import mem0_records as records
from memlab.labels import Label
from memlab.records import Memory


def _memory(tags, content="Likes tennis", saved_at="2026-01-02T00:00:00.000000+00:00"):
    return Memory("id-1", content, tuple(tags), Label.parse("INTERNAL"), 1, saved_at, "s1")


@pytest.mark.parametrize(
    "value",
    ["movies", 5, 0.25, True, None, ["a", "b"], {"nested": {"deep": 1}}, "zero\u200bwidth \u00e9\n", " spaced "],
)
def test_a_metadata_value_round_trips_through_its_tag_exactly(value):
    tags = records.tags_for({"user_id": "alice"}, {"field": value})
    assert arguments.tags(tags) == tuple(tags)  # memlab's own rules take every tag as it is
    assert records.read(tags).metadata == {"field": value}


def test_identity_keys_in_metadata_are_dropped_and_the_scope_is_the_arguments():
    # mem0 drops them too (_strip_identity_keys): metadata never places a memory in a scope the caller did not pass.
    metadata = records.metadata_of({"user_id": "bob", "agent_id": "x", "run_id": "r", "actor_id": "a", "k": 1})
    tags = records.tags_for({"user_id": "alice"}, metadata)
    fields = records.read(tags)
    assert fields.promoted == {"user_id": "alice"} and fields.metadata == {"k": 1}


def test_a_field_too_long_for_a_tag_or_too_many_fields_is_refused_before_anything_is_saved():
    with pytest.raises(InvalidArgument, match="metadata field 'note' takes .* keep long text in the memory"):
        records.tags_for({"user_id": "alice"}, {"note": "x" * 60})
    with pytest.raises(InvalidArgument, match="at most 32 tags"):
        records.tags_for({"user_id": "alice"}, {f"k{n}": n for n in range(32)})
    with pytest.raises(InvalidArgument, match="not a JSON value"):
        records.tags_for({"user_id": "alice"}, {"when": datetime.date(2024, 1, 1)})
    with pytest.raises(InvalidArgument, match="metadata keys must be strings"):
        records.metadata_of({1: "x"})


@pytest.mark.parametrize(
    "value, message",
    [("", "cannot be empty"), ("a b", "cannot contain whitespace"), ("x" * 60, "the limit is 56"),
     ("a\u200bb", "must not contain U\\+200B"), ({"in": ["a"]}, "must be an id")],
)  # fmt: skip
def test_a_bad_entity_id_is_refused(value, message):
    with pytest.raises(InvalidArgument, match=message):
        records.entity_id(value, "user_id")


def test_an_item_has_mem0s_fields_and_the_versions_label_not_the_metadatas():
    tags = records.tags_for(
        {"user_id": "alice", "run_id": "r1"},
        {"classification": "PUBLIC", "integrity": "trusted"},
        role="user",
        created_at="2025-01-01T00:00:00+00:00",
    )
    found = records.item(_memory(tags), score=1.5)
    assert list(found)[:7] == ["id", "memory", "hash", "metadata", "score", "created_at", "updated_at"]
    assert found["metadata"] == {"classification": "PUBLIC", "integrity": "trusted"}
    assert (found["classification"], found["integrity"]) == ("INTERNAL", "trusted")
    assert found["created_at"] == "2025-01-01T00:00:00+00:00"  # the first version's, kept by updates
    assert found["updated_at"] == "2026-01-02T00:00:00.000000+00:00"  # this version's saved_at
    assert (found["user_id"], found["run_id"], found["role"]) == ("alice", "r1", "user")
    assert records.item(_memory(["personal"]))["metadata"] is None  # another door's tag says nothing here


def test_messages_are_mem0s_forms_and_anything_else_is_refused():
    assert records.messages_of("hi") == [{"role": "user", "content": "hi"}]
    assert records.messages_of({"role": "assistant", "content": "ok", "name": "bot"}) == [
        {"role": "assistant", "content": "ok", "name": "bot"}
    ]
    for bad in (3, [{"role": "user"}], [{"role": "user", "content": ["image"]}], ["text"]):
        with pytest.raises(InvalidArgument, match="messages"):
            records.messages_of(bad)


def test_an_expiration_date_is_a_date():
    assert records.expiration("2026-02-01") == "2026-02-01"
    assert records.expiration(datetime.datetime(2026, 2, 1, 5)) == "2026-02-01"
    with pytest.raises(InvalidArgument, match="YYYY-MM-DD"):
        records.expiration("next week")


def test_a_history_is_the_saves_and_deletes_in_time_order():
    rows = [
        {"classification": "PUBLIC", "version": 1, "content": "a", "tags": [], "saved_at": "t1", "deleted_at": None},
        {"classification": "PUBLIC", "version": 2, "content": "b", "tags": [], "saved_at": "t2", "deleted_at": "t3"},
        {"classification": "INTERNAL@untrusted", "version": 1, "content": "", "tags": [], "saved_at": "t4"},
    ]
    entries = records.history("m", rows)
    assert [(e["event"], e["old_memory"], e["new_memory"], e["updated_at"]) for e in entries] == [
        ("ADD", None, "a", "t1"),
        ("UPDATE", "a", "b", "t2"),
        ("DELETE", "b", None, "t3"),
        ("ADD", None, None, "t4"),  # a purged version: its text is gone
    ]
    assert entries[3]["id"] == "m@INTERNAL@untrusted/v1" and entries[3]["integrity"] == "untrusted"
    assert {e["created_at"] for e in entries} == {"t1"} and entries[2]["is_deleted"] is True
