"""``verify_folder``: a store folder checked as a whole, read-only, never trusting the catalogue's paths.

Every agent's file is found where its name puts it (``agents/xx/<hash>.db``), never where the catalogue says,
and must hold that agent only; every file under ``agents/`` must be an agent's; no symbolic link may be in the
folder; the catalogue's chained log of agent creations must match its agents; each agent's chain must reach
the length and head the catalogue last recorded (a removed tail, a rolled-back file).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from memlab.errors import SchemaError
from memlab.search.analyzers import Analyzer
from memlab.storage import chain
from memlab.storage.layout import CATALOGUE, LOCK, agent_file
from memlab.storage.verify import Verification, combine, read_only, verify_store_file
from memlab.viewrules import ViewRules

__all__ = ["verify_folder"]


def verify_folder(path: Path, rules: ViewRules, *, analyzer: Analyzer | None = None) -> Verification:
    """Verify a store folder without opening it as a store (read-only): every agent's file, found where its name
    puts it (never where the catalogue says), holding that agent only, with a chain no shorter than, and through
    the head that, the catalogue last recorded; every file under ``agents/`` owned by an agent; no symbolic link;
    and the catalogue's log of agents chained and matching its agents. The head covers the log and every chain.

    Raises:
        SchemaError: ``path`` holds no store folder.
    """
    catalogue = path / CATALOGUE
    if not catalogue.is_file():
        raise SchemaError(f"{path} is not a memlab store folder (no {CATALOGUE})")
    problems: list[str] = []
    with read_only(catalogue) as conn:
        columns = {row[1] for row in conn.execute("PRAGMA table_info(agents)")}
        recorded = "audit_rows, audit_head" if "audit_rows" in columns else "NULL, NULL"
        agents = conn.execute(f"SELECT name, file, {recorded} FROM agents ORDER BY name").fetchall()
        log_head = _check_log(conn, {agent[0] for agent in agents}, problems)
    owned: dict[Path, str] = {}
    results = []
    for agent, file, rows, head in agents:
        expected = path / "agents" / agent_file(agent)
        relative = str(expected.relative_to(path))
        owned.update((Path(f"{expected}{suffix}"), agent) for suffix in ("", "-wal", "-shm", "-journal"))
        result = Verification()
        if file != relative:
            problems.append(f"agent {agent!r}: the catalogue names the file {file}, not {relative} (edited)")
        if expected.is_symlink() or not expected.is_file():
            problems.append(f"agent {agent!r}: its file {relative} is missing")
        elif expected.stat().st_size == 0:
            problems.append(f"agent {agent!r}: its file {relative} is empty")
        else:
            result = _verify_agent_file(expected, agent, rows, head, rules, analyzer)
        results.append(result)
    problems.extend(_walk(path, owned))
    for file in sorted(place for place in _files(path / "agents") if place not in owned and place.suffix == ".db"):
        try:
            results.append(verify_store_file(file, rules))  # an orphan's own damage is named too
        except SchemaError:
            pass
    combined = combine(results)
    return Verification(
        audit_rows=combined.audit_rows,
        versions=combined.versions,
        head=chain.audit_hash(log_head, (combined.head,)),
        problems=tuple(problems) + combined.problems,
    )


def _check_log(conn: sqlite3.Connection, agents: set[str], problems: list[str]) -> str:
    """Recompute the log of agent creations; every agent logged is catalogued and the reverse. Its head."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'agent_log'").fetchone():
        problems.append("the catalogue's log of agents is missing")
        return ""
    meta = dict(conn.execute("SELECT name, value FROM memlab_meta").fetchall())
    previous, logged = meta.get("chain_genesis", ""), set()
    for expected, (seq, name, file, stored) in enumerate(
        conn.execute("SELECT seq, name, file, hash FROM agent_log ORDER BY seq"), 1
    ):
        previous = chain.audit_hash(previous, (seq, name, file))
        if seq != expected or stored != previous:
            problems.append(f"the catalogue's log of agents, entry {expected}: removed, edited or forged")
            previous = stored
        logged.add(name)
    problems.extend(
        f"agent {name!r}: logged as created, but not in the catalogue (removed)" for name in sorted(logged - agents)
    )
    problems.extend(
        f"agent {name!r}: in the catalogue, but its creation is not logged (forged)" for name in sorted(agents - logged)
    )
    return previous


def _verify_agent_file(
    file: Path, agent: str, rows: int | None, head: str | None, rules: ViewRules, analyzer: Analyzer | None
) -> Verification:
    """Verify one agent's file, that it holds ``agent`` only, and that its chain reaches the recorded head."""
    try:
        result = verify_store_file(file, rules, analyzer=analyzer)
    except SchemaError as error:
        return Verification(problems=(f"agent {agent!r}: {error}",))
    problems = []
    with read_only(file) as conn:
        named = conn.execute(
            "SELECT name FROM agents UNION SELECT agent FROM audit UNION SELECT agent FROM sessions"
        ).fetchall()
        others = {row[0] for row in named} - {agent}
        problems.extend(f"{file}: holds agent {other!r}, not {agent!r} (swapped or copied)" for other in sorted(others))
        if rows is not None:
            found = conn.execute("SELECT hash FROM audit WHERE seq = ?", (rows,)).fetchone()
            if found is None:
                problems.append(
                    f"agent {agent!r}: its audit ends before seq {rows}, which the catalogue recorded "
                    "(rows removed from the end, or the file rolled back)"
                )
            elif found[0] != head:
                problems.append(
                    f"agent {agent!r}: its audit row seq {rows} is not the head the catalogue recorded "
                    "(the file rolled back or replaced)"
                )
    return Verification(result.audit_rows, result.versions, result.head, tuple(problems) + result.problems)


def _files(folder: Path) -> Iterator[Path]:
    for root, _dirs, names in os.walk(folder):
        for name in names:
            yield Path(root) / name


def _walk(path: Path, owned: dict[Path, str]) -> list[str]:
    """Symbolic links and files no agent owns, under the folder (its catalogue, lock and ``agents/``)."""
    problems = [
        f"{path / name} is a symbolic link"
        for name in (CATALOGUE, f"{CATALOGUE}-wal", f"{CATALOGUE}-shm", LOCK, "agents")
        if (path / name).is_symlink()
    ]
    for root, dirs, names in os.walk(path / "agents"):
        for name in dirs + names:
            place = Path(root) / name
            if place.is_symlink():
                problems.append(
                    f"{place.relative_to(path)} is a symbolic link (refused: writes would leave the folder)"
                )
            elif name in names and place not in owned:
                problems.append(f"{place.relative_to(path)} is not the file of any agent in the catalogue")
    return problems
