"""memlab.storage.chain: the audit's hash chain, commitments and the digests that tie versions to it."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest

from memlab.storage.chain import (
    audit_hash,
    commitment,
    deletion_digest,
    genesis,
    json_array,
    json_strings,
    new_salt,
    new_salts,
    version_digest,
    version_digester,
)

PARTS = [
    [],
    ["a", 1, None, 2.5, True],
    ["naïve", "社員", "\x00\n\"'\\", "\u2028"],
    ["version", "main", "k", "CONFIDENTIAL:hr", 3, "2026-01-01T00:00:00+00:00", "s1", "ab" * 32],
]


@pytest.mark.parametrize("parts", PARTS)
@pytest.mark.parametrize("separator", [",", ", "])
def test_json_array_is_json_dumps_byte_for_byte(parts, separator):
    # Guards: chain.json_array's C encoder built with ensure_ascii (the chains of files already written break).
    assert json_array(parts, separator) == json.dumps(parts, ensure_ascii=False, separators=(separator, ":"))


@pytest.mark.parametrize("strings", [[], ["work", "naïve"], ['"quoted"', "\t"]])
def test_json_strings_is_json_dumps_byte_for_byte(strings):
    assert json_strings(strings) == json.dumps(strings)


def test_audit_hash_chains_each_row_to_the_one_before():
    start = genesis()
    first = audit_hash(start, (1, "t", "s1", "main", "PUBLIC", "memory_get"))
    second = audit_hash(first, (2, "t", "s1", "main", "PUBLIC", "memory_get"))
    assert (
        first == hashlib.sha256(json_array([start, 1, "t", "s1", "main", "PUBLIC", "memory_get"]).encode()).hexdigest()
    )
    assert second != audit_hash(start, (2, "t", "s1", "main", "PUBLIC", "memory_get"))  # reordering shows
    assert audit_hash(genesis(), (1,)) != audit_hash(genesis(), (1,))  # each file's genesis is its own


def test_salts_are_sixteen_random_bytes():
    salts = new_salts(5)
    assert [len(salt) for salt in salts] == [16] * 5
    assert len(set(salts)) == 5 and len(new_salt()) == 16
    assert new_salts(0) == []


def test_a_commitment_is_an_hmac_of_content_tags_and_context():
    salt = bytes(16)
    plain = commitment(salt, "Sam", '["personal"]')
    assert plain == hmac.new(salt, b'["Sam", "[\\"personal\\"]"]', "sha256").hexdigest()
    assert commitment(salt, "Sam", '["personal"]', None, None) == plain  # no context: the same commitment
    assert commitment(salt, "Sam", '["personal"]', "msg-1") != plain
    assert commitment(new_salt(), "Sam", '["personal"]') != plain  # a guess cannot be checked without the salt


@pytest.mark.parametrize(
    ("key", "classification", "version", "saved_at"),
    [("k", 0, 1, "2026-01-01"), ('naïve "key"', 3, 12, "t"), ("k", "CONFIDENTIAL:hr", 2, "t")],
)
@pytest.mark.parametrize("distrust", [None, '["https://evil.example/ü \\"page\\""]'])
def test_version_digester_is_version_digest(key, classification, version, saved_at, distrust):
    digest = version_digester("agent ☃", "session\n1", distrust)
    assert digest(key, classification, version, saved_at, "ab12") == version_digest(
        "agent ☃", key, classification, version, saved_at, "session\n1", "ab12", distrust
    )
    if distrust is not None:  # the sources are part of the identity
        assert digest(key, classification, version, saved_at, "ab12") != version_digest(
            "agent ☃", key, classification, version, saved_at, "session\n1", "ab12"
        )


def test_each_field_of_a_version_changes_its_digest_and_its_deletions():
    fields = ["main", "k", 0, 1, "t", "s1", "ab"]
    digests = {version_digest(*fields)}
    for index, other in enumerate(["bob", "j", 1, 2, "u", "s2", "cd"]):
        digests.add(version_digest(*fields[:index], other, *fields[index + 1 :]))
    assert len(digests) == 8
    version = version_digest(*fields)
    assert (
        len(
            {
                deletion_digest(version, "t", "s1"),
                deletion_digest(version, "u", "s1"),
                deletion_digest(version, "t", "s2"),
            }
        )
        == 3
    )
