"""The checks, in one registry: noninterference (two worlds), write-down (laundering) and shadowing here, and the
integrity checks (``memlab.check.integrity``): integrity noninterference and laundering."""

from __future__ import annotations

from memlab.check.base import Check
from memlab.check.integrity import IntegrityNoninterference, Laundering
from memlab.check.results import Actor, Step
from memlab.check.scenarios import act, is_read, memories_of, observe, open_world, random_step, writes
from memlab.labels import Label
from memlab.policy import Policy
from memlab.records import Memory
from memlab.registry import Registry

__all__ = ["CHECKS"]


class _Noninterference(Check):
    name = "noninterference"
    explanation = "an observer at or below the level saw something different when sessions above it acted"

    def sample(self, rng, levels, length):
        if any(level.categories for level in levels):
            return self._sample_labels(rng, levels, length)
        bound = rng.choice(levels[:-1])
        below = [level for level in levels if level <= bound]
        low = [Actor(f"low{n}", rng.choice(below)) for n in (1, 2)]
        # The high session may start low: it acts only after being escalated above the bound.
        start = rng.choice(levels)
        high = Actor("high", start, max(start, rng.choice([level for level in levels if level > bound])))
        high_tools = writes()  # reads above the bound change nothing observable
        steps = [
            random_step(rng, "high", high_tools, high=True)
            if rng.random() < 0.4
            else random_step(rng, rng.choice(low).name)
            for _ in range(length)
        ]
        return bound, (*low, high), tuple(steps)

    def _sample_labels(self, rng, labels, length):
        """As ``sample`` over a partial order: the observers at labels that flow to the bound, the high session
        raised to one that does not (another compartment, or above)."""
        bounds = [bound for bound in labels if any(not label.can_flow_to(bound) for label in labels)]
        bound = rng.choice(bounds)
        low = [Actor(f"low{n}", rng.choice([label for label in labels if label.can_flow_to(bound)])) for n in (1, 2)]
        raised = rng.choice([label for label in labels if not label.can_flow_to(bound)])
        high = Actor("high", rng.choice([label for label in labels if label.can_flow_to(raised)]), raised)
        high_tools = writes()
        steps = [
            random_step(rng, "high", high_tools, high=True)
            if rng.random() < 0.4
            else random_step(rng, rng.choice(low).name)
            for _ in range(length)
        ]
        return bound, (*low, high), tuple(steps)

    def judge(self, policy, level, actors, steps):
        first = observe(policy, actors, steps, with_high=False)
        second = observe(policy, actors, steps, with_high=True)
        low_steps = [number for number, step in enumerate(steps) if not step.high]
        second_low = [second[number] for number in low_steps]
        for number, seen_alone, seen_with_high in zip(low_steps, first, second_low, strict=True):
            if seen_alone != seen_with_high:
                return self.leak(policy, level, actors, steps, number, seen_with_high, seen_alone)
        return None


class _WriteDown(Check):
    name = "write_down"
    explanation = "content first saved at a level ended up in a record readable below that level"

    def sample(self, rng, levels, length):
        actors = tuple(Actor(f"s{n}", rng.choice(levels)) for n in (1, 2))
        steps = []
        for _ in range(length):
            actor = rng.choice(actors).name
            if rng.random() < 0.25:
                steps.append(Step(actor, "escalate", (("level", str(rng.choice(levels))),)))
            else:  # "copy" is laundering's shape: get one key and save what was read under another
                steps.append(random_step(rng, actor, ("memory_save", "copy")))
        return None, actors, tuple(steps)

    def judge(self, policy, level, actors, steps):
        world = open_world(policy, actors, steps, with_high=True)
        origin: dict[str, Label] = {}  # content -> the label of the first record that held it
        try:
            for number, step in enumerate(steps):
                result = act(world.sessions[step.actor], step, number)
                if step.tool not in ("memory_save", "copy") or not isinstance(result, Memory):
                    continue
                first = origin.setdefault(result.content, result.label)
                if not first.can_flow_to(result.label):
                    return self.leak(
                        policy,
                        result.label,
                        actors,
                        steps,
                        number,
                        f"{result.content!r} saved at {result.label}",
                        f"saved at {first} or above, where that content was first saved",
                    )
        finally:
            world.store.close()
        return None


class _Shadowing(Check):
    name = "shadowing"
    explanation = "a read returned a version other than the session's effective version of its key"

    def sample(self, rng, levels, length):
        actors = tuple(Actor(f"s{n}", rng.choice(levels)) for n in (1, 2))
        return None, actors, tuple(random_step(rng, rng.choice(actors).name) for _ in range(length))

    def judge(self, policy, level, actors, steps):
        world = open_world(policy, actors, steps, with_high=True)
        current: Current = {}
        try:
            for number, step in enumerate(steps):
                session = world.sessions[step.actor]
                result = act(session, step, number)
                if step.tool in ("memory_save", "memory_delete") and isinstance(result, Memory):
                    current[result.key, result.label] = (result, step.tool == "memory_save", number)
                elif is_read(step.tool):
                    for memory in memories_of(result):
                        expected = effective_version(policy, current, session.taint, memory.key)
                        if memory != expected:
                            return self.leak(policy, session.taint, actors, steps, number, memory, expected)
        finally:
            world.store.close()
        return None


Current = dict[tuple[str, Label], tuple[Memory, bool, int]]
"""The shadowing check's own record: (key, label) -> the newest version there, whether it is live, its step."""

REFUSED_AS_AMBIGUOUS = "ambiguous: several maximal versions, none above the others"
"""What the check expects of a key the ``refuse`` rule will not choose for: a read returns none of its versions
(``memlab.viewrules.AMBIGUOUS`` is the storage's marker for the same key in a view)."""


def effective_version(policy: Policy, current: Current, taint: Label, key: str) -> Memory | str | None:
    """The session's effective version of ``key`` by the check's own record of saves and deletes, not the store's.

    Among the live versions the session may read (the policy's ``readable``), the maximal ones: under a total
    order the one at the highest level, under compartments perhaps several. Of several, the newest (the last
    saved) under ``newest``, and under a rule that is not one of ``viewrules.SHADOWING_RULES`` (a faulty one claims
    to show the newest); ``REFUSED_AS_AMBIGUOUS`` under ``refuse``.
    """
    live = {
        label: (memory, order) for (name, label), (memory, alive, order) in current.items() if name == key and alive
    }
    readable = [label for label in live if policy.readable(label, taint)]
    maximal = [label for label in readable if not any(o != label and label.can_flow_to(o) for o in readable)]
    if not maximal:
        return None
    if len(maximal) > 1 and policy.shadowing == "refuse":
        return REFUSED_AS_AMBIGUOUS
    return max((live[label] for label in maximal), key=lambda version: version[1])[0]




CHECKS: Registry[Check] = Registry("check", Check)
"""The checks, by name: a new one is a ``Check`` (``memlab.check.base``) registered here (its ``sample`` and
``judge``); the random search, ``run_all``, ``table`` and ``memlab check`` read this."""
for _check in (_Noninterference(), _WriteDown(), _Shadowing(), IntegrityNoninterference(), Laundering()):
    CHECKS.register(_check)
