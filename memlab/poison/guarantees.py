"""The poisoning lab's exact zeros, each tied to the policy lab's bounded-exhaustive result that promises it.

A zero in the table is a measurement on one collection; the policy lab's bounded proof is a statement about every
trace up to a depth. Each ``Guarantee`` names a column, the rows it holds for and the check whose proof makes the
zero a consequence of the rules rather than luck:

- ``floor-trusted``'s ``ISR``, ``ASR-r@k`` and ``ASR-r@k all`` are 0: a reader whose floor is TRUSTED observes the
  same whatever untrusted writers did (``integrity_noninterference``), so no poison is ever read or ranked.
- ``ISR overwrite`` is 0 wherever the store's own policy ranks (every default row but ``integrity-ignored``, whose
  poisons are trusted): trust first, an untrusted version never shadows a trusted one. The proof covers trusted
  floors (under ``untrusted-shadows`` a trusted floor finds the key gone: the check's counterexample); a default
  floor meets the same rule (``ViewRules.winner``), which the reference model checks (tests/test_model.py).
- ``laundered saves`` is 0 in the same rows: no session that read untrusted content saves a trusted version
  (``laundering``).

``verdicts`` runs the proofs (``memlab.check.exhaustive``, the store's policy ``strict``, a few seconds at depth 2)
and ``checked`` sets them beside the measured values; a proved zero measured otherwise is a bug in the store or the
lab, and raises.

Examples:
    >>> sorted({guarantee.check for guarantee in GUARANTEES})
    ['integrity_noninterference', 'laundering']
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from memlab.errors import InternalError

__all__ = ["Guarantee", "GUARANTEES", "POLICY", "verdicts", "checked"]

POLICY = "strict"
"""The policy the default rows run under (memlab's own), whose proofs the zeros rest on."""

_STORE_RULES = ("labels-only", "trust-demoted", "floor-trusted", "low-water-mark")


@dataclass(frozen=True)
class Guarantee:
    """A column that must be exactly 0 in some rows, and the policy lab check that proves it."""

    column: str
    rows: tuple[str, ...]
    check: str
    rule: str


GUARANTEES = (
    Guarantee("ISR", ("floor-trusted",), "integrity_noninterference", "a trusted floor reads no untrusted version"),
    Guarantee("ASR-r@k", ("floor-trusted",), "integrity_noninterference", "a trusted floor ranks no untrusted version"),
    Guarantee("ASR-r@k all", ("floor-trusted",), "integrity_noninterference", "as above"),
    Guarantee("ISR overwrite", _STORE_RULES, "integrity_noninterference", "trust first: an overwrite never shadows"),
    Guarantee("laundered saves", _STORE_RULES, "laundering", "reads lower: nothing read untrusted is saved trusted"),
)


def verdicts(depth: int = 2) -> dict[str, object]:
    """Each check the guarantees name, run bounded-exhaustively under ``POLICY`` to ``depth`` steps: check name ->
    ``memlab.check.Exhaustive`` (a bounded proof, or the shortest counterexample)."""
    from memlab.check.bounded import exhaustive

    return {check: exhaustive(POLICY, check=check, depth=depth) for check in sorted({g.check for g in GUARANTEES})}


def checked(table: pd.DataFrame, proofs: dict[str, object]) -> pd.DataFrame:
    """One line per guarantee and row present in ``table``: the largest value measured, the check, and what the
    policy lab found (``proofs``, from ``verdicts``).

    Raises:
        InternalError: a column measured above 0 in a row whose check has a bounded proof: the table contradicts
            the rules (a bug in the store or in the lab), so it is not reported as a result.
    """
    lines = []
    for guarantee in GUARANTEES:
        found = proofs[guarantee.check]
        for row in guarantee.rows:
            measured = table.loc[table["row"] == row, guarantee.column]
            if measured.empty:
                continue
            largest = float(measured.max())
            if not found.leak and largest != 0:
                raise InternalError(
                    f"{row}: {guarantee.column} measured {largest:g} where {guarantee.check} is proved to depth "
                    f"{found.depth} ({guarantee.rule}): the store or the lab is wrong"
                )
            verdict = (
                f"LEAK in {len(found.counterexample.steps)} steps"
                if found.leak
                else f"bounded proof, {found.traces:,} traces to depth {found.depth}"
            )
            lines.append(
                {"row": row, "column": guarantee.column, "measured": largest, "rule": guarantee.rule,
                 "check": guarantee.check, "policy lab": verdict}
            )  # fmt: skip
    return pd.DataFrame(lines, columns=["row", "column", "measured", "rule", "check", "policy lab"])
