"""Automatic leak finding: run a policy against random tool-call sequences and shrink what leaks.

Three checks, each a seeded random search over short tool-call scenarios. A leak comes back as a
``Counterexample``, shrunk by delta debugging until no single step can be dropped (replayable, rendered
as text and as HTML in Jupyter); otherwise a ``NoLeak`` says how many scenarios and operations it covered:

- ``noninterference`` — the two-world experiment: the same operations at levels <= L in both worlds,
  extra operations above L in one; everything sessions at <= L observe must be identical.
- ``write_down`` — can content saved at a level end up in a record readable below it (laundering)?
- ``shadowing`` — does every read return, for each key, exactly the session's effective version?

Examples:
    >>> noninterference("strict", trials=50).leak
    False
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from memlab.check.checks import CHECKERS
from memlab.check.results import Actor, Counterexample, NoLeak, Step
from memlab.errors import InvalidArgument
from memlab.levels import Level
from memlab.policies import names, resolve
from memlab.policy import Policy

__all__ = [
    "Actor",
    "Step",
    "Counterexample",
    "NoLeak",
    "noninterference",
    "write_down",
    "shadowing",
    "run_all",
    "table",
    "table_text",
    "CHECKS",
]

CHECKS = tuple(CHECKERS)

_DEFAULT_LEVELS = (Level.PUBLIC, Level.INTERNAL, Level.CONFIDENTIAL)
_DEFAULT_OPTIONS: dict[str, Any] = {"trials": 300, "seed": 0, "levels": _DEFAULT_LEVELS, "max_ops": 8}


def noninterference(
    policy: Policy | str,
    *,
    trials: int = 300,
    seed: int = 0,
    levels: Sequence[Level | str] = _DEFAULT_LEVELS,
    max_ops: int = 8,
) -> Counterexample | NoLeak:
    """The two-world experiment over ``trials`` random scenarios of up to ``max_ops`` operations.

    Examples:
        >>> print(noninterference("global-stats"))  # doctest: +ELLIPSIS
        noninterference LEAK under policy global-stats at INTERNAL: 3 steps
        ...
    """
    return CHECKERS["noninterference"].run(policy, trials=trials, seed=seed, levels=levels, max_ops=max_ops)


def write_down(
    policy: Policy | str,
    *,
    trials: int = 300,
    seed: int = 0,
    levels: Sequence[Level | str] = _DEFAULT_LEVELS,
    max_ops: int = 8,
) -> Counterexample | NoLeak:
    """Search for laundering: a session reads content and saves it again below the level it came from."""
    return CHECKERS["write_down"].run(policy, trials=trials, seed=seed, levels=levels, max_ops=max_ops)


def shadowing(
    policy: Policy | str,
    *,
    trials: int = 300,
    seed: int = 0,
    levels: Sequence[Level | str] = _DEFAULT_LEVELS,
    max_ops: int = 8,
) -> Counterexample | NoLeak:
    """Search for reads that return a shadowed (or otherwise non-effective) version."""
    return CHECKERS["shadowing"].run(policy, trials=trials, seed=seed, levels=levels, max_ops=max_ops)


def run_all(
    policy: Policy | str, *, checks: Sequence[str] = CHECKS, **options: Any
) -> dict[str, Counterexample | NoLeak]:
    """Every check in ``checks`` on one policy, by check name."""
    unknown = [name for name in checks if name not in CHECKERS]
    if unknown:
        raise InvalidArgument(f"unknown check {unknown[0]!r}; the checks are {', '.join(CHECKS)}")
    return {name: CHECKERS[name].run(policy, **{**_DEFAULT_OPTIONS, **options}) for name in checks}


def table(
    policies: Sequence[Policy | str] | None = None, *, checks: Sequence[str] = CHECKS, **options: Any
) -> pd.DataFrame:
    """One row per policy and check: the verdict, the counterexample's length and the time taken.

    Examples:
        >>> table(["strict", "frozen-taint"], trials=50)[["policy", "check", "verdict"]]
                 policy            check verdict
        0        strict  noninterference    pass
        1        strict       write_down    pass
        2        strict        shadowing    pass
        3  frozen-taint  noninterference    LEAK
        4  frozen-taint       write_down    LEAK
        5  frozen-taint        shadowing    pass
    """
    rows = []
    for policy in policies if policies is not None else names():
        for check, result in run_all(policy, checks=checks, **options).items():
            rows.append(
                {
                    "policy": resolve(policy).name,
                    "check": check,
                    "verdict": "LEAK" if result.leak else "pass",
                    "steps": len(result) if result.leak else None,
                    "scenarios": result.trials,
                    "seconds": round(result.seconds, 2),
                }
            )
    return pd.DataFrame(rows).astype({"steps": "Int64"})


def table_text(frame: pd.DataFrame) -> str:
    """``table``'s rows as aligned text (no index), a "-" for the steps of a pass where pandas prints ``<NA>``.

    Examples:
        >>> print(table_text(table(["strict"], checks=["shadowing"], trials=20).drop(columns="seconds")))
        policy     check verdict steps  scenarios
        strict shadowing    pass     -         20
    """
    return frame.assign(steps=frame["steps"].astype("string").fillna("-")).to_string(index=False)
