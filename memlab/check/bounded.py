"""Bounded-exhaustive checking: every trace up to a depth over a small stated alphabet, shortest first.

The scenarios come from enumeration instead of sampling; each is judged by the same check (``judge``) as the
random search, against the real store. Enumerating by length finds a leak's shortest counterexample; when none
leaks, the result is a bounded proof: no trace of at most ``depth`` steps over the alphabet (in any of the
actors' configurations) shows the leak. The reductions (``memlab.check.reductions``) skip traces equivalent to
kept ones; both counts are reported. Traces that begin alike run their common prefix once, on stores restored
from the prefix's images (``memlab.check.prefixes``); a leak is judged again from empty stores by the check.

Examples:
    >>> print(exhaustive("strict", check="noninterference", depth=1))  # doctest: +ELLIPSIS
    bounded proof: noninterference holds under policy strict for every trace of at most 1 step ...
"""

from __future__ import annotations

import html
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memlab.check.checks import CHECKS
from memlab.check.configurations import GROUPS, MAX_LABELS, Alphabet, configurations
from memlab.check.prefixes import verdicts
from memlab.check.reductions import count_traces, random_prefix
from memlab.check.results import Counterexample
from memlab.check.scenarios import template
from memlab.errors import InternalError, InvalidArgument
from memlab.policies import resolve
from memlab.policy import Policy

__all__ = [
    "Alphabet",
    "MAX_LABELS",
    "Exhaustive",
    "Estimate",
    "exhaustive",
    "exhaustive_all",
    "estimate",
    "keeps_compartments",
    "BudgetExceeded",
]



class BudgetExceeded(InvalidArgument):
    """The enumeration would take longer than the budget allows: nothing was run."""

    code = "budget_exceeded"




@dataclass
class Exhaustive:
    """What an exhaustive check found: the shortest counterexample, or a bounded proof (``leak`` False)."""

    check: str
    policy: str
    alphabet: Alphabet
    depth: int
    configurations: int
    traces: int
    """Traces judged: all the distinct ones after reductions, or those up to and including the first leak."""
    traces_after: int
    """Distinct traces of at most ``depth`` steps after reductions, over all configurations."""
    traces_before: int
    """Every trace of at most ``depth`` steps over the alphabet, over all configurations, before reductions."""
    seconds: float
    counterexample: Counterexample | None = field(default=None)

    @property
    def leak(self) -> bool:
        return self.counterexample is not None

    def as_dict(self) -> dict[str, Any]:
        """JSON values: the settings, the counts and the counterexample's steps."""
        found = self.counterexample
        return {
            "check": self.check,
            "policy": self.policy,
            "verdict": "LEAK" if found is not None else "bounded proof",
            "alphabet": self.alphabet.as_dict(),
            "depth": self.depth,
            "configurations": self.configurations,
            "traces": self.traces,
            "traces_after_reductions": self.traces_after,
            "traces_before_reductions": self.traces_before,
            "seconds": round(self.seconds, 3),
            "counterexample": None
            if found is None
            else {
                "level": None if found.level is None else str(found.level),
                "steps": [step.describe() + (" [second world]" if step.high else "") for step in found.steps],
                "step": found.step,
                "observed": repr(found.observed),
                "expected": repr(found.expected),
            },
        }

    def __str__(self) -> str:
        return self.describe()

    def describe(self, *, seconds: bool = True) -> str:
        """The verdict as ``str`` gives it; without the seconds (``seconds=False``) it is the same on every run."""
        timing = f", {self.seconds:.1f} s" if seconds else ""
        counts = (
            f"{self.traces_after:,} distinct traces after reductions ({self.traces_before:,} before) in "
            f"{self.configurations} configurations{timing}"
        )
        plural = "s" if self.depth != 1 else ""
        if self.counterexample is None:
            told = {
                "noninterference": "; no two worlds differing only above a level were told apart",
                "integrity_noninterference": "; no two worlds differing only in untrusted writers' calls were told "
                "apart by an observer whose floor is trusted",
            }.get(self.check, "")
            return (
                f"bounded proof: {self.check} holds under policy {self.policy} for every trace of at most "
                f"{self.depth} step{plural} over {self.alphabet}: {counts}{told}"
            )
        return (
            f"shortest counterexample ({len(self.counterexample)} steps, trace {self.traces:,} of {counts}; "
            f"exhaustive to depth {self.depth}):\n{self.counterexample}"
        )

    def _repr_html_(self) -> str:
        if self.counterexample is None:
            return f"<p>{html.escape(str(self))}</p>"
        return self.counterexample._repr_html_()


@dataclass(frozen=True)
class Estimate:
    """How long an exhaustive check would take: the traces after reductions times a measured cost per trace."""

    traces: int
    seconds_per_trace: float

    @property
    def seconds(self) -> float:
        return self.traces * self.seconds_per_trace


def _validate(policy: Policy | str, check: str, depth: int, alphabet: Alphabet | None = None) -> Policy:
    checker = CHECKS.get(check)  # an unknown check fails here, naming the known ones
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise InvalidArgument(f"the depth must be a whole number of steps, at least 1, not {depth!r}")
    policy = resolve(policy)
    why = checker.inapplicable(policy)
    if why:
        raise InvalidArgument(f"check {check} cannot examine policy {policy.name!r}: {why}")
    if alphabet is not None and alphabet.over_labels and not keeps_compartments(policy):
        raise InvalidArgument(
            f"policy {policy.name!r} does not keep compartments (a store under it refuses labels with categories): "
            "check it over a levels alphabet"
        )
    return policy


def keeps_compartments(policy: Policy | str) -> bool:
    """Whether a store under ``policy`` keeps labels with categories (``global-stats`` and ``shadow-after-match``
    do not: their views are not kept per label), so a label alphabet can examine it.

    Examples:
        >>> keeps_compartments("strict"), keeps_compartments("global-stats")
        (True, False)
    """
    try:
        template(resolve(policy)).fork().session("CONFIDENTIAL:hr").store.close()
    except InvalidArgument:
        return False
    return True


def _counts(check: str, alphabet: Alphabet, depth: int) -> tuple[int, int, int]:
    """(configurations, traces after reductions, traces before) up to ``depth`` steps."""
    found = configurations(check, alphabet)
    after = sum(sum(count_traces(c.symbols, GROUPS, c.rules, depth)) for c in found)
    before = sum(sum(len(c.symbols) ** length for length in range(1, depth + 1)) for c in found)
    return len(found), after, before


def estimate(
    policy: Policy | str,
    *,
    check: str = "noninterference",
    depth: int,
    alphabet: Alphabet | None = None,
    sample: int = 6,
) -> Estimate:
    """The traces after reductions (counted, not enumerated) and the cost of one, measured: ``sample`` prefixes of
    ``depth - 1`` steps drawn at random (seeded) over the configurations, each judged with every trace it begins,
    as the enumeration does (``memlab.check.prefixes``), the whole time divided by the traces judged. Each
    prefix's own steps and empty worlds are charged to its traces alone (the enumeration shares them more
    widely), so it errs long."""
    alphabet = alphabet or Alphabet()
    policy = _validate(policy, check, depth, alphabet)
    _, after, _ = _counts(check, alphabet, depth)
    found = configurations(check, alphabet)
    template(policy)  # the policy's empty store, built once per process: untimed
    rng = random.Random(depth)
    judged = 0
    started = time.perf_counter()
    for _ in range(sample):
        configuration = rng.choice(found)
        prefix = random_prefix(configuration.symbols, GROUPS, depth - 1, rng)
        judged += sum(1 for _ in verdicts(policy, check, configuration, GROUPS, depth, prefix))
    return Estimate(after, (time.perf_counter() - started) / max(judged, 1))


def exhaustive(
    policy: Policy | str,
    *,
    check: str = "noninterference",
    depth: int = 3,
    alphabet: Alphabet | None = None,
    budget: float | None = 120.0,
) -> Exhaustive:
    """Judge every distinct trace of at most ``depth`` steps over ``alphabet``, shortest first; stop at a leak.

    Raises:
        InvalidArgument: an unknown check or policy, a depth below 1, or a label alphabet for a policy that does not
            keep compartments (``keeps_compartments``).
        BudgetExceeded: the estimate (``estimate``) is over ``budget`` seconds (None: no limit); nothing ran.
    """
    alphabet = alphabet or Alphabet()
    policy = _validate(policy, check, depth, alphabet)
    if budget is not None:
        _refuse_over(budget, depth, [(check, estimate(policy, check=check, depth=depth, alphabet=alphabet))])
    number, after, before = _counts(check, alphabet, depth)
    judge = CHECKS.get(check).judge
    started = time.perf_counter()
    judged = 0
    # Length by length (iterative deepening), so the first leak is the shortest, as breadth first would find it.
    for length in range(1, depth + 1):
        for configuration in configurations(check, alphabet):
            for steps, leaked in verdicts(policy, check, configuration, GROUPS, length):
                judged += 1
                if not leaked:
                    continue
                # The counterexample is the check's own judgement of the whole trace, replayed from empty stores.
                found = judge(policy, configuration.level, configuration.actors, steps)
                if found is None:
                    raise InternalError(f"prefix sharing saw a leak the {check} check does not: {list(steps)}")
                found.trials, found.seconds = judged, time.perf_counter() - started
                return Exhaustive(
                    check, policy.name, alphabet, depth, number, judged, after, before, found.seconds, found
                )
    return Exhaustive(check, policy.name, alphabet, depth, number, judged, after, before, time.perf_counter() - started)


def exhaustive_all(
    policies: Sequence[Policy | str],
    *,
    checks: Sequence[str] = tuple(CHECKS),
    depth: int = 3,
    alphabet: Alphabet | None = None,
    budget: float | None = 120.0,
) -> list[Exhaustive]:
    """``exhaustive`` for every policy and check, estimated as a whole before anything runs (``budget`` bounds the
    total); policy by policy, check by check, leaving out a check that cannot examine a policy (``Check.inapplicable``:
    the integrity checks under a policy whose stores refuse a trusted floor).

    Raises:
        InvalidArgument: as ``exhaustive`` does, for any of the policies, before anything runs.
    """
    alphabet = alphabet or Alphabet()
    for check in checks:
        _validate("strict", check, depth)
    chosen = [_validate(policy, "noninterference", depth, alphabet) for policy in policies]
    if budget is not None and chosen:
        # Each check's cost is measured on the first policy it can examine (Check.inapplicable).
        examined = {
            check: next((policy for policy in chosen if not CHECKS.get(check).inapplicable(policy)), None)
            for check in checks
        }
        guesses = [
            (check, estimate(policy, check=check, depth=depth, alphabet=alphabet))
            for check, policy in examined.items()
            if policy is not None
        ]
        _refuse_over(budget, depth, [(f"{check} x {len(chosen)}", guess) for check, guess in guesses], len(chosen))
    return [
        exhaustive(policy, check=check, depth=depth, alphabet=alphabet, budget=None)
        for policy in chosen
        for check in checks
        if not CHECKS.get(check).inapplicable(policy)  # the integrity checks need floors, which some refuse
    ]


def _refuse_over(budget: float, depth: int, guesses: list[tuple[str, Estimate]], policies: int = 1) -> None:
    """Raise ``BudgetExceeded`` when the estimates add up to more than ``budget`` seconds, saying how long."""
    total = policies * sum(guess.seconds for _, guess in guesses)
    if total <= budget:
        return
    parts = ", ".join(
        f"{name}: {guess.traces:,} traces at {guess.seconds_per_trace * 1000:.1f} ms" for name, guess in guesses
    )
    raise BudgetExceeded(
        f"depth {depth} would take about {_duration(total)} ({parts}; timed on this machine), over the budget of "
        f"{_duration(budget)}: lower the depth or raise the budget"
    )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:,.0f} days"
