"""Write the generated tables of ``docs/`` and ``benchmarks/README.md`` from the results they report, so that a
page cannot drift from them.

The results: ``data/results/locomo`` (``memlab eval --all --save``), ``data/results/locomo-tuned``
(``memlab eval --tune --save``), ``data/results/check.json`` (``memlab check --save``) and the benchmark runs
in ``benchmarks/results/`` (``benchmarks/record.py``). A generated table sits between ``<!-- table:NAME -->``
and ``<!-- /table -->`` in a page; this script rewrites what lies between, naming the command that produced the
results and their date. ``tests/test_docs.py`` fails when a committed block is not what this script writes for
the committed results.

Usage, from the repository's root: ``python tools/tables.py`` (``--check`` only reports stale blocks, exit 1).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from record import Recording  # noqa: E402

if TYPE_CHECKING:
    from memlab.eval import Results

RESULTS = "data/results/locomo"
CHECK_RESULTS = "data/results/check.json"
TUNED = "data/results/locomo-tuned"
BENCHMARKS = "benchmarks/results"
POISON = "data/results/poison"


def results_date(path: str) -> str | None:
    """The date (YYYY-MM-DD) of the last commit that changed ``path``, or None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "log", "-1", "--format=%cs", "--", path], cwd=ROOT, capture_output=True, text=True, timeout=30
        )
    except OSError:
        return None
    return out.stdout.strip() or None


def relevance(date: str | None) -> str:
    """The relevance lab's measures, as ``memlab eval --all`` prints them, from the committed results."""
    from memlab.eval import Results
    from memlab.eval.report import measures_table

    results = Results.load(ROOT / RESULTS)
    table = measures_table(results).to_string()
    return (
        f"`memlab eval --all --save {RESULTS}` on LoCoMo, committed {date or 'in this tree'}"
        f"\n(`python tools/tables.py` writes this table from the saved results). `*` p < 0.05, `**` p < 0.01 against"
        f" `{results.baseline}`, paired randomization test.\n\n```\n{table}\n```"
    )


def tuning(date: str | None) -> str:
    """The held-out tuning's measures and the rankings each half chose, from the committed ``--tune`` results."""
    from memlab.eval import Results
    from memlab.eval.report import measures_table
    from memlab.eval.tuning import GRIDS, held_out_name

    results = Results.load(ROOT / TUNED)
    table = measures_table(results)[["S@1", "S@5", "S@10", "nDCG@10"]].to_string()
    lines = ["| row | " + " | ".join(_halves(results, held_out_name("memlab"))) + " |", "|---|---|---|"]
    for row, grid in GRIDS.items():
        about = results.configurations.get(held_out_name(row))
        if about is not None:
            rankings = [about[half] for half in _halves(results, held_out_name(row))]
            lines.append(f"| {row} | " + " | ".join(", ".join(f"{k} {r[k]:g}" for k in grid) for r in rankings) + " |")
    return (
        f"`memlab eval --tune --save {TUNED}` on LoCoMo, committed {date or 'in this tree'}"
        f" (`python tools/tables.py` writes this from the saved results). Each half of the agents is answered with"
        f" the ranking tuned on the other half;"
        f" `*` p < 0.05, `**` p < 0.01 against `{results.baseline}`.\n\n```\n{table}\n```\n\n"
        "The parameters each half's queries were answered with:\n\n" + "\n".join(lines)
    )


def _halves(results: Results, row: str) -> list[str]:
    """The names under which a held-out row's configuration records the ranking used on each half."""
    return [name for name in results.configurations[row] if name.startswith("used on the")]


def policy_lab(date: str | None) -> str:
    """The leak checkers' verdicts over every shipped policy, as ``memlab check`` prints them, from the saved run."""
    from memlab import check

    frame = check.load_table(ROOT / CHECK_RESULTS)
    settings = frame.attrs
    return (
        f"`memlab check --save {CHECK_RESULTS}` ({settings['trials']} scenarios of up to {settings['max_ops']}"
        f" operations per check, seed {settings['seed']}), committed {date or 'in this tree'}"
        f"\n(`python tools/tables.py` writes this table from the saved results; the seconds are that run's,"
        f" on 2 cores):"
        f"\n\n```\n{check.table_text(frame)}\n```"
    )


def poisoning(collection: str, command: str) -> Callable[[str | None], str]:
    """The poisoning lab's table at its middle rate, from the committed ``memlab poison`` results of ``collection``."""

    def make(date: str | None) -> str:
        import pandas as pd

        from memlab.poison.report import at_rate

        table = pd.read_csv(ROOT / POISON / collection / "poison.csv")
        table = table[table["tier"] == "direct"]
        rates = sorted(set(table["rate"]))
        middle = rates[len(rates) // 2]
        first = table[(table["rate"] == middle)].iloc[0]
        return (
            f"`{command}`, committed {date or 'in this tree'} (`python tools/tables.py` writes this table from "
            f"`{POISON}/{collection}/poison.csv`): rate {middle:g}, {first['targets']} targets, {first['poisons']} "
            f"poisons ({first['poison rate']:.2%} of the memories), tier {first['tier']}.\n\n```\n"
            f"{at_rate(table, middle).round(3).to_string()}\n```"
        )

    return make


def recording(name: str) -> Recording:
    return Recording.load(ROOT / BENCHMARKS / f"{name}.txt")


def benchmark_output(name: str) -> Callable[[str | None], str]:
    """A benchmark's recorded output (``benchmarks/record.py``), whole, under the command and the run."""

    def make(date: str | None) -> str:
        run = recording(name)
        return (
            f"`{run.command}`: {run.provenance}.\nThe output as `benchmarks/results/{name}.txt` holds it"
            f" (`python tools/tables.py` copies it here):\n\n```\n{run.output}\n```"
        )

    return make


def target_lines(output: str) -> list[str]:
    """The lines of a benchmark's output that state its targets and whether each was met, as printed.

    A ``Targets`` section (``bench_agents.py``) is taken whole; otherwise the table's header line and every row
    whose last column is a verdict (``yes``/``NO``, as ``bench_store.py``'s table printer writes them).
    """
    lines = output.split("\n")
    starts = [i for i, line in enumerate(lines) if line.startswith("Targets")]
    if starts:
        section = lines[starts[0] :]
        return section[: section.index("")] if "" in section else section
    header = [line.rstrip() for line in lines if " measure " in line and line.rstrip().endswith(" met")]
    rows = [line.rstrip() for line in lines if re.search(r"\s(yes|NO)\s*$", line)]
    tally = [line for line in lines if line.startswith("targets met:")]
    return header[:1] + rows + tally


def floor_figures(date: str | None) -> str:
    """The storage page's figures against the floor: every system's medians and the targets, as recorded."""
    run = recording("bench_floor-wave6-merged")
    kept, keeping = [], False
    for line in run.output.split("\n"):
        if line.startswith("medians of the repeats"):
            break
        if line.split()[:2] == ["N", "system"]:
            keeping = True
        elif line.startswith("profile of"):  # the profiles are the README's
            keeping = False
        if keeping:
            kept.append(line)
    systems = "\n".join(kept).rstrip("\n")
    return (
        f"`{run.command}`: {run.provenance} (`python tools/tables.py` writes this from"
        " `benchmarks/results/bench_floor-wave6-merged.txt`; the method, a profile and the reading are in"
        " `benchmarks/README.md`)."
        " Medians of three repeats, calls interleaved; µs per call (bulk: per memory), disk in MB:"
        f"\n\n```\n{systems}\n\n" + "\n".join(target_lines(run.output)) + "\n```"
    )


# The headline: each benchmark's targets as printed; the peers' (no targets) rows at a million documents.
HEADLINE: dict[str, Callable[[str], list[str]]] = {
    "bench_agents-second-wave": target_lines,
    "bench_bulk-second-wave": target_lines,
    "bench_bulk-1M-second-wave": target_lines,
    "bench_store-second-wave": target_lines,
    "bench_ranking": target_lines,
    "bench_floor-wave6-merged": target_lines,
    "bench_agents-random-wave6": target_lines,
    "postgres-floor-calls-after": lambda output: [
        line.rstrip()
        for line in output.split("\n")
        if line.startswith(("measure ", "get,", "single save,", "search ")) or " one agent " in line
    ],
    "coldstart-merged": target_lines,
    "bench_embedding_cache-second-dense-wave6": target_lines,
    "bench_peers": lambda output: [
        line for line in output.split("\n") if line.startswith("engine ") or re.match(r"\S+\s+1,000,000 ", line)
    ],
}


def headline(date: str | None) -> str:
    """The targets every benchmark states, and whether each was met, from the recordings."""
    parts = []
    for name, select in HEADLINE.items():
        run = recording(name)
        parts.append(
            f"`{run.command}` — {run.provenance.split(';')[0]}:\n\n```\n" + "\n".join(select(run.output)) + "\n```"
        )
    return (
        "Generated by `python tools/tables.py` from the recorded runs in `benchmarks/results/` (each written by"
        " `benchmarks/record.py`; the full outputs, and what they mean, are in `benchmarks/README.md`).\n\n"
        + "\n\n".join(parts)
    )


TABLES: dict[str, tuple[str, Callable[[str | None], str], str]] = {
    "relevance": ("docs/relevance-lab.md", relevance, RESULTS),
    "tuning": ("docs/relevance-lab.md", tuning, TUNED),
    "policy-lab": ("docs/policy-lab.md", policy_lab, CHECK_RESULTS),
    "benchmark-targets": ("docs/benchmarks.md", headline, BENCHMARKS),
    "poisoning-locomo": (
        "docs/poisoning-lab.md",
        poisoning("locomo", f"memlab poison --out {POISON}/locomo"),
        f"{POISON}/locomo/poison.csv",
    ),
    "poisoning-locomo-turns": (
        "docs/poisoning-lab.md",
        poisoning("locomo-turns", f"memlab poison --collection locomo-turns --out {POISON}/locomo-turns"),
        f"{POISON}/locomo-turns/poison.csv",
    ),
    "storage-floor": ("docs/storage.md", floor_figures, f"{BENCHMARKS}/bench_floor-wave6-merged.txt"),
    **{
        f"bench:{path.stem}": ("benchmarks/README.md", benchmark_output(path.stem), f"{BENCHMARKS}/{path.name}")
        for path in sorted((ROOT / BENCHMARKS).glob("*.txt"))
    },
}


def block(name: str, body: str) -> str:
    return f"<!-- table:{name} -->\n{body}\n<!-- /table -->"


def render(page: str, name: str, body: str) -> str:
    """``page`` with the block ``name`` replaced by ``body``; a page without the block is an error."""
    pattern = re.compile(rf"<!-- table:{re.escape(name)} -->\n.*?<!-- /table -->", re.DOTALL)
    if not pattern.search(page):
        raise ValueError(f"no <!-- table:{name} --> block")
    return pattern.sub(lambda _: block(name, body), page, count=1)


def written(name: str, date: str | None = None) -> tuple[Path, str]:
    """The page holding table ``name`` and the text this script writes for it."""
    page, make, source = TABLES[name]
    path = ROOT / page
    return path, render(path.read_text(encoding="utf-8"), name, make(date or results_date(source)))


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (argv if argv is not None else sys.argv[1:])
    stale = []
    for name in TABLES:
        path, text = written(name)
        if path.read_text(encoding="utf-8") != text:
            stale.append(f"{path.relative_to(ROOT)}: table {name}")
            if not check:
                path.write_text(text, encoding="utf-8")
    for line in stale:
        print(("stale " if check else "wrote ") + line)
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
