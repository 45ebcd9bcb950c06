"""memlab against itself: ``bench_floor.py`` run alternately on two source trees, each figure the median of its rounds.

A change's cost on the floor's measures (get, single save, search at each taint, bulk, and the read gate's ratio),
free of the drift between two separate runs: round by round, the ``--base`` tree's memlab and this checkout's are
measured one after the other on the same data (each run builds its stores anew from the same seeded corpus), and
each measure is the median over the rounds. A base tree is any checkout of memlab, e.g. a commit's::

    git worktree add --detach /tmp/memlab-base e2cd197
    python benchmarks/compare_floor.py --base /tmp/memlab-base --rounds 10

Every run is ``bench_floor.py --sizes N --repeats 3 --queries 200 --gets 1000 --saves 300 --lists 30`` with its
``memlab`` imported from the tree named (``PYTHONPATH``), which its first lines name with a digest of its source.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MEASURE = re.compile(
    r"^\s*[\d,]+\s+(get p50|single save|search (?:PUBLIC|INTERNAL|CONFIDENTIAL) p50|list p50|bulk, per memory) "
    r"\((file|folder)\)\s+([\d,.]+) µs\s+([\d,.]+) µs\s+[\d.]+x\s+(floor|no read gate|raw FTS5 visible)",
    re.M,
)


def run(tree: Path, size: int) -> str:
    """One run of bench_floor.py with ``tree``'s memlab; what it printed."""
    command = [sys.executable, str(HERE / "bench_floor.py"), "--sizes", str(size), "--repeats", "3", "--queries", "200"]
    command += ["--gets", "1000", "--saves", "300", "--lists", "30"]
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(command, env=environment, check=True, capture_output=True, text=True, cwd=HERE).stdout


def measures(output: str) -> dict[tuple[str, str], float]:
    """(measure, layout) -> µs, and the read gate's ratio (gated ÷ ungated) as ("gate " + measure, layout)."""
    found = {}
    for name, layout, value, against, kind in MEASURE.findall(output):
        value, against = float(value.replace(",", "")), float(against.replace(",", ""))
        found["gate " + name if kind == "no read gate" else name, layout] = (
            value / against if kind == "no read gate" else value
        )
    return found


def _commit(tree: Path) -> str:
    """The commit a tree is checked out at (and whether its files differ from it)."""
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    status = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "memlab"], capture_output=True, text=True)
    return (commit.stdout.strip() or "not a git checkout") + (" with changes to memlab/" if status.stdout else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, type=Path, help="a checkout of memlab to compare against")
    parser.add_argument("--rounds", type=int, default=10, help="alternations of base and this tree (default 10)")
    parser.add_argument("--size", type=int, default=10_000, help="memories in each store (default 10,000)")
    args = parser.parse_args()
    trees = {"base": args.base.resolve(), "this": HERE.parent}
    seen: dict[str, list[dict[tuple[str, str], float]]] = {name: [] for name in trees}
    for number in range(1, args.rounds + 1):
        for name, tree in trees.items():
            seen[name].append(measures(run(tree, args.size)))
        print(f"round {number} of {args.rounds} done", file=sys.stderr, flush=True)
    names = {name: _commit(tree) for name, tree in trees.items()}
    print(f"base: {names['base']}\nthis: {names['this']}\nsize {args.size:,}, {args.rounds} rounds, medians\n")
    print(f"{'measure':<26} {'layout':<7} {'base µs':>9} {'this µs':>9} {'this ÷ base':>12}")
    for key in sorted(seen["this"][0]):
        this = statistics.median(run_[key] for run_ in seen["this"])
        if key[0].startswith("gate"):
            print(f"{key[0]:<26} {key[1]:<7} {'':>9} {'':>9} {this:>11.3f}x  (gated ÷ ungated, this tree)")
            continue
        base = statistics.median(run_[key] for run_ in seen["base"])
        print(f"{key[0]:<26} {key[1]:<7} {base:>9.1f} {this:>9.1f} {this / base:>11.3f}x")


if __name__ == "__main__":
    main()
