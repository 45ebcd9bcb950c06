"""memlab: classification-gated persistent memory for LLM agents — evaluate analyzers on agent memories
(`eval`), look for leaks in policies (`check`), serve memory to an agent over MCP (`serve`), load memories
in bulk (`import`), check a store's tamper-evident audit (`verify`), move a single-file store into a store
folder (`migrate`), walk through sessions, shadowing and the audit (`demo`), or serve the classroom lesson
in a browser (`classroom`)."""

from __future__ import annotations

import argparse
import io
import sys

from memlab import __version__, policies
from memlab.cli_output import (
    HelpFormatter,
    Names,
    defaults_from_environment,
    exit_codes_text,
    from_environment,
    plain,
    print_json,
    quiet_on_closed_pipe,
)
from memlab.labels import Label
from memlab.levels import Level
from memlab.search import analyzers

__all__ = ["main"]


@quiet_on_closed_pipe
def main(argv: list[str] | None = None) -> int:
    """Run the ``memlab`` command line; returns the exit status (``cli_output.EXIT_CODES``)."""
    parser = argparse.ArgumentParser(
        prog="memlab",
        description=__doc__,
        epilog=exit_codes_text(),
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"memlab {__version__}")
    commands = parser.add_subparsers(dest="command")
    demo = _command(commands, "demo", "walk through sessions at three levels, shadowing, a delete and the audit")
    demo.add_argument(
        "--db",
        default=None,
        help="keep the demo's store at a new or empty path (default: in memory); one holding anything is refused",
    )
    _json_flag(demo, "the store's audit trail and taint events")
    check = _command(commands, "check", "look for leaks in a policy (all shipped policies by default)")
    check.add_argument("--policy", help=f"one policy to check, {_one_of(policies.names())}; exit status 1 if it leaks")
    check.add_argument(
        "--check",
        default="all",
        type=_hyphens,
        choices=Names(_check_names),
        metavar="CHECKS",
        help="comma-separated, of %(choices)s (default all)",
    )
    check.add_argument("--trials", type=int, default=300, help="random scenarios per check (default 300)")
    check.add_argument("--seed", type=int, default=0, help="seed of the scenario generator (default 0)")
    check.add_argument("--max-ops", type=int, default=8, help="operations per scenario at most (default 8)")
    check.add_argument("--save", metavar="PATH", help="with all policies: also write the table as JSON (docs' source)")
    check.add_argument("--exhaustive", action="store_true", help="every trace up to --depth steps, not random ones")
    check.add_argument("--depth", type=int, default=3, help="with --exhaustive: steps per trace at most (default 3)")
    check.add_argument(
        "--budget", type=float, default=120.0, help="with --exhaustive: seconds it may take (default 120, estimated)"
    )
    check.add_argument(
        "--alphabet",
        default="levels",
        choices=["levels", "compartments"],
        help="with --exhaustive: the default levels PUBLIC, INTERNAL, CONFIDENTIAL, or compartments: PUBLIC and "
        "CONFIDENTIAL with every non-empty set of --categories (default levels)",
    )
    check.add_argument(
        "--categories",
        default=None,
        metavar="NAMES",
        help="with --alphabet compartments: comma-separated category names (default hr,legal)",
    )
    _json_flag(check, "the table (as --save writes it), or one policy's results")
    evaluate = _command(
        commands, "eval", "compare search configurations (context, boost, analyzers) on LoCoMo or a TREC-style folder"
    )
    evaluate.add_argument(
        "--collection",
        help="a TREC-style folder (docs.jsonl, queries.jsonl, qrels) or a shipped collection: locomo (the default), "
        "locomo-topical, locomo-turns",
    )
    evaluate.add_argument("--locomo", default=None, help="path of locomo10.json (default: data/locomo10.json)")
    evaluate.add_argument(
        "--rows",
        help="comma-separated rows: named configurations or analyzers (default: porter, porter+boost, "
        "porter+context, memlab, dense, hybrid; the last two need memlab[dense] and are skipped without it)",
    )
    evaluate.add_argument("--all", action="store_true", help="every named row and every analyzer")
    evaluate.add_argument(
        "--analyzers",
        help=f"comma-separated analyzers to add as rows (text only, first-wave ranking), {_one_of(analyzers.names())}",
    )
    evaluate.add_argument(
        "--tune", action="store_true", help="tune the ranking on each half of the agents and report on the other half"
    )
    evaluate.add_argument("--out", help="a folder for per-query CSVs, summaries and a PNG chart")
    evaluate.add_argument(
        "--save",
        metavar="FOLDER",
        help="also keep the results where Results.load reads them; with --tune, a path ending in .json is a ranking "
        "file instead (the ranking tuned on all the queries, with its held-out figures: Ranking.load, serve --ranking)",
    )
    evaluate.add_argument("--depth", type=int, default=100, help="results kept per query (default 100)")
    evaluate.add_argument("--workers", type=int, default=None, help="processes (default: one per core)")
    evaluate.add_argument(
        "--backend", choices=["sqlite", "postgres"], default="sqlite", help="where to index (default sqlite)"
    )
    evaluate.add_argument("--db", help="with --backend postgres: a postgresql:// URL (throwaway schemas there)")
    _json_flag(evaluate, "the summary (a record per row), the per-category table, the timings")
    serve = _command(commands, "serve", "serve the five memory tools to an MCP host over stdio")
    serve.add_argument(
        "--db",
        help="the store: a path (if new, a file when it ends in .db, .sqlite or .sqlite3, else a folder) or a "
        "postgresql:// URL; shared between processes (default: $MEMLAB_DB)",
    )
    serve.add_argument("--taint", help=f"the session's starting taint, {_LEVELS} (default: $MEMLAB_TAINT, else PUBLIC)")
    serve.add_argument("--agent", help="the memory namespace (default: $MEMLAB_AGENT, else main)")
    serve.set_defaults(
        environment={"db": ("MEMLAB_DB", None), "taint": ("MEMLAB_TAINT", "PUBLIC"), "agent": ("MEMLAB_AGENT", "main")}
    )
    _store_flags(serve)
    serve.add_argument(
        "--ranking", metavar="FILE", help="order results by a ranking file (memlab eval --tune --save FILE.json)"
    )
    load = _command(commands, "import", "bulk-load memories from a JSON Lines file into one agent at one taint")
    load.add_argument(
        "file", help='a .jsonl file, or - for standard input: one {"key": ..., "content": ..., "tags": [...]} per line'
    )
    load.add_argument(
        "--db",
        help="the store: a path (if new, a file when it ends in .db, .sqlite or .sqlite3, else a folder) or a "
        "postgresql:// URL (default: $MEMLAB_DB)",
    )
    load.set_defaults(environment={"db": ("MEMLAB_DB", None)})
    _json_flag(load, "what was imported, or the report of the bad records")
    load.add_argument("--agent", default="main", help="the memory namespace (default main)")
    load.add_argument(
        "--taint",
        required=True,
        help=f"the importing session's taint: every memory's level, {_LEVELS} (no default: say PUBLIC)",
    )
    load.add_argument("--batch-size", type=_positive, default=1_000, help="records per transaction (default 1000)")
    _store_flags(load)
    move = _command(commands, "migrate", "copy a single-file store into a new store folder (one file per agent)")
    move.add_argument("source", help="the store file")
    move.add_argument("target", help="the new store folder (must not exist)")
    _policy_flag(move, "the policy the store was built under")
    check_chain = _command(commands, "verify", "recompute a store's audit chain; exit status 1 if broken")
    check_chain.add_argument(
        "path",
        nargs="?",
        help="the store (folder, file or postgresql:// URL of its owner; default: $MEMLAB_DB); it is only read",
    )
    check_chain.set_defaults(environment={"path": ("MEMLAB_DB", None)})
    _json_flag(check_chain, "the verification: ok, audit rows, versions, head, problems")
    _policy_flag(check_chain, "the policy the store was built under")
    lesson = _command(commands, "classroom", "serve the classroom notebook with Voila and print its URL")
    lesson.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine)"
    )
    lesson.add_argument("--port", type=int, default=8866, help="the port (default 8866; 0: any free one)")
    lesson.add_argument("--theme", choices=["light", "dark"], default="light", help="the page's theme (default light)")
    lesson.add_argument("--notebook", default=None, help="the notebook (default: notebooks/06_classroom.ipynb)")
    lesson.add_argument(
        "--class",
        dest="class_store",
        metavar="DIR|URL",
        help="a class: every page in one class store, a folder or a postgresql:// URL of its owner",
    )
    embeddings = _command(
        commands, "cache", "show or clear the dense rows' embedding cache ($MEMLAB_CACHE, else ~/.cache/memlab)"
    )
    embeddings.add_argument("action", nargs="?", choices=["show", "clear"], default="show", help="default: show")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    defaults_from_environment(args, commands.choices[args.command].error)
    if args.command == "cache":
        return _cache(args.action)
    if args.command == "classroom":
        from memlab.classroom_server import serve

        return serve(args.notebook, host=args.host, port=args.port, theme=args.theme, class_store=args.class_store)
    if args.command == "verify":
        return _verify(args)
    if args.command == "import":
        from memlab.bulk import run_import

        return run_import(args)
    if args.command == "migrate":
        return _migrate(args)
    if args.command == "serve":
        return _serve(args)
    if args.command == "eval":
        return _eval(args)
    if args.command == "demo":
        import shutil

        from memlab.demo import run
        from memlab.errors import MemlabError

        try:
            store = run(
                db=args.db,
                out=io.StringIO() if args.json else sys.stdout,
                width=shutil.get_terminal_size().columns,
            )
        except MemlabError as error:
            print(f"memlab demo: {error}", file=sys.stderr)
            return 2
        if args.json:
            print_json({"audit": store.audit(), "taint_events": store.taint_events()})
        return 0
    return _check(args)


def _cache(action: str) -> int:
    from memlab.search.embedding_cache import EmbeddingCache

    cache = EmbeddingCache()
    if action == "clear":
        print(f"{cache.path}: {'removed' if cache.clear() else 'nothing to remove'}")
    else:
        size = cache.path.stat().st_size if cache.path.exists() else 0
        print(f"{cache.path}: {size / 1e6:.1f} MB" if size else f"{cache.path}: empty")
    return 0


def _eval(args: argparse.Namespace) -> int:
    from pathlib import Path

    from memlab.errors import InvalidArgument, MemlabError
    from memlab.eval import ALL_ROWS, load_collection, report, run

    on_terminal = sys.stderr.isatty()  # a bar's \r has no place in a log
    out = sys.stderr if args.json else sys.stdout  # with --json, standard output is the document alone
    try:
        ranking_file = _ranking_file(args)  # refused before anything is loaded
        collection = load_collection(args.collection or "locomo", locomo=args.locomo or "data/locomo10.json")
        # Before the run: a wrong folder shows at once.
        print(report.collection_summary(collection), file=out, flush=True)
        if args.tune:
            from memlab.eval.configurations import CONFIGURATIONS
            from memlab.eval.tuning import tune

            skipped = {name: why for name in ("hybrid",) if (why := CONFIGURATIONS.get(name).unavailable())}
            tuned_rows = args.rows.split(",") if args.rows else [n for n in ("memlab", "hybrid") if n not in skipped]
            tuned = tune(
                collection, rows=tuned_rows, workers=args.workers, final=ranking_file is not None, progress=on_terminal
            )
            results = tuned.held_out
            results.skipped = skipped
        elif args.backend == "postgres":
            if not (args.db or "").startswith(("postgresql://", "postgres://")):
                raise InvalidArgument("--backend postgres needs --db postgresql://... (the owner's URL)")
            # PostgreSQL ranks with ts_rank: its rows are the analyzers its english and simple configurations serve.
            analyzers = args.analyzers.split(",") if args.analyzers else ["porter", "none"]
            results = run(
                collection,
                rows=analyzers,
                depth=args.depth,
                workers=args.workers,
                postgres=args.db,
                progress=on_terminal,
            )
        else:
            rows = ALL_ROWS if args.all else args.rows.split(",") if args.rows else None
            analyzers = args.analyzers.split(",") if args.analyzers else None
            results = run(
                collection, rows=rows, analyzers=analyzers, depth=args.depth, workers=args.workers, progress=on_terminal
            )
    except MemlabError as error:
        print(f"memlab eval: {error}", file=sys.stderr)
        return 2
    if args.json:
        print_json(_eval_document(results, tuned.chosen if args.tune else None))
    else:
        _print_results(results, tuned if args.tune else None, collection)
    if args.out:
        for path in report.write(results, collection, Path(args.out)):
            print(f"wrote {path}", file=out)
    if ranking_file is not None:
        return _save_ranking(tuned, collection, ranking_file, tuned_rows[0], out=out)
    if args.save:
        for path in results.save(args.save):
            print(f"wrote {path}", file=out)
    return 0


def _print_results(results, tuned, collection) -> None:
    """``memlab eval``'s tables: the tuning's choices, the measures, per category, the timings, the stemmers."""
    import pandas as pd

    from memlab.eval import report

    with pd.option_context("display.width", 200, "display.max_columns", 40):
        if tuned is not None:
            print(f"\nHeld-out tuning: each half of the {tuned.split} answered by the ranking tuned on the other")
            for row, by_half in tuned.chosen.items():
                for half, ranking in by_half.items():
                    print(f"  {row}, tuned on the {half} half: {ranking}")
        for row, why in results.skipped.items():
            print(f"\nskipped row {row!r}: it {why}")
        print(f"\nMeasures (* p<0.05, ** p<0.01 against {results.baseline}, paired randomization test)")
        print(report.measures_table(results).to_string())
        by_category = results.by_category()
        if not by_category.empty:  # only when the queries carry categories
            print("\nS@10 per query category")
            print(by_category.round(3).to_string())
        print("\nTime: indexing (s), searching (s and ms per query)")
        print(results.timings.round(2).to_string())
        if results.summary["analyzer"].nunique() > 1:
            print(f"\nStemmers (vocabulary of the memories; wins/losses per query against {results.baseline})")
            print(report.stemming_table(results, collection).to_string())


def _eval_document(results, chosen) -> dict:
    """``memlab eval --json``: the summary as a record per row (its analyzer column as the measures table says it),
    the per-category table, the timings, the rows skipped and, after --tune, the ranking chosen per row and half."""
    from memlab.eval import report

    document = {
        "collection": results.collection,
        "baseline": results.baseline,
        "summary": results.summary.assign(analyzer=report.analyzer_labels(results)),
        "by_category": results.by_category(),
        "timings": results.timings,
        "skipped": results.skipped,
    }
    return document if chosen is None else {**document, "tuned": chosen}


def _ranking_file(args: argparse.Namespace) -> str | None:
    """The ranking file ``--save`` names (a path ending in ``.json``), refused without ``--tune``."""
    from memlab.errors import InvalidArgument

    if not (args.save or "").endswith(".json"):
        return None
    if not args.tune:
        raise InvalidArgument(f"--save {args.save} writes a tuned ranking file: add --tune (or name a folder)")
    return args.save


def _save_ranking(tuned, collection, path: str, row: str, *, out=sys.stdout) -> int:
    from memlab.errors import MemlabError
    from memlab.eval.tuning import save_ranking

    try:
        save_ranking(tuned, collection, path, row=row)
    except (MemlabError, OSError) as error:
        print(f"memlab eval: {error}", file=sys.stderr)
        return 2
    print(f"\nwrote {path}: {row} tuned on all of {collection.name}'s queries ({tuned.final[row]})", file=out)
    return 0


def _serving_store(args: argparse.Namespace):
    """The store ``memlab serve`` serves: ``--db`` under ``--policy`` and ``--analyzer``, ordered by ``--ranking``."""
    from pathlib import Path

    from memlab.search.ranking import Ranking, RankingFileError
    from memlab.store import MemoryStore

    ranking = None
    if args.ranking:
        ranking = Ranking.load(args.ranking)
        if ranking.uses_dense:  # refused before the store is opened: nothing is touched
            raise RankingFileError(
                Path(args.ranking),
                "ranking.dense" if ranking.dense > 0 else "ranking.lexical",
                "this ranking uses dense retrieval and memlab serve has no embedder: "
                "save a lexical one (memlab eval --tune --rows memlab --save FILE.json)",
            )
    return from_environment(
        args, "db", lambda db: MemoryStore(db, policy=args.policy, analyzer=args.analyzer, ranking=ranking)
    )


def _serve(args: argparse.Namespace) -> int:
    # stdout carries the protocol: everything else goes to stderr.
    import anyio

    from memlab import arguments
    from memlab.errors import MemlabError
    from memlab.mcp_server import serve

    try:
        taint = from_environment(args, "taint", Label.parse)
        agent = from_environment(args, "agent", arguments.agent)
        store = _serving_store(args)
    except MemlabError as error:
        print(f"memlab serve: {error}", file=sys.stderr)
        return 2
    with store:
        try:
            session = store.session(taint, agent)
        except MemlabError as error:
            print(f"memlab serve: {error}", file=sys.stderr)
            return 2
        anyio.run(serve, session)
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, not {value}")
    return value


def _verify(args: argparse.Namespace) -> int:
    from memlab.errors import MemlabError
    from memlab.policies import resolve
    from memlab.storage import verify_path

    try:
        result = from_environment(args, "path", lambda path: verify_path(path, resolve(args.policy).view_rules()))
    except MemlabError as error:
        print(f"memlab verify: {error}", file=sys.stderr)
        return 2
    if args.json:
        print_json({"ok": result.ok, **plain(result)})
    else:
        print(result)
    return 0 if result.ok else 1


def _migrate(args: argparse.Namespace) -> int:
    from memlab.errors import MemlabError
    from memlab.policies import resolve
    from memlab.storage.migrate import migrate

    try:
        counts = migrate(
            args.source,
            args.target,
            rules=resolve(args.policy).view_rules(),
            notify=lambda message: print(f"memlab migrate: {message}", file=sys.stderr),
        )
    except MemlabError as error:
        print(f"memlab migrate: {error}", file=sys.stderr)
        return 2
    print(f"migrated {args.source} to {args.target}: " + ", ".join(f"{n:,} {name}" for name, n in counts.items()))
    return 0


def _check(args: argparse.Namespace) -> int:
    from memlab import check
    from memlab.cli_output import progress
    from memlab.errors import InvalidArgument, MemlabError

    checks = check.CHECKS if args.check == "all" else tuple(name.replace("-", "_") for name in args.check.split(","))
    if args.exhaustive:
        return _check_exhaustive(args, checks)
    options = {"trials": args.trials, "seed": args.seed, "max_ops": args.max_ops}
    try:
        if args.policy is None:
            with progress(len(policies.names()) * len(checks), "check", unit="check") as bar:
                frame = check.table(checks=checks, notify=lambda *_: bar.update(), **options)
            if args.json:
                print_json({"settings": frame.attrs, "rows": frame})  # the document --save writes
            else:
                print(check.table_text(frame))
            if args.save:
                check.save_table(frame, args.save)
                print(f"wrote {args.save}", file=sys.stderr)  # stdout stays the table
            return _expected_to_hold(frame)
        if args.save:
            raise InvalidArgument("--save writes the table over all policies: leave out --policy")
        with progress(len(checks), f"check {args.policy}", unit="check") as bar:
            results = check.run_all(args.policy, checks=checks, notify=lambda *_: bar.update(), **options)
    except MemlabError as error:
        print(f"memlab check: {error}", file=sys.stderr)
        return 2
    if args.json:
        print_json({"policy": args.policy, "results": list(results.values())})
    else:
        for result in results.values():
            print(result, end="\n\n")
    return 1 if any(result.leak for result in results.values()) else 0


def _policy_flag(command: argparse.ArgumentParser, what: str) -> None:
    command.add_argument("--policy", default=None, help=f"{what}, {_one_of(policies.names())} (default strict)")


def _store_flags(command: argparse.ArgumentParser) -> None:
    """``--policy`` and ``--analyzer``: how a store a command opens is read and searched."""
    _policy_flag(command, "a registered policy")
    command.add_argument(
        "--analyzer", default=None, help=f"the search analyzer, {_one_of(analyzers.names())} (default porter)"
    )


def _json_flag(command: argparse.ArgumentParser, what: str) -> None:
    command.add_argument(
        "--json", action="store_true", help=f"print {what} as one JSON document on standard output (nothing else)"
    )


def _expected_to_hold(frame) -> int:
    """1 when the policy expected to hold (the default, ``strict``) leaks in the table, else 0: the variants model
    mistakes, and their leaks are what the table is for."""
    sound = policies.resolve(None).name
    leaks = frame[(frame["policy"] == sound) & (frame["verdict"] == "LEAK")]
    if leaks.empty:
        return 0
    print(f"memlab check: {sound}, the policy expected to hold, leaks in {', '.join(leaks['check'])}", file=sys.stderr)
    return 1


_LEVELS = (
    "one of " + ", ".join(Level.__members__) + " (any case), or a label with categories such as CONFIDENTIAL:hr,legal"
)


def _one_of(names: list[str]) -> str:
    return "one of " + ", ".join(names)


def _command(commands, name: str, summary: str) -> argparse.ArgumentParser:
    """A subcommand: ``summary`` is its line in ``memlab --help`` and its description; the epilog the exit codes."""
    return commands.add_parser(
        name,
        help=summary,
        description=f"{summary[0].upper()}{summary[1:]}.",
        epilog=exit_codes_text(),
        formatter_class=HelpFormatter,
    )


def _check_names() -> list[str]:
    from memlab.check.checks import CHECKS

    return [*(_hyphens(name) for name in CHECKS), "all"]


def _hyphens(names: str) -> str:
    """Check names as policy names are spelled (``write-down``); the older ``write_down`` is still accepted."""
    return names.replace("_", "-")


def _check_exhaustive(args: argparse.Namespace, checks: tuple[str, ...]) -> int:
    from memlab import check
    from memlab.errors import InvalidArgument, MemlabError
    from memlab.policies import names

    try:
        if args.save:
            raise InvalidArgument("--save writes the random checks' table: leave out --exhaustive")
        alphabet = _alphabet(args)
        chosen = [args.policy] if args.policy else names()
        if alphabet.over_labels and not args.policy:
            left_out = [name for name in chosen if not check.keeps_compartments(name)]
            chosen = [name for name in chosen if name not in left_out]
            if left_out:
                print(f"memlab check: left out (no compartments): {', '.join(left_out)}", file=sys.stderr)
        results = check.exhaustive_all(chosen, checks=checks, depth=args.depth, alphabet=alphabet, budget=args.budget)
    except MemlabError as error:
        print(f"memlab check: {error}", file=sys.stderr)
        return 2
    if args.json:
        print_json([result.as_dict() for result in results])
    else:
        for result in results:
            print(result, end="\n\n")
    # As for the random checks: one named policy fails on any leak; over every policy only strict's leak fails.
    sound = policies.resolve(None).name
    return 1 if any(result.leak and (args.policy or result.policy == sound) for result in results) else 0


def _alphabet(args: argparse.Namespace):
    """The exhaustive checker's alphabet that ``--alphabet`` and ``--categories`` name."""
    from memlab import check
    from memlab.errors import InvalidArgument

    if args.alphabet == "levels":
        if args.categories is not None:
            raise InvalidArgument("--categories names the compartments alphabet's: add --alphabet compartments")
        return check.Alphabet()
    if args.categories is None:
        return check.Alphabet.compartments()
    return check.Alphabet.compartments([name.strip() for name in args.categories.split(",") if name.strip()])


if __name__ == "__main__":
    raise SystemExit(main())
