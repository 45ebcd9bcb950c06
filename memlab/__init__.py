"""memlab: classification-gated persistent memory for LLM agents, as a research toolkit."""

from memlab.errors import (
    Denied,
    IntegrityError,
    InternalError,
    InvalidArgument,
    MemlabError,
    NotFound,
    PurgeIncomplete,
    SchemaError,
    TaintError,
)
from memlab.levels import Level, can_flow_to
from memlab.policy import Policy
from memlab.records import AuditEvent, Hit, Memory, TaintEvent
from memlab.search.ranking import Ranking
from memlab.session import Session
from memlab.storage.verify import Verification
from memlab.store import MemoryStore
from memlab.tools import spine

__version__ = "0.1.0"

__all__ = [
    "MemoryStore",
    "Session",
    "Ranking",
    "Policy",
    "Verification",
    "Level",
    "can_flow_to",
    "Memory",
    "Hit",
    "TaintEvent",
    "AuditEvent",
    "MemlabError",
    "InvalidArgument",
    "NotFound",
    "Denied",
    "TaintError",
    "SchemaError",
    "InternalError",
    "IntegrityError",
    "PurgeIncomplete",
    "spine",
]
