"""Write the generated tables of ``docs/`` from the results they report, so that a page cannot drift from them.

A generated table sits between ``<!-- table:NAME -->`` and ``<!-- /table -->`` in a page; this script rewrites
what lies between, naming the command that produced the results and their date. ``tests/test_docs.py`` fails
when a committed block is not what this script writes for the committed results.

Usage, from the repository's root: ``python tools/tables.py`` (``--check`` only reports stale blocks, exit 1).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = "data/results/locomo"
CHECK_RESULTS = "data/results/check.json"


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
        f"`memlab eval --all` on LoCoMo; the results in `{RESULTS}`, committed {date or 'in this tree'}"
        f"\n(`python tools/tables.py` writes this table from them). `*` p < 0.05, `**` p < 0.01 against"
        f" `{results.baseline}`, paired randomization test.\n\n```\n{table}\n```"
    )


def policy_lab(date: str | None) -> str:
    """The leak checkers' verdicts over every shipped policy, as ``memlab check`` prints them, from the saved run."""
    from memlab import check

    frame = check.load_table(ROOT / CHECK_RESULTS)
    settings = frame.attrs
    return (
        f"`memlab check --save {CHECK_RESULTS}` ({settings['trials']} scenarios of up to {settings['max_ops']}"
        f" operations per check, seed {settings['seed']}), committed {date or 'in this tree'}"
        f"\n(`python tools/tables.py` writes this table from it; the seconds are that run's, on 2 cores):"
        f"\n\n```\n{check.table_text(frame)}\n```"
    )


TABLES: dict[str, tuple[str, Callable[[str | None], str], str]] = {
    "relevance": ("docs/relevance-lab.md", relevance, RESULTS),
    "policy-lab": ("docs/policy-lab.md", policy_lab, CHECK_RESULTS),
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
