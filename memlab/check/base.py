"""What every check is: a sampler of random scenarios, a judge of one scenario, and the random search between
them (``Check.run``), which shrinks the first leak it finds."""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

from memlab.check.results import Actor, Counterexample, NoLeak, Step
from memlab.check.scenarios import shrink
from memlab.errors import InvalidArgument
from memlab.labels import Label
from memlab.levels import Level
from memlab.policies import resolve
from memlab.policy import Policy

__all__ = ["Check"]


class Check:
    """A check: ``sample`` draws a random scenario, ``judge`` finds its leak (or None); ``run`` is the seeded random
    search that shrinks the first leak it finds."""

    name = ""
    explanation = ""
    over_labels = True
    """Whether the random search draws a policy's ``label_alphabet`` (every check does: each sampler draws its
    sessions from the labels given, and every judge orders labels by the lattice, as the exhaustive checker's label
    alphabets do)."""

    def judge(
        self, policy: Policy, level: Label | None, actors: Sequence[Actor], steps: Sequence[Step]
    ) -> Counterexample | None:
        raise NotImplementedError

    def inapplicable(self, policy: Policy) -> str:
        """Why the check cannot examine ``policy`` ("" when it can): the integrity checks need a session with a
        trusted floor, which a store under a policy that keeps no view per reader refuses."""
        return ""

    def leak(
        self,
        policy: Policy,
        level: Label | None,
        actors: Sequence[Actor],
        steps: Sequence[Step],
        step: int,
        observed: Any,
        expected: Any,
    ) -> Counterexample:
        """This check's counterexample: what was observed at ``steps[step]``, and what should have been."""
        return Counterexample(
            self.name,
            policy,
            level,
            tuple(actors),
            tuple(steps),
            step,
            observed,
            expected,
            self.explanation,
            judge=self.judge,
        )

    def run(
        self, policy: Policy | str, *, trials: int, seed: int, levels: Sequence[Label | Level | str], max_ops: int
    ) -> Counterexample | NoLeak:
        policy = resolve(policy)
        why = self.inapplicable(policy)
        if why:
            raise InvalidArgument(f"check {self.name} cannot examine policy {policy.name!r}: {why}")
        levels = sorted(Label.parse(level) for level in levels)
        if policy.label_alphabet and self.over_labels:
            # A policy under compartments is examined over its labels (a level is the label without categories).
            levels = [Label.parse(label) for label in policy.label_alphabet]
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

                found = self.judge(policy, level, actors, shrink(steps, still_leaks))
                found.trials, found.seconds = trial, time.perf_counter() - started
                return found
        return NoLeak(self.name, policy.name, trials, operations, time.perf_counter() - started)

    def sample(
        self, rng: random.Random, levels: Sequence[Label], length: int
    ) -> tuple[Label | None, tuple[Actor, ...], tuple[Step, ...]]:
        raise NotImplementedError
