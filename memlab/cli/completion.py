"""``memlab --print-completion bash|zsh|fish``: a shell completion script, written from the parser itself.

The script completes the commands, each command's flags, and the values a flag takes where they are known: its
``choices`` (``--theme``, ``--backend``, ``cache``'s action) and the registries' names for ``--policy``,
``--analyzer``, ``--taint``, ``--floor`` and ``--integrity``; anything else completes as a path. It is generated
when asked for, so a command, flag or registered name added later is in the next script. zsh's script is bash's
run through zsh's ``bashcompinit``.

Install (one of): ``memlab --print-completion bash > ~/.local/share/bash-completion/completions/memlab``;
``source <(memlab --print-completion zsh)`` in ``~/.zshrc``;
``memlab --print-completion fish > ~/.config/fish/completions/memlab.fish``.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterator, Mapping

from memlab.cli.options import Parser

__all__ = ["SHELLS", "script", "flags", "values"]

SHELLS = ("bash", "zsh", "fish")

Named = Mapping[str, Parser]
"""The commands, in the order of the help: name -> its parser (``ArgumentParser.add_subparsers().choices``)."""


def flags(parser: Parser) -> Iterator[tuple[str, argparse.Action]]:
    """Every option string of ``parser`` (``-q``, ``--quiet``, ...) with its action."""
    for action in parser.actions():
        for option in action.option_strings:
            yield option, action


def values(action: argparse.Action) -> list[str]:
    """The values a flag or positional takes, where known: its choices, or a registry's names; [] for a path, a
    number or free text."""
    from memlab import policies
    from memlab.labels import Integrity
    from memlab.levels import Level
    from memlab.search import analyzers

    if action.choices is not None and not isinstance(action.choices, Mapping):  # a mapping: the commands
        return [str(choice) for choice in action.choices]
    known = {
        "policy": policies.names,
        "analyzer": analyzers.names,
        "taint": lambda: list(Level.__members__),
        "floor": lambda: [str(grade) for grade in Integrity],
        "integrity": lambda: [str(grade) for grade in Integrity],
    }
    return list(known[action.dest]()) if action.dest in known and action.option_strings else []


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0


def script(parser: Parser, named: Named, shell: str) -> str:
    """The completion script of ``parser`` and its commands ``named`` for ``shell`` (one of ``SHELLS``)."""
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](parser, named)


def _words(names: list[str]) -> str:
    return shlex.quote(" ".join(names))


def _bash(parser: Parser, named: Named) -> str:
    top = [option for option, _ in flags(parser)]
    lines = [
        "# memlab's bash completion (memlab --print-completion bash)",
        "_memlab() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" command="" word',
        '    for word in "${COMP_WORDS[@]:1:$((COMP_CWORD - 1))}"; do',
        f'        case "$word" in {"|".join(named)}) command="$word"; break;; esac',
        "    done",
        '    if [[ -z "$command" ]]; then',
        f'        COMPREPLY=($(compgen -W {_words([*named, *top])} -- "$cur")); return',
        "    fi",
        '    case "$command $prev" in',
    ]
    for name, command in named.items():
        for option, action in flags(command):
            if _takes_value(action) and (known := values(action)):
                lines.append(
                    f'        "{name} {option}") COMPREPLY=($(compgen -W {_words(known)} -- "$cur")); return;;'
                )
            elif _takes_value(action):
                lines.append(f'        "{name} {option}") COMPREPLY=(); return;;')  # a path, a number: the default
    lines += ["    esac", '    case "$command" in']
    for name, command in named.items():
        options = [option for option, _ in flags(command)]
        positional = [value for action in command.actions() if not action.option_strings for value in values(action)]
        lines.append(
            f'        {name}) if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W {_words(options)} -- "$cur")); '
            f'else COMPREPLY=($(compgen -W {_words(positional)} -- "$cur")); fi;;'
        )
    lines += ["    esac", "}", "complete -o default -F _memlab memlab", ""]
    return "\n".join(lines)


def _zsh(parser: Parser, named: Named) -> str:
    return "\n".join(
        [
            "# memlab's zsh completion (memlab --print-completion zsh): bash's, through zsh's bashcompinit",
            "(( $+functions[compdef] )) || { autoload -U +X compinit && compinit }",
            "autoload -U +X bashcompinit && bashcompinit",
            _bash(parser, named),
        ]
    )


def _fish_text(text: str | None) -> str:
    first = " ".join((text or "").split())
    return shlex.quote(first[:80])


def _fish(parser: Parser, named: Named) -> str:
    lines = ["# memlab's fish completion (memlab --print-completion fish)", "complete -c memlab -f"]
    for name, command in named.items():
        lines.append(
            f"complete -c memlab -n __fish_use_subcommand -a {name} -d {_fish_text(command.description.rstrip('.'))}"
        )
    for option, action in flags(parser):
        if option.startswith("--"):
            lines.append(f"complete -c memlab -n __fish_use_subcommand -l {option[2:]} -d {_fish_text(action.help)}")
    for name, command in named.items():
        seen = f"-n '__fish_seen_subcommand_from {name}'"
        for action in command.actions():
            if action.help == argparse.SUPPRESS:
                continue
            if not action.option_strings:
                known = values(action)
                lines.append(f"complete -c memlab {seen} " + (f"-a {_words(known)}" if known else "-F"))
                continue
            spelled = " ".join(
                f"-l {option[2:]}" if option.startswith("--") else f"-s {option[1:]}"
                for option in action.option_strings
            )
            takes = ""
            if _takes_value(action):
                known = values(action)
                takes = f" -x -a {_words(known)}" if known else " -r -F"
            lines.append(f"complete -c memlab {seen} {spelled}{takes} -d {_fish_text(action.help)}")
    return "\n".join(lines) + "\n"
