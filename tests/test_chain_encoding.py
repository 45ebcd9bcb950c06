"""The bytes every digest and commitment hashes are json.dumps's, byte for byte, so files already written verify."""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from memlab import Level, MemoryStore
from memlab.records import AuditEvent
from memlab.storage import chain
from memlab.storage.seal import chain_rows

FIXTURES = Path(__file__).parent / "fixtures"

# Every character, lone surrogates included: JSON escapes some, passes the rest as they are.
TEXT = st.text(st.characters(codec=None, categories=None))
SCALARS = st.one_of(TEXT, st.integers(), st.none(), st.booleans(), st.floats(), st.sampled_from(list(Level)))
PARTS = st.lists(st.one_of(SCALARS, st.lists(SCALARS, max_size=3)), max_size=14)


def _old_digest(*parts):
    """What chain hashed before the fixed encoding (memlab <= eb6c2a4)."""
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, separators=(",", ":")).encode("utf-8")).hexdigest()


@given(PARTS)
def test_the_digest_encoding_is_json_dumps_byte_for_byte(parts):
    # Guards: ensure_ascii in json_array (encode_basestring_ascii for strings): seen failing ('\\x7f').
    # Guards: booleans written as ints (`isinstance(part, int)` for `type(part) is int`): seen failing.
    assert chain.json_array(parts) == json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
    assert chain.json_array(parts, ", ") == json.dumps(parts, ensure_ascii=False)


@given(st.lists(st.one_of(TEXT, SCALARS), max_size=8))
def test_stored_tags_and_records_are_json_dumps_byte_for_byte(strings):
    # Guards: ensure_ascii=False in json_strings (tags stored as before hold \\u escapes): seen failing.
    assert chain.json_strings(strings) == json.dumps(strings)
    assert chain.json_strings(tuple(strings)) == json.dumps(tuple(strings))


@given(TEXT, TEXT, st.none() | TEXT, st.none() | TEXT, st.binary(min_size=16, max_size=16))
def test_a_commitment_is_the_one_written_before(content, tags, source, occurred_at, salt):
    old_parts = [content, tags] if source is None and occurred_at is None else [content, tags, source, occurred_at]
    try:
        old = hmac.new(salt, json.dumps(old_parts, ensure_ascii=False).encode("utf-8"), hashlib.sha256).hexdigest()
    except UnicodeEncodeError:  # a lone surrogate has no UTF-8 bytes: the commitment refuses it as before
        old = None
    try:
        new = chain.commitment(salt, content, tags, source, occurred_at)
    except UnicodeEncodeError:
        new = None
    assert new == old


@given(TEXT, TEXT, st.integers(0, 3), st.integers(1, 10**6), TEXT, TEXT, TEXT)
def test_version_and_deletion_digests_are_the_ones_written_before(agent, key, level, version, at, by, commitment):
    try:
        old = _old_digest("version", agent, key, level, version, at, by, commitment)
    except UnicodeEncodeError:
        old = None
    try:
        new = chain.version_digest(agent, key, level, version, at, by, commitment)
    except UnicodeEncodeError:
        new = None
    assert new == old
    if old is not None:
        assert chain.deletion_digest(old, at, by) == _old_digest("deletion", old, at, by)


NAMES = st.text(st.characters(codec="utf-8", categories=None), min_size=1, max_size=12)


@given(
    st.lists(
        st.tuples(
            NAMES, st.none() | NAMES, st.lists(NAMES, max_size=3), st.lists(NAMES, max_size=2), st.none() | NAMES
        ),
        min_size=1,
        max_size=4,
    )
)
def test_audit_rows_are_chained_as_before(calls):
    events = [
        AuditEvent("2026-01-01T00:00:00.000000+00:00", session, "main", Level.INTERNAL, "memory_get", "ok", key, None,
                   tuple(records), tuple(notes), message)
        for session, key, records, notes, message in calls
    ]  # fmt: skip
    rows = chain_rows(events, None, seq=7, previous="0" * 64)
    previous = "0" * 64
    for seq, (event, row) in enumerate(zip(events, rows, strict=True), start=8):
        fields = (seq, event.at, event.session_id, event.agent, "INTERNAL", "memory_get", event.key, None, "ok")
        fields += (
            json.dumps(event.records) if event.records else "[]",
            json.dumps(event.notes) if event.notes else "[]",
        )
        fields += (event.message, None)
        previous = _old_digest(previous, *fields)
        assert row == (*fields, previous)


def test_a_store_written_by_an_earlier_memlab_still_verifies(tmp_path):
    path = tmp_path / "store.db"
    shutil.copy(FIXTURES / "store-v2.db", path)
    with MemoryStore(path, layout="file") as store:  # upgraded to schema 3 in place, its chain untouched
        assert store.verify().ok, store.verify().problems
        store.session(Level.PUBLIC, "main").memory_save("café", "naïve résumé 日本", tags=["é", "x"])
        assert store.verify().ok
