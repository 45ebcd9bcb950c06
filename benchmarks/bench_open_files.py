"""What opening one more SQLite file costs while a process holds k others open (the folder store's misses).

SQLite's unix VFS finds a file's shared lock record by walking a list of every file the process has open (for the
database and again for its WAL), so an open costs more the more files are open. For k in ``--open`` the script
holds k small WAL files open (each read once), then opens ``--probes`` more one at a time (connect, a read, one
write transaction; the close, which checkpoints, untimed) and reports the calling thread's CPU time per probe
(``time.thread_time``: what the process did, not the wait for a core or the disk). The soft limit on descriptors
is raised to the hard one.

Usage::

    python benchmarks/bench_open_files.py [--open 0,1000,2000,4000] [--probes 200]
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import environment  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--open", default="0,1000,2000,4000", help="files held open (default: %(default)s)")
    parser.add_argument("--probes", type=int, default=200, help="files opened at each count (default: %(default)s)")
    args = parser.parse_args(argv)
    counts = [int(s) for s in args.open.split(",") if s.strip()]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print("\n".join(environment()))
    print(f"settings:   open={counts} probes={args.probes}; descriptors: soft limit {soft} raised to {hard}")
    with tempfile.TemporaryDirectory(prefix="memlab-open-files-", dir=os.environ.get("BENCH_TMP")) as tmp:
        folder = Path(tmp)
        template = folder / "template.db"
        conn = sqlite3.connect(template, isolation_level=None)
        conn.execute("PRAGMA journal_mode=wal")
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (1)")
        conn.close()
        data = template.read_bytes()
        paths = [folder / f"f{i}.db" for i in range(max(counts) + args.probes)]
        for path in paths:
            path.write_bytes(data)
        held, probes = paths[: max(counts)], paths[max(counts) :]
        conns: list[sqlite3.Connection] = []
        print(f"\n{'files open':>10} | {'CPU p50':>9} {'CPU mean':>9} per file opened, read and written")
        for k in counts:
            while len(conns) < k:
                conns.append(sqlite3.connect(held[len(conns)], isolation_level=None))
                conns[-1].execute("SELECT x FROM t").fetchall()
            cpu = []
            for path in probes:
                started = time.thread_time()
                conn = sqlite3.connect(path, isolation_level=None)
                conn.execute("SELECT x FROM t").fetchall()
                conn.execute("BEGIN IMMEDIATE")
                conn.execute("INSERT INTO t VALUES (2)")
                conn.execute("COMMIT")
                cpu.append(time.thread_time() - started)
                conn.close()  # not timed: the close checkpoints
            print(f"{k:>10,} | {statistics.median(cpu) * 1e6:>7.0f}µs {statistics.mean(cpu) * 1e6:>7.0f}µs", flush=True)
        for conn in conns:
            conn.close()
    print(f"\nload average {' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")


if __name__ == "__main__":
    main()
