"""The embedding cache: ``memlab eval`` timed cold, as a new user first runs it, and run again.

Each command (``--rows``, one per comma-free group: ``dense,hybrid`` the dense rows, ``default`` the README's
first command ``memlab eval``) runs three times, each a fresh ``memlab`` process with its own ``MEMLAB_CACHE``:

1. ``cold``: an empty cache folder and no warm vectors (run from a folder without ``data/``, ``--locomo``
   naming the file): every document and question embedded, what every run cost before the cache;
2. ``first``: an empty cache folder and the bundled warm vectors (``data/locomo10.embeddings.npz``): only the
   questions embedded, what a new user's first ``memlab eval`` costs;
3. ``second``: the same command again on the folder the first filled: nothing embedded.

Each run's wall time and CPU time (user + system of the process and its workers) are printed, and the dense
rows' own seconds as the results time them (``Results.timings``: their store's load, where the documents are
embedded, plus each row's searches, where the questions are); the target: the second run of the dense rows
≤ 0.3x the cold one, wall and CPU. Each run saves its results (``--save``) and the three runs' per-query
measures are compared: the cache and the warm vectors must not change a figure.

Usage, from the repository's root::

    python benchmarks/bench_embedding_cache.py [--rows "dense,hybrid;default"]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))

from bench_store import Row, environment  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT / "data" / "locomo10.json"
BOUND = 0.3


def timed(command: list[str], *, cwd: Path, cache: Path) -> tuple[float, float]:
    """Run ``command`` to completion: its wall seconds and CPU seconds (its workers included)."""
    before = os.times()
    started = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=os.environ | {"MEMLAB_CACHE": str(cache)}, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def bench(rows: str, workdir: Path) -> tuple[list[Row], bool]:
    """The three runs of ``memlab eval --rows rows`` (``default``: no ``--rows``): rows and whether the runs'
    per-query measures are identical."""
    memlab = str(Path(sys.executable).with_name("memlab"))
    chosen = [] if rows == "default" else ["--rows", rows]
    elsewhere = workdir / "elsewhere"  # no data/ here: the warm vectors are not found
    elsewhere.mkdir(parents=True)
    figures, saved = {}, {}
    runs = {"cold": (elsewhere, workdir / "cache-cold"), "first": (ROOT, workdir / "cache"), "second": (ROOT, None)}
    for run, (cwd, cache) in runs.items():
        cache = cache or workdir / "cache"
        saved[run] = workdir / f"results-{run}"
        command = [memlab, "eval", *chosen, "--locomo", str(LOCOMO), "--save", str(saved[run])]
        print(f"{rows}: {run} run...", file=sys.stderr, flush=True)
        figures[run] = timed(command, cwd=cwd, cache=cache)
        print(f"  {figures[run][0]:.1f} s wall, {figures[run][1]:.1f} s CPU", file=sys.stderr, flush=True)
    measures = {run: pd.read_csv(folder / "per_query.csv.gz") for run, folder in saved.items()}
    for run, folder in saved.items():
        timings = pd.read_csv(folder / "timings.csv", index_col="row")
        dense = timings.loc[[row for row in ("dense", "hybrid") if row in timings.index]]
        figures[run] += (dense["index_seconds"].iloc[0] + dense["search_seconds"].sum(),)
    same = measures["cold"].equals(measures["first"]) and measures["first"].equals(measures["second"])
    bound = BOUND if rows != "default" else None
    table = []
    for index, unit in ((0, "wall"), (1, "CPU"), (2, "dense rows")):
        for run, against in (("first", "cold"), ("second", "cold"), ("second", "first")):
            row = Row(f"{run} ÷ {against}, {unit}", figures[run][index], figures[against][index], "s")
            if bound is not None and (run, against, index) in (("second", "cold", 0), ("second", "cold", 1)):
                row.target, row.met = f"ratio ≤ {bound:g}x", row.ratio <= bound
            table.append(row)
    return table, same


def print_rows(rows: list[Row]) -> None:
    """The ratios as a table whose last column is the verdict (what ``tools/tables.py`` reads as a target)."""
    header = f"  {'measure':<28} {'run':>9} {'against':>9} {'ratio':>7}  {'target':<12} met"
    print(header)
    print("-" * len(header))
    for row in rows:
        met = "" if row.met is None else ("yes" if row.met else "NO")
        print(f"  {row.measure:<28} {row.memlab:>7.1f} s {row.raw:>7.1f} s {row.ratio:>6.2f}x  {row.target:<12} {met}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--rows", default="dense,hybrid;default", help="commands, ';'-separated: --rows values, or default"
    )
    args = parser.parse_args(argv)
    print("\n".join(environment()))
    print(f"settings:   rows={args.rows}")
    print()
    verdicts = []
    with tempfile.TemporaryDirectory() as scratch:
        for rows in args.rows.split(";"):
            table, same = bench(rows, Path(scratch) / rows.replace(",", "-"))
            command = "memlab eval" + ("" if rows == "default" else f" --rows {rows}")
            print(f"{command}: cold (no cache, no warm vectors), first (warm vectors), second (cache filled)")
            print("(wall and CPU: the whole command; dense rows: their load and searches, wall, as Results.timings)")
            print_rows(table)
            print(f"per-query measures of the three runs identical: {'yes' if same else 'NO'}")
            print()
            verdicts += [row.met for row in table if row.met is not None] + [same]
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"targets met: {sum(verdicts)} of {len(verdicts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
