"""The schema of a PostgreSQL store: its tables, its text search configuration and document, and the upgrades.

Search uses a ``tsvector`` (``english`` or ``simple`` configuration: the key at weight A, content and tags B,
the host's ``source`` C and ``occurred_at`` in words D) with a GIN index over live versions, ranked by
``ts_rank``, which reads only the document and the query: no collection statistics, so no score can depend on
rows a session cannot see.
"""

from __future__ import annotations

from memlab.storage.postgres.gate import CLAIM_FUNCTIONS, function_sql, gate_sql, grant_sql, policies

FORMAT = "memlab-postgres"
# 2: the context columns (source, occurred_at and its words); 3: the signed claim; 4: english without stopwords;
# 5: compartments (versions and chains carry categories, the claim and the policies gate on them); 6: the
# policies that admit exactly the claim verify it once per comparison; 7: integrity (versions and chains carry
# it, versions their distrust, sessions their floor; the claim and the policies gate on them)
SCHEMA_VERSION = 7
# A version's categories (``memlab.labels``): a text[] of names, sorted, empty under the four-level order.
CATEGORIES = "categories text[] NOT NULL DEFAULT '{}'"
# A version's or a chain's integrity (``memlab.labels.Integrity``: 1 trusted, 0 untrusted): every row written before
# integrity was trusted.
INTEGRITY = "integrity smallint NOT NULL DEFAULT 1 CHECK (integrity IN (0, 1))"
# What lowered the session that saved a version (``Memory.distrust``), oldest first; empty when trusted.
DISTRUST = "distrust text[] NOT NULL DEFAULT '{}'"
# The least trusted grade a session reads (``Session.floor``): 0, every grade, for every session made before.
FLOOR = "floor smallint NOT NULL DEFAULT 0 CHECK (floor IN (0, 1))"
# Versions are numbered per agent, key and label (its integrity too).
_VERSION_UNIQUE = "memories_version_unique UNIQUE (agent, key, classification, categories, integrity, version)"
# The analyzers PostgreSQL can serve, and the text search configuration each becomes.
TEXT_SEARCH_CONFIGS = {"porter": "english", "snowball": "english", "none": "simple"}
# Rank weights {D, C, B, A}: the key (A) says twice what content and tags (B) say, as bm25's (2, 1, 1); the
# source (C) and the date in words (D) say less.
RANK_WEIGHTS = "{0.1, 0.2, 0.5, 1.0}"
# How a match is scored; each reads only the document and the query. ts_rank_cd (cover density) costs
# 100-500x ts_rank on common words (benchmarks/README.md); "-length" divides by 1 + log(document length).
RANKINGS = {
    "ts_rank": f"ts_rank('{RANK_WEIGHTS}', m.document, q)",
    "ts_rank-length": f"ts_rank('{RANK_WEIGHTS}', m.document, q, 1)",
    "ts_rank_cd": f"ts_rank_cd('{RANK_WEIGHTS}', m.document, q)",
}


# What search reads: key (A), content and tags (B), source (C) and the date in words (D); to_tsvector(NULL) is NULL,
# and so would the whole document be.
_DOCUMENT = "tsvector GENERATED ALWAYS AS ({}) STORED".format(
    " || ".join(
        f"setweight(to_tsvector('{{config}}', {column}), '{weight}')"
        for column, weight in (
            ("key", "A"),
            ("content", "B"),
            ("tags", "B"),
            ("coalesce(source, '')", "C"),
            ("coalesce(occurred_words, '')", "D"),
        )
    )
)
_SEARCH_INDEX = (
    "CREATE INDEX memories_search ON memories USING gin (document) WITH (fastupdate = off) "
    "WHERE current AND deleted_at IS NULL"
)


def indexing_config(schema: str, config: str) -> str:
    """The text search configuration documents and queries go through: ``simple``, or ``english`` without its
    stopword list (memlab drops its own short list from queries, as on SQLite, and keeps a query of stopwords
    only; PostgreSQL's longer list would drop words such as "same" or "who" from documents and queries alike)."""
    return f"{schema}.memlab_english" if config == "english" else "simple"


def _configuration_sql(schema: str, config: str) -> list[str]:
    """The store's own text search configuration, where it needs one (see ``indexing_config``)."""
    if config != "english":
        return []
    return [
        f"CREATE TEXT SEARCH DICTIONARY {schema}.memlab_english_stem (TEMPLATE = snowball, Language = english)",
        f"CREATE TEXT SEARCH CONFIGURATION {schema}.memlab_english (COPY = pg_catalog.english)",
        f"ALTER TEXT SEARCH CONFIGURATION {schema}.memlab_english ALTER MAPPING REPLACE english_stem "
        f"WITH {schema}.memlab_english_stem",
    ]


def upgrade_3_sql(schema: str, config: str, role: str) -> list[str]:
    """Schema 3 to 4 (in the schema's search path): documents indexed without PostgreSQL's stopword list (the
    new column is granted to the session role as the old one was)."""
    return [
        "ALTER TABLE memories DROP COLUMN document",  # and its index with it
        f"DROP TEXT SEARCH CONFIGURATION IF EXISTS {schema}.memlab_english",
        f"DROP TEXT SEARCH DICTIONARY IF EXISTS {schema}.memlab_english_stem",
        *_configuration_sql(schema, config),
        f"ALTER TABLE memories ADD COLUMN document {_DOCUMENT.format(config=indexing_config(schema, config))}",
        _SEARCH_INDEX,
        f"GRANT SELECT (document) ON memories TO {role}",
        "UPDATE memlab_meta SET value = '4' WHERE name = 'schema_version'",
    ]


def upgrade_1_sql(config: str) -> list[str]:
    """Schema 1 to 2 (in the schema's search path): the context columns, and a document that reads them. Versions
    without context commit to content and tags alone, in both, so the chain still verifies."""
    return [
        "ALTER TABLE memories ADD COLUMN IF NOT EXISTS source text, ADD COLUMN IF NOT EXISTS occurred_at text, "
        "ADD COLUMN IF NOT EXISTS occurred_words text",
        "ALTER TABLE memories DROP COLUMN document",  # and its index with it
        f"ALTER TABLE memories ADD COLUMN document {_DOCUMENT.format(config=config)}",
        _SEARCH_INDEX,
        "UPDATE memlab_meta SET value = '2' WHERE name = 'schema_version'",
    ]


def schema_sql(schema: str, role: str, config: str) -> list[str]:
    """The tables, indexes, row-level security policies and grants of a new store."""
    return [
        f"CREATE SCHEMA IF NOT EXISTS {schema}",
        f"SET LOCAL search_path = {schema}",
        *_configuration_sql(schema, config),
        "CREATE TABLE memlab_meta (name text PRIMARY KEY, value text NOT NULL)",
        'CREATE TABLE sessions (id text COLLATE "C" PRIMARY KEY, agent text NOT NULL, taint text NOT NULL, '
        f"created_at text NOT NULL, {FLOOR})",
        "CREATE TABLE taint_events (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, session_id text NOT NULL "
        "REFERENCES sessions (id), at text NOT NULL, from_level text NOT NULL, to_level text NOT NULL, reason text)",
        # Text sorts as SQLite sorts it (by code point), whatever the database's collation.
        'CREATE TABLE memories (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, agent text COLLATE "C" NOT NULL, '
        'key text COLLATE "C" NOT NULL, content text NOT NULL, tags text NOT NULL, '
        # The host's context: the message(s) the memory came from, when it happened (ISO 8601), and that date
        # in words (memlab.search.ranking.when_words), for the index only.
        "source text, occurred_at text, occurred_words text, "
        f"classification smallint NOT NULL CHECK (classification BETWEEN 0 AND 3), {CATEGORIES}, {INTEGRITY}, "
        f"{DISTRUST}, version integer NOT NULL, "
        "saved_at text NOT NULL, saved_by text NOT NULL, deleted_at text, deleted_by text, salt bytea, "
        "commitment text NOT NULL, purged_at text, current boolean NOT NULL, "
        f"document {_DOCUMENT.format(config=indexing_config(schema, config))}, CONSTRAINT {_VERSION_UNIQUE})",
        "CREATE INDEX memories_live ON memories (agent, key, classification) WHERE current AND deleted_at IS NULL",
        _SEARCH_INDEX,
        'CREATE TABLE chain_heads (agent text COLLATE "C" NOT NULL, taint smallint NOT NULL, '
        f"{CATEGORIES}, {INTEGRITY}, genesis text NOT NULL, seq bigint NOT NULL, hash text NOT NULL, "
        "PRIMARY KEY (agent, taint, categories, integrity))",
        'CREATE TABLE audit (id bigint GENERATED ALWAYS AS IDENTITY UNIQUE, agent text COLLATE "C" NOT NULL, '
        "taint text NOT NULL, seq bigint NOT NULL, at text NOT NULL, session_id text NOT NULL, tool text NOT NULL, "
        "key text, query text, "
        "outcome text NOT NULL, "
        "records text NOT NULL, notes text NOT NULL, message text, digest text, hash text NOT NULL, "
        "PRIMARY KEY (agent, taint, seq))",
        *gate_sql(schema, role),
    ]


def _ungate_sql(schema: str, role: str) -> list[str]:
    """Whatever of a gate exists (policies, functions, trigger, key, grants) dropped, to be made anew."""
    policies = {
        "memories": ("memories_read", "memories_write", "memories_mark"),
        "chain_heads": ("chain_heads_own", "chain_heads_read", "chain_heads_move"),
        "audit": ("audit_append",),
        "sessions": ("sessions_add",),
        "taint_events": ("taint_events_add",),
    }
    functions = ("matches(tsquery)", "open_chain()", "save_order(text[])", "is_claimed_session(text)")
    return [
        *(f"DROP POLICY IF EXISTS {name} ON {table}" for table, names in policies.items() for name in names),
        "DROP TRIGGER IF EXISTS deletions_are_final ON memories",
        *(
            f"DROP FUNCTION IF EXISTS {function}"
            for function in (*functions, *CLAIM_FUNCTIONS, "deletions_are_final()")
        ),
        "DROP TABLE IF EXISTS claim_key",
        f"REVOKE ALL ON ALL TABLES IN SCHEMA {schema} FROM {role}",
    ]


def upgrade_2_sql(schema: str, role: str) -> list[str]:
    """Schema 2 to 3 (in the schema's search path): the policies that read settings the session role could set
    itself are dropped with its grants; the signed claim's gate comes with schema 5 (``upgrade_4_sql``), which
    every older store then reaches in the same transaction."""
    return [*_ungate_sql(schema, role), "UPDATE memlab_meta SET value = '3' WHERE name = 'schema_version'"]


def upgrade_4_sql(schema: str, role: str) -> list[str]:
    """Schema 4 to 5 (in the schema's search path): versions and chains gain categories, empty for every row
    there is (a version without categories is exactly as it was, its chain too), and the gate is made anew to
    gate on them; the caller then draws a new claim key."""
    return [
        f"ALTER TABLE memories ADD COLUMN IF NOT EXISTS {CATEGORIES}",
        "ALTER TABLE memories DROP CONSTRAINT IF EXISTS memories_agent_key_classification_version_key",
        "ALTER TABLE memories ADD UNIQUE (agent, key, classification, categories, version)",
        f"ALTER TABLE chain_heads ADD COLUMN IF NOT EXISTS {CATEGORIES}",
        "ALTER TABLE chain_heads DROP CONSTRAINT IF EXISTS chain_heads_pkey",
        "ALTER TABLE chain_heads ADD PRIMARY KEY (agent, taint, categories)",
        *_integrity_sql(),  # the gate made here gates on them (``upgrade_6_sql`` makes it anew again)
        *_ungate_sql(schema, role),
        *gate_sql(schema, role),
        "UPDATE memlab_meta SET value = '5' WHERE name = 'schema_version'",
    ]


def upgrade_5_sql() -> list[str]:
    """Schema 5 to 6: the policies that admit a row only at exactly the claim made anew, each verifying the claim
    once (``gate.equality_policies``): ``upgrade_6_sql``, which every store at 5 reaches in the same transaction,
    makes every policy anew."""
    return ["UPDATE memlab_meta SET value = '6' WHERE name = 'schema_version'"]


def _integrity_sql() -> list[str]:
    """Integrity's columns, added where missing: every version and chain there is trusted, every session reads
    every grade (a store made before integrity reads as wholly trusted), and versions are numbered per label with
    its integrity. Run twice, it changes nothing."""
    return [
        f"ALTER TABLE memories ADD COLUMN IF NOT EXISTS {INTEGRITY}, ADD COLUMN IF NOT EXISTS {DISTRUST}",
        "ALTER TABLE memories DROP CONSTRAINT IF EXISTS memories_agent_key_classification_categories_version_key",
        "ALTER TABLE memories DROP CONSTRAINT IF EXISTS memories_version_unique",
        f"ALTER TABLE memories ADD CONSTRAINT {_VERSION_UNIQUE}",
        f"ALTER TABLE chain_heads ADD COLUMN IF NOT EXISTS {INTEGRITY}",
        "ALTER TABLE chain_heads DROP CONSTRAINT IF EXISTS chain_heads_pkey",
        "ALTER TABLE chain_heads ADD PRIMARY KEY (agent, taint, categories, integrity)",
        f"ALTER TABLE sessions ADD COLUMN IF NOT EXISTS {FLOOR}",
    ]


def upgrade_6_sql(schema: str, role: str) -> list[str]:
    """Schema 6 to 7 (in the schema's search path): integrity's columns (``_integrity_sql``), and the functions,
    policies and grants made anew to gate on them. The claim key is kept: a claim without integrity marks still
    names a trusted session that reads every grade, exactly what every session was."""
    return [
        *_integrity_sql(),
        *(f"DROP POLICY IF EXISTS {name} ON {table}" for table, name, _ in policies(schema, role)),
        # Their rows gained the integrity: a function's result type is not replaced, it is made anew.
        "DROP FUNCTION IF EXISTS matches(tsquery)",
        "DROP FUNCTION IF EXISTS save_order(text[])",
        *function_sql(schema),
        *(f"CREATE POLICY {name} ON {table} {rule}" for table, name, rule in policies(schema, role)),
        *grant_sql(schema, role),
        "UPDATE memlab_meta SET value = '7' WHERE name = 'schema_version'",
    ]
