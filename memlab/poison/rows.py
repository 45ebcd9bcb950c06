"""The rows of the poisoning lab: defences (how the store and the host treat the poison) and rankings.

Defences:

- ``integrity-ignored``: a store without integrity, simulated by writing the poisons through sessions the host
  never lowers, so they are stamped trusted like every other memory (not a policy-lab variant: the store is
  memlab's own; what differs is that nothing is marked untrusted).
- ``labels-only``: the host lowers the attacker's sessions; victims read with the default floor (every grade), so
  trust first decides shadowing and reads lower the victim; a fresh victim session per question.
- ``trust-demoted``: as ``labels-only``, ranked by the trust-demoted ranking: every untrusted version's score
  scaled by ``memlab.search.ranking.DEMOTED_UNTRUSTED`` (``Ranking.untrusted``), so a poison must out-score the
  trusted memory it contradicts twice over to rank above it.
- ``floor-trusted``: as ``labels-only``, the victims' floor TRUSTED: no untrusted version is ever read.
- ``low-water-mark``: as ``labels-only``, but one victim session per agent answers every question in turn, as
  a long-lived agent would: once a read lowered it, every later save is untrusted. Its row shows what the mark
  costs (the later saves a trusted-floor session no longer gets) and what it prevents (laundered saves).

Two policy-lab variants are rows too, not run by default (``rows=[...]`` names them): what each rule buys.

- ``no-trust-first``: as ``labels-only`` under the ``untrusted-shadows`` policy (shadowing by label order only):
  an overwrite replaces the trusted value.
- ``reads-never-lower``: as ``low-water-mark`` under the ``reads-never-lower`` policy: a read of poison leaves
  the victim trusted, so the answers resting on it are laundered (the low-water mark's ``saves caught``).

Rankings are rows of the relevance lab (``memlab.eval.configurations``): ``lexical`` (its ``memlab`` row, FTS5
with context and the tag boost), ``dense`` and ``hybrid`` (MiniLM; skipped, with the reason, without
``memlab[dense]``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from memlab.errors import InvalidArgument
from memlab.eval.configurations import CONFIGURATIONS, Configuration
from memlab.search.ranking import DEMOTED_UNTRUSTED, Ranking

__all__ = ["Defence", "DEFENCES", "RANKINGS", "defences_of", "rankings_of"]


@dataclass(frozen=True)
class Defence:
    """One defence row.

    Attributes:
        name: The row's name.
        trusted_writes: The poisons are written through sessions the host never lowers (integrity ignored).
        floor: The victims' floor (``"untrusted"``: every grade; ``"trusted"``: trusted versions only).
        long_session: One victim session per agent for every question, not one per question.
        policy: The store's policy (``memlab.policies``), None for memlab's own.
        demote: Rank by the trust-demoted ranking (the ranking's ``untrusted`` set to ``DEMOTED_UNTRUSTED``).
        default: Run when ``rows`` names none.
    """

    name: str
    trusted_writes: bool = False
    floor: str = "untrusted"
    long_session: bool = False
    policy: str | None = None
    demote: bool = False
    default: bool = True

    def ranking(self, ranking: Ranking) -> Ranking:
        """The ranking the victims search by under this defence, from the ranking row's ``ranking``."""
        return dataclasses.replace(ranking, untrusted=DEMOTED_UNTRUSTED) if self.demote else ranking


DEFENCES: dict[str, Defence] = {
    row.name: row
    for row in (
        Defence("integrity-ignored", trusted_writes=True),
        Defence("labels-only"),
        Defence("trust-demoted", demote=True),
        Defence("floor-trusted", floor="trusted"),
        Defence("low-water-mark", long_session=True),
        Defence("no-trust-first", policy="untrusted-shadows", default=False),
        Defence("reads-never-lower", long_session=True, policy="reads-never-lower", default=False),
    )
}
RANKINGS: dict[str, str] = {"lexical": "memlab", "dense": "dense", "hybrid": "hybrid"}
"""Ranking name -> the relevance lab's row that ranks so."""


def defences_of(rows: Sequence[str] | None) -> list[Defence]:
    """The defences named by ``rows`` (the default ones, in ``DEFENCES`` order, when None).

    Raises:
        InvalidArgument: an unknown or repeated row, or none, naming ``rows`` and the known ones.
    """
    if rows is None:
        return [row for row in DEFENCES.values() if row.default]
    if isinstance(rows, str) or not rows:
        raise InvalidArgument(f"rows must be a non-empty list of defences, not {rows!r}; rows: {', '.join(DEFENCES)}")
    unknown = [row for row in rows if row not in DEFENCES]
    if unknown:
        raise InvalidArgument(f"unknown rows {unknown!r}; rows: {', '.join(DEFENCES)}")
    if len(set(rows)) != len(rows):
        raise InvalidArgument(f"rows must be distinct, not {list(rows)!r}")
    return [DEFENCES[row] for row in rows]


def rankings_of(rankings: Sequence[str]) -> tuple[dict[str, Configuration], dict[str, str]]:
    """The relevance lab's rows for ``rankings`` that can run here, and those that cannot, with why.

    Raises:
        InvalidArgument: an unknown or repeated ranking, or none, naming ``rankings`` and the known ones.
    """
    if isinstance(rankings, str) or not rankings:
        raise InvalidArgument(f"rankings must be a non-empty list, not {rankings!r}; rankings: {', '.join(RANKINGS)}")
    unknown = [name for name in rankings if name not in RANKINGS]
    if unknown or len(set(rankings)) != len(rankings):
        raise InvalidArgument(f"unknown or repeated rankings {list(rankings)!r}; rankings: {', '.join(RANKINGS)}")
    chosen, skipped = {}, {}
    for name in rankings:
        configuration = CONFIGURATIONS.get(RANKINGS[name])
        reason = configuration.unavailable()
        if reason is None:
            chosen[name] = configuration
        else:
            skipped[name] = reason
    return chosen, skipped
