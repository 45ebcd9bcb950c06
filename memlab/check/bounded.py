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
from itertools import combinations
from typing import Any

from memlab.check.checks import CHECKS, _flows, _taint
from memlab.check.prefixes import verdicts
from memlab.check.reductions import Rules, Symbol, count_traces, random_prefix
from memlab.check.results import Actor, Counterexample, Step
from memlab.check.scenarios import template
from memlab.errors import InternalError, InvalidArgument
from memlab.labels import Label
from memlab.levels import Level
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

_KEYS, _CONTENTS, _ACTORS = 0, 1, 2  # the groups of interchangeable names
_GROUPS = 3


class BudgetExceeded(InvalidArgument):
    """The enumeration would take longer than the budget allows: nothing was run."""

    code = "budget_exceeded"


MAX_LABELS = 6
"""At most this many levels or labels in an alphabet: the configurations grow with the cube of their number."""


@dataclass(frozen=True)
class Alphabet:
    """What a trace is made of: the names, the tag and the levels (or labels) each step may use.

    Per session the steps are: a save of each key with each content and with all contents in one memory
    (untagged and tagged), a delete and a get of each key, a list (all, and by the tag), a search for each
    content word; write-down's sessions also copy a key to a key and escalate to each level (over labels, to each
    label above their start). Each level gives the configurations: the observer's bound and the high session's
    start and escalation (noninterference), the two sessions' levels (the other checks).

    ``levels`` may hold labels with categories (``Alphabet.compartments()``: PUBLIC, CONFIDENTIAL:hr,
    CONFIDENTIAL:legal and CONFIDENTIAL:hr,legal); the configurations then follow the lattice
    (``Label.can_flow_to``): the high session is raised to every label that does not flow to the observer's,
    incomparable ones included, and a write-down session escalates only up the lattice from where it starts.
    """

    keys: tuple[str, ...] = ("k1", "k2")
    contents: tuple[str, ...] = ("apple", "berry")
    tag: str | None = "t1"
    levels: tuple[Level | Label, ...] = (Level.PUBLIC, Level.INTERNAL, Level.CONFIDENTIAL)
    """Levels, or labels (a label without categories is its level), in any order: kept in the lattice's order."""

    def __post_init__(self) -> None:
        if not self.keys or not self.contents:
            raise InvalidArgument("an alphabet needs at least one key and one content")
        if isinstance(self.levels, (str, Level, Label)) or not isinstance(self.levels, (list, tuple)):
            raise InvalidArgument(f"an alphabet's levels are a list of levels or labels, not {self.levels!r}")
        if len(self.levels) > MAX_LABELS:
            raise InvalidArgument(
                f"an alphabet has at most {MAX_LABELS} levels or labels, not {len(self.levels)}: the configurations "
                "grow with the cube of their number"
            )
        levels = tuple(sorted({_taint(_alphabet_label(value)) for value in self.levels}, key=_lattice_order))
        if len(levels) < 2:
            raise InvalidArgument("an alphabet needs at least two levels")
        object.__setattr__(self, "levels", levels)

    @classmethod
    def compartments(
        cls,
        categories: Sequence[str] = ("hr", "legal"),
        *,
        level: Level | str = Level.CONFIDENTIAL,
        below: Level | str = Level.PUBLIC,
        **names: Any,
    ) -> Alphabet:
        """The label alphabet: ``below`` and ``level`` with every non-empty set of ``categories`` (by default
        PUBLIC, CONFIDENTIAL:hr, CONFIDENTIAL:legal, CONFIDENTIAL:hr,legal: two incomparable compartments, their
        join and a level under all three). ``names`` are the other fields (keys, contents, tag).

        Raises:
            InvalidArgument: no category, a malformed one, or more labels than ``MAX_LABELS``.

        Examples:
            >>> [str(label) for label in Alphabet.compartments().levels]
            ['PUBLIC', 'CONFIDENTIAL:hr', 'CONFIDENTIAL:legal', 'CONFIDENTIAL:hr,legal']
        """
        if isinstance(categories, str) or not isinstance(categories, (list, tuple)):
            raise InvalidArgument(f"the compartments' categories are a list of names, not {categories!r}")
        if not categories:
            raise InvalidArgument("a compartments alphabet needs at least one category")
        named = sorted(Label.of(level, list(categories)).categories)
        chosen = [subset for size in range(1, len(named) + 1) for subset in combinations(named, size)]
        return cls(levels=(Level.parse(below), *(Label.of(level, list(subset)) for subset in chosen)), **names)

    @property
    def over_labels(self) -> bool:
        """Whether some label has categories (the configurations follow a lattice, not a total order)."""
        return any(isinstance(level, Label) for level in self.levels)

    def as_dict(self) -> dict[str, Any]:
        return {
            "keys": list(self.keys),
            "contents": list(self.contents),
            "tag": self.tag,
            "levels": [str(level) for level in self.levels],
        }

    def __str__(self) -> str:
        tag = f"tag {self.tag}" if self.tag is not None else "no tag"
        kind = "labels" if self.over_labels else "levels"
        return (
            f"keys {', '.join(self.keys)}; contents {', '.join(self.contents)}; {tag}; "
            f"{kind} {', '.join(str(level) for level in self.levels)}"
        )


def _alphabet_label(value: object) -> Label:
    try:
        return Label.parse(value)  # type: ignore[arg-type]
    except InvalidArgument as error:
        raise InvalidArgument(f"alphabet label {value!r}: {error}") from None


def _lattice_order(label: Level | Label) -> tuple:
    """A linear extension of the lattice: a label comes after every label that flows to it."""
    label = Label.parse(label)
    return (label.level, len(label.categories), sorted(label.categories))


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
            told = (
                "; no two worlds differing only above a level were told apart"
                if self.check == "noninterference"
                else ""
            )
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


@dataclass(frozen=True)
class _Configuration:
    level: Level | Label | None
    actors: tuple[Actor, ...]
    symbols: tuple[Symbol, ...]
    rules: Rules


def _save_and_delete(alphabet: Alphabet, actor: str, who: tuple, *, high: bool = False) -> list[Symbol]:
    symbols = []
    for tags in ((), (alphabet.tag,)) if alphabet.tag is not None else ((),):
        for k, key in enumerate(alphabet.keys):
            for content, uses, shape in _contents(alphabet):
                arguments = (("key", key), ("content", content), ("tags", tags))
                step = Step(actor, "memory_save", arguments, high)
                symbol = Symbol(step, False, (*who[1], (_KEYS, k), *uses), (who[0], "save", tags, shape))
                symbols.append(symbol)
    for k, key in enumerate(alphabet.keys):
        step = Step(actor, "memory_delete", (("key", key),), high)
        symbols.append(Symbol(step, False, (*who[1], (_KEYS, k)), (who[0], "delete")))
    return symbols


def _contents(alphabet: Alphabet) -> list[tuple[str, tuple, str]]:
    """Each content word alone, and all of them in one memory: bm25's length normalisation is what a global
    index leaks through, and single-word memories all score alike (one-word contents miss global-stats)."""
    single = [(content, ((_CONTENTS, c),), "one") for c, content in enumerate(alphabet.contents)]
    if len(alphabet.contents) < 2:
        return single
    every = tuple((_CONTENTS, c) for c in range(len(alphabet.contents)))
    return [*single, (" ".join(alphabet.contents), every, "all")]


def _reads(alphabet: Alphabet, actor: str, who: tuple) -> list[Symbol]:
    symbols = [
        Symbol(Step(actor, "memory_get", (("key", key),)), True, (*who[1], (_KEYS, k)), (who[0], "get"))
        for k, key in enumerate(alphabet.keys)
    ]
    for tag in (None, alphabet.tag) if alphabet.tag is not None else (None,):
        symbols.append(Symbol(Step(actor, "memory_list", (("tag", tag),)), True, who[1], (who[0], "list", tag)))
    for c, content in enumerate(alphabet.contents):
        step = Step(actor, "memory_search", (("query", content), ("max_results", 5)))
        symbols.append(Symbol(step, True, (*who[1], (_CONTENTS, c)), (who[0], "search")))
    return symbols


def _copies_and_escalations(alphabet: Alphabet, actor: Actor, who: tuple) -> list[Symbol]:
    """Copies of a key to a key, and escalations: to every level of a levels alphabet (a step down is a refused
    call, which the pinned counts include), only up the lattice from the actor's start over labels (a step down
    or across is refused and changes nothing, so a trace with it has the verdict of the trace without it)."""
    symbols = []
    for a, source in enumerate(alphabet.keys):
        for b, target in enumerate(alphabet.keys):
            step = Step(actor.name, "copy", (("from", source), ("to", target)))
            symbols.append(Symbol(step, False, (*who[1], (_KEYS, a), (_KEYS, b)), (who[0], "copy")))
    targets = alphabet.levels
    if alphabet.over_labels:
        targets = tuple(label for label in targets if label != actor.start and _flows(actor.start, label))
    for level in targets:
        step = Step(actor.name, "escalate", (("level", str(level)),))
        symbols.append(Symbol(step, False, who[1], (who[0], "escalate", level)))
    return symbols


def _who(actors: tuple[Actor, ...], number: int) -> tuple:
    """The symbol's shape and names for actor ``number``: sessions of one configuration are interchangeable
    names (the actors group) when they start and escalate alike, otherwise part of the shape."""
    if len(actors) == 2 and actors[0] == Actor(actors[0].name, actors[1].start, actors[1].raised):
        return (None, ((_ACTORS, number),))
    return (actors[number].name, ())


def configurations(check: str, alphabet: Alphabet) -> list[_Configuration]:
    """Every configuration of ``check``'s actors over the alphabet's levels (or labels, by the lattice), each with
    its symbols and rules."""
    levels = alphabet.levels
    found = []
    if check == "noninterference":
        # The observer sits at the bound: an observer below it is the experiment at its own level. The top (every
        # label flows to it) hides nothing, so it is no bound.
        for bound in levels:
            above = [label for label in levels if not _flows(label, bound)]  # incomparable labels included
            low = Actor("low", bound)
            for start in levels:
                for raised in (label for label in above if _flows(start, label)):
                    high = Actor("high", start, None if raised == start else raised)
                    actors = (low, high)
                    symbols = [
                        *_reads(alphabet, "low", ("low", ())),
                        *_save_and_delete(alphabet, "low", ("low", ())),
                        *_save_and_delete(alphabet, "high", ("high", ()), high=True),
                    ]
                    judged = frozenset(n for n, symbol in enumerate(symbols) if not symbol.step.high)
                    found.append(_Configuration(bound, actors, tuple(symbols), Rules(judged, True)))
        return found
    for index, first in enumerate(levels):
        for second in levels[index:]:  # two sessions: their order is a renaming
            actors = (Actor("s1", first), Actor("s2", second))
            symbols = []
            for number, actor in enumerate(actors):
                who = _who(actors, number)
                if check == "shadowing":
                    symbols += [*_reads(alphabet, actor.name, who), *_save_and_delete(alphabet, actor.name, who)]
                else:
                    saves = [s for s in _save_and_delete(alphabet, actor.name, who) if s.step.tool == "memory_save"]
                    symbols += [*saves, *_copies_and_escalations(alphabet, actor, who)]
            judged_tools = (
                ("memory_get", "memory_list", "memory_search") if check == "shadowing" else ("memory_save", "copy")
            )
            judged = frozenset(n for n, symbol in enumerate(symbols) if symbol.step.tool in judged_tools)
            found.append(_Configuration(None, actors, tuple(symbols), Rules(judged, False)))
    return found


def _validate(policy: Policy | str, check: str, depth: int, alphabet: Alphabet | None = None) -> Policy:
    CHECKS.get(check)  # an unknown check fails here, naming the known ones
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise InvalidArgument(f"the depth must be a whole number of steps, at least 1, not {depth!r}")
    policy = resolve(policy)
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
    after = sum(sum(count_traces(c.symbols, _GROUPS, c.rules, depth)) for c in found)
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
        prefix = random_prefix(configuration.symbols, _GROUPS, depth - 1, rng)
        judged += sum(1 for _ in verdicts(policy, check, configuration, _GROUPS, depth, prefix))
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
            for steps, leaked in verdicts(policy, check, configuration, _GROUPS, length):
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
    total); policy by policy, check by check.

    Raises:
        InvalidArgument: as ``exhaustive`` does, for any of the policies, before anything runs.
    """
    alphabet = alphabet or Alphabet()
    for check in checks:
        _validate("strict", check, depth)
    chosen = [_validate(policy, "noninterference", depth, alphabet) for policy in policies]
    if budget is not None and chosen:
        guesses = [(check, estimate(chosen[0], check=check, depth=depth, alphabet=alphabet)) for check in checks]
        _refuse_over(budget, depth, [(f"{check} x {len(chosen)}", guess) for check, guess in guesses], len(chosen))
    return [
        exhaustive(policy, check=check, depth=depth, alphabet=alphabet, budget=None)
        for policy in chosen
        for check in checks
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
