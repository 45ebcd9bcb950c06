"""``memlab eval``: search configurations compared on LoCoMo or a TREC-style folder (``memlab.eval``), printed as
tables or one JSON document, optionally tuned and saved as a ranking file."""

from __future__ import annotations

import argparse
import sys

from memlab.cli.options import Commands, add_command, collection_flags, json_flag, one_of
from memlab.cli_output import print_json, verbosity
from memlab.search import analyzers

__all__ = ["add_eval"]


def add_eval(commands: Commands) -> None:
    evaluate = add_command(
        commands,
        "eval",
        "compare search configurations (context, boost, analyzers) on LoCoMo or a TREC-style folder",
        run_eval,
    )
    collection_flags(evaluate)
    evaluate.add_argument(
        "--rows",
        help="comma-separated rows: named configurations or analyzers (default: porter, porter+boost, "
        "porter+context, memlab, dense, hybrid; the last two need memlab[dense] and are skipped without it); "
        "optional: dense-e5, hybrid-e5 (multilingual-e5-small, memlab[dense-e5])",
    )
    evaluate.add_argument("--all", action="store_true", help="every default row and every analyzer")
    evaluate.add_argument(
        "--analyzers",
        help="comma-separated analyzers to add as rows, each with the plain ranking (the text alone, no context, no "
        f"tag boost: a row differs from porter by its analyzer only), {one_of(analyzers.names())}",
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
    json_flag(evaluate, "the summary (a record per row), the per-category table, the timings")


def run_eval(args: argparse.Namespace) -> int:
    """Run the rows and print or save the results; 2 when a collection, row or ranking file is refused."""
    from pathlib import Path

    from memlab.errors import InvalidArgument, MemlabError
    from memlab.eval import ALL_ROWS, load_collection, report, run

    on_terminal = sys.stderr.isatty() and verbosity(args) >= 0  # -q: no bar; a bar's \r has no place in a log
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
    import shutil

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
        carried = results.carried()
        if not carried.empty:
            print("\nWhich ranking carried the fused first result (share of queries)")
            print(carried.round(3).to_string())
        print("\nTime: indexing (s), searching (s and ms per query)")
        print(results.timings.round(2).to_string())
        if results.summary["analyzer"].nunique() > 1:
            print(f"\nStemmers (vocabulary of the memories; wins/losses per query against {results.baseline})")
            print(report.stemming_table(results, collection).to_string())
        print("\n" + report.legend(results.baseline, min(shutil.get_terminal_size().columns, 120)))


def _eval_document(results, chosen) -> dict:
    """``memlab eval --json``: the summary as a record per row (its analyzer column as the measures table says it),
    the per-category table, which ranking carried each fused row, the timings, the rows skipped and, after --tune,
    the ranking chosen per row and half."""
    from memlab.eval import report

    document = {
        "collection": results.collection,
        "baseline": results.baseline,
        "summary": results.summary.assign(analyzer=report.analyzer_labels(results)),
        "by_category": results.by_category(),
        "carried": results.carried(),
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
