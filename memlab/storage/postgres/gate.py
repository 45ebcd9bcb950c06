"""The gate: the signed claim, the row-level security policies, the grants and the trigger of the session role.

Every session call runs as a role that owns nothing (``memlab_session`` by default) in a short transaction
that first sets a claim, ``memlab.claim = agent|taint|txid|mac``: an HMAC-SHA256 with a key only the owner
can read (``claim_key``), over the agent, the taint and the transaction's own id. Row-level security policies
on every table it can read or write compare with ``claimed_agent()`` and ``claimed_taint()``, computed once
per statement by a ``SECURITY DEFINER`` function that returns them only when the mac verifies in this very
transaction: settings the role sets itself, forged claims and claims replayed from another transaction admit
nothing. The policies let it read that agent's memories at a classification <= that taint and that agent's
chain head at exactly that taint; every row it writes is at exactly that taint: versions and their marks at
that classification, that chain's head, audit rows and sessions of that agent at that taint, and taint events
that raise to that taint in a session of that agent (the session checked by its agent only, at any taint).
The role may INSERT audit rows but never read, update, delete or truncate them, may not read the table-wide
``id`` (nor ``ctid`` or ``xmin``), and cannot undo a deletion (trigger ``deletions_are_final``). The SQL
memlab runs also filters by agent and level, so the policies are a second gate that a buggy query cannot pass.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from memlab.levels import Level

# What the session role may read of a version: everything but the table-wide id (which counts every agent's and
# every level's saves). A column grant also keeps it from the system columns (ctid, xmin), which move alike.
_READABLE = (
    "agent, key, content, tags, source, occurred_at, occurred_words, classification, version, saved_at, saved_by, "
    "deleted_at, deleted_by, salt, commitment, purged_at, current, document"
)
_WRITABLE = (
    "agent, key, content, tags, source, occurred_at, occurred_words, classification, version, saved_at, saved_by, "
    "salt, commitment, current"
)


# The claim a session transaction sets: agent|taint|transaction id|mac, the mac an HMAC-SHA256 (the owner's key)
# of what precedes it. The key, at the block size of SHA-256, is kept as its two pads, so that SQL's sha256()
# computes the same HMAC as Python's hmac module.


def claim(key: bytes, agent: str, taint: Level, txid: str) -> str:
    """The claim that admits ``agent`` at ``taint`` in transaction ``txid`` (what ``claimed()`` verifies)."""
    message = f"{agent}|{int(taint)}|{txid}"
    return f"{message}|{hmac.new(key, message.encode('utf-8'), hashlib.sha256).hexdigest()}"


def _new_key(cursor) -> None:
    """A fresh claim key, replacing any: claims made with the old one admit nothing from now on."""
    key = secrets.token_bytes(64)
    cursor.execute("DELETE FROM claim_key")
    cursor.execute(
        "INSERT INTO claim_key (key, inner_pad, outer_pad) VALUES (%s, %s, %s)",
        (key, bytes(b ^ 0x36 for b in key), bytes(b ^ 0x5C for b in key)),
    )


def _gate_sql(schema: str, role: str) -> list[str]:
    """The claim, the row-level security policies, the grants and the trigger that gate the session role.

    Every policy compares with ``claimed_agent()`` and ``claimed_taint()`` in a sub-select, so each is computed
    once per statement (an InitPlan), not once per row: a claim that does not verify names no agent and no taint,
    and admits nothing."""
    agent_is = f"agent = (SELECT {schema}.claimed_agent())"
    taint = f"(SELECT {schema}.claimed_taint())"
    level_name = f"(ARRAY{[level.name for level in Level]})[{taint} + 1]"
    definer = "SECURITY DEFINER SET search_path = pg_catalog, pg_temp"
    functions = ("claimed()", "claimed_agent()", "claimed_taint()", "matches(tsquery)", "open_chain()")
    return [
        # Readable by the owner alone: the session role can neither read it nor call anything that returns it.
        "CREATE TABLE claim_key (key bytea NOT NULL, inner_pad bytea NOT NULL, outer_pad bytea NOT NULL)",
        # String functions, not a regular expression: PostgreSQL's costs ~0.1 ms a match, per evaluation.
        f"CREATE FUNCTION claimed() RETURNS text[] LANGUAGE plpgsql STABLE {definer} AS $$ DECLARE "
        "claim text := current_setting('memlab.claim', true); txid text := pg_current_xact_id_if_assigned()::text; "
        "signed text; named text; pads record; BEGIN "
        "IF claim IS NULL OR txid IS NULL OR length(claim) < 69 + length(txid) THEN RETURN NULL; END IF; "
        "signed := left(claim, -65); named := left(signed, -(length(txid) + 1)); "
        "IF substr(claim, length(claim) - 64, 1) <> '|' OR right(signed, length(txid) + 1) <> '|' || txid "
        "OR substr(named, length(named) - 1, 1) <> '|' OR right(named, 1) NOT IN ('0', '1', '2', '3') "
        "THEN RETURN NULL; END IF; "
        f"SELECT inner_pad, outer_pad INTO pads FROM {schema}.claim_key; "
        "IF encode(sha256(pads.outer_pad || sha256(pads.inner_pad || convert_to(signed, 'UTF8'))), 'hex') "
        "<> right(claim, 64) THEN RETURN NULL; END IF; "
        "RETURN ARRAY[left(named, -2), right(named, 1)]; END $$",
        f"CREATE FUNCTION claimed_agent() RETURNS text LANGUAGE sql STABLE AS $$ SELECT ({schema}.claimed())[1] $$",
        "CREATE FUNCTION claimed_taint() RETURNS smallint LANGUAGE sql STABLE AS "
        f"$$ SELECT ({schema}.claimed())[2]::smallint $$",
        # Sessions read one agent's versions at or below the claimed taint, and write versions and their marks at
        # exactly it; every other table a session writes is gated by the agent and the taint too, below.
        "ALTER TABLE memories ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY memories_read ON memories FOR SELECT TO {role} "
        f"USING ({agent_is} AND classification <= {taint})",
        f"CREATE POLICY memories_write ON memories FOR INSERT TO {role} "
        f"WITH CHECK ({agent_is} AND classification = {taint})",
        f"CREATE POLICY memories_mark ON memories FOR UPDATE TO {role} USING ({agent_is} AND classification = {taint}) "
        f"WITH CHECK ({agent_is} AND classification = {taint})",
        # A set deletion is final, for every role: a purge only ever sets one that is not set yet.
        "CREATE FUNCTION deletions_are_final() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp "
        "AS $$ BEGIN IF NEW.deleted_at IS DISTINCT FROM OLD.deleted_at "
        "OR NEW.deleted_by IS DISTINCT FROM OLD.deleted_by THEN "
        "RAISE EXCEPTION 'a deletion is final: version % of key % stays deleted', OLD.version, OLD.key "
        "USING ERRCODE = 'insufficient_privilege'; END IF; RETURN NEW; END $$",
        "CREATE TRIGGER deletions_are_final BEFORE UPDATE OF deleted_at, deleted_by ON memories FOR EACH ROW "
        "WHEN (OLD.deleted_at IS NOT NULL) EXECUTE FUNCTION deletions_are_final()",
        "ALTER TABLE chain_heads ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY chain_heads_read ON chain_heads FOR SELECT TO {role} USING ({agent_is} AND taint = {taint})",
        f"CREATE POLICY chain_heads_move ON chain_heads FOR UPDATE TO {role} USING ({agent_is} AND taint = {taint}) "
        f"WITH CHECK ({agent_is} AND taint = {taint})",
        # A session's first call at a taint opens its chain; the genesis is the database's random, not the session's.
        f"CREATE FUNCTION open_chain() RETURNS void LANGUAGE sql VOLATILE {definer} AS $$ "
        f"INSERT INTO {schema}.chain_heads (agent, taint, genesis, seq, hash) SELECT a, t, g, 0, g FROM (SELECT "
        f"{schema}.claimed_agent() AS a, {schema}.claimed_taint() AS t, encode(sha256(convert_to("
        "gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex') AS g) AS head WHERE a IS NOT NULL "
        "ON CONFLICT (agent, taint) DO NOTHING $$",
        "ALTER TABLE audit ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY audit_append ON audit FOR INSERT TO {role} WITH CHECK ({agent_is} AND taint = {level_name})",
        "ALTER TABLE sessions ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY sessions_add ON sessions FOR INSERT TO {role} WITH CHECK ({agent_is} AND taint = {level_name})",
        # Whether ``id`` is a session of the claimed agent (the session role cannot read the sessions).
        f"CREATE FUNCTION is_claimed_session(id text) RETURNS boolean LANGUAGE sql STABLE {definer} AS $$ "
        f"SELECT EXISTS (SELECT 1 FROM {schema}.sessions s WHERE s.id = $1 AND s.agent = {schema}.claimed_agent()) $$",
        # A taint event names no agent: its session must be one of the claimed agent's (at any taint, as an
        # escalation starts below it), and it must raise to exactly the claimed taint.
        "ALTER TABLE taint_events ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY taint_events_add ON taint_events FOR INSERT TO {role} "
        f"WITH CHECK ({schema}.is_claimed_session(session_id) AND to_level = {level_name})",
        f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM PUBLIC",
        f"GRANT USAGE ON SCHEMA {schema} TO {role}",
        f"GRANT SELECT ON memlab_meta TO {role}",
        f"GRANT SELECT ({_READABLE}), INSERT ({_WRITABLE}) ON memories TO {role}",
        f"GRANT UPDATE (current, deleted_at, deleted_by) ON memories TO {role}",
        f"GRANT SELECT (agent, taint, seq, hash), UPDATE (seq, hash) ON chain_heads TO {role}",
        f"GRANT INSERT ON audit, sessions, taint_events TO {role}",
        # Under row-level security PostgreSQL applies a query's own conditions only after the policy's unless
        # they are LEAKPROOF, and @@ is not: a session's search could not use the GIN index and would match
        # every row of its agent. This function, run as the owner, uses the index under the policy's very
        # condition and returns the matches' keys, levels and versions, numbered in save order; the rows
        # themselves are still read, and gated, as the session. ROWS 10: so the planner joins them to the table
        # through its index, not by scanning every row (4x slower at 10k).
        "CREATE FUNCTION matches(q tsquery) RETURNS TABLE (match_key text, match_level smallint, match_version "
        f"integer, saved_order bigint) LANGUAGE sql STABLE ROWS 10 {definer} AS $$ SELECT key, classification, "
        f"version, row_number() OVER (ORDER BY id) FROM {schema}.memories WHERE document @@ q AND current "
        f"AND deleted_at IS NULL AND {agent_is} AND classification <= {taint} $$",
        *(f"REVOKE ALL ON FUNCTION {function} FROM PUBLIC" for function in (*functions, "is_claimed_session(text)")),
        *(f"GRANT EXECUTE ON FUNCTION {function} TO {role}" for function in (*functions, "is_claimed_session(text)")),
    ]
