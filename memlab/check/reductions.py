"""Which traces the exhaustive checker may skip: each reduction keeps one trace of every class of equivalent ones.

A trace is a sequence of ``Symbol``s (a ``Step`` and the interchangeable names it uses, in order). Every
reduction below maps a trace to one of the same or shorter length whose verdict is the same, so enumerating only
the kept traces, shortest first, still finds the shortest counterexample:

- **Symmetry of names** (``canonical_names``): the store treats keys, contents and sessions of one configuration
  as opaque, distinct strings, so renaming them by a bijection renames what every session observes and keeps
  equal observations equal (a memory of all the content words is its own renaming: search sees its words as a
  set). Keep only traces that use ``k1`` before ``k2``, ``apple`` before ``berry``, and of two
  sessions with the same start and escalation the first before the second.
- **Commuting reads** (``ordered_reads``): a read (get, list, search) changes nothing a later step observes: the
  taint does not move and no tool result depends on the audit. Two adjacent reads therefore see the same state in
  either order and swapping them swaps their observations; a read repeated at once observes what it just did.
  Keep only traces whose runs of adjacent reads are strictly increasing in the alphabet's order.
- **Unjudged last step** (``judged_end``): a check compares only some steps (noninterference the observer's,
  shadowing the reads, write-down the saves and copies); a trace ending in another step has its prefix's verdict,
  already enumerated one step shorter.
- **Identical worlds** (noninterference, ``needs_high``): a trace without a step above the bound runs the same
  operations in both worlds, which are then identical (stores seeded, clock fixed): it cannot tell them apart.

``tests/test_exhaustive.py`` checks every rule against brute force: each trace of the full product reduces
(``normalise``) to one that is enumerated, and judging either gives the same verdict on the real store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from random import Random
from typing import TypeVar

from memlab.check.results import Step

_CONTENTS = 1  # the group of content words (memlab.check.configurations numbers the groups)

__all__ = ["Symbol", "Rules", "enumerate_traces", "walk_traces", "random_prefix", "count_traces", "normalise"]

C = TypeVar("C")


@dataclass(frozen=True)
class Symbol:
    """One letter of the alphabet: a step, whether it is a read, and the names it uses as (group, index) pairs."""

    step: Step
    read: bool
    uses: tuple[tuple[int, int], ...]
    shape: tuple
    """The step without its names: the symbols of one shape are each other's renamings."""


@dataclass(frozen=True)
class Rules:
    """What a check judges, for the reductions: which symbols may end a trace, and whether one must be high."""

    judged: frozenset[int]
    """Indices (in the alphabet) of the symbols that may end a trace."""
    needs_high: bool


@dataclass(frozen=True)
class _Prefix:
    used: tuple[int, ...]  # per group: how many of its names the prefix has used (always the first ones)
    last_read: int  # index of the last symbol if it is a read, else -1
    high: bool


def _advance(prefix: _Prefix, index: int, symbol: Symbol) -> _Prefix | None:
    """The prefix extended by ``symbol``, or None when the extension is not canonical."""
    used = list(prefix.used)
    for group, name in symbol.uses:
        if name > used[group]:
            return None  # a later name before an earlier one of its group: a renaming of a kept trace
        used[group] = max(used[group], name + 1)
    if symbol.read and prefix.last_read >= index:
        return None  # adjacent reads out of order (or repeated): a permutation of a kept trace
    return _Prefix(tuple(used), index if symbol.read else -1, prefix.high or symbol.step.high)


def _ends(prefix: _Prefix, index: int, rules: Rules) -> bool:
    return index in rules.judged and (prefix.high or not rules.needs_high)


def enumerate_traces(alphabet: Sequence[Symbol], groups: int, rules: Rules, depth: int) -> Iterator[tuple[Step, ...]]:
    """Every kept trace of exactly ``depth`` steps, in the alphabet's lexicographic order."""
    for trace, _ in walk_traces(alphabet, groups, rules, depth, None, lambda *_: None):
        yield trace


def walk_traces(
    alphabet: Sequence[Symbol],
    groups: int,
    rules: Rules,
    depth: int,
    root: C,
    advance: Callable[[C, int, Step, bool], C],
    release: Callable[[C], object] = lambda _: None,
    prefix: Sequence[int] = (),
) -> Iterator[tuple[tuple[Step, ...], C]]:
    """Every kept trace of exactly ``depth`` steps beginning with ``prefix`` (alphabet indices, canonical), in
    lexicographic order, with the context ``advance(parent, number, step, last)`` built along it from ``root``.

    Depth first: each prefix's context is built once and shared by every trace that begins with it, and handed
    to ``release`` when the walk leaves it (also when the caller stops early); ``last`` says the step ends a
    trace, whose context is released as soon as the caller asks for the next one.

    Raises:
        ValueError: ``prefix`` is not canonical (no kept trace begins with it) or not shorter than ``depth``.
    """
    state = _Prefix((0,) * groups, -1, False)
    if len(prefix) >= depth:
        raise ValueError(f"a prefix of {len(prefix)} steps does not begin a trace of {depth}")
    for number in prefix:
        following = _advance(state, number, alphabet[number])
        if following is None:
            raise ValueError(f"no kept trace begins with {list(prefix)}")
        state = following
    fixed = tuple(alphabet[number].step for number in prefix)
    reaching: dict[tuple[_Prefix, int], bool] = {}

    def reaches(state: _Prefix, steps: int) -> bool:
        """Whether some kept trace goes on from ``state`` in exactly ``steps`` more steps."""
        if (state, steps) not in reaching:
            reaching[state, steps] = any(
                longer is not None and (_ends(longer, index, rules) if steps == 1 else reaches(longer, steps - 1))
                for index, longer in ((n, _advance(state, n, symbol)) for n, symbol in enumerate(alphabet))
            )
        return reaching[state, steps]

    def extend(state: _Prefix, trace: tuple[Step, ...], context: C) -> Iterator[tuple[tuple[Step, ...], C]]:
        for index, symbol in enumerate(alphabet):
            longer = _advance(state, index, symbol)
            if longer is None:
                continue
            last = len(trace) + 1 == depth
            if not (_ends(longer, index, rules) if last else reaches(longer, depth - len(trace) - 1)):
                continue  # a prefix no kept trace of this length begins with: its context is never built
            child = advance(context, len(trace), symbol.step, last)
            try:
                if last:
                    yield (*trace, symbol.step), child
                else:
                    yield from extend(longer, (*trace, symbol.step), child)
            finally:
                release(child)

    context = root
    contexts = []
    try:
        for number, step in enumerate(fixed):
            context = advance(context, number, step, False)
            contexts.append(context)
        yield from extend(state, fixed, context)
    finally:
        for context in reversed(contexts):
            release(context)


def random_prefix(alphabet: Sequence[Symbol], groups: int, length: int, rng: Random) -> tuple[int, ...]:
    """A canonical prefix of ``length`` steps drawn at random, each step among the canonical extensions."""
    state = _Prefix((0,) * groups, -1, False)
    chosen: list[int] = []
    for _ in range(length):
        index = rng.choice([n for n, symbol in enumerate(alphabet) if _advance(state, n, symbol) is not None])
        state = _advance(state, index, alphabet[index])  # type: ignore[assignment]
        chosen.append(index)
    return tuple(chosen)


def count_traces(alphabet: Sequence[Symbol], groups: int, rules: Rules, depth: int) -> list[int]:
    """How many kept traces of each length 1..depth there are, by dynamic programming over prefix states (no
    enumeration: the estimate of a deep run costs milliseconds)."""
    states: Counter[_Prefix] = Counter({_Prefix((0,) * groups, -1, False): 1})
    counts = []
    for _ in range(depth):
        following: Counter[_Prefix] = Counter()
        ending = 0
        for prefix, number in states.items():
            for index, symbol in enumerate(alphabet):
                longer = _advance(prefix, index, symbol)
                if longer is not None:
                    following[longer] += number
                    ending += number if _ends(longer, index, rules) else 0
        states = following
        counts.append(ending)
    return counts


def normalise(trace: Sequence[int], alphabet: Sequence[Symbol], groups: int, rules: Rules) -> tuple[int, ...] | None:
    """The kept trace (as alphabet indices) equivalent to ``trace``, or None when it judges nothing (no step it
    judges; noninterference without a high step). Brute force's side of the tests: renames names by first use, sorts
    runs of adjacent reads and drops repeats, then drops unjudged last steps, until nothing changes."""
    current = tuple(trace)
    while True:
        renamed = _rename(current, alphabet, groups)
        ordered = _order_reads(renamed, alphabet)
        while ordered and ordered[-1] not in rules.judged:
            ordered = ordered[:-1]
        if not ordered or (rules.needs_high and not any(alphabet[number].step.high for number in ordered)):
            return None
        if ordered == current:
            return current
        current = ordered


def _rename(trace: tuple[int, ...], alphabet: Sequence[Symbol], groups: int) -> tuple[int, ...]:
    mapping: list[dict[int, int]] = [{} for _ in range(groups)]
    for number in trace:
        for group, name in alphabet[number].uses:
            mapping[group].setdefault(name, len(mapping[group]))
    by_shape = {(symbol.shape, symbol.uses): number for number, symbol in enumerate(alphabet)}
    renamed = []
    for number in trace:
        symbol = alphabet[number]
        uses = tuple((group, mapping[group][name]) for group, name in symbol.uses)
        if symbol.shape[-1] == "all":  # a memory of every content word: renaming them keeps it (its words a set)
            words = iter(sorted(use for use in uses if use[0] == _CONTENTS))
            uses = tuple(next(words) if use[0] == _CONTENTS else use for use in uses)
        renamed.append(by_shape[symbol.shape, uses])
    return tuple(renamed)


def _order_reads(trace: tuple[int, ...], alphabet: Sequence[Symbol]) -> tuple[int, ...]:
    ordered: list[int] = []
    run: list[int] = []
    for number in (*trace, -1):
        if number >= 0 and alphabet[number].read:
            run.append(number)
            continue
        ordered += sorted(set(run))
        run = []
        if number >= 0:
            ordered.append(number)
    return tuple(ordered)
