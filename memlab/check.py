"""Automatic leak finding: run a policy against random tool-call sequences and shrink what leaks.

Three checks, each a seeded random search over short tool-call scenarios. A leak comes back as a
``Counterexample``, shrunk by delta debugging until no single step can be dropped (replayable, rendered
as text and as HTML in Jupyter); otherwise a ``NoLeak`` says how many scenarios and operations it covered:

- ``noninterference`` — the two-world experiment: the same operations at levels <= L in both worlds,
  extra operations above L in one; everything sessions at <= L observe must be identical.
- ``write_down`` — can content saved at a level end up in a record readable below it (laundering)?
- ``shadowing`` — does every read return, for each key, exactly the session's effective version?

>>> noninterference("strict", trials=50).leak  # doctest: +SKIP
False
"""

from __future__ import annotations

import functools
import html
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from memlab.errors import InvalidArgument, MemlabError
from memlab.levels import Level
from memlab.policies import names, resolve
from memlab.policy import Policy
from memlab.records import Hit, Memory
from memlab.session import Session
from memlab.storage import SqliteStorage
from memlab.store import MemoryStore

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
    "CHECKS",
]

KEYS = ("k1", "k2")
WORDS = ("apple", "berry", "cider")
TAGS = ("t1", "t2")
READS = ("memory_get", "memory_list", "memory_search")
_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Actor:
    """A session in a scenario: it starts at ``start`` and is escalated to ``raised`` before acting."""

    name: str
    start: Level
    raised: Level | None = None

    @property
    def taint(self) -> Level:
        return self.raised if self.raised is not None else self.start


@dataclass(frozen=True)
class Step:
    """One tool call (or ``escalate``) by one actor; ``high`` steps run only in the second world."""

    actor: str
    tool: str
    arguments: tuple[tuple[str, Any], ...]
    high: bool = False

    def describe(self) -> str:
        shown = ", ".join(f"{name}={value!r}" for name, value in self.arguments)
        return f"{self.actor}.{self.tool}({shown})"


@dataclass
class Counterexample:
    """A leak: the operations that show it, and what the observer saw differently."""

    check: str
    policy: Policy
    level: Level | None
    actors: tuple[Actor, ...]
    steps: tuple[Step, ...]
    step: int
    """Index in ``steps`` of the observation that differs (or of the leaking save)."""
    observed: Any
    expected: Any
    explanation: str
    trials: int = 0
    seconds: float = 0.0

    leak = True

    def __len__(self) -> int:
        return len(self.steps)

    def replay(self) -> Counterexample | None:
        """Run the steps again; the same leak comes back (the stores are seeded and the clock fixed)."""
        return _CHECKS[self.check].judge(self.policy, self.level, self.actors, self.steps)

    def rows(self) -> list[dict[str, str]]:
        """The steps as table rows (for notebooks and widgets)."""
        taints = {actor.name: actor for actor in self.actors}
        return [
            {
                "#": str(number),
                "world": "second only" if step.high else "both",
                "session": f"{step.actor} ({_actor_text(taints[step.actor])})",
                "call": step.describe(),
                "note": "<- here" if number == self.step else "",
            }
            for number, step in enumerate(self.steps)
        ]

    def __str__(self) -> str:
        level = f" at {self.level.name}" if self.level is not None else ""
        lines = [f"{self.check} LEAK under policy {self.policy.name}{level}: {len(self.steps)} steps", self.explanation]
        lines += [
            f"  {row['#']:>2}  [{row['world']:^11}] {row['session']:<36} {row['call']} {row['note']}"
            for row in self.rows()
        ]
        lines += [f"  observed: {self.observed!r}", f"  expected: {self.expected!r}"]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{html.escape(name)}</th>" for name in ("#", "world", "session", "call", ""))
        body = "".join(
            "<tr"
            + (' style="background:#fdd"' if row["note"] else "")
            + ">"
            + "".join(f"<td>{html.escape(value)}</td>" for value in row.values())
            + "</tr>"
            for row in self.rows()
        )
        level = f" at {self.level.name}" if self.level is not None else ""
        return (
            f"<p><b>{html.escape(self.check)} leak</b> under policy <code>{html.escape(self.policy.name)}</code>"
            f"{level}: {len(self.steps)} steps. {html.escape(self.explanation)}</p>"
            f"<table><tr>{head}</tr>{body}</table>"
            f"<p>observed: <code>{html.escape(repr(self.observed))}</code><br>"
            f"expected: <code>{html.escape(repr(self.expected))}</code></p>"
        )


@dataclass
class NoLeak:
    """What a check covered without finding a leak."""

    check: str
    policy: str
    trials: int
    operations: int
    seconds: float
    leak = False

    def __str__(self) -> str:
        return (
            f"{self.check}: no leak under policy {self.policy} in {self.trials} random scenarios "
            f"({self.operations} operations, {self.seconds:.1f} s)"
        )

    def _repr_html_(self) -> str:
        return f"<p>{html.escape(str(self))}</p>"


# -- running scenarios ----------------------------------------------------------------------------------


@dataclass
class _World:
    store: MemoryStore
    sessions: dict[str, Session] = field(default_factory=dict)


@functools.lru_cache(maxsize=16)
def _template(policy: Policy) -> SqliteStorage:
    """An empty store with the agent's tables already made; each world starts as a copy of it."""
    storage = SqliteStorage(policy=policy)
    storage.create_agent("main")
    return storage


def _open(policy: Policy, actors: Sequence[Actor], steps: Sequence[Step], *, with_high: bool) -> _World:
    world = _World(MemoryStore(policy=policy, storage=_template(policy).copy(), clock=lambda: _EPOCH))
    used = {step.actor for step in steps if with_high or not step.high}
    for actor in actors:
        if actor.name in used:
            session = world.store.session(actor.start, session_id=actor.name)
            if actor.raised is not None:
                session.escalate(actor.raised, reason="scenario")
            world.sessions[actor.name] = session
    return world


def _call(session: Session, step: Step, number: int) -> Any:
    """Run one step; errors become observations. Fresh content is made unique to its step (the same in
    both worlds), so a copy can be traced to where it came from."""
    arguments = dict(step.arguments)
    if "content" in arguments:
        arguments["content"] = f"{arguments['content']} #{number}"
    try:
        if step.tool == "escalate":
            return session.escalate(arguments["level"])
        if step.tool == "copy":
            read = session.memory_get(arguments["from"])
            return None if read is None else session.memory_save(arguments["to"], read.content)
        return session._invoke(step.tool, arguments)
    except MemlabError as error:
        return ("error", error.code, str(error))


def _run(policy: Policy, actors: Sequence[Actor], steps: Sequence[Step], *, with_high: bool) -> list[Any]:
    world = _open(policy, actors, steps, with_high=with_high)
    seen = []
    try:
        for number, step in enumerate(steps):
            if step.high and not with_high:
                continue
            result = _call(world.sessions[step.actor], step, number)
            seen.append(None if step.high else result)
    finally:
        world.store.close()
    return seen


# -- the checks -------------------------------------------------------------------------------------------


class _Check:
    name = ""
    explanation = ""

    def judge(
        self, policy: Policy, level: Level | None, actors: Sequence[Actor], steps: Sequence[Step]
    ) -> Counterexample | None:
        raise NotImplementedError

    def run(
        self, policy: Policy | str, *, trials: int, seed: int, levels: Sequence[Level], max_ops: int
    ) -> Counterexample | NoLeak:
        policy = resolve(policy)
        levels = sorted(Level.parse(level) for level in levels)
        if len(levels) < 2:
            raise InvalidArgument("a check needs at least two levels")
        rng = random.Random(seed)
        started = time.perf_counter()
        operations = 0
        for trial in range(1, trials + 1):
            level, actors, steps = self.sample(rng, levels, rng.randint(1, max_ops))
            operations += len(steps)
            if self.judge(policy, level, actors, steps) is not None:

                def still_leaks(kept: tuple[Step, ...], level=level, actors=actors) -> object:
                    return self.judge(policy, level, actors, kept)

                found = self.judge(policy, level, actors, _shrink(steps, still_leaks))
                found.trials, found.seconds = trial, time.perf_counter() - started
                return found
        return NoLeak(self.name, policy.name, trials, operations, time.perf_counter() - started)

    def sample(
        self, rng: random.Random, levels: Sequence[Level], length: int
    ) -> tuple[Level | None, tuple[Actor, ...], tuple[Step, ...]]:
        raise NotImplementedError


def _shrink(steps: tuple[Step, ...], leaks: Callable[[tuple[Step, ...]], object]) -> tuple[Step, ...]:
    """Delta debugging: drop steps while the leak persists, until no single step can go (1-minimal)."""
    shrinking = True
    while shrinking:
        shrinking = False
        for index in range(len(steps)):
            kept = steps[:index] + steps[index + 1 :]
            if kept and leaks(kept):
                steps, shrinking = kept, True
                break
    return steps


def _arguments(rng: random.Random, tool: str) -> tuple[tuple[str, Any], ...]:
    words = " ".join(rng.sample(WORDS, rng.randint(1, 2)))
    if tool == "copy":
        return (("from", rng.choice(KEYS)), ("to", rng.choice(KEYS)))
    if tool == "memory_save":
        return (("key", rng.choice(KEYS)), ("content", words), ("tags", tuple(rng.sample(TAGS, rng.randint(0, 1)))))
    if tool in ("memory_get", "memory_delete"):
        return (("key", rng.choice(KEYS)),)
    if tool == "memory_list":
        return (("tag", rng.choice((None, *TAGS))),)
    return (("query", words), ("max_results", 5))


ALL_TOOLS = ("memory_save", "memory_get", "memory_search", "memory_save", "memory_list", "memory_delete")
WRITES = ("memory_save", "memory_delete")


def _step(rng: random.Random, actor: str, tools: Sequence[str] = ALL_TOOLS, *, high: bool = False) -> Step:
    tool = rng.choice(tools)
    return Step(actor, tool, _arguments(rng, tool), high)


class _Noninterference(_Check):
    name = "noninterference"
    explanation = "an observer at or below the level saw something different when sessions above it acted"

    def sample(self, rng, levels, length):
        bound = rng.choice(levels[:-1])
        below = [level for level in levels if level <= bound]
        low = [Actor(f"low{n}", rng.choice(below)) for n in (1, 2)]
        # The high session may start low: it acts only after being escalated above the bound.
        start = rng.choice(levels)
        high = Actor("high", start, max(start, rng.choice([level for level in levels if level > bound])))
        steps = [
            _step(rng, "high", WRITES, high=True)  # reads above the bound change nothing observable
            if rng.random() < 0.4
            else _step(rng, rng.choice(low).name)
            for _ in range(length)
        ]
        return bound, (*low, high), tuple(steps)

    def judge(self, policy, level, actors, steps):
        first = _run(policy, actors, steps, with_high=False)
        second = _run(policy, actors, steps, with_high=True)
        low_steps = [number for number, step in enumerate(steps) if not step.high]
        second_low = [second[number] for number in low_steps]
        for number, seen_alone, seen_with_high in zip(low_steps, first, second_low, strict=True):
            if seen_alone != seen_with_high:
                return Counterexample(
                    self.name,
                    policy,
                    level,
                    tuple(actors),
                    tuple(steps),
                    number,
                    observed=seen_with_high,
                    expected=seen_alone,
                    explanation=self.explanation,
                )
        return None


class _WriteDown(_Check):
    name = "write_down"
    explanation = "content first saved at a level ended up in a record readable below that level"

    def sample(self, rng, levels, length):
        actors = tuple(Actor(f"s{n}", rng.choice(levels)) for n in (1, 2))
        steps = []
        for _ in range(length):
            actor = rng.choice(actors).name
            if rng.random() < 0.25:
                steps.append(Step(actor, "escalate", (("level", rng.choice(levels).name),)))
            else:  # "copy" is laundering's shape: get one key and save what was read under another
                steps.append(_step(rng, actor, ("memory_save", "copy")))
        return None, actors, tuple(steps)

    def judge(self, policy, level, actors, steps):
        world = _open(policy, actors, steps, with_high=True)
        origin: dict[str, Level] = {}  # content -> the classification of the first record that held it
        try:
            for number, step in enumerate(steps):
                result = _call(world.sessions[step.actor], step, number)
                if step.tool not in ("memory_save", "copy") or not isinstance(result, Memory):
                    continue
                first = origin.setdefault(result.content, result.classification)
                if first > result.classification:
                    return Counterexample(
                        self.name,
                        policy,
                        result.classification,
                        tuple(actors),
                        tuple(steps),
                        number,
                        observed=f"{result.content!r} saved at {result.classification.name}",
                        expected=f"saved at {first.name} or above, where that content was first saved",
                        explanation=self.explanation,
                    )
        finally:
            world.store.close()
        return None


class _Shadowing(_Check):
    name = "shadowing"
    explanation = "a read returned a version other than the session's effective version of its key"

    def sample(self, rng, levels, length):
        actors = tuple(Actor(f"s{n}", rng.choice(levels)) for n in (1, 2))
        return None, actors, tuple(_step(rng, rng.choice(actors).name) for _ in range(length))

    def judge(self, policy, level, actors, steps):
        world = _open(policy, actors, steps, with_high=True)
        current: dict[tuple[str, Level], tuple[Memory, bool]] = {}  # (key, level) -> (newest version, live)
        try:
            for number, step in enumerate(steps):
                session = world.sessions[step.actor]
                result = _call(session, step, number)
                if step.tool == "memory_save" and isinstance(result, Memory):
                    current[result.key, result.classification] = (result, True)
                elif step.tool == "memory_delete" and isinstance(result, Memory):
                    current[result.key, result.classification] = (result, False)
                elif step.tool in READS:
                    for memory in _memories(result):
                        expected = _effective(policy, current, session.taint, memory.key)
                        if memory != expected:
                            return Counterexample(
                                self.name,
                                policy,
                                session.taint,
                                tuple(actors),
                                tuple(steps),
                                number,
                                observed=memory,
                                expected=expected,
                                explanation=self.explanation,
                            )
        finally:
            world.store.close()
        return None


def _memories(result: Any) -> list[Memory]:
    items = result if isinstance(result, list) else [result]
    return [item.memory if isinstance(item, Hit) else item for item in items if isinstance(item, (Hit, Memory))]


def _effective(policy: Policy, current: dict, taint: Level, key: str) -> Memory | None:
    for level in sorted(Level, reverse=True):
        memory, live = current.get((key, level), (None, False))
        if live and policy.readable(level, taint):
            return memory
    return None


_CHECKS: dict[str, _Check] = {check.name: check for check in (_Noninterference(), _WriteDown(), _Shadowing())}
CHECKS = tuple(_CHECKS)

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

    >>> print(noninterference("global-stats"))  # doctest: +SKIP
    noninterference LEAK under policy global-stats at PUBLIC: 3 steps ...
    """
    return _CHECKS["noninterference"].run(policy, trials=trials, seed=seed, levels=levels, max_ops=max_ops)


def write_down(
    policy: Policy | str,
    *,
    trials: int = 300,
    seed: int = 0,
    levels: Sequence[Level | str] = _DEFAULT_LEVELS,
    max_ops: int = 8,
) -> Counterexample | NoLeak:
    """Search for laundering: a session reads content and saves it again below the level it came from."""
    return _CHECKS["write_down"].run(policy, trials=trials, seed=seed, levels=levels, max_ops=max_ops)


def shadowing(
    policy: Policy | str,
    *,
    trials: int = 300,
    seed: int = 0,
    levels: Sequence[Level | str] = _DEFAULT_LEVELS,
    max_ops: int = 8,
) -> Counterexample | NoLeak:
    """Search for reads that return a shadowed (or otherwise non-effective) version."""
    return _CHECKS["shadowing"].run(policy, trials=trials, seed=seed, levels=levels, max_ops=max_ops)


def _actor_text(actor: Actor) -> str:
    if actor.raised is None or actor.raised == actor.start:
        return actor.start.name
    return f"{actor.start.name}->{actor.raised.name}"


def run_all(
    policy: Policy | str, *, checks: Sequence[str] = CHECKS, **options: Any
) -> dict[str, Counterexample | NoLeak]:
    """Every check in ``checks`` on one policy, by check name."""
    unknown = [name for name in checks if name not in _CHECKS]
    if unknown:
        raise InvalidArgument(f"unknown check {unknown[0]!r}; the checks are {', '.join(CHECKS)}")
    return {name: _CHECKS[name].run(policy, **{**_DEFAULT_OPTIONS, **options}) for name in checks}


def table(
    policies: Sequence[Policy | str] | None = None, *, checks: Sequence[str] = CHECKS, **options: Any
) -> pd.DataFrame:
    """One row per policy and check: the verdict, the counterexample's length and the time taken.

    >>> table(["strict", "frozen-taint"], trials=100)  # doctest: +SKIP
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
