"""``memlab import`` on hostile or careless input: every bad line is ``FILE:LINE: why`` with nothing written, and
the level every memory gets is never left to a default."""

from __future__ import annotations

import json

import pytest

from memlab import Level, MemoryStore
from memlab.cli import main

GOOD = json.dumps({"key": "good", "content": "fine"})


def _import(tmp_path, lines: list[str], *options: str) -> int:
    source = tmp_path / "notes.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return main(["import", str(source), "--db", str(tmp_path / "store"), *options])


@pytest.mark.parametrize(
    "line",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"key": "deep", "content": "c", "tags": ' + "[" * 100_000 + "]" * 100_000 + "}",
    ],
    ids=["a-nested-line", "nested-tags"],
)
def test_a_line_nested_100000_deep_is_reported_by_number(tmp_path, capsys, line):
    assert _import(tmp_path, [GOOD, line, GOOD], "--taint", "internal") == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'notes.jsonl'}:2: nested too deeply" in err
    assert "Traceback" not in err and "RecursionError" not in err
    assert "1 bad records; nothing was imported" in err
    assert not (tmp_path / "store").exists()


def test_a_duplicate_key_in_a_record_is_refused_not_resolved_to_the_last(tmp_path, capsys):
    # A record that shows one "key" to a reader and saves another must not pass.
    duplicate = '{"key": "shown", "content": "the note", "key": "other"}'
    nested = '{"key": "k", "content": "c", "tags": ["t"], "source": "s", "occurred_at": "2024-01-01", "tags": []}'
    assert _import(tmp_path, [GOOD, duplicate, nested], "--taint", "internal") == 1
    err = capsys.readouterr().err
    assert f"{tmp_path / 'notes.jsonl'}:2: the name 'key' appears twice in one object" in err
    assert f"{tmp_path / 'notes.jsonl'}:3: the name 'tags' appears twice in one object" in err
    assert "2 bad records; nothing was imported" in err
    assert not (tmp_path / "store").exists()


def test_every_bad_line_is_reported_not_only_the_first_that_is_not_json(tmp_path, capsys):
    assert (
        _import(
            tmp_path, [GOOD, '{"key": "broken"', "[[[", json.dumps({"key": "", "content": "c"})], "--taint", "public"
        )
        == 1
    )
    err = capsys.readouterr().err
    source = tmp_path / "notes.jsonl"
    assert (
        f"{source}:2: not JSON" in err
        and f"{source}:3: not JSON" in err
        and f"{source}:4: key must not be empty" in err
    )
    assert "3 bad records; nothing was imported" in err
    assert not (tmp_path / "store").exists()


def test_an_import_without_a_taint_is_refused_and_writes_nothing(tmp_path, capsys):
    # Without --taint internal notes would become PUBLIC memories, readable by every session.
    with pytest.raises(SystemExit) as exit_status:
        _import(tmp_path, [GOOD])
    assert exit_status.value.code == 2
    assert "--taint" in capsys.readouterr().err
    assert not (tmp_path / "store").exists()


def test_an_import_at_an_explicit_public_taint_is_public(tmp_path):
    assert _import(tmp_path, [GOOD], "--taint", "PUBLIC") == 0
    with MemoryStore(tmp_path / "store") as store:
        assert store.session(Level.PUBLIC).memory_get("good").classification is Level.PUBLIC
