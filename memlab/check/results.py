"""What a check returns: the scenario's actors and steps, a ``Counterexample`` or a ``NoLeak``."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memlab.errors import InvalidArgument
from memlab.labels import Integrity, Label
from memlab.policy import Policy

__all__ = ["Actor", "Step", "Counterexample", "NoLeak"]


@dataclass(frozen=True)
class Actor:
    """A session in a scenario: it starts at ``start`` and is escalated to ``raised`` before acting."""

    name: str
    start: Label
    raised: Label | None = None
    floor: Integrity = Integrity.UNTRUSTED
    """The least trusted grade the session reads (TRUSTED: the integrity checks' observer)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "floor", Integrity.parse(self.floor))
        object.__setattr__(self, "start", Label.parse(self.start))
        if self.raised is not None:
            object.__setattr__(self, "raised", Label.parse(self.raised))

    @property
    def taint(self) -> Label:
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
    level: Label | None
    actors: tuple[Actor, ...]
    steps: tuple[Step, ...]
    step: int
    """Index in ``steps`` of the observation that differs (or of the leaking save)."""
    observed: Any
    expected: Any
    explanation: str
    trials: int = 0
    seconds: float = 0.0
    judge: Callable[..., Counterexample | None] | None = field(default=None, repr=False, compare=False)
    """The check's judge (policy, level, actors, steps) that found it: what ``replay`` runs again."""

    leak = True

    def __len__(self) -> int:
        return len(self.steps)

    def replay(self) -> Counterexample | None:
        """Run the steps again; the same leak comes back (the stores are seeded and the clock fixed)."""
        if self.judge is None:
            raise InvalidArgument(f"this counterexample of {self.check} was not made by a checker: it cannot replay")
        return self.judge(self.policy, self.level, self.actors, self.steps)

    def as_dict(self) -> dict[str, Any]:
        """The leak as JSON values (``memlab check --json``): the steps as ``rows`` gives them, what was observed
        and expected as the text shows them."""
        return {
            "check": self.check,
            "policy": self.policy.name,
            "leak": True,
            "level": None if self.level is None else str(self.level),
            "explanation": self.explanation,
            "steps": self.rows(),
            "observed": repr(self.observed),
            "expected": repr(self.expected),
            "trials": self.trials,
            "seconds": self.seconds,
        }

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
        level = f" at {self.level}" if self.level is not None else ""
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
            # The leaking step in red mixed into the theme's background, so it reads in light and dark themes.
            + (
                ' style="background:color-mix(in srgb, #c62828 22%, var(--jp-layout-color1, #fff));font-weight:bold"'
                if row["note"]
                else ""
            )
            + ">"
            + "".join(f"<td>{html.escape(value)}</td>" for value in row.values())
            + "</tr>"
            for row in self.rows()
        )
        level = f" at {self.level}" if self.level is not None else ""
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

    def as_dict(self) -> dict[str, Any]:
        """What was covered, as JSON values (``memlab check --json``)."""
        return {
            "check": self.check,
            "policy": self.policy,
            "leak": False,
            "trials": self.trials,
            "operations": self.operations,
            "seconds": self.seconds,
        }

    def __str__(self) -> str:
        return (
            f"{self.check}: no leak under policy {self.policy} in {self.trials} random scenarios "
            f"({self.operations} operations, {self.seconds:.1f} s)"
        )

    def _repr_html_(self) -> str:
        return f"<p>{html.escape(str(self))}</p>"


# -- running scenarios ----------------------------------------------------------------------------------


def _actor_text(actor: Actor) -> str:
    floor = " floor trusted" if actor.floor is Integrity.TRUSTED else ""
    if actor.raised is None or actor.raised == actor.start:
        return f"{actor.start}{floor}"
    return f"{actor.start}->{actor.raised}{floor}"
