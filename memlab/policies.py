"""Named policies: ``strict`` and variants that reproduce real mistakes, in a registry.

Each variant changes one rule of ``memlab.policy.Policy`` and says which failure it models: of confidentiality
(``frozen-taint`` to ``newest-over-all-labels``) or of integrity (``caller-chooses-trust`` to
``session-may-endorse``, caught by ``memlab.check.integrity``).
``MemoryStore(policy="frozen-taint")`` opens a store under a variant; ``memlab.check`` finds its leaks.

Examples:
    >>> sorted(names())[:3]
    ['caller-chooses-trust', 'existence-oracle', 'frozen-taint']
"""

from __future__ import annotations

from typing import Any

from memlab.labels import Integrity, Label
from memlab.policy import Policy, ToolCall, Visible
from memlab.registry import Registry

__all__ = ["register", "get", "names", "resolve", "Policy"]

_REGISTRY: Registry[Policy] = Registry("policy", Policy, default="strict", plural="policies")
register, get, names, resolve = _REGISTRY.register, _REGISTRY.get, _REGISTRY.names, _REGISTRY.resolve


class FrozenTaint(Policy):
    name = "frozen-taint"
    description = (
        "the tool layer captures the session's taint when the session is created, so saves after an "
        "escalation are written down (found in the reference implementation)"
    )

    def save_level(self, taint: Label, *, initial_taint: Label) -> Label:
        return initial_taint


class ShadowAfterMatch(Policy):
    name = "shadow-after-match"
    description = (
        "search and tag filters run before shadowing, so a lower version surfaces when its higher "
        "version does not match (found in the reference implementation)"
    )
    shadow_before_match = False


class GlobalStats(Policy):
    name = "global-stats"
    description = "one FTS5 index for all levels, so bm25 statistics include memories the session cannot read"
    global_statistics = True


class ExistenceOracle(Policy):
    name = "existence-oracle"
    description = "a get of a key hidden above the taint answers 'classified' instead of 'not found'"
    reveal_hidden = True


class WriteDownDelete(Policy):
    name = "write-down-delete"
    description = "a delete removes the key's visible version even when it lies below the session's taint"

    def delete_level(self, key: str, taint: Label, *, visible: Visible) -> Label:
        level = visible(key)
        return taint if level is None else level


COMPARTMENTS = ("PUBLIC", "CONFIDENTIAL", "CONFIDENTIAL:hr", "CONFIDENTIAL:legal", "CONFIDENTIAL:hr,legal")
"""The labels the checkers examine the shadowing rules over: two compartments, both, and the levels below."""


class RefuseAmbiguous(Policy):
    name = "refuse-ambiguous"
    description = (
        "under compartments, a key with several maximal visible versions is refused as ambiguous instead of one "
        "being chosen (a safe alternative to newest: it leaks nothing across compartments, and answers less)"
    )
    shadowing = "refuse"
    label_alphabet = COMPARTMENTS


class NewestOverAllLabels(Policy):
    name = "newest-over-all-labels"
    description = (
        "under compartments, a key shows its newest version over every label, hidden when the session may not read "
        "it: a save in another compartment hides the key (the view depends on versions the session cannot read)"
    )
    shadowing = "newest-overall"
    label_alphabet = COMPARTMENTS


class CallerChoosesTrust(Policy):
    name = "caller-chooses-trust"
    description = (
        "a save's integrity is read from the model's arguments before they are stripped: trusted: true makes an "
        "untrusted session's save trusted (a tool that accepts a provenance field and believes it)"
    )

    def call_taint(self, call: ToolCall) -> Label:
        taint = call.taint
        if call.tool == "memory_save" and call.arguments.get("trusted") is True:
            return Label(taint.level, taint.categories, Integrity.TRUSTED)
        return taint


class UntrustedShadows(Policy):
    name = "untrusted-shadows"
    description = (
        "shadowing by label order only, no trust first: an untrusted version at a trusted one's level (or a newer "
        "one beside it) shadows it, and a reader whose floor is trusted then finds the key gone"
    )
    trust_first = False


class SharedRanking(Policy):
    name = "shared-ranking"
    description = (
        "one ranking index for both grades: a reader whose floor is trusted searches its level's index, so bm25 "
        "statistics (and so its scores and order) count untrusted versions it cannot read"
    )
    shared_ranking = True


class ReadsNeverLower(Policy):
    name = "reads-never-lower"
    description = (
        "a read that returns an untrusted version leaves the session trusted, so what it read is saved as trusted "
        "(integrity tracked on the host's inputs only, not on what memory itself returns)"
    )
    reads_lower = False


class SessionMayEndorse(Policy):
    name = "session-may-endorse"
    description = (
        "the host wires the store's endorse into the model's tools: a session, untrusted or not, turns an "
        "untrusted version into a trusted one"
    )

    def endorse(self, session: Any, key: str) -> str:
        return session.store.endorse(session.agent, key, reason=f"asked by session {session.id}")


for _policy in (
    Policy(),
    FrozenTaint(),
    ShadowAfterMatch(),
    GlobalStats(),
    ExistenceOracle(),
    WriteDownDelete(),
    RefuseAmbiguous(),
    NewestOverAllLabels(),
    CallerChoosesTrust(),
    UntrustedShadows(),
    SharedRanking(),
    ReadsNeverLower(),
    SessionMayEndorse(),
):
    register(_policy)
