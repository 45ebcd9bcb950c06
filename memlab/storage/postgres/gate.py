"""The gate: the signed claim, the row-level security policies, the grants and the trigger of the session role.

Every session call runs as a role that owns nothing (``memlab_session`` by default) in a short transaction
that first sets a claim, ``memlab.claim = agent|taint|txid|mac``: an HMAC-SHA256 with a key only the owner
can read (``claim_key``), over the agent, the taint and the transaction's own id. The taint is a label
(``memlab.labels``): its level's number, then ``:`` and its sorted categories when it has any
(``2:hr,legal``), then, unless the session is trusted and reads every grade, ``@`` and two digits: its
integrity and its floor (``1@01``: untrusted, reading trusted versions only; 0 untrusted, 1 trusted). A label
without categories is claimed as its level's number alone (``2``): trusted, with the floor that reads every
grade. Row-level security policies on every table it can read or write compare with ``claimed_agent()``,
``claimed_taint()`` (the level), ``claimed_categories()``, ``claimed_integrity()``, ``claimed_floor()`` and
``claimed_label()`` (the label as the audit writes it), computed once per statement by a ``SECURITY DEFINER``
function that returns them only when the mac verifies in this very transaction: settings the role sets itself,
forged claims and claims replayed from another transaction admit nothing. The policies let it read that agent's
memories at a classification <= that level whose categories are within the claim's and whose integrity is at
least the floor, and that agent's chain head at exactly that label; every row it writes is at exactly that
label, its integrity included (the stamp is the claim's): versions and their marks at that classification,
those categories and that integrity, that chain's head, audit rows and sessions of that agent at that label
(a session's row with the claimed floor), and taint events that move to that label in a session of that agent
(the session checked by its agent only, at any taint).
The role may INSERT audit rows but never read, update, delete or truncate them, may not read the table-wide
``id`` (nor ``ctid`` or ``xmin``), and cannot undo a deletion (trigger ``deletions_are_final``). The SQL
memlab runs also filters by agent and level, so the policies are a second gate that a buggy query cannot pass.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from memlab.labels import Integrity, Label
from memlab.levels import Level

# What the session role may read of a version: everything but the table-wide id (which counts every agent's and
# every level's saves). A column grant also keeps it from the system columns (ctid, xmin), which move alike.
READABLE = (
    "agent, key, content, tags, source, occurred_at, occurred_words, classification, categories, integrity, "
    "distrust, version, saved_at, saved_by, deleted_at, deleted_by, salt, commitment, purged_at, current, document"
)
_WRITABLE = (
    "agent, key, content, tags, source, occurred_at, occurred_words, classification, categories, integrity, "
    "distrust, version, saved_at, saved_by, salt, commitment, current"
)


# The claim a session transaction sets: agent|taint|transaction id|mac, the mac an HMAC-SHA256 (the owner's key)
# of what precedes it. The key, at the block size of SHA-256, is kept as its two pads, so that SQL's sha256()
# computes the same HMAC as Python's hmac module.


def claim(key: bytes, agent: str, taint: Label, txid: str, floor: Integrity = Integrity.UNTRUSTED) -> str:
    """The claim that admits ``agent`` at ``taint`` (its integrity too), reading versions at least as trusted as
    ``floor``, in transaction ``txid`` (what ``claimed()`` verifies)."""
    label = Label.parse(taint)
    categories = f":{','.join(sorted(label.categories))}" if label.categories else ""
    grades = "" if (label.trusted and floor is Integrity.UNTRUSTED) else f"@{int(label.integrity)}{int(floor)}"
    message = f"{agent}|{int(label.level)}{categories}{grades}|{txid}"
    return f"{message}|{hmac.new(key, message.encode('utf-8'), hashlib.sha256).hexdigest()}"


CLAIM_FUNCTIONS = (
    "claimed()",
    "claimed_agent()",
    "claimed_taint()",
    "claimed_categories()",
    "claimed_integrity()",
    "claimed_floor()",
    "claimed_label()",
)
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
# (``claimed()``'s array): ``CONFIDENTIAL``, ``CONFIDENTIAL:hr`` or ``CONFIDENTIAL:hr@untrusted``.
_LABEL_SQL = (
    f"(ARRAY{[level.name for level in Level]})[c[2]::int + 1] || CASE WHEN c[3] = '' THEN '' ELSE ':' || c[3] END "
    f"|| CASE WHEN c[4] = '1' THEN '' ELSE '@{Integrity.UNTRUSTED}' END"
)


def equality_policies(schema: str, role: str) -> list[tuple[str, str, str]]:
    """The policies that admit a row only at exactly the claim (table, name, the rest of its CREATE POLICY):
    versions written and marked at the claimed label (its integrity too), the claimed chain's head, audit rows and
    sessions of the claimed agent at that label (a session with the claimed floor).

    Each compares the row's columns with the claim's as one row against one sub-select, whose FROM calls
    ``claimed()`` once: the claim is verified once for the comparison, where a sub-select per column
    (``claimed_agent()``, ``claimed_taint()``, ...) verified it once per column (a move of the head, USING and
    WITH CHECK, verified it six times). A claim that does not verify is NULL in every column, and a row
    compared with NULLs is not admitted."""
    claim = f"FROM {schema}.claimed() AS claim(c)"
    named = f"(SELECT c[1], c[2]::smallint, string_to_array(c[3], ','), c[4]::smallint {claim})"
    at_label = f"(agent, classification, categories, integrity) = {named}"
    at_chain = f"(agent, taint, categories, integrity) = {named}"
    as_written = f"(agent, taint) = (SELECT c[1], {_LABEL_SQL} {claim})"
    session_as_written = f"(agent, taint, floor) = (SELECT c[1], {_LABEL_SQL}, c[5]::smallint {claim})"
    return [
        ("memories", "memories_write", f"FOR INSERT TO {role} WITH CHECK ({at_label})"),
        ("memories", "memories_mark", f"FOR UPDATE TO {role} USING ({at_label}) WITH CHECK ({at_label})"),
        ("chain_heads", "chain_heads_read", f"FOR SELECT TO {role} USING ({at_chain})"),
        ("chain_heads", "chain_heads_move", f"FOR UPDATE TO {role} USING ({at_chain}) WITH CHECK ({at_chain})"),
        ("audit", "audit_append", f"FOR INSERT TO {role} WITH CHECK ({as_written})"),
        ("sessions", "sessions_add", f"FOR INSERT TO {role} WITH CHECK ({session_as_written})"),
    ]


def gate_sql(schema: str, role: str) -> list[str]:
    """The claim, the row-level security policies, the grants and the trigger that gate the session role.

    Every policy compares with the claim in a sub-select (``claimed_agent()``, ``claimed_taint()``, ... or, where
    the row must equal it, one row of them: ``equality_policies``), so each is computed once per statement (an
    InitPlan), not once per row: a claim that does not verify names no agent, no taint and no categories, and
    admits nothing."""
    return [
        # Readable by the owner alone: the session role can neither read it nor call anything that returns it.
        "CREATE TABLE claim_key (key bytea NOT NULL, inner_pad bytea NOT NULL, outer_pad bytea NOT NULL)",
        *function_sql(schema),
        "ALTER TABLE memories ENABLE ROW LEVEL SECURITY",
        # A set deletion is final, for every role: a purge only ever sets one that is not set yet.
        "CREATE FUNCTION deletions_are_final() RETURNS trigger LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp "
        "AS $$ BEGIN IF NEW.deleted_at IS DISTINCT FROM OLD.deleted_at "
        "OR NEW.deleted_by IS DISTINCT FROM OLD.deleted_by THEN "
        "RAISE EXCEPTION 'a deletion is final: version % of key % stays deleted', OLD.version, OLD.key "
        "USING ERRCODE = 'insufficient_privilege'; END IF; RETURN NEW; END $$",
        "CREATE TRIGGER deletions_are_final BEFORE UPDATE OF deleted_at, deleted_by ON memories FOR EACH ROW "
        "WHEN (OLD.deleted_at IS NOT NULL) EXECUTE FUNCTION deletions_are_final()",
        "ALTER TABLE chain_heads ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE audit ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE sessions ENABLE ROW LEVEL SECURITY",
        "ALTER TABLE taint_events ENABLE ROW LEVEL SECURITY",
        *(f"CREATE POLICY {name} ON {table} {rule}" for table, name, rule in policies(schema, role)),
        f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM PUBLIC",
        f"GRANT USAGE ON SCHEMA {schema} TO {role}",
        f"GRANT SELECT ON memlab_meta TO {role}",
        *grant_sql(schema, role),
    ]


GATED_FUNCTIONS = (
    *CLAIM_FUNCTIONS,
    "matches(tsquery)",
    "open_chain()",
    "save_order(text[])",
    "is_claimed_session(text)",
)
"""The functions the session role may call (and no other role but the owner)."""


def _readable(schema: str) -> str:
    """SQL: a version the claim may read: its agent's, at or below the claimed level, with no category the claim
    lacks, at least as trusted as the claimed floor."""
    return (
        f"agent = (SELECT {schema}.claimed_agent()) AND classification <= (SELECT {schema}.claimed_taint()) "
        f"AND categories <@ (SELECT {schema}.claimed_categories()) AND integrity >= (SELECT {schema}.claimed_floor())"
    )


def policies(schema: str, role: str) -> list[tuple[str, str, str]]:
    """Every row-level security policy of the session role (table, name, the rest of its CREATE POLICY)."""
    label = f"(SELECT {schema}.claimed_label())"
    return [
        # Sessions read one agent's versions the claimed label may read, and write versions and their marks at
        # exactly it; every other table a session writes is gated by the agent and the label too.
        ("memories", "memories_read", f"FOR SELECT TO {role} USING ({_readable(schema)})"),
        *equality_policies(schema, role),
        # A taint event names no agent: its session must be one of the claimed agent's (at any taint, as an
        # escalation starts below it), and it must move to exactly the claimed taint.
        (
            "taint_events",
            "taint_events_add",
            f"FOR INSERT TO {role} WITH CHECK ({schema}.is_claimed_session(session_id) AND to_level = {label})",
        ),
    ]


def grant_sql(schema: str, role: str) -> list[str]:
    """What the session role may do on memlab's tables and functions (each column named: never the ids)."""
    return [
        f"GRANT SELECT ({READABLE}), INSERT ({_WRITABLE}) ON memories TO {role}",
        f"GRANT UPDATE (current, deleted_at, deleted_by) ON memories TO {role}",
        f"GRANT SELECT (agent, taint, categories, integrity, seq, hash), UPDATE (seq, hash) ON chain_heads TO {role}",
        f"GRANT INSERT ON audit, sessions, taint_events TO {role}",
        *(f"REVOKE ALL ON FUNCTION {function} FROM PUBLIC" for function in GATED_FUNCTIONS),
        *(f"GRANT EXECUTE ON FUNCTION {function} TO {role}" for function in GATED_FUNCTIONS),
    ]


def function_sql(schema: str) -> list[str]:
    """The functions the policies and the session's queries call, made or replaced (an upgrade runs them again)."""
    readable = _readable(schema)
    definer = "SECURITY DEFINER SET search_path = pg_catalog, pg_temp"
    return [
        # String functions, not a regular expression: PostgreSQL's costs ~0.1 ms a match, per evaluation.
        f"CREATE OR REPLACE FUNCTION claimed() RETURNS text[] LANGUAGE plpgsql STABLE {definer} AS $$ DECLARE "
        "claim text := current_setting('memlab.claim', true); txid text := pg_current_xact_id_if_assigned()::text; "
        "signed text; named text; taint text; label text; grades text := '10'; pads record; BEGIN "
        "IF claim IS NULL OR txid IS NULL OR length(claim) < 69 + length(txid) THEN RETURN NULL; END IF; "
        "signed := left(claim, -65); named := left(signed, -(length(txid) + 1)); "
        "IF substr(claim, length(claim) - 64, 1) <> '|' OR right(signed, length(txid) + 1) <> '|' || txid "
        "OR strpos(named, '|') = 0 THEN RETURN NULL; END IF; "
        # The taint follows the agent's last '|' (categories hold none): a level digit, then ':' and categories,
        # then '@' and the integrity and floor digits unless they are trusted and 0 (every grade).
        "taint := right(named, strpos(reverse(named), '|') - 1); label := taint; "
        "IF strpos(taint, '@') > 0 THEN label := left(taint, strpos(taint, '@') - 1); "
        "grades := substr(taint, strpos(taint, '@') + 1); "
        "IF length(grades) <> 2 OR left(grades, 1) NOT IN ('0', '1') OR right(grades, 1) NOT IN ('0', '1') "
        "THEN RETURN NULL; END IF; END IF; "
        "IF left(label, 1) NOT IN ('0', '1', '2', '3') "
        "OR (length(label) > 1 AND (substr(label, 2, 1) <> ':' OR length(label) = 2)) THEN RETURN NULL; END IF; "
        f"SELECT inner_pad, outer_pad INTO pads FROM {schema}.claim_key; "
        "IF encode(sha256(pads.outer_pad || sha256(pads.inner_pad || convert_to(signed, 'UTF8'))), 'hex') "
        "<> right(claim, 64) THEN RETURN NULL; END IF; "
        "RETURN ARRAY[left(named, -(length(taint) + 1)), left(label, 1), substr(label, 3), left(grades, 1), "
        "right(grades, 1)]; END $$",
        "CREATE OR REPLACE FUNCTION claimed_agent() RETURNS text LANGUAGE sql STABLE AS "
        f"$$ SELECT ({schema}.claimed())[1] $$",
        "CREATE OR REPLACE FUNCTION claimed_taint() RETURNS smallint LANGUAGE sql STABLE AS "
        f"$$ SELECT ({schema}.claimed())[2]::smallint $$",
        "CREATE OR REPLACE FUNCTION claimed_categories() RETURNS text[] LANGUAGE sql STABLE AS "
        f"$$ SELECT string_to_array(({schema}.claimed())[3], ',') $$",
        # The session's integrity (what it writes is stamped so) and its floor (the least trusted grade it reads).
        "CREATE OR REPLACE FUNCTION claimed_integrity() RETURNS smallint LANGUAGE sql STABLE AS "
        f"$$ SELECT ({schema}.claimed())[4]::smallint $$",
        "CREATE OR REPLACE FUNCTION claimed_floor() RETURNS smallint LANGUAGE sql STABLE AS "
        f"$$ SELECT ({schema}.claimed())[5]::smallint $$",
        # The label as the audit, the sessions and the taint events write it: ``CONFIDENTIAL:hr@untrusted``.
        "CREATE OR REPLACE FUNCTION claimed_label() RETURNS text LANGUAGE sql STABLE AS "
        f"$$ SELECT {_LABEL_SQL} FROM (SELECT {schema}.claimed() AS c) AS claim $$",
        # A session's first call at a label opens its chain; the genesis is the database's random, not the session's.
        f"CREATE OR REPLACE FUNCTION open_chain() RETURNS void LANGUAGE sql VOLATILE {definer} AS $$ "
        f"INSERT INTO {schema}.chain_heads (agent, taint, categories, integrity, genesis, seq, hash) "
        f"SELECT a, t, c, i, g, 0, g FROM (SELECT {schema}.claimed_agent() AS a, {schema}.claimed_taint() AS t, "
        f"{schema}.claimed_categories() AS c, {schema}.claimed_integrity() AS i, encode(sha256(convert_to("
        "gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')), 'hex') AS g) AS head WHERE a IS NOT NULL "
        "ON CONFLICT (agent, taint, categories, integrity) DO NOTHING $$",
        # Whether ``id`` is a session of the claimed agent (the session role cannot read the sessions).
        f"CREATE OR REPLACE FUNCTION is_claimed_session(id text) RETURNS boolean LANGUAGE sql STABLE {definer} AS $$ "
        f"SELECT EXISTS (SELECT 1 FROM {schema}.sessions s WHERE s.id = $1 AND s.agent = {schema}.claimed_agent()) $$",
        # Under row-level security PostgreSQL applies a query's own conditions only after the policy's unless
        # they are LEAKPROOF, and @@ is not: a session's search could not use the GIN index and would match
        # every row of its agent. This function, run as the owner, uses the index under the policy's very
        # condition and returns the matches' keys, labels and versions, numbered in save order; the rows
        # themselves are still read, and gated, as the session. ROWS 10: so the planner joins them to the table
        # through its index, not by scanning every row (4x slower at 10k).
        "CREATE OR REPLACE FUNCTION matches(q tsquery) RETURNS TABLE (match_key text, match_level smallint, "
        "match_categories text[], match_integrity smallint, match_version integer, saved_order bigint) "
        f"LANGUAGE sql STABLE ROWS 10 {definer} AS $$ SELECT key, classification, categories, integrity, version, "
        f"row_number() OVER (ORDER BY id) FROM {schema}.memories "
        f"WHERE document @@ q AND current AND deleted_at IS NULL AND {readable} $$",
        # Which of several maximal versions was saved last (shadowing ``newest``): the readable live versions of
        # ``keys``, numbered in save order. The session cannot read the table-wide id, which counts every label's
        # saves; their order among the versions it may read moves with nothing it may not.
        "CREATE OR REPLACE FUNCTION save_order(keys text[]) RETURNS TABLE (order_key text, order_level smallint, "
        "order_categories text[], order_integrity smallint, order_version integer, saved_order bigint) "
        f"LANGUAGE sql STABLE ROWS 4 {definer} AS $$ SELECT key, classification, categories, integrity, version, "
        f"row_number() OVER (ORDER BY id) FROM {schema}.memories WHERE key = ANY(keys) AND current "
        f"AND deleted_at IS NULL AND {readable} $$",
    ]
