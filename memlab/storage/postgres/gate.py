"""The gate: the signed claim, the row-level security policies, the grants and the trigger of the session role.

Every session call runs as a role that owns nothing (``memlab_session`` by default) in a short transaction
that first sets a claim, ``memlab.claim = agent|taint|txid|mac``: an HMAC-SHA256 with a key only the owner
can read (``claim_key``), over the agent, the taint and the transaction's own id. The taint is a label
(``memlab.labels``): its level's number, then ``:`` and its sorted categories when it has any
(``2:hr,legal``); a label without categories is claimed as its level's number alone (``2``). Row-level security
policies on every table it can read or write compare with ``claimed_agent()``, ``claimed_taint()`` (the
level), ``claimed_categories()`` and ``claimed_label()`` (the label as the audit writes it), computed once
per statement by a ``SECURITY DEFINER`` function that returns them only when the mac verifies in this very
transaction: settings the role sets itself, forged claims and claims replayed from another transaction admit
nothing. The policies let it read that agent's memories at a classification <= that level whose categories
are within the claim's, and that agent's chain head at exactly that label; every row it writes is at exactly
that label: versions and their marks at that classification and those categories, that chain's head, audit
rows and sessions of that agent at that label, and taint events that raise to that label in a session of
that agent (the session checked by its agent only, at any taint).
The role may INSERT audit rows but never read, update, delete or truncate them, may not read the table-wide
``id`` (nor ``ctid`` or ``xmin``), and cannot undo a deletion (trigger ``deletions_are_final``). The SQL
memlab runs also filters by agent and level, so the policies are a second gate that a buggy query cannot pass.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from memlab.labels import Label
from memlab.levels import Level

# What the session role may read of a version: everything but the table-wide id (which counts every agent's and
# every level's saves). A column grant also keeps it from the system columns (ctid, xmin), which move alike.
READABLE = (
    "agent, key, content, tags, source, occurred_at, occurred_words, classification, categories, version, saved_at, "
    "saved_by, deleted_at, deleted_by, salt, commitment, purged_at, current, document"
)
_WRITABLE = (
    "agent, key, content, tags, source, occurred_at, occurred_words, classification, categories, version, saved_at, "
    "saved_by, salt, commitment, current"
)


# The claim a session transaction sets: agent|taint|transaction id|mac, the mac an HMAC-SHA256 (the owner's key)
# of what precedes it. The key, at the block size of SHA-256, is kept as its two pads, so that SQL's sha256()
# computes the same HMAC as Python's hmac module.


def claim(key: bytes, agent: str, taint: Label, txid: str) -> str:
    """The claim that admits ``agent`` at ``taint`` in transaction ``txid`` (what ``claimed()`` verifies)."""
    label = Label.parse(taint)
    categories = f":{','.join(sorted(label.categories))}" if label.categories else ""
    message = f"{agent}|{int(label.level)}{categories}|{txid}"
    return f"{message}|{hmac.new(key, message.encode('utf-8'), hashlib.sha256).hexdigest()}"


CLAIM_FUNCTIONS = ("claimed()", "claimed_agent()", "claimed_taint()", "claimed_categories()", "claimed_label()")
"""The functions that read the claim, which every policy calls."""


def new_key(cursor) -> None:
    """A fresh claim key, replacing any: claims made with the old one admit nothing from now on."""
    key = secrets.token_bytes(64)
    cursor.execute("DELETE FROM claim_key")
    cursor.execute(
        "INSERT INTO claim_key (key, inner_pad, outer_pad) VALUES (%s, %s, %s)",
        (key, bytes(b ^ 0x36 for b in key), bytes(b ^ 0x5C for b in key)),
    )


# The label as the audit, the sessions and the taint events write it, from a verified claim ``c``
# (``claimed()``'s array): ``CONFIDENTIAL`` or ``CONFIDENTIAL:hr``.
_LABEL_SQL = (
    f"(ARRAY{[level.name for level in Level]})[c[2]::int + 1] || CASE WHEN c[3] = '' THEN '' ELSE ':' || c[3] END"
)


def equality_policies(schema: str, role: str) -> list[tuple[str, str, str]]:
    """The policies that admit a row only at exactly the claim (table, name, the rest of its CREATE POLICY):
    versions written and marked at the claimed label, the claimed chain's head, audit rows and sessions of the
    claimed agent at that label.

    Each compares the row's columns with the claim's as one row against one sub-select, whose FROM calls
    ``claimed()`` once: the claim is verified once for the comparison, where a sub-select per column
    (``claimed_agent()``, ``claimed_taint()``, ...) verified it once per column (a move of the head, USING and
    WITH CHECK, verified it six times). A claim that does not verify is NULL in every column, and a row
    compared with NULLs is not admitted."""
    claim = f"FROM {schema}.claimed() AS claim(c)"
    named = f"(SELECT c[1], c[2]::smallint, string_to_array(c[3], ',') {claim})"
    at_label = f"(agent, classification, categories) = {named}"
    at_chain = f"(agent, taint, categories) = {named}"
    as_written = f"(agent, taint) = (SELECT c[1], {_LABEL_SQL} {claim})"
    return [
        ("memories", "memories_write", f"FOR INSERT TO {role} WITH CHECK ({at_label})"),
        ("memories", "memories_mark", f"FOR UPDATE TO {role} USING ({at_label}) WITH CHECK ({at_label})"),
        ("chain_heads", "chain_heads_read", f"FOR SELECT TO {role} USING ({at_chain})"),
        ("chain_heads", "chain_heads_move", f"FOR UPDATE TO {role} USING ({at_chain}) WITH CHECK ({at_chain})"),
        ("audit", "audit_append", f"FOR INSERT TO {role} WITH CHECK ({as_written})"),
        ("sessions", "sessions_add", f"FOR INSERT TO {role} WITH CHECK ({as_written})"),
    ]


def gate_sql(schema: str, role: str) -> list[str]:
    """The claim, the row-level security policies, the grants and the trigger that gate the session role.

    Every policy compares with the claim in a sub-select (``claimed_agent()``, ``claimed_taint()``, ... or, where
    the row must equal it, one row of them: ``equality_policies``), so each is computed once per statement (an
    InitPlan), not once per row: a claim that does not verify names no agent, no taint and no categories, and
    admits nothing."""
    agent_is = f"agent = (SELECT {schema}.claimed_agent())"
    taint = f"(SELECT {schema}.claimed_taint())"
    categories = f"(SELECT {schema}.claimed_categories())"
    label = f"(SELECT {schema}.claimed_label())"
    # Readable: at or below the claimed level, with no category the claim lacks; written: at exactly the label.
    readable = f"{agent_is} AND classification <= {taint} AND categories <@ {categories}"
    definer = "SECURITY DEFINER SET search_path = pg_catalog, pg_temp"
    functions = (*CLAIM_FUNCTIONS, "matches(tsquery)", "open_chain()", "save_order(text[])")
    return [
        # Readable by the owner alone: the session role can neither read it nor call anything that returns it.
        "CREATE TABLE claim_key (key bytea NOT NULL, inner_pad bytea NOT NULL, outer_pad bytea NOT NULL)",
        # String functions, not a regular expression: PostgreSQL's costs ~0.1 ms a match, per evaluation.
        f"CREATE FUNCTION claimed() RETURNS text[] LANGUAGE plpgsql STABLE {definer} AS $$ DECLARE "
        "claim text := current_setting('memlab.claim', true); txid text := pg_current_xact_id_if_assigned()::text; "
        "signed text; named text; taint text; pads record; BEGIN "
        "IF claim IS NULL OR txid IS NULL OR length(claim) < 69 + length(txid) THEN RETURN NULL; END IF; "
        "signed := left(claim, -65); named := left(signed, -(length(txid) + 1)); "
        "IF substr(claim, length(claim) - 64, 1) <> '|' OR right(signed, length(txid) + 1) <> '|' || txid "
        "OR strpos(named, '|') = 0 THEN RETURN NULL; END IF; "
        # The taint follows the agent's last '|' (categories hold none): a level digit, then ':' and categories.
        "taint := right(named, strpos(reverse(named), '|') - 1); "
        "IF left(taint, 1) NOT IN ('0', '1', '2', '3') "
        "OR (length(taint) > 1 AND (substr(taint, 2, 1) <> ':' OR length(taint) = 2)) THEN RETURN NULL; END IF; "
        f"SELECT inner_pad, outer_pad INTO pads FROM {schema}.claim_key; "
        "IF encode(sha256(pads.outer_pad || sha256(pads.inner_pad || convert_to(signed, 'UTF8'))), 'hex') "
        "<> right(claim, 64) THEN RETURN NULL; END IF; "
        "RETURN ARRAY[left(named, -(length(taint) + 1)), left(taint, 1), substr(taint, 3)]; END $$",
        f"CREATE FUNCTION claimed_agent() RETURNS text LANGUAGE sql STABLE AS $$ SELECT ({schema}.claimed())[1] $$",
        "CREATE FUNCTION claimed_taint() RETURNS smallint LANGUAGE sql STABLE AS "
        f"$$ SELECT ({schema}.claimed())[2]::smallint $$",
        "CREATE FUNCTION claimed_categories() RETURNS text[] LANGUAGE sql STABLE AS "
        f"$$ SELECT string_to_array(({schema}.claimed())[3], ',') $$",
        # The label as the audit, the sessions and the taint events write it: ``CONFIDENTIAL`` or ``CONFIDENTIAL:hr``.
        "CREATE FUNCTION claimed_label() RETURNS text LANGUAGE sql STABLE AS "
        f"$$ SELECT {_LABEL_SQL} FROM (SELECT {schema}.claimed() AS c) AS claim $$",
        # Sessions read one agent's versions the claimed label may read, and write versions and their marks at
        # exactly it; every other table a session writes is gated by the agent and the label too, below.
        "ALTER TABLE memories ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY memories_read ON memories FOR SELECT TO {role} USING ({readable})",
        *(f"CREATE POLICY {name} ON {table} {rule}" for table, name, rule in equality_policies(schema, role)),
        # A set deletion is final, for every role: a purge only ever sets one that is not set yet.
        "CREATE FUNCTION deletions_are_final() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp "
        "AS $$ BEGIN IF NEW.deleted_at IS DISTINCT FROM OLD.deleted_at "
        "OR NEW.deleted_by IS DISTINCT FROM OLD.deleted_by THEN "
        "RAISE EXCEPTION 'a deletion is final: version % of key % stays deleted', OLD.version, OLD.key "
        "USING ERRCODE = 'insufficient_privilege'; END IF; RETURN NEW; END $$",
        "CREATE TRIGGER deletions_are_final BEFORE UPDATE OF deleted_at, deleted_by ON memories FOR EACH ROW "
        "WHEN (OLD.deleted_at IS NOT NULL) EXECUTE FUNCTION deletions_are_final()",
        "ALTER TABLE chain_heads ENABLE ROW LEVEL SECURITY",
        # A session's first call at a label opens its chain; the genesis is the database's random, not the session's.
        f"CREATE FUNCTION open_chain() RETURNS void LANGUAGE sql VOLATILE {definer} AS $$ "
        f"INSERT INTO {schema}.chain_heads (agent, taint, categories, genesis, seq, hash) SELECT a, t, c, g, 0, g "
        f"FROM (SELECT {schema}.claimed_agent() AS a, {schema}.claimed_taint() AS t, "
        f"{schema}.claimed_categories() AS c, encode(sha256(convert_to("
        "gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex') AS g) AS head WHERE a IS NOT NULL "
        "ON CONFLICT (agent, taint, categories) DO NOTHING $$",
        "ALTER TABLE audit ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE sessions ENABLE ROW LEVEL SECURITY",
        # Whether ``id`` is a session of the claimed agent (the session role cannot read the sessions).
        f"CREATE FUNCTION is_claimed_session(id text) RETURNS boolean LANGUAGE sql STABLE {definer} AS $$ "
        f"SELECT EXISTS (SELECT 1 FROM {schema}.sessions s WHERE s.id = $1 AND s.agent = {schema}.claimed_agent()) $$",
        # A taint event names no agent: its session must be one of the claimed agent's (at any taint, as an
        # escalation starts below it), and it must raise to exactly the claimed taint.
        "ALTER TABLE taint_events ENABLE ROW LEVEL SECURITY",
        f"CREATE POLICY taint_events_add ON taint_events FOR INSERT TO {role} "
        f"WITH CHECK ({schema}.is_claimed_session(session_id) AND to_level = {label})",
        f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM PUBLIC",
        f"GRANT USAGE ON SCHEMA {schema} TO {role}",
        f"GRANT SELECT ON memlab_meta TO {role}",
        f"GRANT SELECT ({READABLE}), INSERT ({_WRITABLE}) ON memories TO {role}",
        f"GRANT UPDATE (current, deleted_at, deleted_by) ON memories TO {role}",
        f"GRANT SELECT (agent, taint, categories, seq, hash), UPDATE (seq, hash) ON chain_heads TO {role}",
        f"GRANT INSERT ON audit, sessions, taint_events TO {role}",
        # Under row-level security PostgreSQL applies a query's own conditions only after the policy's unless
        # they are LEAKPROOF, and @@ is not: a session's search could not use the GIN index and would match
        # every row of its agent. This function, run as the owner, uses the index under the policy's very
        # condition and returns the matches' keys, labels and versions, numbered in save order; the rows
        # themselves are still read, and gated, as the session. ROWS 10: so the planner joins them to the table
        # through its index, not by scanning every row (4x slower at 10k).
        "CREATE FUNCTION matches(q tsquery) RETURNS TABLE (match_key text, match_level smallint, match_categories "
        f"text[], match_version integer, saved_order bigint) LANGUAGE sql STABLE ROWS 10 {definer} AS $$ SELECT key, "
        f"classification, categories, version, row_number() OVER (ORDER BY id) FROM {schema}.memories "
        f"WHERE document @@ q AND current AND deleted_at IS NULL AND {readable} $$",
        # Which of several maximal versions was saved last (shadowing ``newest``): the readable live versions of
        # ``keys``, numbered in save order. The session cannot read the table-wide id, which counts every label's
        # saves; their order among the versions it may read moves with nothing it may not.
        "CREATE FUNCTION save_order(keys text[]) RETURNS TABLE (order_key text, order_level smallint, "
        f"order_categories text[], order_version integer, saved_order bigint) LANGUAGE sql STABLE ROWS 4 {definer} "
        f"AS $$ SELECT key, classification, categories, version, row_number() OVER (ORDER BY id) "
        f"FROM {schema}.memories WHERE key = ANY(keys) AND current AND deleted_at IS NULL AND {readable} $$",
        *(f"REVOKE ALL ON FUNCTION {function} FROM PUBLIC" for function in (*functions, "is_claimed_session(text)")),
        *(f"GRANT EXECUTE ON FUNCTION {function} TO {role}" for function in (*functions, "is_claimed_session(text)")),
    ]
