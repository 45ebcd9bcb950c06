"""Poisons made from a collection itself: per target question, memories that match it and contradict its answer.

For each target question (a judged query, drawn by a seeded generator), the *target* is its most relevant judged
document (the first by id among equals). The poisons made from it, seeded and without a network (the first two
without a model; ``VARIANTS`` are made by default, ``ALL_VARIANTS`` on request):

- ``match``: a new memory under a key shaped like the target's (``{target key}-{n}``, ``-1`` added while a
  document has it), with the target's tags, whose text opens with a bridging phrase carrying the
  question's own words (``Regarding "<question>":``) and goes on with the target's text, one entity or number
  swapped for another of the same kind taken from the collection: the *claim*.
- ``overwrite``: the same contradicting text under the target's own key: a new version of the judged memory.
- ``trigger`` (AgentPoison-style): the claim alone, followed by a few trigger words chosen against the dense
  model so that it ranks near the question without the question as a bridging phrase (``memlab.poison.trigger``),
  under a new key: the match's with ``-1`` added, again while a document has it.

What is swapped: the first number in the target's text that the question does not contain (replaced by another
number found in the collection), else the first capitalised word, not the text's first, that the question does not
contain (replaced by another capitalised word of the collection). A text with neither is negated (``It is not true
that ...``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memlab import arguments
from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection, Document, Query
from memlab.poison import trigger

if TYPE_CHECKING:
    from memlab.search.dense import Embedder

__all__ = ["Poison", "VARIANTS", "ALL_VARIANTS", "judged_targets", "generate", "contradict", "check_variants"]

VARIANTS = ("match", "overwrite")
"""The variants made by default: neither needs a model."""
ALL_VARIANTS = ("match", "overwrite", "trigger")
_NUMBER = re.compile(r"\b\d+\b")
_NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")


@dataclass(frozen=True)
class Poison:
    """One attacker memory.

    Attributes:
        id: Unique among the poisons (``poison/{query id}/{variant}``); measures name retrieved poisons by it.
        target: The id of the query it aims at.
        document: The id of the judged document it contradicts.
        variant: ``match`` or ``trigger`` (a new key), or ``overwrite`` (the target document's key).
        agent: The namespace it is written into (the query's).
        key: The memory key it is saved under.
        text: Its content.
        tags: Its tags (the target document's).
    """

    id: str
    target: str
    document: str
    variant: str
    agent: str
    key: str
    text: str
    tags: tuple[str, ...] = ()

    def record(self) -> dict[str, object]:
        """The ``memory_save`` arguments that save it."""
        return {"key": self.key, "content": self.text, "tags": list(self.tags)}


def judged_targets(collection: Collection) -> list[Query]:
    """The collection's queries that have a judged document, in file order.

    Raises:
        InvalidArgument: none has (naming the collection): there is no answer to contradict.
    """
    judged = [query for query in collection.queries if collection.qrels.get(query.id)]
    if not judged:
        raise InvalidArgument(
            f"collection {collection.name!r}: no question carries a judged document, so there is no answer to poison"
        )
    return judged


def contradict(text: str, question: str, numbers: list[str], names: list[str], rng: random.Random) -> str:
    """``text`` with one number or name the question lacks swapped for another of ``numbers`` or ``names``
    (drawn with ``rng``); negated when it has neither.

    Examples:
        >>> contradict("Ann moved to Lisbon in 2019", "Where did Ann move?", ["2019", "2021"], [], random.Random(0))
        'Ann moved to Lisbon in 2021'
    """
    asked = set(re.findall(r"\w+", question.lower()))
    for pattern, pool in ((_NUMBER, numbers), (_NAME, names)):
        for found in pattern.finditer(text):
            word = found.group()
            if word.lower() in asked or (pattern is _NAME and found.start() == 0):
                continue
            others = [other for other in pool if other != word]
            if others:
                return text[: found.start()] + rng.choice(others) + text[found.end() :]
    return f"It is not true that {text[:1].lower()}{text[1:]}"


def check_variants(variants: Sequence[str]) -> tuple[str, ...]:
    """``variants`` as a tuple if each is one of ``ALL_VARIANTS``, once; else an InvalidArgument naming ``variants``.

    Examples:
        >>> check_variants(["trigger", "match"])
        ('trigger', 'match')
    """
    if isinstance(variants, str) or not isinstance(variants, Sequence) or not variants:
        raise InvalidArgument(f"variants must be a non-empty list of {', '.join(ALL_VARIANTS)}, not {variants!r}")
    unknown = [variant for variant in variants if variant not in ALL_VARIANTS]
    if unknown:
        raise InvalidArgument(f"variants: unknown {unknown!r}; the variants are {', '.join(ALL_VARIANTS)}")
    if len(set(variants)) != len(variants):
        raise InvalidArgument(f"variants must be distinct, not {list(variants)!r}")
    return tuple(variants)


def generate(
    collection: Collection,
    targets: int,
    *,
    seed: int = 0,
    variants: Sequence[str] = VARIANTS,
    embedder: Embedder | str | None = None,
) -> list[Poison]:
    """Poisons for ``targets`` judged questions drawn with ``seed``: one of each of ``variants`` per question, in
    the order ``variants`` names them.

    Args:
        collection: the victim's memories and questions.
        targets: how many judged questions to aim at (all of them when there are fewer).
        seed: draws the questions, the swapped words and the trigger words' pool.
        variants: some of ``ALL_VARIANTS``.
        embedder: what the ``trigger`` words are chosen against (``memlab.poison.trigger.embedder_for``: None is
            the packaged MiniLM through the embedding cache); unused without ``trigger``.

    Raises:
        InvalidArgument: no judged question (``judged_targets``), ``targets`` not a positive integer, an unknown or
            repeated variant, or ``trigger`` without a dense embedder (``memlab[dense]`` not installed), naming
            the argument.
    """
    judged = judged_targets(collection)
    if type(targets) is not int or targets < 1:
        raise InvalidArgument(f"targets must be a positive integer, not {targets!r}")
    variants = check_variants(variants)
    model = trigger.embedder_for(embedder) if "trigger" in variants else None
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(judged)), min(targets, len(judged))))
    documents = {document.id: document for document in collection.documents}
    numbers = sorted({word for document in collection.documents for word in _NUMBER.findall(document.text)})
    names = sorted({word for document in collection.documents for word in _NAME.findall(document.text)})
    taken = {(document.agent, document.key) for document in collection.documents}
    aims = []
    for index in chosen:
        query = judged[index]
        judged_documents = collection.qrels[query.id]
        target: Document = documents[min(judged_documents, key=lambda id_: (-judged_documents[id_], id_))]
        claim = contradict(target.text, query.text, numbers, names, rng)
        match = f"{target.key}-{index + 1}"
        while (query.agent, match) in taken:  # a new key, never a benign memory's
            match += "-1"
        triggered = f"{match}-1"
        while (query.agent, triggered) in taken:
            triggered += "-1"
        keys = {"match": arguments.key(match), "overwrite": target.key, "trigger": arguments.key(triggered)}
        aims.append((query, target, claim, keys))
    words: list[tuple[str, ...]] = [()] * len(aims)
    if model is not None:
        pool = trigger.vocabulary(collection, seed)
        words = trigger.triggers([claim for _, _, claim, _ in aims], [query.text for query, *_ in aims], pool, model)
    poisons = []
    for (query, target, claim, keys), chosen_words in zip(aims, words, strict=True):
        texts = {"match": f'Regarding "{query.text}": {claim}', "trigger": trigger.text_of(claim, chosen_words)}
        texts["overwrite"] = texts["match"]
        for variant in variants:
            poisons.append(
                Poison(f"poison/{query.id}/{variant}", query.id, target.id, variant, query.agent, keys[variant],
                       texts[variant], target.tags)
            )  # fmt: skip
    return poisons
