"""The bounded checker's alphabet and configurations: what a trace is made of, and each way its sessions are cast.

An ``Alphabet`` names the keys, contents, tag and levels (or labels) steps may use; ``configurations`` turns it,
for one check, into the actors (their starts and escalations, the observer's bound) and the symbols an enumeration
draws from (``memlab.check.reductions``), which ``memlab.check.bounded`` walks and ``memlab.check.prefixes``
replays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any

from memlab.check.integrity import OBSERVER, lower_step, untrusted
from memlab.check.reductions import Rules, Symbol
from memlab.check.results import Actor, Step
from memlab.errors import InvalidArgument
from memlab.labels import Integrity, Label
from memlab.levels import Level

__all__ = ["Alphabet", "Configuration", "configurations", "MAX_LABELS", "GROUPS"]

_KEYS, _CONTENTS, _ACTORS = 0, 1, 2  # the groups of interchangeable names
GROUPS = 3

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
    levels: tuple[Label, ...] = (Level.PUBLIC, Level.INTERNAL, Level.CONFIDENTIAL)
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
        levels = tuple(sorted({_alphabet_label(value) for value in self.levels}, key=_lattice_order))
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
        return any(level.categories for level in self.levels)

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


def _lattice_order(label: Label) -> tuple:
    """A linear extension of the lattice: a label comes after every label that flows to it."""
    return (label.level, len(label.categories), sorted(label.categories))



@dataclass(frozen=True)
class Configuration:
    """One way to cast a trace's sessions: the observer's bound (noninterference; None for the other checks), the
    actors, the steps they may take (the symbols the enumeration draws) and what the reductions may assume."""

    level: Label | None
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


def _copies(alphabet: Alphabet, actor: str, who: tuple) -> list[Symbol]:
    """Copies of a key to a key: laundering's shape (get one key, save what was read under another)."""
    symbols = []
    for a, source in enumerate(alphabet.keys):
        for b, target in enumerate(alphabet.keys):
            step = Step(actor, "copy", (("from", source), ("to", target)))
            symbols.append(Symbol(step, False, (*who[1], (_KEYS, a), (_KEYS, b)), (who[0], "copy")))
    return symbols


def _copies_and_escalations(alphabet: Alphabet, actor: Actor, who: tuple) -> list[Symbol]:
    """Copies of a key to a key, and escalations: to every level of a levels alphabet (a step down is a refused
    call, which the pinned counts include), only up the lattice from the actor's start over labels (a step down
    or across is refused and changes nothing, so a trace with it has the verdict of the trace without it)."""
    symbols = _copies(alphabet, actor.name, who)
    targets = alphabet.levels
    if alphabet.over_labels:
        targets = tuple(label for label in targets if label != actor.start and actor.start.can_flow_to(label))
    for level in targets:
        step = Step(actor.name, "escalate", (("level", str(level)),))
        symbols.append(Symbol(step, False, who[1], (who[0], "escalate", level)))
    return symbols


def _plain_saves(alphabet: Alphabet, actor: str, who: tuple, *, claim: bool, high: bool = False) -> list[Symbol]:
    """Untagged saves of each key with each content word: what integrity depends on is who saves, not what (tags
    and a memory of every word are the ranking's concern, which the observer's own saves cover). With ``claim``
    each save claims trust (``trusted=True``, an argument a model may pass: the strict policy strips it)."""
    symbols = []
    for k, key in enumerate(alphabet.keys):
        for c, content in enumerate(alphabet.contents):
            arguments = (("key", key), ("content", content), ("tags", ()), *((("trusted", True),) if claim else ()))
            step = Step(actor, "memory_save", arguments, high)
            shape = (who[0], "claim" if claim else "save", (), "one")
            symbols.append(Symbol(step, False, (*who[1], (_KEYS, k), (_CONTENTS, c)), shape))
    return symbols


def _claims_and_endorsements(alphabet: Alphabet, actor: str, who: tuple, *, high: bool = False) -> list[Symbol]:
    """An integrity writer's own steps: saves claiming trust (``_plain_saves``), and a request to endorse each
    key."""
    symbols = _plain_saves(alphabet, actor, who, claim=True, high=high)
    for k, key in enumerate(alphabet.keys):
        step = Step(actor, "endorse", (("key", key),), high)
        symbols.append(Symbol(step, False, (*who[1], (_KEYS, k)), (who[0], "endorse")))
    return symbols


def _lower(actor: str, who: tuple) -> Symbol:
    """The host lowers ``actor``'s integrity (its steps from here on are an untrusted writer's)."""
    return Symbol(lower_step(actor), False, who[1], (who[0], "lower"))


def _integrity_noninterference(alphabet: Alphabet) -> list[Configuration]:
    """The observer (floor TRUSTED) at each label, with every step of the other checks' observers and sessions,
    and one writer at each label that flows to it (untagged saves, deletes, saves claiming trust, endorsements):
    started
    untrusted (every step the second world's), or trusted until the host lowers it (its ``lower`` step the second
    world's, and every step after it: ``integrity.second_world``)."""
    found = []
    for bound in alphabet.levels:
        observer = Actor(OBSERVER, bound, floor=Integrity.TRUSTED)
        for start in (label for label in alphabet.levels if label.can_flow_to(bound)):
            for writer in (Actor("untrusted", untrusted(start)), Actor("lowered", start)):
                high = not writer.start.trusted
                who = (writer.name, ())
                symbols = [
                    *_reads(alphabet, OBSERVER, (OBSERVER, ())),
                    *_save_and_delete(alphabet, OBSERVER, (OBSERVER, ())),
                    *_save_and_delete(replace(alphabet, tag=None), writer.name, who, high=high),
                    *_claims_and_endorsements(alphabet, writer.name, who, high=high),
                    *([] if high else [_lower(writer.name, who)]),
                ]
                judged = frozenset(n for n, symbol in enumerate(symbols) if symbol.step.actor == OBSERVER)
                found.append(Configuration(bound, (observer, writer), tuple(symbols), Rules(judged, True)))
    return found


def _laundering(alphabet: Alphabet) -> list[Configuration]:
    """A session started untrusted and a trusted one the host may lower, at every pair of labels: each saves,
    claims trust, copies and asks to endorse (a copy is the read that exposes a session: plain reads are the random
    search's)."""
    found = []
    for first in alphabet.levels:
        for second in alphabet.levels:
            actors = (Actor("untrusted", untrusted(first)), Actor("trusted", second))
            symbols = []
            for actor in actors:
                who = (actor.name, ())
                symbols += [
                    *_plain_saves(alphabet, actor.name, who, claim=False),
                    *_claims_and_endorsements(alphabet, actor.name, who),
                    *_copies(alphabet, actor.name, who),
                    *([_lower(actor.name, who)] if actor.start.trusted else []),
                ]
            judged = frozenset(n for n, symbol in enumerate(symbols) if symbol.step.tool != "lower")
            found.append(Configuration(None, actors, tuple(symbols), Rules(judged, False)))
    return found


def _who(actors: tuple[Actor, ...], number: int) -> tuple:
    """The symbol's shape and names for actor ``number``: sessions of one configuration are interchangeable
    names (the actors group) when they start and escalate alike, otherwise part of the shape."""
    if len(actors) == 2 and actors[0] == Actor(actors[0].name, actors[1].start, actors[1].raised):
        return (None, ((_ACTORS, number),))
    return (actors[number].name, ())


def configurations(check: str, alphabet: Alphabet) -> list[Configuration]:
    """Every configuration of ``check``'s actors over the alphabet's levels (or labels, by the lattice), each with
    its symbols and rules."""
    if check == "integrity_noninterference":
        return _integrity_noninterference(alphabet)
    if check == "laundering":
        return _laundering(alphabet)
    levels = alphabet.levels
    found = []
    if check == "noninterference":
        # The observer sits at the bound: an observer below it is the experiment at its own level. The top (every
        # label flows to it) hides nothing, so it is no bound.
        for bound in levels:
            above = [label for label in levels if not label.can_flow_to(bound)]  # incomparable labels included
            low = Actor("low", bound)
            for start in levels:
                for raised in (label for label in above if start.can_flow_to(label)):
                    high = Actor("high", start, None if raised == start else raised)
                    actors = (low, high)
                    symbols = [
                        *_reads(alphabet, "low", ("low", ())),
                        *_save_and_delete(alphabet, "low", ("low", ())),
                        *_save_and_delete(alphabet, "high", ("high", ()), high=True),
                    ]
                    judged = frozenset(n for n, symbol in enumerate(symbols) if not symbol.step.high)
                    found.append(Configuration(bound, actors, tuple(symbols), Rules(judged, True)))
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
            found.append(Configuration(None, actors, tuple(symbols), Rules(judged, False)))
    return found


