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
    assert "1 bad record; nothing was imported" in err
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
        assert store.session(Level.PUBLIC).memory_get("good").classification == Level.PUBLIC


def test_a_json_error_does_not_hide_the_bad_records_after_it_and_each_has_its_column_or_field(tmp_path, capsys):
    # The user's file: a line cut short (the fault at its very end), then two bad records.
    cut_short = '{"key": "c", "content": "the note"'
    lines = [GOOD, GOOD, cut_short, json.dumps({"key": "", "content": "c"}), json.dumps({"key": "e", "content": 5})]
    assert _import(tmp_path, lines, "--taint", "internal") == 1
    err = capsys.readouterr().err.splitlines()
    source = tmp_path / "notes.jsonl"
    assert err == [
        f"{source}:3: not JSON (Expecting ',' delimiter, column {len(cut_short) + 1})",
        f"{source}:4: key must not be empty (field key)",
        f"{source}:5: content must be a string, not int (field content)",
        "memlab import: 3 bad records; nothing was imported",
    ]
    assert not (tmp_path / "store").exists()


def test_a_fault_inside_a_line_is_given_the_column_json_gives_it(tmp_path, capsys):
    missing_comma = '{"key": "k" "content": "c"}'
    assert _import(tmp_path, [missing_comma], "--taint", "internal") == 1
    column = missing_comma.index('"content"') + 1
    assert f"notes.jsonl:1: not JSON (Expecting ',' delimiter, column {column})" in capsys.readouterr().err


def test_the_report_is_an_object_with_line_column_and_field_for_every_bad_line(tmp_path):
    from memlab.bulk import check_file

    source = tmp_path / "notes.jsonl"
    lines = [GOOD, '{"key": "x"', json.dumps({"key": "t", "content": "c", "tags": ["x" * 65]}), '{"key": 1, "key": 2}']
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = check_file(source)
    assert (report.records, report.bad, report.ok) == (4, 3, False)
    where = [(problem.line, problem.column, problem.field) for problem in report.problems]
    assert where == [(2, 12, None), (3, None, "tags"), (4, None, "key")]
    as_json = json.loads(json.dumps(report.to_dict()))
    assert as_json["file"] == str(source) and as_json["bad"] == 3 and as_json["more"] == 0
    assert as_json["problems"][1] == {
        "line": 3,
        "column": None,
        "field": "tags",
        "message": "each tag is 65 characters long; the limit is 64",
    }


def test_past_the_limit_the_bad_lines_are_counted_not_listed(tmp_path, capsys):
    from memlab.bulk import MAX_REPORTED

    assert _import(tmp_path, ["[[["] * (MAX_REPORTED + 5), "--taint", "internal") == 1
    err = capsys.readouterr().err.splitlines()
    assert len([line for line in err if ": not JSON (" in line]) == MAX_REPORTED
    assert err[-2:] == ["… and 5 more", f"memlab import: {MAX_REPORTED + 5} bad records; nothing was imported"]
    assert not (tmp_path / "store").exists()


def test_a_line_that_is_not_utf8_is_reported_by_line_and_the_lines_after_it_still_checked(tmp_path, capsys):
    source = tmp_path / "notes.jsonl"
    before = b'{"key": "a", "content": "caf'
    source.write_bytes(before + b'\xe9"}\n' + json.dumps({"key": ""}).encode() + b"\n")
    assert main(["import", str(source), "--db", str(tmp_path / "store"), "--taint", "internal"]) == 1
    err = capsys.readouterr().err
    assert f"{source}:1: not UTF-8 text (column {len(before) + 1})" in err
    assert f"{source}:2: memory_save needs 'content' (field content)" in err
    assert "2 bad records; nothing was imported" in err
    assert not (tmp_path / "store").exists()
