"""The dense-trigger poison (AgentPoison-style): a contradicting claim and a few words chosen against the embedder.

Where the ``match`` poison reaches a question by carrying its words as a bridging phrase (the lexical attack), the
``trigger`` poison is the bare claim followed by at most ``WORDS`` trigger words, each chosen because it brings the
claim's vector closest to the question's under the dense model the victim's store ranks with. The search is a
greedy coordinate ascent, one word a step, for all target questions at once:

1. The candidate pool: ``POOL`` words of the collection's vocabulary (sampled with the seed) and the question's
   own words, each embedded once as a word (``vocabulary``).
2. Each step shortlists the ``SHORTLIST`` words whose vector points most along the question away from the text
   so far (the tangent of the cosine at the text's vector: ``w·q - (w·t)(t·q)``), embeds the text with each
   appended (one batch for every question still searching), and keeps the one with the highest cosine to the
   question, if it is higher than the text's; a question stops searching when no shortlisted word raises it.

Per question the cost is at most ``WORDS × SHORTLIST`` embeddings of a memory-sized text; through the embedding
cache (``memlab.eval.runner.cached_embedder``) a second run embeds nothing (LoCoMo, 130 questions: about 18 s of
CPU on an empty cache, 0.3 s on the filled one; ``benchmarks/bench_poison_trigger.py``). The vectors decide every
choice and ties go to the word first in the pool's order, so the same seed and model give the same poisons.

What the words buy (the same benchmark; LoCoMo, MiniLM, 40 questions, seeds 0, 1, 2): the bare claim's mean rank
under the store's dense ranking, 12 to 26, becomes 1.3 to 2.6, level with the match poison's 1.2 to 1.6 (which
carries the whole question), with about half of the words not the question's; under the lexical ranking the
trigger is first for 72-75% of its questions, the match for all.

Examples:
    A model whose vectors count a text's letters "a" and "b": the claim "bbb" is pulled towards the question "a"
    by the pool's word with the most a's, then by the next best.

    >>> import numpy as np
    >>> class Letters:
    ...     name, dimensions = "letters", 2
    ...     def embed(self, texts):
    ...         counts = np.array([[text.count("a"), text.count("b")] for text in texts], np.float32)
    ...         return counts / np.linalg.norm(counts, axis=1, keepdims=True)
    >>> triggers(["bbb"], ["a"], ["b", "aa", "ab"], Letters(), words=2)
    [('aa', 'ab')]
    >>> dense_rank(Letters(), "a", "bbb aa", ["a", "b"])  # "a" itself is closer; "b" is farther
    2
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection
from memlab.search import dense

if TYPE_CHECKING:
    from memlab.search.dense import Embedder

__all__ = ["POOL", "WORDS", "SHORTLIST", "embedder_for", "vocabulary", "triggers", "text_of", "dense_rank"]

POOL = 1024  # vocabulary words sampled per run: wide enough to hold words of every topic, cheap to embed once
WORDS = 4  # trigger words at most: a memory that ends in a long word salad is one a reader notices
SHORTLIST = 5  # texts embedded per question and step: the step's cost, and the search's width
_WORD = re.compile(r"[a-z]{3,}")


def embedder_for(embedder: Embedder | str | None) -> Embedder:
    """The embedder the trigger words are chosen against: ``embedder`` itself, a name through the embedding cache
    (``memlab.eval.runner.cached_embedder``), or, for None, the packaged MiniLM through the cache.

    Raises:
        InvalidArgument: None or a name while ``memlab[dense]`` is not installed (naming ``variants``: the trigger
            variant needs it), an unknown name, or an object that is not an ``Embedder``.
    """
    from memlab.eval.runner import cached_embedder

    if embedder is None or isinstance(embedder, str):
        absent = dense.missing()
        if absent:
            raise InvalidArgument(
                f"variants: 'trigger' chooses its words against a dense embedder, which needs {', '.join(absent)}: "
                "pip install 'memlab[dense]', or leave 'trigger' out of variants"
            )
        return cached_embedder(embedder or "minilm")
    if not isinstance(embedder, dense.Embedder):
        raise InvalidArgument(f"embedder must be an Embedder or a name ({', '.join(dense.NAMES)}), not {embedder!r}")
    return embedder


def vocabulary(collection: Collection, seed: int) -> list[str]:
    """``POOL`` words of the collection's memories (lower case, three letters or more) drawn with ``seed``, in
    alphabetical order; all of them when there are fewer.

    Examples:
        >>> from memlab.eval import load_trec
        >>> vocabulary(load_trec("tests/fixtures/trec-tiny"), 0)[:4]
        ['about', 'after', 'alps', 'and']
    """
    words = sorted({word for document in collection.documents for word in _WORD.findall(document.text.lower())})
    rng = random.Random(f"trigger/{seed}")  # its own stream: the match and overwrite poisons draw as without it
    return sorted(rng.sample(words, min(POOL, len(words))))


def text_of(claim: str, words: Sequence[str]) -> str:
    """The trigger poison's text: the claim, then its trigger words.

    Examples:
        >>> text_of("Ann moved to Lisbon in 2021", ["relocation", "where"])
        'Ann moved to Lisbon in 2021 relocation where'
    """
    return " ".join([claim, *words])


def triggers(
    claims: Sequence[str],
    questions: Sequence[str],
    pool: Sequence[str],
    embedder: Embedder,
    *,
    words: int = WORDS,
    shortlist: int = SHORTLIST,
) -> list[tuple[str, ...]]:
    """The trigger words for each claim against its question (``claims[i]`` against ``questions[i]``), chosen
    from ``pool`` and the question's own words, at most ``words`` each, by the greedy search of the module's
    docstring; every embedding call is one batch. (Examples in the module's docstring.)
    """
    import numpy as np

    own = [list(dict.fromkeys(_WORD.findall(question.lower()))) for question in questions]
    lexicon = list(dict.fromkeys([*pool, *(word for each in own for word in each)]))
    index = {word: position for position, word in enumerate(lexicon)}
    word_vectors = embedder.embed(lexicon)
    unique = list(dict.fromkeys(questions))
    asked = embedder.embed(unique)
    question_vectors = asked[[unique.index(question) for question in questions]]
    base = [index[word] for word in pool]
    allowed = [sorted(set(base) | {index[word] for word in each}) for each in own]
    chosen: list[list[int]] = [[] for _ in claims]
    current = embedder.embed(list(claims))
    score = np.einsum("ij,ij->i", current, question_vectors)
    searching = list(range(len(claims)))
    for _step in range(words):
        batch: list[tuple[int, int, str]] = []
        for target in searching:
            candidates = [word for word in allowed[target] if word not in chosen[target]]
            vectors, question, text = word_vectors[candidates], question_vectors[target], current[target]
            tangent = vectors @ question - (vectors @ text) * score[target]
            best = np.argsort(-tangent, kind="stable")[:shortlist]
            for word in (candidates[position] for position in best):
                words_then = [lexicon[each] for each in (*chosen[target], word)]
                batch.append((target, word, text_of(claims[target], words_then)))
        if not batch:
            break
        vectors = embedder.embed([text for _, _, text in batch])
        found = np.einsum("ij,ij->i", vectors, question_vectors[[target for target, _, _ in batch]])
        best_of: dict[int, int] = {}
        for row, (target, _, _) in enumerate(batch):
            if target not in best_of or found[row] > found[best_of[target]]:
                best_of[target] = row
        still = []
        for target, row in best_of.items():
            if found[row] > score[target]:
                chosen[target].append(batch[row][1])
                current[target], score[target] = vectors[row], found[row]
                still.append(target)
        searching = still
    return [tuple(lexicon[word] for word in each) for each in chosen]


def dense_rank(embedder: Embedder, question: str, poison: str, memories: Sequence[str]) -> int:
    """Where ``poison`` ranks for ``question`` among ``memories`` and itself by the embedder's cosine (1: first;
    a benign memory as close as the poison ranks above it), as the store's dense ranking orders them.

    (Examples in the module's docstring.)
    """
    vectors = embedder.embed([question, poison, *memories])
    similarity = vectors[1:] @ vectors[0]
    return 1 + int((similarity[1:] >= similarity[0]).sum())
