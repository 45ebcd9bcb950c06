"""Verify a PostgreSQL store as its owner: the protections the database must still enforce, then every chain."""

from __future__ import annotations

from memlab.errors import InvalidArgument, SchemaError
from memlab.storage import chain
from memlab.storage.chain import json_strings
from memlab.storage.label_codes import stored
from memlab.storage.postgres.role import role_problems
from memlab.storage.postgres.sql import AUDIT_COLUMNS, IDENTIFIER, label_from, redact, require_psycopg
from memlab.storage.seal import Audited, check_chain, check_sessions, check_versions
from memlab.storage.verify import Verification, combine


def verify_url(url: str, *, schema: str = "memlab") -> Verification:
    """Verify the store in the database at ``url`` (as its owner) without opening it as a store: read-only,
    whatever analyzer or policy it was built with.

    Raises:
        SchemaError: the database cannot be reached or holds no memlab store.
    """
    psycopg, _ = require_psycopg()
    if not IDENTIFIER.fullmatch(schema):
        raise InvalidArgument(f"{schema!r} is not a plain lower-case PostgreSQL identifier")
    try:
        conn = psycopg.connect(url, autocommit=True, options=f"-c search_path={schema}")
    except psycopg.Error as error:
        raise SchemaError(f"cannot connect to {redact(url)}: {str(error).strip()}") from error
    with conn, conn.transaction(), conn.cursor() as cursor:
        found = cursor.execute("SELECT to_regclass(%s)", (f"{schema}.memlab_meta",)).fetchone()[0]
        if found is None:
            raise SchemaError(f"{redact(url)} holds no memlab store (no table {schema}.memlab_meta)")
        meta = dict(cursor.execute("SELECT name, value FROM memlab_meta").fetchall())
        return verify_database(cursor, schema, meta.get("session_role", ""))


def verify_database(cursor, schema: str, session_role: str) -> Verification:
    """``verify`` on an owner's cursor: protections first, then each agent's chain and versions."""
    problems = _missing_protections(cursor, schema, session_role)
    if problems:
        return Verification(problems=tuple(problems))
    results = []
    heads: dict[str, list[tuple[str, str]]] = {}
    for agent, level, categories, integrity, genesis in cursor.execute(
        "SELECT agent, taint, categories, integrity, genesis FROM chain_heads "
        "ORDER BY agent, taint, categories, integrity DESC"
    ):
        # One chain per agent and label (its integrity too); its audit rows name the label as ``str(label)``.
        heads.setdefault(agent, []).append((str(label_from(level, categories, integrity)), genesis))
    for agent, chains in heads.items():
        found: list[str] = []
        prefix = f"agent {agent!r}: "
        audited = Audited()
        for label, genesis in chains:
            one = check_chain(
                cursor.execute(
                    f"SELECT {AUDIT_COLUMNS} FROM audit WHERE agent = %s AND taint = %s ORDER BY seq",
                    (agent, label),
                ).fetchall(),
                genesis,
                f"{prefix}{label} ",
                found,
            )
            audited.rows += one.rows
            audited.head = chain.audit_hash(audited.head, (one.head,))
            audited.saves |= one.saves
            audited.deletes |= one.deletes
            audited.purges |= one.purges
            audited.auditors |= one.auditors
            for session_id, (agents, taints) in one.sessions.items():
                merged = audited.sessions.setdefault(session_id, (set(), set()))
                merged[0].update(agents)
                merged[1].update(taints)
        strays = cursor.execute(
            "SELECT count(*) FROM audit WHERE agent = %s AND taint <> ALL(%s)",
            (agent, [label for label, _ in chains]),
        ).fetchone()[0]
        if strays:
            found.append(f"{prefix}{strays} audit rows belong to no chain (forged)")
        # A version's label as SQLite stores it (``label_codes.stored``: a level's integer, any other label's text),
        # which its digest covers: its categories and integrity are in its ref, so an edited one is a save no
        # audit row names.
        versions = check_versions(
            (
                # ... purged_at, no categories (they are in the label), the sources of distrust as SQLite stores them
                (*row[:6], stored(label_from(row[6], row[-3], row[-2])), *row[7:-3], None, _sources(row[-1]))
                for row in cursor.execute(
                    "SELECT agent, key, content, tags, source, occurred_at, classification, version, saved_at, "
                    "saved_by, deleted_at, deleted_by, salt, commitment, purged_at, categories, integrity, distrust "
                    "FROM memories WHERE agent = %s ORDER BY id",
                    (agent,),
                ).fetchall()
            ),
            audited,
            prefix,
            found,
        )
        found += check_sessions(
            cursor.execute("SELECT id, agent, taint FROM sessions WHERE agent = %s ORDER BY id", (agent,)).fetchall(),
            cursor.execute(
                "SELECT t.session_id, t.from_level, t.to_level FROM taint_events t "
                "JOIN sessions s ON s.id = t.session_id WHERE s.agent = %s ORDER BY t.id",
                (agent,),
            ).fetchall(),
            audited,
            prefix,
        )
        results.append(Verification(audited.rows, versions, audited.head, tuple(found)))
    orphans = cursor.execute(
        "SELECT DISTINCT agent FROM memories WHERE agent NOT IN (SELECT agent FROM chain_heads) ORDER BY agent"
    ).fetchall()
    stray = [f"agent {agent!r}: versions without an audit chain (forged)" for (agent,) in orphans]
    wrong = cursor.execute(
        "SELECT agent, key, classification, categories, integrity FROM memories m WHERE current <> (version = "
        "(SELECT max(version) FROM memories n WHERE n.agent = m.agent AND n.key = m.key AND n.classification = "
        "m.classification AND n.categories = m.categories AND n.integrity = m.integrity)) "
        "ORDER BY agent, key, classification, categories, integrity"
    ).fetchall()
    stray += [
        f"agent {agent!r}: the current version of key {key!r} at {label_from(level, categories, integrity)} "
        "is not its newest (edited)"
        for agent, key, level, categories, integrity in wrong
    ]
    return combine([*results, Verification(problems=tuple(stray))])


def _missing_protections(cursor, schema: str, role: str) -> list[str]:
    """What the database no longer enforces: RLS off on a table, the session role able to change the audit, above
    the gate or reconfigured by itself (``role.role_problems``)."""
    problems = []
    for table in ("memories", "chain_heads", "audit", "sessions", "taint_events"):
        row = cursor.execute(
            "SELECT relrowsecurity FROM pg_class WHERE oid = to_regclass(%s)", (f"{schema}.{table}",)
        ).fetchone()
        if row is None:
            problems.append(f"table {table} is missing")
        elif not row[0]:
            problems.append(f"row-level security is off on table {table}")
    for privilege in ("SELECT", "UPDATE", "DELETE", "TRUNCATE"):
        if cursor.execute("SELECT has_table_privilege(%s, %s, %s)", (role, f"{schema}.audit", privilege)).fetchone()[0]:
            problems.append(f"the session role {role} may {privilege} the audit")
    granted = cursor.execute(
        "SELECT has_table_privilege(%s, %s, 'SELECT'), has_column_privilege(%s, %s, 'id', 'SELECT'), "
        "has_column_privilege(%s, %s, 'genesis', 'UPDATE'), has_table_privilege(%s, %s, 'INSERT')",
        (role, f"{schema}.claim_key", role, f"{schema}.memories", role, f"{schema}.chain_heads")
        + (role, f"{schema}.chain_heads"),
    ).fetchone()
    for allowed, what in zip(
        granted,
        ("read the claim key", "read the table-wide ids", "write a chain's genesis", "open a chain of its own making"),
        strict=True,
    ):
        if allowed:
            problems.append(f"the session role {role} may {what}")
    problems += role_problems(cursor, role)
    trigger = cursor.execute(
        "SELECT tgenabled FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND tgname = 'deletions_are_final'",
        (f"{schema}.memories",),
    ).fetchone()
    if trigger is None or trigger[0] == "D":
        problems.append("the trigger deletions_are_final is missing or disabled on table memories")
    return problems


def _sources(distrust: list[str] | None) -> str | None:
    """A version's sources of distrust (``text[]``) as its digest covers them (``chain.version_digest``)."""
    return json_strings(distrust) if distrust else None
