"""Named policies: ``strict`` and variants that reproduce real mistakes, in a registry.

Each variant changes one rule of ``memlab.policy.Policy`` and says which failure it models.
``MemoryStore(policy="frozen-taint")`` opens a store under a variant; ``memlab.check`` finds its leaks.

Examples:
    >>> sorted(names())[:3]
    ['existence-oracle', 'frozen-taint', 'global-stats']
"""

from __future__ import annotations

from memlab.levels import Level
from memlab.policy import Policy, Visible
from memlab.registry import Registry

__all__ = ["register", "get", "names", "resolve", "Policy"]

_REGISTRY: Registry[Policy] = Registry("policy", Policy, default="strict", plural="policies")
register, get, names, resolve = _REGISTRY.register, _REGISTRY.get, _REGISTRY.names, _REGISTRY.resolve


class FrozenTaint(Policy):
    name = "frozen-taint"
    models = (
        "the tool layer captures the session's taint when the session is created, so saves after an "
        "escalation are written down (found in the reference implementation)"
    )

    def save_level(self, taint: Level, *, initial_taint: Level) -> Level:
        return initial_taint


class ShadowAfterMatch(Policy):
    name = "shadow-after-match"
    models = (
        "search and tag filters run before shadowing, so a lower version surfaces when its higher "
        "version does not match (found in the reference implementation)"
    )
    shadow_before_match = False


class GlobalStats(Policy):
    name = "global-stats"
    models = "one FTS5 index for all levels, so bm25 statistics include memories the session cannot read"
    global_statistics = True


class ExistenceOracle(Policy):
    name = "existence-oracle"
    models = "a get of a key hidden above the taint answers 'classified' instead of 'not found'"
    reveal_hidden = True


class WriteDownDelete(Policy):
    name = "write-down-delete"
    models = "a delete removes the key's visible version even when it lies below the session's taint"

    def delete_level(self, key: str, taint: Level, *, visible: Visible) -> Level:
        level = visible(key)
        return taint if level is None else level


for _policy in (Policy(), FrozenTaint(), ShadowAfterMatch(), GlobalStats(), ExistenceOracle(), WriteDownDelete()):
    register(_policy)
