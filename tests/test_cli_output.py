"""memlab.cli_output: what every command shares — exit codes, JSON values, a closed pipe, environment defaults,
standard input as a file."""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from memlab.cli_output import (
    EXIT_CODES,
    Names,
    StandardInput,
    defaults_from_environment,
    exit_codes_text,
    from_environment,
    input_file,
    jsonable,
    print_json,
    quiet_on_closed_pipe,
)
from memlab.errors import InvalidArgument
from memlab.levels import Level


@dataclasses.dataclass
class Point:
    x: int
    label: Level


class Described:
    def as_dict(self):
        return {"a": (1, 2)}


@pytest.mark.parametrize(
    ("value", "json_value"),
    [
        (Level.RESTRICTED, "RESTRICTED"),
        (float("nan"), None),
        (True, True),
        (Path("a/b"), "a/b"),
        (
            {
                1: {
                    2,
                }
            },
            {"1": [2]},
        ),
        (Point(1, Level.PUBLIC), {"x": 1, "label": "PUBLIC"}),
        (Described(), {"a": [1, 2]}),
        (pd.DataFrame({"a": [1, None]}), [{"a": 1.0}, {"a": None}]),
        (pd.DataFrame({"a": [1]}, index=pd.Index(["r1"], name="row")), [{"row": "r1", "a": 1}]),
    ],
)
def test_jsonable_makes_json_values(value, json_value):
    # Guards: cli_output.jsonable passing NaN through (json.dumps(allow_nan=False) then fails every --json run).
    assert jsonable(value) == json_value
    json.dumps(jsonable(value), allow_nan=False)


def test_print_json_prints_one_document(capsys):
    print_json({"ok": True, "score": float("nan")})
    assert json.loads(capsys.readouterr().out) == {"ok": True, "score": None}


def test_the_exit_codes_text_lists_every_code():
    text = exit_codes_text()
    assert text.startswith("exit status:\n")
    assert [line.split()[0] for line in text.splitlines()[1:] if line.startswith("  ") and line[2] != " "] == [
        str(code) for code in EXIT_CODES
    ]


def test_a_closed_pipe_ends_quietly_with_141():
    def command() -> int:
        raise BrokenPipeError

    assert quiet_on_closed_pipe(command)() == 141
    assert quiet_on_closed_pipe(lambda: 3)() == 3


def errors():
    found = []

    def error(message: str) -> None:
        found.append(message)
        raise SystemExit(2)

    return found, error


@pytest.mark.parametrize(
    ("given", "environment", "db", "origin", "error"),
    [
        ("flag.db", {"MEMLAB_DB": "env.db"}, "flag.db", None, None),
        (None, {"MEMLAB_DB": "env.db"}, "env.db", "MEMLAB_DB", None),
        (None, {"MEMLAB_DB": "  "}, None, None, "MEMLAB_DB is set but empty"),
        (None, {}, None, None, "--db is required (or set MEMLAB_DB)"),
    ],
)
def test_defaults_come_from_the_environment(monkeypatch, given, environment, db, origin, error):
    monkeypatch.delenv("MEMLAB_DB", raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    args = argparse.Namespace(db=given, taint=None, environment={"db": ("MEMLAB_DB", None), "taint": ("T", "PUBLIC")})
    found, refuse = errors()
    if error:
        with pytest.raises(SystemExit):
            defaults_from_environment(args, refuse)
        assert found[0].startswith(error)
        return
    defaults_from_environment(args, refuse)
    assert (args.db, args.origins.get("db"), args.taint) == (db, origin, "PUBLIC")


def test_from_environment_names_the_variable_only_when_the_value_came_from_it():
    with pytest.raises(InvalidArgument, match=r"\(MEMLAB_TAINT='SECRET'\)"):
        from_environment(argparse.Namespace(taint="SECRET", origins={"taint": "MEMLAB_TAINT"}), "taint", Level.parse)
    with pytest.raises(InvalidArgument) as refused:
        from_environment(argparse.Namespace(taint="SECRET", origins={}), "taint", Level.parse)
    assert "MEMLAB_TAINT" not in str(refused.value)


def test_names_are_read_when_first_needed_and_a_value_may_list_several():
    reads = []
    names = Names(lambda: reads.append(1) or ["strict", "global-stats"])
    assert reads == []
    assert "strict,global-stats" in names and "strict,nope" not in names and 3 not in names
    assert list(names) == ["strict", "global-stats"] and reads == [1]


def test_standard_input_is_a_file_read_twice(monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO('{"key": "k"}\n'))
    source = input_file("-")
    assert isinstance(source, StandardInput) and str(source) == "<stdin>" and source.is_file()
    with source.open() as first, source.open() as second:
        assert first.read() == second.read() == '{"key": "k"}\n'
    assert input_file("x.jsonl") == Path("x.jsonl")
