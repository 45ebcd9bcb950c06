"""memlab.cli.completion: ``memlab --print-completion bash|zsh|fish`` prints a completion script written from the
parser, which completes the commands, their flags and the values the registries know, in the shell itself."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memlab import policies
from memlab.cli import main


def _script(capsys, shell: str) -> str:
    assert main(["--print-completion", shell]) == 0  # issue 37: "--print-completion bash" was refused
    captured = capsys.readouterr()
    assert captured.err == ""
    return captured.out


@pytest.fixture
def bash_script(capsys, tmp_path) -> Path:
    path = tmp_path / "memlab.bash"
    path.write_text(_script(capsys, "bash"))
    return path


def _bash(script: Path, *words: str) -> list[str]:
    """What bash completes after ``words`` (the last one being typed), through the script's function."""
    quoted = " ".join(f"'{word}'" for word in words)
    program = (
        f"source {script}; COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; _memlab; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=30, check=True)
    assert done.stderr == ""
    return [line for line in done.stdout.splitlines() if line]


@pytest.mark.parametrize(
    ("words", "completed"),
    [
        (["memlab", ""], ["demo", "check", "eval", "poison", "serve", "import", "get", "search", "list", "history"]),
        (["memlab", "hi"], ["history"]),
        (["memlab", "--print"], ["--print-completion"]),
        (["memlab", "get", "--f"], ["--floor"]),
        (["memlab", "import", "--re"], ["--replace"]),
        (["memlab", "list", "--floor", ""], ["untrusted", "trusted"]),
        (["memlab", "serve", "--taint", "CONF"], ["CONFIDENTIAL"]),
        (["memlab", "classroom", "--theme", ""], ["light", "dark"]),
        (["memlab", "cache", ""], ["show", "clear"]),
        (["memlab", "verify", "--db", ""], []),  # a path: the shell's own file completion
    ],
)
def test_bash_completes_commands_flags_and_known_values(bash_script, words, completed):
    shown = _bash(bash_script, *words)
    assert (shown[: len(completed)] if words == ["memlab", ""] else shown) == completed


def test_bash_completes_the_registrys_policies(bash_script):
    assert _bash(bash_script, "memlab", "check", "--policy", "") == policies.names()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_command_and_flag_is_in_every_script(capsys, shell):
    # Guards: a script written by hand (a new command or flag then never completes).
    from memlab.cli import completion

    text = _script(capsys, shell)
    parser_commands = ["demo", "get", "search", "list", "history", "audit", "import", "verify", "migrate", "cache"]
    for command in parser_commands:
        assert command in text, command
    for flag in ["--db", "--agent", "--taint", "--floor", "--csv", "--replace", "--ignore", "--quiet", "--verbose"]:
        assert (flag in text) if shell != "fish" else (f"-l {flag[2:]}" in text), flag
    assert completion.SHELLS == ("bash", "zsh", "fish")


def test_an_unknown_shell_is_a_usage_error_naming_the_flag(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--print-completion", "tcsh"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--print-completion" in err and "'tcsh'" in err


def test_bash_reads_the_script_without_error(bash_script):
    assert subprocess.run(["bash", "-n", str(bash_script)], capture_output=True, timeout=30).returncode == 0


def test_zsh_loads_the_script_and_registers_memlab(capsys, tmp_path):
    path = tmp_path / "memlab.zsh"
    path.write_text(_script(capsys, "zsh"))
    program = f"source {path}; print -r -- ${{_comps[memlab]}}"
    done = subprocess.run(
        ["zsh", "-f", "-c", program], capture_output=True, text=True, timeout=60, env={"HOME": str(tmp_path)}
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.strip() == "_bash_complete -o default -F _memlab"


@pytest.mark.parametrize(
    ("line", "completed"),
    [
        ("memlab hi", {"history"}),
        ("memlab list --floor ", {"trusted", "untrusted"}),
        ("memlab cache ", {"show", "clear"}),
    ],
)
def test_fish_completes_from_the_script(capsys, tmp_path, line, completed):
    path = tmp_path / "memlab.fish"
    path.write_text(_script(capsys, "fish"))
    done = subprocess.run(
        ["fish", "--no-config", "-c", f"source {path}; complete -C '{line}'"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert {row.split("\t")[0] for row in done.stdout.splitlines()} == completed
