"""``verify``: recompute a store file's audit chain and check every version and view against it.

What it catches, in the order it looks (the first problem is the first broken link):

1. structure — a missing table or trigger (a dropped trigger is how an attacker would start);
2. the audit's sequence — a gap or a duplicate in ``seq``;
3. the chain — a row edited, inserted (forged), removed or replaced: its hash no longer follows;
4. versions — content or tags edited (the commitment no longer matches), classification, key, version,
   author or time edited (the digest in the save's audit row no longer matches), a version with no save
   in the audit (forged) or a save in the audit with no version (removed), a delete or purge that the
   audit does not record;
5. sessions — an audited session missing, escalations that do not climb from its starting taint, a call
   audited at a taint the session never held (``check_sessions``);
6. views — an ``effective`` row that is not what the versions say a session at that taint sees;
7. indexes — ``agents.indexed_levels`` not the levels that had a save, an FTS5 index missing, one that is
   not the store's (a renamed or made-up table), one holding other versions than the effective view at its
   level, or other terms than those versions' (compared with an index rebuilt from them), and vectors of
   versions that do not exist or were purged.

It reads only; a database-level attacker who rewrites the whole chain consistently is caught only by
comparing ``head`` with a copy kept elsewhere (print it, log it, sign it).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from memlab.errors import InvalidArgument, SchemaError
from memlab.labels import Label
from memlab.levels import Level
from memlab.search.analyzers import Analyzer
from memlab.search.analyzers import resolve as resolve_analyzer
from memlab.storage import chain
from memlab.storage.fts_tables import fts_table, indexed_columns
from memlab.storage.label_codes import LABEL_VIEWS, as_label, read_label, read_view, reader, view_key, view_table
from memlab.storage.schema import SCHEMA_VERSION, earlier_schema, missing_objects
from memlab.storage.seal import check_chain, check_sessions, check_versions
from memlab.viewrules import AMBIGUOUS, ViewRules

__all__ = [
    "Verification",
    "verify_file",
    "verify_store_file",
    "combine",
    "read_only",
]


@dataclass(frozen=True)
class Verification:
    """The outcome of ``verify``: ``ok`` when ``problems`` is empty; ``problems[0]`` is the first broken link."""

    audit_rows: int = 0
    versions: int = 0
    head: str = ""
    """The hash of the last audit row: keep it elsewhere to detect a rewrite of the whole chain."""
    problems: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        if self.ok:
            return f"ok: {self.audit_rows:,} audit rows and {self.versions:,} versions verified; head {self.head}"
        shown = "\n  ".join(self.problems[:20])
        more = f"\n  … and {len(self.problems) - 20} more" if len(self.problems) > 20 else ""
        count = "1 problem" if len(self.problems) == 1 else f"{len(self.problems)} problems"
        return f"BROKEN: {count}:\n  {shown}{more}"


def verify_file(
    conn: sqlite3.Connection, genesis: str, rules: ViewRules, *, label: str = "", analyzer: Analyzer | None = None
) -> Verification:
    """Check one SQLite store file (over its connection) as described in the module's docstring;
    ``analyzer`` is the one its indexes were built with (by default the one its meta names)."""
    prefix = f"{label}: " if label else ""
    missing = missing_objects(conn)
    if missing:
        return Verification(problems=tuple(f"{prefix}{name} is missing" for name in missing))
    problems: list[str] = []
    audited = check_chain(
        conn.execute(
            "SELECT seq, at, session_id, agent, taint, tool, key, query, outcome, records, notes, message, digest, "
            "hash FROM audit ORDER BY seq"
        ),
        genesis,
        prefix,
        problems,
    )
    # A file from before integrity, verified without being opened (so not upgraded), has no distrust column.
    distrust = "m.distrust" if _has_column(conn, "memories", "distrust") else "NULL"
    versions = check_versions(
        conn.execute(
            "SELECT a.name, m.key, m.content, m.tags, m.source, m.occurred_at, m.classification, m.version, "
            "m.saved_at, m.saved_by, m.deleted_at, m.deleted_by, m.salt, m.commitment, m.purged_at, NULL, "
            f"{distrust} FROM memories m JOIN agents a ON a.id = m.agent_id ORDER BY m.id"
        ),
        audited,
        prefix,
        problems,
    )
    problems.extend(
        check_sessions(
            conn.execute("SELECT id, agent, taint FROM sessions ORDER BY created_at, id"),
            conn.execute("SELECT session_id, from_level, to_level FROM taint_events ORDER BY id"),
            audited,
            prefix,
        )
    )
    problems.extend(prefix + problem for problem in _check_views(conn, rules))
    problems.extend(prefix + problem for problem in _check_indexes(conn, rules, analyzer))
    return Verification(audit_rows=audited.rows, versions=versions, head=audited.head, problems=tuple(problems))


def _label_views(conn: sqlite3.Connection) -> dict[int, list[Label]]:
    """agent id -> the readers whose views it keeps beside the levels' (categorised, or with a trusted floor)."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (LABEL_VIEWS,)).fetchone():
        return {}
    views: dict[int, list[Label]] = {}
    for agent_id, text in conn.execute(f"SELECT agent_id, label FROM {LABEL_VIEWS} ORDER BY agent_id, label"):
        views.setdefault(agent_id, []).append(read_view(text))
    return views


def _check_views(conn: sqlite3.Connection, rules: ViewRules) -> list[str]:
    """The ``effective`` table against the views the versions define: at every level, and at every categorised
    label whose view an agent keeps."""
    label_views = _label_views(conn)
    expected: dict[tuple[int, str, int | str], int] = {}
    for agent_id, keys in _live(conn).items():
        for key, live in keys.items():
            for taint in Level:
                winner = rules.winner(live, reader(taint))
                if winner is not None:
                    expected[agent_id, key, int(taint)] = winner
            labelled = {as_label(label): memory_id for label, memory_id in live.items()}
            for label in label_views.get(agent_id, []):
                winner = rules.winner(labelled, label)
                if winner is not None:
                    expected[agent_id, key, view_key(label)] = winner
    actual = {(a, k, t): m for a, k, t, m in conn.execute("SELECT agent_id, key, taint, memory_id FROM effective")}
    wrong = sorted({entry for entry, _ in set(expected.items()) ^ set(actual.items())}, key=str)
    return [
        f"the effective view of key {key!r} at {_shown(taint)} is not what the versions give (edited)"
        for _, key, taint in wrong
    ]


def _shown(taint: object) -> str:
    try:
        return str(read_view(taint)) if isinstance(taint, str) and "|" in taint else str(read_label(taint))
    except Exception:  # a made-up taint in an edited row is shown as it is
        return repr(taint)


_SHADOWS = ("data", "idx", "docsize", "config", "content")  # the tables FTS5 keeps for an index named T: T_data...
_ALL_LEVELS = sum(1 << int(level) for level in Level)


def _live(conn: sqlite3.Connection) -> dict[int, dict[str, dict[Level | Label, int]]]:
    """agent id -> key -> level (or categorised label) -> id of the live version (the newest at its label, not
    deleted); a version whose classification is neither is left out (check_versions reports it)."""
    live: dict[int, dict[str, dict[Level | Label, int]]] = {}
    for agent_id, key, level, memory_id, deleted_at in conn.execute(
        "SELECT agent_id, key, classification, id, deleted_at FROM memories m WHERE version = "
        "(SELECT MAX(version) FROM memories WHERE agent_id = m.agent_id AND key = m.key "
        "AND classification = m.classification)"
    ):
        if deleted_at is None:
            try:
                label = read_label(level)
            except Exception:  # not a classification: check_versions names it
                continue
            live.setdefault(agent_id, {}).setdefault(key, {})[label] = memory_id
    return live


def _check_indexes(conn: sqlite3.Connection, rules: ViewRules, analyzer: Analyzer | None) -> list[str]:
    """Each agent's FTS5 indexes against the views they must hold, every table named like one, the vectors."""
    problems: list[str] = []
    if analyzer is None:
        row = conn.execute("SELECT value FROM memlab_meta WHERE name = 'analyzer'").fetchone()
        try:
            analyzer = resolve_analyzer(row[0] if row else None)
        except Exception:  # an analyzer this process does not know: the terms cannot be rebuilt, the rest is checked
            analyzer = None
    live = _live(conn)
    label_views = _label_views(conn)
    # index -> agent id, level or label, the versions it holds
    expected: dict[str, tuple[int, Level | Label | None, set[int]]] = {}
    for agent_id, name, mask in conn.execute("SELECT id, name, indexed_levels FROM agents ORDER BY id").fetchall():
        used = {
            row[0]
            for row in conn.execute("SELECT DISTINCT classification FROM memories WHERE agent_id = ?", (agent_id,))
        }
        # Categorised labels have views of their own; an untrusted level's versions are in the levels' views.
        levels = {level if type(level) is int else int(read_label(level).level) for level in used if _plain(level)}
        should = sum(1 << level for level in levels) if rules.lattice_visibility else _ALL_LEVELS
        if mask != should:
            problems.append(
                f"agent {name!r}: indexed_levels is {mask!r}, not {should} (the levels it saved at): "
                "searches would miss indexes (edited)"
            )
        for level in Level:
            if should & (1 << int(level)):
                ids = {
                    row[0]
                    for row in conn.execute(
                        "SELECT memory_id FROM effective WHERE agent_id = ? AND taint = ?", (agent_id, int(level))
                    )
                }
                expected[fts_table(agent_id, level)] = (agent_id, level, ids)
        for label in label_views.get(agent_id, []):
            ids = {
                row[0]
                for row in conn.execute(
                    "SELECT memory_id FROM effective WHERE agent_id = ? AND taint = ? AND memory_id != ?",
                    (agent_id, view_key(label), AMBIGUOUS),
                )
            }
            expected[view_table(agent_id, label)] = (agent_id, label, ids)
        if rules.global_statistics:
            ids = {memory_id for levels in live.get(agent_id, {}).values() for memory_id in levels.values()}
            expected[fts_table(agent_id, None)] = (agent_id, None, ids)
    tables = {name: sql or "" for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")}
    indexes = {name for name, sql in tables.items() if sql.upper().startswith("CREATE VIRTUAL")}
    for name in sorted(tables):
        owner = name.rsplit("_", 1)[0] if name.rsplit("_", 1)[-1] in _SHADOWS else None
        if name in indexes or name.startswith("fts_") or owner in indexes:
            # An index's shadow tables are reported with it; a shadow table whose index is gone, on its own.
            shadow_of_stray = owner in indexes and owner not in expected and name not in indexes
            if name not in expected and (owner not in expected or name in indexes) and not shadow_of_stray:
                problems.append(f"table {name}: not an index this store keeps (renamed or made up)")
    for table, (_, level, ids) in sorted(expected.items()):
        shown = "every level" if level is None else str(level)
        if table not in indexes:
            problems.append(f"{table}: the index of {shown} is missing")
            continue
        try:
            held = {row[0] for row in conn.execute(f'SELECT id FROM "{table}_docsize"')}
        except sqlite3.DatabaseError as error:
            problems.append(f"{table}: cannot be read ({error})")
            continue
        if held != ids:
            problems.append(
                f"{table}: holds {len(held - ids)} versions outside the view of {shown} and lacks {len(ids - held)} "
                "of it (edited: a search there could read up)"
            )
        elif analyzer is not None and not _same_terms(conn, table, analyzer, ids):
            problems.append(f"{table}: its terms are not those of the versions it indexes (edited)")
    stray = conn.execute(
        "SELECT COUNT(*) FROM vectors v LEFT JOIN memories m ON m.id = v.memory_id "
        "WHERE m.id IS NULL OR m.purged_at IS NOT NULL"
    ).fetchone()[0]
    if stray:
        problems.append(f"vectors: {stray} rows belong to no version, or to a purged one")
    return problems


def _same_terms(conn: sqlite3.Connection, table: str, analyzer: Analyzer, ids: set[int]) -> bool:
    """Whether index ``table`` holds exactly the terms (and their places) of versions ``ids``: compared, term by
    term, with an index rebuilt from them in the connection's temporary schema."""
    columns = indexed_columns(analyzer)
    tokenize = "'" + analyzer.tokenize.replace("'", "''") + "'"
    rebuilt = "memlab_verify_index"
    conn.execute(f"DROP TABLE IF EXISTS temp.{rebuilt}")
    conn.execute(
        f"CREATE VIRTUAL TABLE temp.{rebuilt} USING fts5({', '.join(columns)}, content='', tokenize={tokenize})"
    )
    try:
        conn.execute(
            f"INSERT INTO temp.{rebuilt} (rowid, {', '.join(columns)}) SELECT id, {', '.join(columns)} "
            "FROM main.memories WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
            (json.dumps(sorted(ids)),),
        )
        conn.execute(f'CREATE VIRTUAL TABLE temp.{rebuilt}_held USING fts5vocab(main, "{table}", instance)')
        conn.execute(f"CREATE VIRTUAL TABLE temp.{rebuilt}_rebuilt USING fts5vocab(temp, {rebuilt}, instance)")
        try:
            order = "ORDER BY term, doc, col, offset"
            held = conn.execute(f"SELECT term, doc, col, offset FROM temp.{rebuilt}_held {order}")
            again = conn.execute(f"SELECT term, doc, col, offset FROM temp.{rebuilt}_rebuilt {order}")
            try:
                return all(a == b for a, b in itertools.zip_longest(held, again))
            finally:
                held.close()  # a statement still running would lock the tables dropped below
                again.close()
        except sqlite3.DatabaseError:
            return False
        finally:
            conn.execute(f"DROP TABLE temp.{rebuilt}_held")
            conn.execute(f"DROP TABLE temp.{rebuilt}_rebuilt")
    finally:
        conn.execute(f"DROP TABLE temp.{rebuilt}")


def combine(results: list[Verification]) -> Verification:
    """One verification of several files (a store folder's agents), problems in file order."""
    return Verification(
        audit_rows=sum(result.audit_rows for result in results),
        versions=sum(result.versions for result in results),
        head=chain.audit_hash("", tuple(result.head for result in results)) if results else "",
        problems=tuple(problem for result in results for problem in result.problems),
    )


def verify_store_file(path: Path, rules: ViewRules, *, analyzer: Analyzer | None = None) -> Verification:
    """Verify the single-file store at ``path`` without opening it as a store (read-only).

    Raises:
        SchemaError: ``path`` holds no memlab store file.
    """
    if not path.is_file():
        raise SchemaError(f"{path} does not exist")
    try:
        with read_only(path) as conn:
            meta = dict(conn.execute("SELECT name, value FROM memlab_meta").fetchall())
            if "chain_genesis" not in meta:
                version = meta.get("schema_version", "")
                if version.isdigit() and int(version) < SCHEMA_VERSION:
                    raise SchemaError(f"{path}: {earlier_schema(int(version))}")
                raise SchemaError(f"{path} has no audit chain (schema version {version!r})")
            return verify_file(
                conn,
                meta["chain_genesis"],
                rules,
                label=str(path),
                analyzer=analyzer,
            )
    except sqlite3.DatabaseError as error:
        raise SchemaError(f"cannot read {path} as a memlab store: {error}") from error


def read_only(path) -> contextlib.closing[sqlite3.Connection]:
    """A read-only connection to the SQLite file at ``path``, closed on leaving the ``with`` block."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    return contextlib.closing(conn)


def _plain(stored: int | str) -> bool:
    """Whether a stored classification has no categories (a level, or an untrusted level): in the levels' views."""
    if type(stored) is int:
        return True
    try:
        return not read_label(stored).categories
    except (ValueError, InvalidArgument):
        return False


def _has_column(conn: sqlite3.Connection, table: str, column: str) -> bool:
    return conn.execute("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", (table, column)).fetchone() is not None
