"""Scenarios: fresh stores forked from a template, sessions acting out steps, random steps, shrinking."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memlab import tooldefs
from memlab.check.results import Actor, Step
from memlab.errors import MemlabError
from memlab.policy import Policy
from memlab.records import Hit, Memory
from memlab.session import Session
from memlab.store import MemoryStore

KEYS = ("k1", "k2")
WORDS = ("apple", "berry", "cider")
TAGS = ("apple", "cider")  # words of WORDS too: searches name tags, so the tag boost's statistics are checked
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass
class World:
    store: MemoryStore
    sessions: dict[str, Session] = field(default_factory=dict)


@functools.lru_cache(maxsize=16)
def template(policy: Policy) -> MemoryStore:
    """An empty store under ``policy``; each world starts as a fork of it."""
    return MemoryStore(policy=policy)


def open_world(policy: Policy, actors: Sequence[Actor], steps: Sequence[Step], *, with_high: bool) -> World:
    world = World(template(policy).fork(clock=lambda: EPOCH))
    used = {step.actor for step in steps if with_high or not step.high}
    for actor in actors:
        if actor.name in used:
            session = world.store.session(actor.start, session_id=actor.name, floor=actor.floor)
            if actor.raised is not None:
                session.escalate(actor.raised, reason="scenario")
            world.sessions[actor.name] = session
    return world


def act(session: Session, step: Step, number: int, returned: list[Memory] | None = None) -> Any:
    """Run one step; errors become observations. Fresh content is made unique to its step (the same in
    both worlds), so a copy can be traced to where it came from. ``returned``, when given, gets the version a
    copy read (the laundering check asks what a step showed its session before it saved).

    Besides the tools, the checks' steps: ``escalate``, ``copy`` (get one key, save what was read under another),
    ``lower`` (the host lowers the session's integrity: it was fed untrusted content) and ``endorse`` (the session
    asks to endorse a key, ``Policy.endorse``: refused unless a faulty policy carries it out)."""
    arguments = dict(step.arguments)
    if "content" in arguments:
        arguments["content"] = f"{arguments['content']} #{number}"
    try:
        if step.tool == "escalate":
            return session.escalate(arguments["level"])
        if step.tool == "copy":
            read = session.memory_get(arguments["from"])
            if read is not None and returned is not None:
                returned.append(read)
            return None if read is None else session.memory_save(arguments["to"], read.content)
        if step.tool == "lower":
            return session.lower_integrity(source=arguments["source"])
        if step.tool == "endorse":
            return session.store.policy.endorse(session, arguments["key"])
        return session.call(step.tool, arguments)
    except MemlabError as error:
        return ("error", error.code, str(error))


def observe(policy: Policy, actors: Sequence[Actor], steps: Sequence[Step], *, with_high: bool) -> list[Any]:
    world = open_world(policy, actors, steps, with_high=with_high)
    seen = []
    try:
        for number, step in enumerate(steps):
            if step.high and not with_high:
                continue
            result = act(world.sessions[step.actor], step, number)
            seen.append(None if step.high else result)
    finally:
        world.store.close()
    return seen


# -- the checks -------------------------------------------------------------------------------------------


MIX = ("memory_save", "memory_get", "memory_search", "memory_save", "memory_list", "memory_delete")
"""How often the random checks draw each shipped tool (a save twice, so that reads find something); any other tool
in the table is drawn once."""


def drawn() -> tuple[str, ...]:
    """The tools a random step draws from: every model tool in the table (``memlab.tooldefs``), weighted by ``MIX``.

    Examples:
        >>> drawn()
        ('memory_save', 'memory_get', 'memory_search', 'memory_save', 'memory_list', 'memory_delete')
    """
    offered = [tool.name for tool in tooldefs.model_tools()]
    return (*(name for name in MIX if name in offered), *(name for name in offered if name not in MIX))


def writes() -> tuple[str, ...]:
    """The model tools that change memory, in the table's order: what a session above the bound draws (its reads
    change nothing a session below can observe)."""
    return tuple(tool.name for tool in tooldefs.model_tools() if not tool.read_only)


def is_read(tool: str) -> bool:
    """Whether ``tool`` is a read in the table (its results are judged by the shadowing check); ``copy`` and
    ``escalate`` are steps of the checks, not tools."""
    return tool in tooldefs.TOOLS and tooldefs.TOOLS.get(tool).read_only


def random_arguments(rng: random.Random, tool: str) -> tuple[tuple[str, Any], ...]:
    """Arguments for ``tool``, one for each parameter its table entry offers a model, drawn from the checks' small
    alphabet (``KEYS``, ``WORDS``, ``TAGS``) by the parameter's name, else a plain value of its JSON type."""
    words = " ".join(rng.sample(WORDS, rng.randint(1, 2)))
    if tool == "copy":
        return (("from", rng.choice(KEYS)), ("to", rng.choice(KEYS)))
    drawn_arguments = []
    for parameter in tooldefs.get(tool).parameters:
        if parameter.schema is None:  # the host's to give, never a model's
            continue
        drawn_arguments.append((parameter.name, _draw(rng, parameter.name, parameter.schema, words)))
    return tuple(drawn_arguments)


def _draw(rng: random.Random, name: str, schema: Any, words: str) -> Any:
    if name == "key":
        return rng.choice(KEYS)
    if name in ("content", "query"):
        return words
    if name == "tags":
        return tuple(rng.sample(TAGS, rng.randint(0, 1)))
    if name == "tag":
        return rng.choice((None, *TAGS))
    if name == "max_results":
        return 5
    return {"string": words, "integer": schema.get("minimum", 1), "array": ()}.get(schema.get("type"))


def random_step(rng: random.Random, actor: str, tools: Sequence[str] | None = None, *, high: bool = False) -> Step:
    """A step of ``actor`` calling a tool drawn from ``tools`` (default ``drawn()``), with random arguments."""
    tool = rng.choice(drawn() if tools is None else tools)
    return Step(actor, tool, random_arguments(rng, tool), high)


def shrink(steps: tuple[Step, ...], leaks: Callable[[tuple[Step, ...]], object]) -> tuple[Step, ...]:
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


def memories_of(result: Any) -> list[Memory]:
    items = result if isinstance(result, list) else [result]
    return [item.memory if isinstance(item, Hit) else item for item in items if isinstance(item, (Hit, Memory))]
