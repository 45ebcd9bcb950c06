"""The session role against itself: the settings memlab pins on its logins, and what verify reports of the role.

Any role may ``ALTER ROLE <itself> SET <setting>`` and ``ALTER ROLE <itself> PASSWORD``, with no claim, and a
role setting reaches every later login of the role: memlab's too. So memlab's session connections do not
depend on such settings: each setting memlab relies on is given at connect (``options``), which PostgreSQL
applies over the role's own. Settings that only change speed (the planner's) are not pinned; verify reports
every setting the role has, and a password it set itself where the owner may see it (``pg_authid`` is
readable by superusers only).
"""

from __future__ import annotations

import hashlib

# What memlab's session connections rely on, and what the role could otherwise give its logins instead.
PINNED = {
    # A read-only default fails every save; serializable or repeatable read would number a save's versions
    # from a snapshot taken before its key's lock; deferrable only matters with them.
    "default_transaction_read_only": "off",
    "default_transaction_isolation": "read committed",
    "default_transaction_deferrable": "off",
    # A call is short but may wait for a key's lock behind other saves; the pool's connections idle between
    # calls and a call's transaction idles between its round trips: a timeout of the role's would fail them.
    "statement_timeout": "0",
    "lock_timeout": "0",
    "idle_in_transaction_session_timeout": "0",
    "idle_session_timeout": "0",
    # Off, a read under a policy raises instead of filtering; a fuzzy limit returns a random subset of the
    # search index's matches.
    "row_security": "on",
    "gin_fuzzy_search_limit": "0",
    # How text and literals travel: content outside another encoding could not be sent.
    "client_encoding": "UTF8",
    "standard_conforming_strings": "on",
    "array_nulls": "on",
    # On, any error (a taken session id, a serialisation failure to retry) would close the connection.
    "exit_on_error": "off",
    # A library named here is loaded at every login (one that does not exist refuses every login).
    "local_preload_libraries": "",
}


def options(schema: str) -> str:
    """The libpq ``options`` of a session connection: its search path and ``PINNED`` (a space in a value is
    escaped, as libpq reads them)."""
    pinned = {"search_path": schema, **PINNED}
    return " ".join(f"-c {name}={value.replace(' ', chr(92) + ' ')}" for name, value in pinned.items())


_PASSWORD = "session_password"  # the memlab_meta row holding the digest of the role's password verifier


def _verifier_digest(cursor, role: str) -> str | None:
    """A digest of ``role``'s password verifier (``pg_authid.rolpassword``; none is a password too), or None
    when this connection may not read ``pg_authid`` (only superusers may)."""
    readable = cursor.execute("SELECT has_table_privilege('pg_catalog.pg_authid', 'SELECT')").fetchone()[0]
    if not readable:
        return None
    row = cursor.execute("SELECT rolpassword FROM pg_catalog.pg_authid WHERE rolname = %s", (role,)).fetchone()
    # A SCRAM verifier holds a random salt: setting any password, the same one too, makes a new verifier.
    return hashlib.sha256(((row[0] if row else None) or "").encode("utf-8")).hexdigest()


def record_password(cursor, role: str, *, replace: bool) -> None:
    """Record the digest of ``role``'s password verifier in ``memlab_meta``, when the owner may read it; a
    recorded one is kept unless ``replace``. Recorded when memlab first logs in as the role (its password then
    is the one memlab logs in with), and anew when the operator says a new one is theirs."""
    digest = _verifier_digest(cursor, role)
    if digest is None:
        return
    cursor.execute(
        f"INSERT INTO memlab_meta (name, value) VALUES (%s, %s) ON CONFLICT (name) DO "
        f"{'UPDATE SET value = EXCLUDED.value' if replace else 'NOTHING'}",
        (_PASSWORD, digest),
    )


def role_problems(cursor, role: str) -> list[str]:
    """What verify reports of the session role itself: above the gate (a superuser, ``BYPASSRLS``, a member of
    another role), settings given to its logins, and a password other than the one recorded."""
    problems = []
    found = cursor.execute(
        "SELECT r.rolsuper, r.rolbypassrls, ARRAY(SELECT g.rolname FROM pg_auth_members m "
        "JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid ORDER BY g.rolname) "
        "FROM pg_roles r WHERE r.rolname = %s",
        (role,),
    ).fetchone()
    if found is None:
        return [f"the session role {role} does not exist"]
    superuser, bypasses, groups = found
    if superuser:
        problems.append(f"the session role {role} is a superuser: row-level security does not bind it")
    if bypasses:
        problems.append(f"the session role {role} bypasses row-level security (BYPASSRLS)")
    for group in groups:
        problems.append(f"the session role {role} is a member of role {group}: it may SET ROLE to it")
    settings = cursor.execute(
        "SELECT s.setdatabase = 0, unnest(s.setconfig) FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = "
        "s.setrole WHERE r.rolname = %s AND s.setdatabase IN (0, (SELECT oid FROM pg_database WHERE datname = "
        "current_database())) ORDER BY 1 DESC, 2",
        (role,),
    ).fetchall()
    for everywhere, setting in settings:
        where = "every database" if everywhere else "this database"
        problems.append(
            f"the session role {role} has a setting of its own in {where}, {setting} (ALTER ROLE ... SET: memlab "
            f"pins what it relies on, but none is expected; ALTER ROLE {role} RESET ALL removes them)"
        )
    recorded = cursor.execute("SELECT value FROM memlab_meta WHERE name = %s", (_PASSWORD,)).fetchone()
    digest = _verifier_digest(cursor, role)
    if recorded is not None and digest is not None and digest != recorded[0]:
        problems.append(
            f"the password of the session role {role} changed since memlab recorded it (the role may set its own: "
            "if the change is yours, record it with PostgresStorage.trust_session_password())"
        )
    return problems
