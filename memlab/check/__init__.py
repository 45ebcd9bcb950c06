"""Automatic leak finding: run a policy against random tool-call sequences and shrink what leaks.

Five checks, each a seeded random search over short tool-call scenarios. A leak comes back as a
``Counterexample``, shrunk by delta debugging until no single step can be dropped (replayable, rendered
as text and as HTML in Jupyter); otherwise a ``NoLeak`` says how many scenarios and operations it covered:

- ``noninterference`` — the two-world experiment: the same operations at levels <= L in both worlds,
  extra operations above L in one; everything sessions at <= L observe must be identical.
- ``write_down`` — can content saved at a level end up in a record readable below it (laundering)?
- ``shadowing`` — does every read return, for each key, exactly the session's effective version?
- ``integrity_noninterference`` — two worlds that differ only in untrusted writers' calls (a session started
  untrusted, one the host lowers mid-trace): a session whose floor is TRUSTED must observe the same, scores
  included (``memlab.check.integrity``).
- ``laundering`` — is a version labelled trusted ever written by a session after a call returned it untrusted
  content, or after the host lowered it?

``exhaustive`` judges every trace up to a depth over a small stated ``Alphabet`` instead of random ones: the
shortest counterexample, or a bounded proof (``memlab.check.bounded``), over levels or over labels with
compartments (``Alphabet.compartments()``).

Examples:
    >>> noninterference("strict", trials=50).leak
    False
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from memlab.check.bounded import (
    MAX_LABELS,
    Alphabet,
    BudgetExceeded,
    Estimate,
    Exhaustive,
    estimate,
    exhaustive,
    exhaustive_all,
    keeps_compartments,
)
from memlab.check.checks import CHECKS
from memlab.check.results import Actor, Counterexample, NoLeak, Step
from memlab.labels import Label
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
    "integrity_noninterference",
    "laundering",
    "run_all",
    "table",
    "save_table",
    "load_table",
    "table_text",
    "CHECKS",
    "Alphabet",
    "Exhaustive",
    "Estimate",
    "BudgetExceeded",
    "exhaustive",
    "exhaustive_all",
    "estimate",
    "keeps_compartments",
    "MAX_LABELS",
]

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
    return CHECKS.get("noninterference").run(policy, trials=trials, seed=seed, levels=levels, max_ops=max_ops)


def write_down(
    policy: Policy | str,
    *,
    trials: int = 300,
    seed: int = 0,
    levels: Sequence[Level | str] = _DEFAULT_LEVELS,
    max_ops: int = 8,
) -> Counterexample | NoLeak:
    """Search for laundering: a session reads content and saves it again below the level it came from."""
    return CHECKS.get("write_down").run(policy, trials=trials, seed=seed, levels=levels, max_ops=max_ops)


def integrity_noninterference(
    policy: Policy | str,
    *,
    trials: int = 300,
    seed: int = 0,
    levels: Sequence[Level | str] = _DEFAULT_LEVELS,
    max_ops: int = 8,
) -> Counterexample | NoLeak:
    """The integrity two-world experiment: untrusted writers act in one world only; an observer whose floor is
    TRUSTED must see the same in both.

    Raises:
        InvalidArgument: a policy whose stores refuse a trusted floor (``global-stats``, ``shadow-after-match``).

    Examples:
        >>> print(integrity_noninterference("caller-chooses-trust"))  # doctest: +ELLIPSIS
        integrity_noninterference LEAK under policy caller-chooses-trust at ...: 2 steps
        ...
    """
    checker = CHECKS.get("integrity_noninterference")
    return checker.run(policy, trials=trials, seed=seed, levels=levels, max_ops=max_ops)


def laundering(
    policy: Policy | str,
    *,
    trials: int = 300,
    seed: int = 0,
    levels: Sequence[Level | str] = _DEFAULT_LEVELS,
    max_ops: int = 8,
) -> Counterexample | NoLeak:
    """Search for integrity laundering: a trusted version written by a session shown untrusted content (or
    lowered by its host)."""
    return CHECKS.get("laundering").run(policy, trials=trials, seed=seed, levels=levels, max_ops=max_ops)


def shadowing(
    policy: Policy | str,
    *,
    trials: int = 300,
    seed: int = 0,
    levels: Sequence[Level | str] = _DEFAULT_LEVELS,
    max_ops: int = 8,
) -> Counterexample | NoLeak:
    """Search for reads that return a shadowed (or otherwise non-effective) version."""
    return CHECKS.get("shadowing").run(policy, trials=trials, seed=seed, levels=levels, max_ops=max_ops)


def run_all(
    policy: Policy | str,
    *,
    checks: Iterable[str] = CHECKS,
    notify: Callable[[str, str], object] | None = None,
    **options: Any,
) -> dict[str, Counterexample | NoLeak]:
    """Every check in ``checks`` (default all of ``CHECKS``) on one policy, by check name; ``notify(policy, check)``
    after each (progress). A check that cannot examine the policy (``Check.inapplicable``: the integrity
    noninterference check under a policy whose stores refuse a trusted floor) is left out.

    Raises:
        InvalidArgument: an unknown check (before any runs) or policy.
    """
    chosen = [CHECKS.get(name) for name in checks]
    resolved = resolve(policy)
    results = {}
    for checker in chosen:
        if checker.inapplicable(resolved):
            continue
        results[checker.name] = checker.run(policy, **{**_DEFAULT_OPTIONS, **options})
        if notify is not None:
            notify(resolve(policy).name, checker.name)
    return results


def table(
    policies: Sequence[Policy | str] | None = None,
    *,
    checks: Iterable[str] = CHECKS,
    notify: Callable[[str, str], object] | None = None,
    **options: Any,
) -> pd.DataFrame:
    """One row per policy and check: the verdict, the counterexample's length and the time taken;
    ``notify(policy, check)`` after each.

    Examples:
        >>> table(["strict", "frozen-taint"], trials=50)[["policy", "check", "verdict"]]
                 policy                      check verdict
        0        strict            noninterference    pass
        1        strict                 write_down    pass
        2        strict                  shadowing    pass
        3        strict  integrity_noninterference    pass
        4        strict                 laundering    pass
        5  frozen-taint            noninterference    LEAK
        6  frozen-taint                 write_down    LEAK
        7  frozen-taint                  shadowing    pass
        8  frozen-taint  integrity_noninterference    LEAK
        9  frozen-taint                 laundering    LEAK
    """
    rows = []
    chosen = list(policies) if policies is not None else names()
    for policy in chosen:
        for check, result in run_all(policy, checks=checks, notify=notify, **options).items():
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
    frame = pd.DataFrame(rows).astype({"steps": "Int64"})
    frame.attrs = _settings(None if policies is None else [resolve(policy).name for policy in chosen], checks, options)
    return frame


def _settings(policies: list[str] | None, checks: Iterable[str], options: dict[str, Any]) -> dict[str, Any]:
    """What ``table`` needs to run the same checks again, as JSON values: ``table(**frame.attrs)`` repeats it."""
    merged = {**_DEFAULT_OPTIONS, **options}
    settings: dict[str, Any] = {} if policies is None else {"policies": policies}
    settings.update(checks=list(checks), trials=merged["trials"], seed=merged["seed"], max_ops=merged["max_ops"])
    if "levels" in options:
        settings["levels"] = [Label.parse(level).name for level in options["levels"]]
    return settings


def save_table(frame: pd.DataFrame, path: str | Path) -> None:
    """Write ``table``'s rows and the settings that produced them (``frame.attrs``) to a JSON file.

    ``memlab check --save PATH`` writes this file; ``load_table`` reads it back, and ``table(**frame.attrs)``
    runs the same checks again, so a saved result can be compared with what the checkers find today.
    """
    records = frame.to_dict("records")
    rows = [{name: (None if pd.isna(value) else value) for name, value in row.items()} for row in records]
    document = {"settings": frame.attrs, "rows": rows}
    Path(path).write_text(json.dumps(document, indent=1, default=int) + "\n", encoding="utf-8")


def load_table(path: str | Path) -> pd.DataFrame:
    """The table ``save_table`` wrote, with its settings in ``attrs``.

    Examples:
        >>> import tempfile, pathlib
        >>> frame = table(["strict"], checks=["shadowing"], trials=20)
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "check.json"
        >>> save_table(frame, path)
        >>> load_table(path).attrs
        {'policies': ['strict'], 'checks': ['shadowing'], 'trials': 20, 'seed': 0, 'max_ops': 8}
    """
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    frame = pd.DataFrame(document["rows"]).astype({"steps": "Int64"})
    frame.attrs = document["settings"]
    return frame


def table_text(frame: pd.DataFrame) -> str:
    """``table``'s rows as aligned text (no index), a "-" for the steps of a pass where pandas prints ``<NA>``.

    Examples:
        >>> print(table_text(table(["strict"], checks=["shadowing"], trials=20).drop(columns="seconds")))
        policy     check verdict steps  scenarios
        strict shadowing    pass     -         20
    """
    return frame.assign(steps=frame["steps"].astype("string").fillna("-")).to_string(index=False)
