"""The PostgreSQL storage provider: the database itself refuses to show a row above the session's taint.

Two roles share the work: the **owner** (the role in the URL) creates the schema and does what only an
auditor does; every session call runs as a role that owns nothing, in a short transaction whose signed claim
(agent, taint, the transaction's id) the row-level security policies check. One idea a module:

- ``connection``: the owner's connection, the session role's pool, opening the schema, transactions;
- ``gate``: the claim, the policies, grants and trigger that gate the session role;
- ``purge``: a purge's erasure and the rewrite of the table, bounded by ``purge_timeout``;
- ``role``: the settings pinned on the session role's logins, and what verify reports of the role;
- ``schema``: the tables, the text search configuration and document, the rankings, the upgrades;
- ``store``: ``PostgresStorage``, the tool operations and the auditor's reads;
- ``sql``: the URL test, the driver, column lists, the locks of a save, rows;
- ``verify``: ``verify_url``, the protections and chains checked as the owner.
"""

from __future__ import annotations

from memlab.storage.postgres.gate import READABLE as READABLE
from memlab.storage.postgres.gate import claim as claim
from memlab.storage.postgres.schema import RANKINGS as RANKINGS
from memlab.storage.postgres.schema import TEXT_SEARCH_CONFIGS
from memlab.storage.postgres.sql import is_postgres_url
from memlab.storage.postgres.store import PostgresStorage
from memlab.storage.postgres.verify import verify_url

__all__ = ["PostgresStorage", "TEXT_SEARCH_CONFIGS", "is_postgres_url", "verify_url"]
# Also here (``as`` re-exports) for the tests and benchmarks that import them: claim, RANKINGS, READABLE.
