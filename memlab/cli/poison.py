"""``memlab poison``: the poisoning lab (``memlab.poison``) on LoCoMo or a TREC-style folder: how often an attacker's
memory reaches a victim's answer under each defence and ranking, printed as a table or one JSON document, written
as CSV and a chart."""

from __future__ import annotations

import argparse
import sys

from memlab.cli.options import Commands, add_command, collection_flags, json_flag

__all__ = ["add_poison"]

_RATES = "0.001,0.01,0.05"


def add_poison(commands: Commands) -> None:
    poison = add_command(
        commands,
        "poison",
        "attack a collection's memories with poisons and measure ISR, ASR-r@k and UD under each defence and ranking",
        run_poison,
    )
    collection_flags(poison)
    poison.add_argument(
        "--tier",
        default="direct",
        help="how the poisons are written: direct, query or content, or several, comma-separated",
    )
    poison.add_argument(
        "--rate", default=_RATES, help=f"comma-separated poison rates, each in (0, 1) (default {_RATES})"
    )
    poison.add_argument("--k", default="1,5,10", help="comma-separated cut-offs of ASR-r@k (default 1,5,10)")
    poison.add_argument("--seed", default="0", help="draws the targets and the swapped words (default 0)")
    poison.add_argument(
        "--rows",
        help="comma-separated defences (default: integrity-ignored, labels-only, trust-demoted, floor-trusted, "
        "low-water-mark; also no-trust-first, reads-never-lower)",
    )
    poison.add_argument(
        "--rankings",
        default="lexical,dense,hybrid",
        help="comma-separated rankings (default lexical,dense,hybrid; dense and hybrid need memlab[dense] and are "
        "skipped without it)",
    )
    poison.add_argument(
        "--variants",
        default="match,overwrite",
        help="comma-separated poison variants: match, overwrite, trigger (chosen against the dense model; needs "
        "memlab[dense]) (default match,overwrite)",
    )
    poison.add_argument("--depth", default="10", help="results kept per question (default 10)")
    poison.add_argument(
        "--out",
        default="poison-results",
        help="the folder for poison.csv, guarantees.csv and poison.png (default poison-results)",
    )
    json_flag(poison, "the table at k=10 (a record per rate, defence and ranking), the guarantees, what was skipped")


def run_poison(args: argparse.Namespace) -> int:
    """Run the attack and print and write its table; 2 when a flag's value or the collection is refused."""
    from pathlib import Path

    from memlab.cli_output import note, print_json, progress
    from memlab.errors import MemlabError
    from memlab.eval import load_collection
    from memlab.poison import report, runner
    from memlab.poison.generate import judged_targets
    from memlab.poison.guarantees import checked, verdicts

    try:
        chosen = _arguments(args)
        collection = _flag(
            "--collection", load_collection, args.collection or "locomo", locomo=args.locomo or "data/locomo10.json"
        )
        _flag("--collection", judged_targets, collection)
    except MemlabError as error:
        print(f"memlab poison: {error}", file=sys.stderr)
        return 2
    total = runner.steps(chosen["rankings"], chosen["rows"], chosen["rate"], chosen["tier"])
    with progress(total, collection.name, unit="store") as bar:  # on a terminal, unless -q
        table = runner.run(collection, progress=lambda _: bar.update(), **chosen)
    guarantees = checked(table, verdicts())
    k = 10 if 10 in chosen["k"] else max(chosen["k"])
    if args.json:
        print_json(_document(table, guarantees, collection.name, k))
    else:
        _print_table(table, guarantees, collection.name, k)
    for path in report.write(table, Path(args.out), k, guarantees):
        if args.json:
            note(args, f"wrote {path}")  # beside the document, unless -q
        else:
            print(f"wrote {path}")
    return 0


def _arguments(args: argparse.Namespace) -> dict:
    """Each flag's value as ``memlab.poison.run`` takes it, checked before anything is loaded; a refusal names its
    flag."""
    from memlab.poison import runner
    from memlab.poison.generate import check_variants
    from memlab.poison.rows import defences_of, rankings_of

    def names(check):  # a comma-separated flag, as its list once ``check`` accepts it
        return lambda text: check(_list(text)) and _list(text)

    def numbers(kind, name, check):  # a comma-separated flag of numbers, as ``check`` returns them
        return lambda text: check([_number(part, kind, name) for part in _list(text)])

    depth = _flag("--depth", lambda text: runner.check_k(1, _number(text, int, "depth")) and int(text), args.depth)
    return {
        "tier": _flag("--tier", names(runner.check_tiers), args.tier),
        "rate": _flag("--rate", numbers(float, "rate", runner.check_rates), args.rate),
        "k": _flag("--k", numbers(int, "k", lambda ks: runner.check_k(ks, depth)), args.k),
        "seed": _flag("--seed", lambda text: runner.check_seed(_number(text, int, "seed")), args.seed),
        "rows": None if args.rows is None else _flag("--rows", names(defences_of), args.rows),
        "rankings": _flag("--rankings", names(rankings_of), args.rankings),
        "variants": _flag("--variants", names(check_variants), args.variants),
        "depth": depth,
    }


def _flag(flag: str, parse, *values, **options):
    """``parse(*values, **options)``, its refusal prefixed with ``flag``."""
    from memlab.errors import InvalidArgument

    try:
        return parse(*values, **options)
    except InvalidArgument as error:
        raise InvalidArgument(f"{flag}: {error}") from None


def _list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")]


def _number(text: str, kind: type, name: str):
    from memlab.errors import InvalidArgument

    try:
        return kind(text)
    except ValueError:
        raise InvalidArgument(f"{name} must be {'an integer' if kind is int else 'a number'}, not {text!r}") from None


def _print_table(table, guarantees, name: str, k: int) -> None:
    import pandas as pd

    from memlab.poison import report

    with pd.option_context("display.width", 220, "display.max_columns", 30, "display.max_rows", 400):
        tiers = ", ".join(dict.fromkeys(table["tier"]))
        print(f"\nPoisoning {name}: tier {tiers}, k = {k} (memlab poison; docs/poisoning-lab.md)")
        for ranking, why in table.attrs.get("skipped", {}).items():
            print(f"skipped ranking {ranking!r}: it {why}")
        print(report.summary(table, k).round(3).to_string(index=False))
        print("\nExact zeros and the policy lab's proofs they rest on")
        print(guarantees.to_string(index=False))
        print(
            "\nISR: poisons a victim reads; ASR-r@k: targets with a poison in the top k (all: every one of the top k);"
            "\nUD: the victims' nDCG@10 clean and poisoned (p: paired randomization test); available: benign reads and"
            "\nanswers a trusted-floor session still gets; laundered: answers resting on poison saved trusted."
        )


def _document(table, guarantees, name: str, k: int) -> dict:
    from memlab.poison import report

    return {
        "collection": name,
        "k": k,
        "table": report.summary(table, k),
        "guarantees": guarantees,
        "skipped": table.attrs.get("skipped", {}),
    }
