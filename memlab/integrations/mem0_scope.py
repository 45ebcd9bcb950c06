"""The scope and filters of a mem0 call (``memlab.integrations.mem0``): the ids checked, mem0 1.x's spelling
(``user_id=`` arguments, ``limit=``) and 2.x's (``filters={"user_id": ...}``, ``top_k=``) merged, and whether a
memory is selected.

Examples:
    >>> where_of({"category": "work"}, user_id="alice", agent_id=None, run_id=None)
    ({'user_id': 'alice'}, {'category': 'work', 'user_id': 'alice'})
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memlab.errors import InvalidArgument
from memlab.integrations import mem0_records as records
from memlab.integrations.mem0_filters import ENTITY_IDS, check, matches
from memlab.records import Memory

__all__ = ["CONFIG_KEYS", "DEFAULT_TOP_K", "config_of", "selected", "scope_of", "where_of", "count_of"]

CONFIG_KEYS = ("store", "taint", "agent", "integrity", "floor", "extractor")
"""What ``Memory.from_config`` takes: ``Memory``'s own arguments."""
DEFAULT_TOP_K = 20
"""How many results ``search`` and ``get_all`` return unless asked (mem0 2.x's ``top_k``)."""


def selected(memory: Memory, where: Mapping[str, Any], today: str | None) -> bool:
    """Whether a memory passes the filter, and has not expired before ``today`` (None: expired ones count)."""
    fields = records.filter_fields(memory)
    if today is not None and fields.get("expiration_date", "9999-12-31") < today:
        return False
    return matches(fields, where)


def scope_of(**ids: Any) -> dict[str, str]:
    """The ids given, checked; at least one."""
    scope = {name: checked for name, value in ids.items() if (checked := records.entity_id(value, name))}
    if not scope:
        raise InvalidArgument("At least one of 'user_id', 'agent_id', or 'run_id' must be provided.")
    return scope


def where_of(filters: Any, **ids: Any) -> tuple[dict[str, str], dict[str, Any]]:
    """The scope and the whole filter of a search or listing: ``filters`` (checked) with the top-level ids of mem0
    1.x merged in; a top-level id that contradicts the filter's is refused."""
    where = {} if filters is None else filters
    check(where)
    where = {name: value for name, value in where.items() if not (name in ENTITY_IDS and value is None)}
    for name, value in ids.items():
        given = records.entity_id(value, name)
        if given is None:
            continue
        if name in where and records.entity_id(where[name], name) != given:
            raise InvalidArgument(f"{name}={given!r} contradicts filters[{name!r}]={where[name]!r}")
        where[name] = given
    scope = {name: records.entity_id(where[name], name) for name in ENTITY_IDS if name in where}
    if not scope:
        raise InvalidArgument(
            "filters must contain at least one of: user_id, agent_id, run_id. Example: filters={'user_id': 'u1'}"
        )
    return scope, where | scope


def count_of(top_k: Any, limit: Any) -> int:
    """How many results: ``top_k`` (mem0 2.x) or ``limit`` (1.x), not both; a whole number at least 0."""
    if top_k is not None and limit is not None:
        raise InvalidArgument("give top_k or limit (mem0 1.x's name for it), not both")
    count = DEFAULT_TOP_K if top_k is None and limit is None else (top_k if limit is None else limit)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise InvalidArgument(f"top_k must be a whole number at least 0, not {count!r}")
    return count


def config_of(config_dict: Any) -> dict[str, Any]:
    """``Memory.from_config``'s dict, checked: only ``CONFIG_KEYS``.

    Raises:
        InvalidArgument: a key memlab does not take (mem0's ``llm``, ``embedder``, ``vector_store``: memlab bundles
            none of them), naming the ones it does.
    """
    if not isinstance(config_dict, Mapping):
        raise InvalidArgument(f"config_dict must be a dict, not {type(config_dict).__name__}")
    unknown = sorted(str(key) for key in config_dict if key not in CONFIG_KEYS)
    if unknown:
        raise InvalidArgument(
            f"unknown configuration {', '.join(unknown)}: memlab's mem0 API takes {', '.join(CONFIG_KEYS)} "
            "(it bundles no LLM, embedder or vector store; pass extractor= for inference)"
        )
    return dict(config_dict)
