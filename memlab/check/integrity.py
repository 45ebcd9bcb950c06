"""The integrity checks: integrity noninterference and laundering.

- ``integrity_noninterference`` — two worlds that differ only in untrusted writers' calls: a session started
  untrusted (every step of it), and one the host lowers mid-trace (its ``lower`` step and every step after it). A
  session whose floor is TRUSTED must observe exactly the same in both, scores included.
- ``laundering`` — no version labelled trusted is written by a session after a call returned it untrusted
  content, or after the host lowered it (a session started untrusted is so from its first step).

Besides the tools, their steps are ``lower`` (the host's ``Session.lower_integrity``), ``endorse`` (a session asking
to endorse a key, ``Policy.endorse``), ``copy`` (get a key, save what was read) and saves that claim trust
(``trusted=True``, an argument a model may pass: it is stripped).

Examples:
    >>> Laundering().run("strict", trials=30, seed=0, levels=["PUBLIC", "INTERNAL"], max_ops=6).leak
    False
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from memlab.check.base import Check
from memlab.check.results import Actor, Step
from memlab.check.scenarios import (
    KEYS,
    act,
    is_read,
    memories_of,
    observe,
    open_world,
    random_arguments,
    random_step,
    template,
    writes,
)
from memlab.errors import InvalidArgument
from memlab.labels import Integrity, Label
from memlab.policy import Policy
from memlab.records import Memory

__all__ = [
    "IntegrityNoninterference",
    "Laundering",
    "keeps_floors",
    "untrusted",
    "lower_step",
    "writer_step",
    "second_world",
    "launders",
    "exposed_at_start",
    "OBSERVER",
    "SOURCE",
]

OBSERVER = "observer"
SOURCE = "web:page"
"""What the host says it fed a session it lowers (the ``lower`` step's source)."""


def keeps_floors(policy: Policy) -> bool:
    """Whether a store under ``policy`` keeps a view per reader, so a session may have a trusted floor (the
    ``global-stats`` and ``shadow-after-match`` variants' stores refuse one).

    Examples:
        >>> from memlab.policies import resolve
        >>> keeps_floors(resolve("strict")), keeps_floors(resolve("global-stats"))
        (True, False)
    """
    store = template(policy).fork()
    try:
        store.session("PUBLIC", floor=Integrity.TRUSTED)
    except InvalidArgument:
        return False
    finally:
        store.close()
    return True


def untrusted(label: Label) -> Label:
    """``label`` at integrity UNTRUSTED: where a session started on untrusted content sits."""
    return Label(label.level, label.categories, Integrity.UNTRUSTED)


def writer_step(rng: random.Random, actor: str, *, high: bool) -> Step:
    """A random step of a session that writes: a tool that changes memory, a save claiming trust, or an endorse."""
    tool = rng.choice((*writes(), "claim", "endorse"))
    if tool == "claim":
        return Step(actor, "memory_save", (*random_arguments(rng, "memory_save"), ("trusted", True)), high)
    if tool == "endorse":
        return Step(actor, "endorse", (("key", rng.choice(KEYS)),), high)
    return Step(actor, tool, random_arguments(rng, tool), high)


def lower_step(actor: str) -> Step:
    """The host lowers ``actor``'s integrity: it fed the session untrusted content."""
    return Step(actor, "lower", (("source", SOURCE),), True)


def second_world(actors: Sequence[Actor], steps: Sequence[Step]) -> tuple[Step, ...]:
    """``steps`` with each marked ``high`` (the second world's only) exactly when an untrusted writer takes it: its
    session started untrusted, or the host lowered it at this step or before. A lowered session's earlier steps
    are a trusted writer's, in both worlds."""
    lowered = {actor.name for actor in actors if not actor.start.trusted}
    marked = []
    for step in steps:
        if step.tool == "lower":
            lowered.add(step.actor)
        high = step.actor in lowered
        marked.append(step if step.high == high else Step(step.actor, step.tool, step.arguments, high))
    return tuple(marked)


class IntegrityNoninterference(Check):
    name = "integrity_noninterference"
    explanation = "an observer whose floor is trusted saw something different when untrusted writers acted"

    def inapplicable(self, policy: Policy) -> str:
        return "" if keeps_floors(policy) else "its stores refuse a trusted floor (they keep no view per reader)"

    def sample(self, rng, levels, length):
        bound = rng.choice(levels)
        below = [label for label in levels if label.can_flow_to(bound)]
        actors = (
            Actor(OBSERVER, bound, floor=Integrity.TRUSTED),
            Actor("untrusted", untrusted(rng.choice(below))),
            Actor("lowered", rng.choice(below)),
        )
        steps: list[Step] = []
        for _ in range(length):
            draw = rng.random()
            if draw < 0.35:
                steps.append(writer_step(rng, "untrusted", high=True))
            elif draw < 0.45:
                steps.append(lower_step("lowered"))
            elif draw < 0.6:
                steps.append(writer_step(rng, "lowered", high=False))
            else:
                steps.append(random_step(rng, OBSERVER))
        return bound, actors, tuple(steps)

    def judge(self, policy, level, actors, steps):
        steps = second_world(actors, steps)
        observers = {actor.name for actor in actors if actor.floor is Integrity.TRUSTED}
        alone = observe(policy, actors, steps, with_high=False)
        with_untrusted = observe(policy, actors, steps, with_high=True)
        both = [number for number, step in enumerate(steps) if not step.high]
        for number, seen_alone in zip(both, alone, strict=True):
            seen = with_untrusted[number]
            if steps[number].actor in observers and seen != seen_alone:
                return self.leak(policy, level, actors, steps, number, seen, seen_alone)
        return None


def exposed_at_start(actors: Sequence[Actor]) -> dict[str, str]:
    """The sessions untrusted from their first step, each with why (the laundering check's starting record)."""
    return {actor.name: "it started untrusted" for actor in actors if not actor.start.trusted}


def launders(
    exposed: Mapping[str, str], step: Step, number: int, result: Any, returned: Sequence[Memory]
) -> tuple[dict[str, str], str | None]:
    """The laundering check's judgement of one step: the sessions exposed to untrusted content after it (name ->
    why), and the version it wrote trusted for a session exposed before it wrote (its ref, else None).

    ``returned`` holds what the step read before it wrote (a copy's get); a read's own results are taken from
    ``result``."""
    exposed = dict(exposed)
    shown = [*returned, *(memories_of(result) if is_read(step.tool) else ())]
    read = next((memory for memory in shown if not memory.classification.trusted), None)
    if read is not None:
        exposed.setdefault(step.actor, f"step {number} returned it {read.ref()}, untrusted")
    if step.tool == "lower" and isinstance(result, Integrity):
        exposed.setdefault(step.actor, f"the host lowered it at step {number}")
    written = None
    if step.tool in ("memory_save", "copy") and isinstance(result, Memory) and result.classification.trusted:
        written = result.ref()
    elif step.tool == "endorse" and isinstance(result, str):
        written = result  # the ref of the trusted version an endorsement makes
    return exposed, (written if written is not None and step.actor in exposed else None)


class Laundering(Check):
    name = "laundering"
    explanation = (
        "a version labelled trusted was written by a session after a call returned it untrusted content (or after "
        "the host lowered it)"
    )

    def sample(self, rng, levels, length):
        actors = (Actor("untrusted", untrusted(rng.choice(levels))), Actor("trusted", rng.choice(levels)))
        steps: list[Step] = []
        for _ in range(length):
            actor = rng.choice(actors).name
            draw = rng.random()
            if actor == "trusted" and draw < 0.15:
                steps.append(lower_step(actor))
            elif draw < 0.4:
                steps.append(random_step(rng, actor, ("copy",)))
            elif draw < 0.7:
                steps.append(writer_step(rng, actor, high=False))
            else:
                steps.append(random_step(rng, actor))
        return None, actors, tuple(steps)

    def judge(self, policy, level, actors, steps):
        world = open_world(policy, actors, steps, with_high=True)
        exposed = exposed_at_start(actors)
        try:
            for number, step in enumerate(steps):
                returned: list[Memory] = []
                result = act(world.sessions[step.actor], step, number, returned)
                before = exposed.get(step.actor)
                exposed, written = launders(exposed, step, number, result, returned)
                if written is not None:
                    why = before or exposed[step.actor]
                    return self.leak(
                        policy,
                        world.sessions[step.actor].taint,
                        actors,
                        steps,
                        number,
                        f"{written} written trusted by session {step.actor}",
                        f"an untrusted version: {why}",
                    )
        finally:
            world.store.close()
        return None
