"""The exception hierarchy: every error memlab raises derives from ``MemlabError``."""

__all__ = [
    "MemlabError",
    "InvalidArgument",
    "NotFound",
    "Denied",
    "TaintError",
    "SchemaError",
    "IntegrityError",
    "InternalError",
    "PurgeIncomplete",
]


class MemlabError(Exception):
    """Base class of every memlab error; ``code`` is its name in tool results."""

    code = "error"


class InvalidArgument(MemlabError, ValueError):
    """An argument is missing, has the wrong type, or has a value out of range."""

    code = "invalid_argument"


class NotFound(MemlabError, LookupError):
    """No memory with that key is visible to the session (at the level the tool acts on)."""

    code = "not_found"


class Denied(MemlabError):
    """The call was refused: by a pre-tool-call hook, by the policy, or by the database itself (PostgreSQL's
    row-level security)."""

    code = "denied"


class TaintError(MemlabError):
    """A session's taint would go down; taint is a high-water mark."""

    code = "taint_error"


class SchemaError(MemlabError):
    """The database is not a memlab store this version can open safely."""

    code = "schema_error"


class IntegrityError(MemlabError):
    """The store contradicts itself (a view or a search index returned a version outside the session's view): it
    has been damaged or tampered with, so the call fails closed; ``memlab verify`` names the damage."""

    code = "integrity_error"


class InternalError(MemlabError):
    """A call failed inside memlab; it was audited with the error's class name (never its details)."""

    code = "internal_error"


class PurgeIncomplete(MemlabError):
    """Another connection held a purge up past its timeout; run the same purge again once it ends. Mostly the purge
    is done and audited but copies of what it erased remain in the store's files (a read transaction kept SQLite's
    WAL from being checkpointed, or an older snapshot or a lock kept PostgreSQL's table from being rewritten); on
    PostgreSQL a lock held on the key can also stop it before it erases anything, and the message says so."""

    code = "purge_incomplete"
