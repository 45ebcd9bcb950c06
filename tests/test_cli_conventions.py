"""The ``memlab`` command follows its neighbours' conventions (sqlite-utils, Datasette): help on a bare command,
allowed values listed, ``--json``, defaults from the environment, ``-`` for standard input, progress only on a
terminal, a closed pipe ending quietly and documented exit codes."""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import pty
import re
import sqlite3
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

import pytest

from memlab import MemoryStore, cli_output, policies
from memlab.check.checks import CHECKS
from memlab.cli import main
from memlab.cli_output import EXIT_CODES
from memlab.levels import Level
from memlab.policy import Policy
from memlab.search import analyzers

TINY = Path(__file__).parent / "fixtures" / "trec-tiny"
COMMANDS = [
    "demo", "check", "eval", "poison", "serve", "import", "get", "search", "list", "history", "audit", "migrate",
    "verify", "classroom", "cache",
]  # fmt: skip


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def test_bare_memlab_prints_the_help_and_exits_0(capsys):
    assert main([]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: memlab")
    assert all(command in captured.out for command in COMMANDS)
    assert captured.err == ""


def test_the_help_lists_every_command():
    # The list above is what the other tests walk through: a new command must be added to it.
    groups = [set(group.split(",")) for group in re.findall(r"\{([a-z,]+)\}", _usage())]
    assert max(groups, key=len) == set(COMMANDS)  # the other braces list --print-completion's shells


def _usage() -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main([])
    return out.getvalue()


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_a_one_line_description(capsys, command):
    text = _help(capsys, command)
    usage, description = text.split("\n\n")[:2]
    assert usage.startswith(f"usage: memlab {command}")
    assert "\n" not in description.strip() and len(description) > 20, description
    assert description[0].isupper()


@pytest.mark.parametrize("command", ["serve", "import", "get", "search", "list"])
def test_the_help_lists_the_allowed_policies_analyzers_and_levels(capsys, command):
    text = " ".join(_help(capsys, command).split())
    for name in [*policies.names(), *analyzers.names(), *Level.__members__]:
        assert name in text, name


def test_the_allowed_values_come_from_the_registries_not_a_copy(capsys, monkeypatch):
    # Guards: a hand-written "strict, frozen-taint, ..." in --policy's help.
    monkeypatch.setitem(policies._REGISTRY._items, "lab-variant", type("Lab", (Policy,), {"name": "lab-variant"})())
    monkeypatch.setitem(CHECKS._items, "extra_check", CHECKS.get("shadowing"))
    assert "lab-variant" in _help(capsys, "serve")
    assert "extra-check" in _help(capsys, "check")


# A reader of the help needs what a flag does, not a past they never saw.
HISTORY = ("first-wave", "first wave", "as before", "as always", "no longer", "used to", "still accepted", "the old ")


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_the_help_says_what_a_command_does_without_its_history(capsys, command):
    # Guards: --analyzers' help saying "(text only, first-wave ranking)".
    text = " ".join(_help(capsys, *([command] if command else [])).split()).lower()
    assert [phrase for phrase in HISTORY if phrase in text] == []


def test_check_names_use_hyphens_like_policy_names(capsys):
    text = " ".join(_help(capsys, "check").split())
    assert "noninterference, write-down, shadowing" in text
    assert "write_down" not in text


@pytest.mark.parametrize("spelling", ["write-down", "write_down"])
def test_check_accepts_both_spellings_of_write_down(capsys, spelling):
    assert main(["check", "--policy", "strict", "--check", spelling, "--trials", "5"]) == 0
    assert capsys.readouterr().out.startswith("write_down: no leak under policy strict")


def test_an_unknown_check_is_a_usage_error_listing_the_checks(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["check", "--policy", "strict", "--check", "noninterference,leaks"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--check" in err and "'write-down'" in err and "'all'" in err


def test_the_help_states_the_exit_codes(capsys):
    text = _usage() + _help(capsys, "verify")
    for code, meaning in EXIT_CODES.items():
        assert re.search(rf"^  {code} +{re.escape(meaning[:30])}", text, re.MULTILINE), code


def test_exit_status_0_when_the_check_passes_and_1_when_it_leaks(capsys):
    assert main(["check", "--policy", "strict", "--check", "shadowing", "--trials", "5"]) == 0
    assert main(["check", "--policy", "frozen-taint", "--check", "write-down", "--trials", "50"]) == 1


def test_exit_status_1_when_the_policy_expected_to_hold_leaks_in_the_table(monkeypatch, capsys):
    # The variants are expected to leak; strict is not: over all policies a leak in strict is a failed check.
    monkeypatch.setattr(policies.get("strict"), "reveal_hidden", True)
    assert main(["check", "--check", "noninterference", "--trials", "100"]) == 1
    assert "strict" in capsys.readouterr().err


def test_exit_status_0_for_the_table_when_only_variants_leak(capsys):
    assert main(["check", "--check", "write-down", "--trials", "50"]) == 0
    assert "LEAK" in capsys.readouterr().out  # frozen-taint writes down, as it should


def test_exit_status_2_for_a_usage_error_and_for_a_refused_store(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["check", "--trials", "many"])
    assert stop.value.code == 2
    (tmp_path / "notes.txt").write_text("not a store")
    assert main(["verify", str(tmp_path / "notes.txt")]) == 2
    assert (tmp_path / "notes.txt").read_text() == "not a store"


# -- one way to name the store -------------------------------------------------------------------------------------

STORE_COMMANDS = ["demo", "eval", "serve", "import", "get", "search", "list", "history", "audit", "migrate", "verify"]


@pytest.mark.parametrize("command", STORE_COMMANDS)
def test_every_command_on_a_store_names_it_with_db(capsys, command):
    # Guards: verify and migrate taking their store only as a positional path (issue 37).
    assert re.search(r"^  --db ", _help(capsys, command), re.MULTILINE)


def test_the_commands_without_db_open_no_store():
    assert set(COMMANDS) - set(STORE_COMMANDS) == {"check", "poison", "classroom", "cache"}


# -- -q and -v on every command -------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_q_and_v(capsys, command):
    # Guards: a command whose parser is not made by options.add_command (no -q, -v).
    text = _help(capsys, command)
    assert re.search(r"-q, --quiet\s+errors only", text) and re.search(r"-v, --verbose\s+say on standard error", text)


def test_q_and_v_together_are_refused(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["check", "-q", "-v", "--trials", "1"])
    assert stop.value.code == 2
    assert "-v/--verbose: not allowed with argument -q/--quiet" in capsys.readouterr().err


def test_q_leaves_standard_error_to_errors(tmp_path, capsys):
    # Without -q, check notes where it wrote its table; with -q, standard error stays empty.
    argv = ["check", "--check", "shadowing", "--trials", "2", "--save", str(tmp_path / "t.json")]
    assert main(argv) == 0
    assert capsys.readouterr().err == f"wrote {tmp_path / 't.json'}\n"
    assert main([*argv, "-q"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "shadowing" in captured.out


def test_v_shows_memlabs_log_for_that_run_only(capsys, monkeypatch):
    import logging

    from memlab.cli import cache

    def run(args):
        logging.getLogger("memlab.cache").info("looked at the cache")
        return 0

    monkeypatch.setattr(cache, "run_cache", run)
    monkeypatch.setattr(cache, "add_cache", _with_run(cache.add_cache, run))
    import memlab.cli

    monkeypatch.setattr(memlab.cli, "_COMMANDS", (*memlab.cli._COMMANDS[:-1], cache.add_cache))
    assert main(["cache", "-v"]) == 0
    assert capsys.readouterr().err == "memlab cache: looked at the cache\n"
    assert main(["cache"]) == 0
    assert capsys.readouterr().err == ""  # the handler went with the run
    assert logging.getLogger("memlab").handlers == []


def _with_run(add, run):
    def added(commands):
        add(commands)
        commands.choices["cache"].set_defaults(run=run)

    return added


def test_q_hides_the_progress_bar_on_a_terminal():
    master, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    process = subprocess.Popen(
        _memlab("check", "--policy", "strict", "--trials", "3", "-q"), stdout=subprocess.DEVNULL, stderr=terminal
    )
    os.close(terminal)
    shown = b""
    with contextlib.suppress(OSError):
        while chunk := os.read(master, 4096):
            shown += chunk
    os.close(master)
    assert process.wait(timeout=120) == 0
    assert shown == b"", shown


# -- a closed pipe, progress only on a terminal ------------------------------------------------------------------


def _memlab(*argv: str) -> list[str]:
    return [sys.executable, "-m", "memlab.cli", *argv]


@pytest.mark.parametrize(
    "argv", [["demo"], ["check", "--policy", "strict", "--check", "shadowing", "--trials", "3"], ["--help"]]
)
def test_a_closed_pipe_ends_quietly(argv):
    # `memlab demo | head -0`: the reader is gone before the first write, so every write meets a closed pipe.
    # Guards: main without @quiet_on_closed_pipe (a BrokenPipeError traceback, or "Exception ignored" at exit).
    process = subprocess.Popen(_memlab(*argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    process.stdout.close()
    err = process.stderr.read()
    assert process.wait(timeout=120) in (0, 141), err  # 141: as SIGPIPE ends a program; argparse's help gives 0
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def _jsonl(path: Path, count: int) -> Path:
    path.write_text("".join(json.dumps({"key": f"k{n}", "content": f"note {n}"}) + "\n" for n in range(count)))
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--policy", "strict", "--check", "shadowing", "--trials", "3"],
        ["eval", "--collection", str(TINY), "--rows", "porter,memlab", "--workers", "1"],
        ["import", "{notes}", "--db", "{store}", "--taint", "PUBLIC"],
    ],
    ids=["check", "eval", "import"],
)
def test_no_progress_bar_when_stderr_is_not_a_terminal(tmp_path, argv):
    notes = _jsonl(tmp_path / "notes.jsonl", 50)
    argv = [part.format(notes=notes, store=tmp_path / "store") for part in argv]
    done = subprocess.run(_memlab(*argv), capture_output=True, timeout=300)  # bytes: text mode turns \r into \n
    assert done.returncode == 0, done.stderr
    assert b"\r" not in done.stderr and b"/s]" not in done.stderr, done.stderr


def test_a_progress_bar_on_a_terminal(tmp_path):
    master, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a new pty is 0 columns wide
    command = _memlab("check", "--policy", "strict", "--trials", "3")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=terminal)
    os.close(terminal)
    shown = b""
    with contextlib.suppress(OSError):  # EIO once the program has ended and the terminal has no writer
        while chunk := os.read(master, 4096):
            shown += chunk
    os.close(master)
    assert process.wait(timeout=120) == 0
    assert b"\r" in shown and b"5/5" in shown, shown  # one step per check


class _Bar:
    """A progress bar that records its total and its steps."""

    made: list[_Bar] = []

    def __init__(self, total: int, description: str, unit: str = "it") -> None:
        self.total, self.steps = total, 0
        _Bar.made.append(self)

    def update(self, steps: int = 1) -> None:
        self.steps += steps

    def __enter__(self) -> _Bar:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def test_check_steps_once_per_policy_and_check(monkeypatch, capsys):
    monkeypatch.setattr(cli_output, "progress", _Bar)
    _Bar.made.clear()
    assert main(["check", "--check", "shadowing,write-down", "--trials", "2"]) == 0
    (bar,) = _Bar.made
    assert bar.total == bar.steps == len(policies.names()) * 2
    assert main(["check", "--policy", "strict", "--trials", "2"]) == 0
    assert _Bar.made[1].total == _Bar.made[1].steps == len(CHECKS)


@pytest.mark.parametrize("workers", [1, 2])
def test_eval_steps_once_per_row(monkeypatch, workers):
    # Three rows in two stores (porter and porter+boost share one): three steps, not two.
    # Guards: one step per store group (`tqdm(as_completed(futures), total=len(futures))`).
    from memlab.eval import load_trec, runner

    bars: list[_RecordingTqdm] = []
    monkeypatch.setattr(runner, "tqdm", lambda **options: bars.append(_RecordingTqdm(**options)) or bars[-1])
    runner.run(load_trec(TINY), rows=["porter", "porter+boost", "memlab"], workers=workers)
    (bar,) = bars
    assert bar.total == 3 and bar.steps == [1, 1, 1]


class _RecordingTqdm:
    """tqdm as the runner uses it, recording each step."""

    def __init__(self, *, total: int, **options: object) -> None:
        self.total, self.steps = total, []

    def update(self, steps: int = 1) -> None:
        self.steps.append(steps)

    def __enter__(self) -> _RecordingTqdm:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


# -- defaults from the environment -------------------------------------------------------------------------------


@pytest.fixture
def served(monkeypatch):
    """``memlab serve`` without the stdio loop: what it would serve (the session's agent and taint)."""
    import memlab.mcp_server

    seen: dict[str, object] = {}

    async def serve(session) -> None:
        seen.update(taint=session.taint, agent=session.agent)

    monkeypatch.setattr(memlab.mcp_server, "serve", serve)
    for variable in ("MEMLAB_DB", "MEMLAB_AGENT", "MEMLAB_TAINT"):
        monkeypatch.delenv(variable, raising=False)
    return seen


def test_serve_takes_its_store_agent_and_taint_from_the_environment(served, monkeypatch, tmp_path):
    monkeypatch.setenv("MEMLAB_DB", str(tmp_path / "memories"))
    monkeypatch.setenv("MEMLAB_AGENT", "planner")
    monkeypatch.setenv("MEMLAB_TAINT", "internal")
    assert main(["serve"]) == 0
    assert served == {"taint": Level.INTERNAL, "agent": "planner"}
    assert (tmp_path / "memories").is_dir()


def test_a_flag_wins_over_the_environment(served, monkeypatch, tmp_path):
    monkeypatch.setenv("MEMLAB_DB", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("MEMLAB_AGENT", "planner")
    monkeypatch.setenv("MEMLAB_TAINT", "RESTRICTED")
    assert main(["serve", "--db", str(tmp_path / "memories"), "--agent", "main", "--taint", "PUBLIC"]) == 0
    assert served == {"taint": Level.PUBLIC, "agent": "main"}
    assert (tmp_path / "memories").is_dir() and not (tmp_path / "elsewhere").exists()


def test_without_either_serve_runs_at_public_as_main_and_needs_a_store(served, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["serve"])
    assert stop.value.code == 2
    assert "--db is required (or set MEMLAB_DB)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        (
            "MEMLAB_TAINT",
            "SECRET",
            "unknown level 'SECRET'; expected one of PUBLIC, INTERNAL, CONFIDENTIAL, "
            "RESTRICTED (MEMLAB_TAINT='SECRET')",
        ),
        ("MEMLAB_AGENT", " planner", "agent name ' planner' must not start or end with whitespace (MEMLAB_AGENT="),
        ("MEMLAB_DB", "{notes}", "(MEMLAB_DB='"),
    ],
)
def test_a_bad_value_in_a_variable_is_refused_naming_it(served, monkeypatch, capsys, tmp_path, variable, value, said):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a store")
    monkeypatch.setenv("MEMLAB_DB", str(tmp_path / "memories"))
    monkeypatch.setenv(variable, value.format(notes=notes))
    assert main(["serve"]) == 2
    assert said in capsys.readouterr().err
    assert served == {} and not (tmp_path / "memories").exists() and notes.read_text() == "not a store"


@pytest.mark.parametrize("variable", ["MEMLAB_DB", "MEMLAB_TAINT", "MEMLAB_AGENT"])
def test_a_variable_set_but_empty_is_refused(served, monkeypatch, capsys, tmp_path, variable):
    monkeypatch.setenv("MEMLAB_DB", str(tmp_path / "memories"))
    monkeypatch.setenv(variable, "")
    with pytest.raises(SystemExit) as stop:
        main(["serve"])
    assert stop.value.code == 2
    assert f"{variable} is set but empty" in capsys.readouterr().err
    assert not (tmp_path / "memories").exists()


def test_import_and_verify_use_memlab_db(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("MEMLAB_DB", str(tmp_path / "memories"))
    assert main(["import", str(_jsonl(tmp_path / "notes.jsonl", 3)), "--taint", "PUBLIC"]) == 0
    assert main(["verify"]) == 0
    assert "ok: " in capsys.readouterr().out
    with MemoryStore(tmp_path / "memories") as store:
        assert len(store.session("PUBLIC").memory_list()) == 3


def test_the_demo_keeps_to_its_own_store_whatever_memlab_db_says(monkeypatch, tmp_path):
    # MEMLAB_DB names the store an agent works in; the demo's sessions must not land there.
    with MemoryStore(tmp_path / "memories") as store:
        store.session("PUBLIC").memory_save("real", "a real memory")
    monkeypatch.setenv("MEMLAB_DB", str(tmp_path / "memories"))
    assert main(["demo"]) == 0
    with MemoryStore(tmp_path / "memories") as store:
        assert [memory.key for memory in store.session("RESTRICTED").memory_list()] == ["real"]


# -- --json: one document on standard output ---------------------------------------------------------------------


def _json_out(capsys) -> object:
    return json.loads(capsys.readouterr().out)


def test_verify_json(tmp_path, capsys):
    path = tmp_path / "memories.db"
    with MemoryStore(path, layout="file") as store:
        store.session("INTERNAL").memory_save("plan", "the plan")
    assert main(["verify", str(path), "--json"]) == 0
    document = _json_out(capsys)
    assert document["ok"] is True and document["problems"] == []
    assert document["versions"] == 1 and document["audit_rows"] >= 1 and len(document["head"]) == 64
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("DROP TRIGGER audit_no_update")
    assert main(["verify", str(path), "--json"]) == 1
    document = _json_out(capsys)
    assert document["ok"] is False and any("audit_no_update" in problem for problem in document["problems"])


def test_check_json_for_one_policy(capsys):
    assert main(["check", "--policy", "strict", "--check", "shadowing", "--trials", "5", "--json"]) == 0
    (result,) = _json_out(capsys)["results"]
    assert result == {**result, "check": "shadowing", "policy": "strict", "leak": False, "trials": 5}
    assert main(["check", "--policy", "frozen-taint", "--check", "write-down", "--trials", "50", "--json"]) == 1
    (leak,) = _json_out(capsys)["results"]
    assert leak["leak"] is True and leak["policy"] == "frozen-taint" and leak["level"] in Level.__members__
    assert len(leak["steps"]) >= 2 and {"session", "call", "world"} <= set(leak["steps"][0])


def test_check_json_for_the_table_is_what_save_writes(tmp_path, capsys):
    assert main(["check", "--check", "shadowing", "--trials", "5", "--save", str(tmp_path / "t.json"), "--json"]) == 0
    document = _json_out(capsys)
    saved = json.loads((tmp_path / "t.json").read_text())
    assert document["settings"] == saved["settings"] and len(document["rows"]) == len(policies.names())
    assert [row["policy"] for row in document["rows"]] == [row["policy"] for row in saved["rows"]]
    assert {"policy", "check", "verdict", "steps", "scenarios", "seconds"} == set(document["rows"][0])


def test_eval_json_is_the_summary_as_records(capsys):
    assert main(["eval", "--collection", str(TINY), "--rows", "porter,memlab", "--workers", "1", "--json"]) == 0
    document = _json_out(capsys)
    assert document["collection"] == "trec-tiny" and document["baseline"] == "porter"
    assert [row["row"] for row in document["summary"]] == ["porter", "memlab"]
    assert {"analyzer", "context", "S@10", "MRR", "p MRR"} <= set(document["summary"][0])
    assert 0 <= document["summary"][1]["MRR"] <= 1


def test_demo_json(capsys):
    assert main(["demo", "--json"]) == 0
    document = _json_out(capsys)
    assert {event["session_id"] for event in document["audit"]} >= {"public-chat", "team-chat", "hr-review"}
    assert document["taint_events"][0]["session_id"] == "public-chat"


def test_import_json_reports_what_was_imported_or_what_was_bad(tmp_path, capsys):
    notes = _jsonl(tmp_path / "notes.jsonl", 3)
    assert main(["import", str(notes), "--db", str(tmp_path / "memories"), "--taint", "PUBLIC", "--json"]) == 0
    document = _json_out(capsys)
    assert document == {**document, "imported": 3, "agent": "main", "taint": "PUBLIC"}
    notes.write_text('{"key": "a", "content": "b"}\n{"key": ""}\n')
    assert main(["import", str(notes), "--db", str(tmp_path / "other"), "--taint", "PUBLIC", "--json"]) == 1
    document = _json_out(capsys)
    assert document["bad"] == 1 and document["records"] == 2 and "2" in json.dumps(document["problems"])
    assert not (tmp_path / "other").exists()


# -- eval's columns say what they are ----------------------------------------------------------------------------

CACHED = Path(__file__).resolve().parent.parent / "data" / "results" / "locomo"


def test_locomo_categories_have_their_names():
    from memlab.eval import Results

    assert list(Results.load(CACHED).by_category().columns) == [
        "1 multi-hop",
        "2 temporal",
        "3 open-domain",
        "4 single-hop",
    ]


def test_the_category_names_fit_the_questions():
    # The paper lists the kinds in another order than the file numbers them; the file's own questions decide.
    from memlab.eval.locomo import LOCOMO_CATEGORY_NAMES, LOCOMO_PATH

    questions: dict[int, list[dict]] = {}
    for sample in json.loads((Path(__file__).resolve().parent.parent / LOCOMO_PATH).read_text()):
        for item in sample["qa"]:
            questions.setdefault(item["category"], []).append(item)
    assert LOCOMO_CATEGORY_NAMES[2] == "temporal"
    assert sum(item["question"].startswith("When") for item in questions[2]) > 0.7 * len(questions[2])
    assert LOCOMO_CATEGORY_NAMES[5] == "adversarial"
    assert sum("answer" not in item for item in questions[5]) > 0.9 * len(questions[5])  # nothing to answer
    assert LOCOMO_CATEGORY_NAMES[4] == "single-hop" and len(questions[4]) == max(map(len, questions.values()))


def test_a_trec_collection_keeps_its_own_category_names():
    from memlab.eval import load_trec, run

    agents = run(load_trec(TINY.parent / "trec-agents"), rows=["porter"], progress=False, workers=1)
    assert list(agents.by_category().columns) == ["open-domain", "single-hop", "temporal"]


def test_the_dense_rows_analyzer_is_its_embedder(capsys):
    # Guards: measures_table's analyzer column read from summary["analyzer"] (the store's porter for every row).
    from memlab.eval import Results, report

    table = report.measures_table(Results.load(CACHED))
    assert table.loc["dense", "analyzer"] == "minilm" and table.loc["hybrid", "analyzer"] == "porter+minilm"
    assert table.loc["memlab", "analyzer"] == "porter"


# -- "-" reads standard input ------------------------------------------------------------------------------------


def test_import_reads_standard_input_for_a_dash(tmp_path):
    lines = "".join(json.dumps({"key": f"k{n}", "content": f"note {n}"}) + "\n" for n in range(3))
    command = _memlab("import", "-", "--db", str(tmp_path / "memories"), "--taint", "INTERNAL")
    done = subprocess.run(command, input=lines, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "imported 3 memories" in done.stdout
    with MemoryStore(tmp_path / "memories") as store:
        assert [memory.key for memory in store.session("INTERNAL").memory_list()] == ["k0", "k1", "k2"]


def test_bad_lines_on_standard_input_are_named_stdin_and_nothing_is_written(tmp_path):
    lines = '{"key": "a", "content": "b"}\n{"key": "", "content": "c"}\n'
    command = _memlab("import", "-", "--db", str(tmp_path / "memories"), "--taint", "PUBLIC")
    done = subprocess.run(command, input=lines, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "<stdin>:2: key must not be empty" in done.stderr
    assert not (tmp_path / "memories").exists()
    assert not list(Path(tempfile.gettempdir()).glob("memlab-stdin-*"))  # the copy of the input is gone


def test_the_docs_table_of_exit_codes_is_the_clis():
    page = (Path(__file__).resolve().parent.parent / "docs" / "reference.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (\d+) \| (.+) \|$", page, re.MULTILINE))
    assert {int(code): meaning.replace("\\|", "|") for code, meaning in rows.items()} == EXIT_CODES
