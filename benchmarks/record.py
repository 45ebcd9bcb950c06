"""Run a benchmark and keep what it printed, so the benchmark tables of the docs come from real runs.

Usage, from the repository's root::

    python benchmarks/record.py NAME -- python benchmarks/bench_bulk.py --sizes 1000000

runs the command, passes its output through, and writes ``benchmarks/results/NAME.txt``: a line with the
command, a line with the commit and the time, a blank line, then standard output exactly as printed (standard
error, where the scripts report progress, is passed through but not kept). ``python tools/tables.py`` copies
each recording into its block of ``benchmarks/README.md`` and the targets it states into ``docs/benchmarks.md``;
``tests/test_docs.py`` fails when a page no longer holds what that script writes from the recordings.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


@dataclass(frozen=True)
class Recording:
    """One benchmark run: the command, where and when it ran (``provenance``), and what it printed."""

    command: str
    provenance: str
    output: str

    @classmethod
    def load(cls, path: Path) -> Recording:
        command, provenance, blank, *output = path.read_text(encoding="utf-8").split("\n")
        if not command.startswith("$ ") or not provenance.startswith("# ") or blank:
            raise ValueError(f"{path}: not a recording (a '$ command' line, a '# provenance' line, a blank line)")
        return cls(command[2:], provenance[2:], "\n".join(output).rstrip("\n"))

    def text(self) -> str:
        return f"$ {self.command}\n# {self.provenance}\n\n{self.output}\n"


def commit() -> str:
    """The checked-out commit, marked when the working tree differs from it."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "memlab", "benchmarks/*.py"], cwd=ROOT, capture_output=True, text=True
    )
    return head.stdout.strip() + (" with uncommitted changes" if dirty.stdout.strip() else "")


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    name, command = argv[0], argv[2:]
    started = datetime.now(UTC)
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    lines = []
    assert process.stdout is not None
    for line in process.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
        lines.append(line)
    if process.wait() != 0:
        print(
            f"record: {shlex.join(command)} exited with status {process.returncode}; nothing written", file=sys.stderr
        )
        return process.returncode
    ended = datetime.now(UTC)
    shown = ["python" if part == sys.executable else part for part in command]
    recording = Recording(
        shlex.join(shown), f"commit {commit()}, {started:%Y-%m-%d %H:%M}–{ended:%H:%M} UTC", "".join(lines).rstrip("\n")
    )
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.txt"
    path.write_text(recording.text(), encoding="utf-8")
    print(f"recorded {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
