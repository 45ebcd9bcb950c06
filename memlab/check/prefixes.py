"""Prefix sharing: traces that begin alike replay their common prefix once, on the real store.

The exhaustive checker walks the trace tree depth first (``reductions.walk_traces``). Each node keeps the worlds
as its prefix left them: each world's store as a snapshot (``MemoryStore.snapshot``) and its sessions. A node's
step runs on a working store restored to its parent's snapshot (``MemoryStore.restore``, which copies the pages
back, far cheaper than forking a store), so every step of every trace runs the store's own code on a database in
exactly the state the trace's earlier steps put it in (the same rows, ids and audit chain); only the prefix's
work is done once for all the traces that share it.

The verdict of a trace is its check's judgement (``memlab.check.checks``) made step by step along the walk: the
same worlds (``scenarios.open_world``), the same steps (``scenarios.act``), the same comparisons. A world's
sessions are those of the actors its trace uses, which a prefix does not know yet, so a node keeps one branch per
set of actors the trace may still turn out to use; a trace ends on the branch of the actors it used.
``tests/test_exhaustive.py`` checks, trace by trace, that the verdicts are the judges'.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

from memlab.check.checks import effective_version
from memlab.check.integrity import exposed_at_start, launders
from memlab.check.reductions import walk_traces
from memlab.check.results import Step
from memlab.check.scenarios import World, act, is_read, memories_of, open_world
from memlab.errors import InternalError
from memlab.labels import Integrity
from memlab.policy import Policy
from memlab.records import Memory
from memlab.session import Session

if TYPE_CHECKING:
    from memlab.check.configurations import Configuration
    from memlab.store import Snapshot

__all__ = ["verdicts", "walk"]


@dataclass
class _Slot:
    """A world's working store: restored to a node's snapshot before the node's next step runs on it."""

    world: World
    image: Snapshot | None = None  # the snapshot the store holds now; None once a step changed it unrecorded

    def __post_init__(self) -> None:
        self.image = self.world.store.snapshot()

    def hold(self, image: Snapshot | None) -> None:
        if image is None:
            raise InternalError("a trace's last step was taken as a prefix: its world has no image")
        if self.image is image:
            return
        self.world.store.restore(image)
        self.image = image

    def run(
        self, state: _State, step: Step, number: int, *, keep: bool, returned: list[Memory] | None = None
    ) -> tuple[Any, _State]:
        """``step`` on the world as ``state`` left it: what it returned, and the world after it (its image
        taken only when ``keep``: a trace's last step leaves nothing to share); ``returned`` as ``act`` fills it."""
        self.hold(state.image)
        session = copy.copy(state.sessions[step.actor])  # the taint it may raise or lower is this branch's alone
        result = act(session, step, number, returned)
        self.image = self.world.store.snapshot() if keep else None
        return result, _State(self.image, {**state.sessions, step.actor: session})

    def close(self) -> None:
        self.world.store.close()


@dataclass(frozen=True)
class _State:
    """A world as a prefix left it: its database's image (None after a trace's last step) and its sessions."""

    image: Snapshot | None
    sessions: dict[str, Session]


@dataclass(frozen=True)
class _Branch:
    """One set of actors' worlds after the prefix, what the check has seen so far, and the first leak's step."""

    slots: tuple[_Slot, ...]
    states: tuple[_State, ...]
    seen: Any = field(default=None)  # content -> first label (write-down), checks.Current (shadowing)
    leak: int | None = None


@dataclass(frozen=True)
class _Node:
    used: frozenset[str]  # the actors the prefix's steps use
    branches: dict[frozenset[str], _Branch]  # by the set of actors the trace's worlds have sessions for


def _noninterference(policy: Policy, branch: _Branch, number: int, step: Step, keep: bool) -> _Branch:
    """The two worlds of ``_Noninterference.judge``: high steps run only in the second; the observer's results
    must be equal in both."""
    (alone, with_high), (slot_alone, slot_with_high) = branch.states, branch.slots
    seen_with_high, with_high = slot_with_high.run(with_high, step, number, keep=keep)
    if step.high:
        return _Branch(branch.slots, (alone, with_high), None, branch.leak)
    seen_alone, alone = slot_alone.run(alone, step, number, keep=keep)
    leak = branch.leak if branch.leak is not None or seen_alone == seen_with_high else number
    return _Branch(branch.slots, (alone, with_high), None, leak)


def _write_down(policy: Policy, branch: _Branch, number: int, step: Step, keep: bool) -> _Branch:
    """``_WriteDown.judge``: no content may be saved below the level of the first record that held it."""
    result, state = branch.slots[0].run(branch.states[0], step, number, keep=keep)
    origin, leak = branch.seen, branch.leak
    if step.tool in ("memory_save", "copy") and isinstance(result, Memory):
        first = origin.get(result.content, result.label)
        origin = {**origin, result.content: first}
        if leak is None and not first.can_flow_to(result.label):
            leak = number
    return _Branch(branch.slots, (state,), origin, leak)


def _shadowing(policy: Policy, branch: _Branch, number: int, step: Step, keep: bool) -> _Branch:
    """``_Shadowing.judge``: every read returns, for each key, the session's effective version."""
    result, state = branch.slots[0].run(branch.states[0], step, number, keep=keep)
    taint = state.sessions[step.actor].taint
    current, leak = branch.seen, branch.leak
    if step.tool in ("memory_save", "memory_delete") and isinstance(result, Memory):
        current = {**current, (result.key, result.label): (result, step.tool == "memory_save", number)}
    elif leak is None and is_read(step.tool):
        if any(memory != effective_version(policy, current, taint, memory.key) for memory in memories_of(result)):
            leak = number
    return _Branch(branch.slots, (state,), current, leak)


def _integrity_noninterference(policy: Policy, branch: _Branch, number: int, step: Step, keep: bool) -> _Branch:
    """``IntegrityNoninterference.judge``: an untrusted writer's steps (a high symbol, or any step of a session
    the host lowered before) run only in the second world; the observers' results must be equal in both."""
    lowered, observers = branch.seen
    if step.tool == "lower":
        lowered = lowered | {step.actor}
    (alone, with_untrusted), (slot_alone, slot_with_untrusted) = branch.states, branch.slots
    seen_with_untrusted, with_untrusted = slot_with_untrusted.run(with_untrusted, step, number, keep=keep)
    if step.high or step.actor in lowered:
        return _Branch(branch.slots, (alone, with_untrusted), (lowered, observers), branch.leak)
    seen_alone, alone = slot_alone.run(alone, step, number, keep=keep)
    differs = step.actor in observers and seen_alone != seen_with_untrusted
    leak = number if branch.leak is None and differs else branch.leak
    return _Branch(branch.slots, (alone, with_untrusted), (lowered, observers), leak)


def _laundering(policy: Policy, branch: _Branch, number: int, step: Step, keep: bool) -> _Branch:
    """``Laundering.judge``: no session exposed to untrusted content (or lowered) writes a trusted version."""
    returned: list[Memory] = []
    result, state = branch.slots[0].run(branch.states[0], step, number, keep=keep, returned=returned)
    exposed, written = launders(branch.seen, step, number, result, returned)
    leak = number if branch.leak is None and written is not None else branch.leak
    return _Branch(branch.slots, (state,), exposed, leak)


_STEPS = {
    "noninterference": _noninterference,
    "write_down": _write_down,
    "shadowing": _shadowing,
    "integrity_noninterference": _integrity_noninterference,
    "laundering": _laundering,
}


def _branch(worlds: Sequence[World], seen: Any) -> _Branch:
    slots = tuple(_Slot(world) for world in worlds)
    states = tuple(_State(slot.image, dict(slot.world.sessions)) for slot in slots)
    return _Branch(slots, states, seen)


def _roots(policy: Policy, check: str, configuration: Configuration) -> dict[frozenset[str], _Branch]:
    """The empty worlds, one branch per set of actors a kept trace may use: under noninterference every actor
    (a trace ends with the observer's step and has a high one); otherwise any non-empty set."""
    actors = configuration.actors
    names = [actor.name for actor in actors]
    if check in ("noninterference", "integrity_noninterference"):
        low = {symbol.step.actor for symbol in configuration.symbols if not symbol.step.high}
        alone = open_world(policy, actors, [Step(name, "memory_get", ()) for name in sorted(low)], with_high=False)
        every = open_world(policy, actors, [Step(name, "memory_get", ()) for name in names], with_high=True)
        observers = frozenset(actor.name for actor in actors if actor.floor is Integrity.TRUSTED)
        seen = None if check == "noninterference" else (frozenset(), observers)
        return {frozenset(names): _branch((alone, every), seen)}
    roots = {}
    for size in range(1, len(names) + 1):
        for chosen in combinations(names, size):
            world = open_world(policy, actors, [Step(name, "memory_get", ()) for name in chosen], with_high=True)
            roots[frozenset(chosen)] = _branch((world,), exposed_at_start(actors) if check == "laundering" else {})
    return roots


def verdicts(
    policy: Policy, check: str, configuration: Configuration, groups: int, depth: int, prefix: Sequence[int] = ()
) -> Iterator[tuple[tuple[Step, ...], bool]]:
    """Every kept trace of ``depth`` steps of ``configuration`` (beginning with ``prefix``), in the enumeration's
    order, and whether ``check`` finds a leak in it; the stores are closed when the walk ends or is left."""
    for steps, branch in walk(policy, check, configuration, groups, depth, prefix):
        yield steps, branch.leak is not None


def walk(
    policy: Policy, check: str, configuration: Configuration, groups: int, depth: int, prefix: Sequence[int] = ()
) -> Iterator[tuple[tuple[Step, ...], _Branch]]:
    """``verdicts``' walk: each trace with its branch, whose working stores hold the worlds the trace left (until
    the caller asks for the next trace)."""
    step_of = _STEPS[check]

    def advance(node: _Node, number: int, step: Step, last: bool) -> _Node:
        used = node.used | {step.actor}
        # A trace's last step runs only on the branch of the actors it used; a prefix's, on every branch that
        # still has the actors it used.
        branches = {
            actors: step_of(policy, branch, number, step, not last)
            for actors, branch in node.branches.items()
            if (actors == used if last else used <= actors)
        }
        return _Node(used, branches)

    roots = _roots(policy, check, configuration)
    try:
        start = _Node(frozenset(), roots)
        trees = walk_traces(configuration.symbols, groups, configuration.rules, depth, start, advance, prefix=prefix)
        for steps, node in trees:
            branch = node.branches.get(node.used)
            if branch is None:
                raise InternalError(f"no world has the sessions of the actors of {[s.describe() for s in steps]}")
            yield steps, branch
    finally:
        for branch in roots.values():
            for slot in branch.slots:
                slot.close()
