"""memlab: classification-gated persistent memory for LLM agents — evaluate analyzers on agent memories
(`eval`), look for leaks in policies (`check`), serve memory to an agent over MCP (`serve`), load memories
in bulk (`import`), check a store's tamper-evident audit (`verify`), move a single-file store into a store
folder (`migrate`), walk through sessions, shadowing and the audit (`demo`), or serve the classroom lesson
in a browser (`classroom`)."""

from __future__ import annotations

import argparse
import sys

from memlab import __version__

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Run the ``memlab`` command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="memlab", description=__doc__)
    parser.add_argument("--version", action="version", version=f"memlab {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="walk through sessions at three levels, shadowing, a delete and the audit")
    demo.add_argument(
        "--db",
        default=None,
        help="keep the demo's store at a new or empty path (default: in memory); one holding anything is refused",
    )
    check = commands.add_parser("check", help="look for leaks in a policy (all shipped policies by default)")
    check.add_argument("--policy", help="one policy to check; exit status 1 if it leaks")
    check.add_argument("--check", default="all", help="noninterference, write_down, shadowing or all (default)")
    check.add_argument("--trials", type=int, default=300, help="random scenarios per check (default 300)")
    check.add_argument("--seed", type=int, default=0, help="seed of the scenario generator (default 0)")
    check.add_argument("--max-ops", type=int, default=8, help="operations per scenario at most (default 8)")
    check.add_argument("--save", metavar="PATH", help="with all policies: also write the table as JSON (docs' source)")
    check.add_argument("--exhaustive", action="store_true", help="every trace up to --depth steps, not random ones")
    check.add_argument("--depth", type=int, default=3, help="with --exhaustive: steps per trace at most (default 3)")
    check.add_argument(
        "--budget", type=float, default=120.0, help="with --exhaustive: seconds it may take (default 120, estimated)"
    )
    evaluate = commands.add_parser(
        "eval", help="compare search configurations (context, boost, analyzers) on LoCoMo or a TREC-style folder"
    )
    evaluate.add_argument("--collection", help="a TREC-style folder (docs.jsonl, queries.jsonl, qrels)")
    evaluate.add_argument("--locomo", default=None, help="path of locomo10.json (default: data/locomo10.json)")
    evaluate.add_argument(
        "--rows",
        help="comma-separated rows: named configurations or analyzers (default: porter, porter+boost, "
        "porter+context, memlab, dense, hybrid; the last two need memlab[dense] and are skipped without it)",
    )
    evaluate.add_argument("--all", action="store_true", help="every named row and every analyzer")
    evaluate.add_argument(
        "--analyzers", help="comma-separated analyzers to add as rows (text only, first-wave ranking)"
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
    serve = commands.add_parser("serve", help="serve the five memory tools to an MCP host over stdio")
    serve.add_argument(
        "--db",
        required=True,
        help="the store: a path (if new, a file when it ends in .db, .sqlite or .sqlite3, else a folder) "
        "or a postgresql:// URL; shared between processes",
    )
    serve.add_argument("--taint", default="PUBLIC", help="the session's starting taint (default PUBLIC)")
    serve.add_argument("--agent", default="main", help="the memory namespace (default main)")
    serve.add_argument("--policy", default=None, help="a registered policy (default strict)")
    serve.add_argument("--analyzer", default=None, help="the search analyzer (default porter)")
    serve.add_argument(
        "--ranking", metavar="FILE", help="order results by a ranking file (memlab eval --tune --save FILE.json)"
    )
    load = commands.add_parser("import", help="bulk-load memories from a JSON Lines file into one agent at one taint")
    load.add_argument("file", help='a .jsonl file: one {"key": ..., "content": ..., "tags": [...]} per line')
    load.add_argument(
        "--db",
        required=True,
        help="the store: a path (if new, a file when it ends in .db, .sqlite or .sqlite3, else a folder) or a "
        "postgresql:// URL",
    )
    load.add_argument("--agent", default="main", help="the memory namespace (default main)")
    load.add_argument(
        "--taint", required=True, help="the importing session's taint: every memory's level (no default: say PUBLIC)"
    )
    load.add_argument("--batch-size", type=_positive, default=1_000, help="records per transaction (default 1000)")
    load.add_argument("--policy", default=None, help="a registered policy (default strict)")
    load.add_argument("--analyzer", default=None, help="the search analyzer (default porter)")
    move = commands.add_parser("migrate", help="copy a single-file store into a new store folder (one file per agent)")
    move.add_argument("source", help="the store file")
    move.add_argument("target", help="the new store folder (must not exist)")
    move.add_argument("--policy", default=None, help="the policy the store was built under (default strict)")
    check_chain = commands.add_parser("verify", help="recompute a store's audit chain; exit status 1 if broken")
    check_chain.add_argument("path", help="the store (folder, file or postgresql:// URL of its owner); it is only read")
    check_chain.add_argument("--policy", default=None, help="the policy the store was built under (default strict)")
    lesson = commands.add_parser("classroom", help="serve the classroom notebook with Voila and print its URL")
    lesson.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine)"
    )
    lesson.add_argument("--port", type=int, default=8866, help="the port (default 8866; 0: any free one)")
    lesson.add_argument("--theme", choices=["light", "dark"], default="light", help="the page's theme (default light)")
    lesson.add_argument("--notebook", default=None, help="the notebook (default: notebooks/06_classroom.ipynb)")
    lesson.add_argument(
        "--class", dest="class_dir", metavar="DIR", help="a class: every page in one shared store in DIR (a folder)"
    )
    args = parser.parse_args(argv)
    if args.command == "classroom":
        from memlab.classroom_server import serve

        return serve(args.notebook, host=args.host, port=args.port, theme=args.theme, class_dir=args.class_dir)
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
            run(db=args.db, out=sys.stdout, width=shutil.get_terminal_size().columns)
        except MemlabError as error:
            print(f"memlab demo: {error}", file=sys.stderr)
            return 2
        return 0
    return _check(args)


def _eval(args: argparse.Namespace) -> int:
    from pathlib import Path

    import pandas as pd

    from memlab.errors import InvalidArgument, MemlabError
    from memlab.eval import ALL_ROWS, load_locomo, load_trec, report, run

    try:
        ranking_file = _ranking_file(args)  # refused before anything is loaded
        collection = load_trec(args.collection) if args.collection else load_locomo(args.locomo or "data/locomo10.json")
        print(report.collection_summary(collection), flush=True)  # before the run: a wrong folder shows at once
        if args.tune:
            from memlab.eval.configurations import CONFIGURATIONS
            from memlab.eval.tuning import tune

            skipped = {name: why for name in ("hybrid",) if (why := CONFIGURATIONS[name].unavailable())}
            tuned_rows = args.rows.split(",") if args.rows else [n for n in ("memlab", "hybrid") if n not in skipped]
            tuned = tune(collection, rows=tuned_rows, workers=args.workers, final=ranking_file is not None)
            results = tuned.held_out
            results.skipped = skipped
        elif args.backend == "postgres":
            if not (args.db or "").startswith(("postgresql://", "postgres://")):
                raise InvalidArgument("--backend postgres needs --db postgresql://... (the owner's URL)")
            # PostgreSQL ranks with ts_rank: its rows are the analyzers its english and simple configurations serve.
            analyzers = args.analyzers.split(",") if args.analyzers else ["porter", "none"]
            results = run(collection, rows=analyzers, depth=args.depth, workers=args.workers, postgres=args.db)
        else:
            rows = ALL_ROWS if args.all else args.rows.split(",") if args.rows else None
            analyzers = args.analyzers.split(",") if args.analyzers else None
            results = run(collection, rows=rows, analyzers=analyzers, depth=args.depth, workers=args.workers)
    except MemlabError as error:
        print(f"memlab eval: {error}", file=sys.stderr)
        return 2
    with pd.option_context("display.width", 200, "display.max_columns", 40):
        if args.tune:
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
    if args.out:
        for path in report.write(results, collection, Path(args.out)):
            print(f"wrote {path}")
    if ranking_file is not None:
        return _save_ranking(tuned, collection, ranking_file, tuned_rows[0])
    if args.save:
        for path in results.save(args.save):
            print(f"wrote {path}")
    return 0


def _ranking_file(args: argparse.Namespace) -> str | None:
    """The ranking file ``--save`` names (a path ending in ``.json``), refused without ``--tune``."""
    from memlab.errors import InvalidArgument

    if not (args.save or "").endswith(".json"):
        return None
    if not args.tune:
        raise InvalidArgument(f"--save {args.save} writes a tuned ranking file: add --tune (or name a folder)")
    return args.save


def _save_ranking(tuned, collection, path: str, row: str) -> int:
    from memlab.errors import MemlabError
    from memlab.eval.tuning import save_ranking

    try:
        save_ranking(tuned, collection, path, row=row)
    except (MemlabError, OSError) as error:
        print(f"memlab eval: {error}", file=sys.stderr)
        return 2
    print(f"\nwrote {path}: {row} tuned on all of {collection.name}'s queries ({tuned.final[row]})")
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
    return MemoryStore(args.db, policy=args.policy, analyzer=args.analyzer, ranking=ranking)


def _serve(args: argparse.Namespace) -> int:
    # stdout carries the protocol: everything else goes to stderr.
    import anyio

    from memlab.errors import MemlabError
    from memlab.levels import Level
    from memlab.mcp_server import serve

    try:
        taint = Level.parse(args.taint)
        store = _serving_store(args)
    except MemlabError as error:
        print(f"memlab serve: {error}", file=sys.stderr)
        return 2
    with store:
        try:
            session = store.session(taint, args.agent)
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
        result = verify_path(args.path, resolve(args.policy).view_rules())
    except MemlabError as error:
        print(f"memlab verify: {error}", file=sys.stderr)
        return 2
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
    from memlab.errors import InvalidArgument, MemlabError

    checks = check.CHECKS if args.check == "all" else tuple(args.check.split(","))
    if args.exhaustive:
        return _check_exhaustive(args, checks)
    options = {"trials": args.trials, "seed": args.seed, "max_ops": args.max_ops}
    try:
        if args.policy is None:
            frame = check.table(checks=checks, **options)
            print(check.table_text(frame))
            if args.save:
                check.save_table(frame, args.save)
                print(f"wrote {args.save}", file=sys.stderr)  # stdout stays the table
            return 0
        if args.save:
            raise InvalidArgument("--save writes the table over all policies: leave out --policy")
        results = check.run_all(args.policy, checks=checks, **options)
    except MemlabError as error:
        print(f"memlab check: {error}", file=sys.stderr)
        return 2
    for result in results.values():
        print(result, end="\n\n")
    return 1 if any(result.leak for result in results.values()) else 0


def _check_exhaustive(args: argparse.Namespace, checks: tuple[str, ...]) -> int:
    from memlab import check
    from memlab.errors import InvalidArgument, MemlabError
    from memlab.policies import names

    try:
        if args.save:
            raise InvalidArgument("--save writes the random checks' table: leave out --exhaustive")
        results = check.exhaustive_all(
            [args.policy] if args.policy else names(), checks=checks, depth=args.depth, budget=args.budget
        )
    except MemlabError as error:
        print(f"memlab check: {error}", file=sys.stderr)
        return 2
    for result in results:
        print(result, end="\n\n")
    return 1 if args.policy and any(result.leak for result in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
