"""The experiment: per ranking, a clean store and, per defence, the same store poisoned; the victims' questions asked.

For each ranking (``memlab.poison.rows.rankings_of``) a throwaway in-memory store is loaded with the collection as
the relevance lab loads it (``memlab.eval.runner.load``) and every question is asked by a victim session of its
agent: the clean rankings. For each defence a fresh store is loaded the same way, the poisons
(``memlab.poison.generate``) are written by the tier (``memlab.poison.tiers``), and then:

1. ISR: a victim session per agent (the defence's floor) reads each poison's key (``memory_get``);
2. ASR-r@k, UD and the availability of reads: a victim session per agent asks every question (``memory_search``,
   ``depth`` results), each hit named by a poison's id when its content is a poison's, else by its document's;
3. later saves: per target question, in order, a victim (a fresh session per question, or one per agent for
   ``low-water-mark``) asks it again and saves the best hit as an answer (``answer-<n>``), as an agent keeps what it
   concluded. A save *rests on poison* when that hit is a poison, and is *laundered* when it rests on poison and
   is stamped trusted; the low-water mark *caught* it when the session was trusted before that read and untrusted
   after (what a store whose reads never lower would have laundered). The availability of saves is the share of
   the answers a trusted-floor session reads.

Examples:
    >>> from memlab.eval import load_trec
    >>> table = run(load_trec("tests/fixtures/trec-tiny"), rate=0.2, k=(1,), seed=1)
    >>> table.set_index("row")["ASR-r@k"].to_dict()
    {'integrity-ignored': 1.0, 'labels-only': 1.0, 'trust-demoted': 0.0, 'floor-trusted': 0.0, 'low-water-mark': 1.0}
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pandas as pd

from memlab.errors import InvalidArgument
from memlab.eval.collections import Collection
from memlab.eval.configurations import Configuration
from memlab.eval.locomo import load_locomo
from memlab.eval.runner import cached_embedder, load
from memlab.labels import Integrity
from memlab.poison.generate import VARIANTS, Poison, check_variants, generate, judged_targets
from memlab.poison.measures import benign_reads, injection_success, retrieval_success, share, utility
from memlab.poison.rows import Defence, defences_of, rankings_of
from memlab.poison.tiers import check_tier, inject
from memlab.store import MemoryStore, Snapshot

__all__ = [
    "run",
    "steps",
    "targets_for",
    "check_rate",
    "check_rates",
    "check_tiers",
    "check_seed",
    "check_k",
    "MAX_DEPTH",
]

MAX_DEPTH = 100  # memory_search's cap


def check_rate(rate: object) -> float:
    """``rate`` if it is a number strictly between 0 and 1; else an InvalidArgument naming ``rate``."""
    if not isinstance(rate, int | float) or isinstance(rate, bool) or not 0 < rate < 1:
        raise InvalidArgument(f"rate must be a number strictly between 0 and 1 (poisoned / all memories), not {rate!r}")
    return float(rate)


def check_rates(rate: object) -> tuple[float, ...]:
    """``rate`` (a number or a sequence of distinct numbers) as a tuple, each checked by ``check_rate``."""
    rates = tuple(rate) if isinstance(rate, Sequence) and not isinstance(rate, str) else (rate,)
    if not rates or len(set(rates)) != len(rates):
        raise InvalidArgument(f"rate must be one number or distinct numbers strictly between 0 and 1, not {rate!r}")
    return tuple(check_rate(each) for each in rates)


def check_tiers(tier: object) -> tuple[str, ...]:
    """``tier`` (a name or a sequence of distinct names) as a tuple, each checked by ``check_tier``."""
    tiers = tuple(tier) if isinstance(tier, Sequence) and not isinstance(tier, str) else (tier,)
    if not tiers or len(set(tiers)) != len(tiers):
        raise InvalidArgument(f"tier must be one tier or distinct tiers, not {tier!r}")
    return tuple(check_tier(each) for each in tiers)


def check_seed(seed: object) -> int:
    """``seed`` if it is an integer (the same seed gives the same table); else an InvalidArgument naming it."""
    if type(seed) is not int:
        raise InvalidArgument(f"seed must be an integer, not {seed!r}")
    return seed


def check_k(k: object, depth: object) -> tuple[int, ...]:
    """``k`` (an int or a sequence of ints) as a tuple if each is in 1..``depth``; else an InvalidArgument naming
    ``k`` (or ``depth``, when it is not in 1..``MAX_DEPTH``)."""
    if type(depth) is not int or not 1 <= depth <= MAX_DEPTH:
        raise InvalidArgument(f"depth must be an integer from 1 to {MAX_DEPTH}, not {depth!r}")
    ks = (k,) if isinstance(k, int) else tuple(k) if isinstance(k, Sequence) and not isinstance(k, str) else None
    if not ks or any(type(each) is not int or not 1 <= each <= depth for each in ks):
        raise InvalidArgument(f"k must be one or more integers from 1 to the depth {depth}, not {k!r}")
    return ks


def targets_for(collection: Collection, rate: float, per_target: int = 2) -> int:
    """How many target questions make the poisoned share of memories ``rate`` (``per_target`` poisons each), at
    least one and at most the judged questions: the poisons p solve p / (documents + p) = rate."""
    wanted = rate * len(collection.documents) / (1 - rate)
    return max(1, min(len(judged_targets(collection)), round(wanted / per_target)))


def run(
    collection: Collection | None = None,
    *,
    tier: str | Sequence[str] = "direct",
    rate: float | Sequence[float] = 0.01,
    k: int | Sequence[int] = (1, 5, 10),
    seed: int = 0,
    rows: Sequence[str] | None = None,
    rankings: Sequence[str] = ("lexical",),
    variants: Sequence[str] = VARIANTS,
    depth: int = 10,
    cache: str | Path | bool = True,
    progress: Callable[[str], None] | None = None,
) -> pd.DataFrame:
    """Attack ``collection`` (LoCoMo by default) by ``tier`` at each poison ``rate``, under each defence and ranking.

    Args:
        collection: the victim's memories and questions (the relevance lab's format).
        tier: ``direct``, ``query`` or ``content`` (``memlab.poison.tiers``), or several.
        rate: the share of poisoned memories wanted, in (0, 1), or several; the table gives the share reached.
        k: the cut-offs of ASR-r@k, each from 1 to ``depth``.
        seed: draws the target questions and the swapped words; the same seed gives the same table.
        rows: defences (``memlab.poison.rows.DEFENCES``), the default ones when None.
        rankings: ``lexical``, ``dense``, ``hybrid``; one that cannot run here is left out and named in
            ``table.attrs["skipped"]`` with why.
        variants: the poisons made per target (``memlab.poison.generate``): ``match`` and ``overwrite`` by
            default; ``trigger`` (chosen against the dense model) needs ``memlab[dense]``.
        depth: how many results each question keeps (S@10 and nDCG@10 look at 10).
        cache: the dense rankings' embedding cache (``memlab.eval.runner.cached_embedder``).
        progress: called with a short description after each store is measured (a progress bar's ``update``).

    Returns:
        One row per tier, rate, defence, ranking and k: ``row``, ``ranking``, ``tier``, ``k``, ``rate``, ``poison rate``
        (poisons / all memories), ``benign density`` (mean benign memories in a target question's namespace),
        ``targets``, ``poisons``, ``ISR``, ``ISR overwrite``, ``ASR-r@k``, ``ASR-r@k all``, UD over the
        victim's questions (``target S@10 clean`` ... ``target p nDCG@10``) and over all (``all S@10 clean`` ...),
        ``available reads``, ``available saves``, ``saves on poison``, ``laundered saves``, ``saves caught``.

    Raises:
        InvalidArgument: an unknown tier, row, ranking or variant, a rate outside (0, 1), a k outside 1..depth, a
            seed that is not an integer, or a collection without a judged question, each naming the argument;
            before any store is made.
    """
    tiers = check_tiers(tier)
    rates = check_rates(rate)
    ks = check_k(k, depth)
    seed = check_seed(seed)
    defences = defences_of(rows)
    variants = check_variants(variants)
    configurations, skipped = rankings_of(rankings)
    collection = collection if collection is not None else load_locomo()
    embedder = cached_embedder("minilm", cache) if "trigger" in variants else None
    plans = [
        (each, generate(collection, targets_for(collection, each, len(variants)), seed=seed, variants=variants,
                        embedder=embedder))
        for each in rates
    ]  # fmt: skip
    frames = []
    for name, configuration in configurations.items():
        with _store(configuration, cache) as store:
            load(store, collection, context=configuration.context)
            clean = _search(store, collection, [], floor="untrusted", depth=depth)
            loaded = store.snapshot()  # each defence starts from the loaded store, restored, not loaded again
            for tier in tiers:
                for each, poisons in plans:
                    for defence in defences:
                        with _victims_store(store, loaded, configuration, defence, collection, cache) as attacked:
                            measured = _attack(attacked, collection, poisons, tier, defence, clean, depth=depth, ks=ks)
                        about = {"row": defence.name, "ranking": name, "tier": tier}
                        frames += [{**about, "k": one["k"], "rate": each, **one} for one in measured]
                        if progress is not None:
                            progress(" ".join(([tier] if len(tiers) > 1 else []) + [name, defence.name, f"{each:g}"]))
    table = pd.DataFrame(frames)
    table.attrs["skipped"] = skipped
    return table


def steps(
    rankings: Sequence[str],
    rows: Sequence[str] | None,
    rate: float | Sequence[float],
    tier: str | Sequence[str] = "direct",
) -> int:
    """How many times ``run`` calls ``progress`` for these arguments (the rankings that can run here)."""
    return len(rankings_of(rankings)[0]) * len(defences_of(rows)) * len(check_rates(rate)) * len(check_tiers(tier))


@contextlib.contextmanager
def _victims_store(
    store: MemoryStore,
    loaded: Snapshot,
    configuration: Configuration,
    defence: Defence,
    collection: Collection,
    cache: str | Path | bool,
) -> Iterator[MemoryStore]:
    """The loaded store as ``defence`` runs it: ``store`` restored to ``loaded`` and ranked as the defence says;
    a fresh store, loaded again, for a defence under another policy."""
    if defence.policy is not None:
        with _store(configuration, cache, policy=defence.policy) as other:
            load(other, collection, context=configuration.context)
            other.ranking = defence.ranking(configuration.ranking)
            yield other
        return
    store.restore(loaded)
    store.ranking = defence.ranking(configuration.ranking)
    try:
        yield store
    finally:
        store.ranking = configuration.ranking


@contextlib.contextmanager
def _store(
    configuration: Configuration, cache: str | Path | bool, *, policy: str | None = None
) -> Iterator[MemoryStore]:
    """A throwaway in-memory store under ``policy``, empty, ranked as ``configuration`` says (as the relevance lab
    makes it)."""
    analyzer, _context, embedder, boosted = configuration.store_key
    embedder = cached_embedder(embedder, cache)
    with MemoryStore.throwaway(
        None, policy=policy, analyzer=analyzer, embedder=embedder, index_tag_words=boosted
    ) as store:
        store.ranking = configuration.ranking
        yield store


def _namer(collection: Collection, poisons: Sequence[Poison]):
    """hit -> its id: the poison's when its content is a poison's, else its document's, else None (an answer)."""
    by_content = {(poison.agent, poison.key, poison.text): poison.id for poison in poisons}
    by_key = {(document.agent, document.key): document.id for document in collection.documents}

    def name(agent: str, hit) -> str | None:
        memory = hit.memory
        return by_content.get((agent, memory.key, memory.content)) or by_key.get((agent, memory.key))

    return name


def _search(store: MemoryStore, collection: Collection, poisons: Sequence[Poison], *, floor: str, depth: int) -> dict:
    name = _namer(collection, poisons)
    victims: dict = {}
    ranking = {}
    for query in collection.queries:
        victim = victims.get(query.agent) or victims.setdefault(
            query.agent, store.session(agent=query.agent, floor=floor)
        )
        hits = victim.memory_search(query.text, max_results=depth)
        ranking[query.id] = [found for hit in hits if (found := name(query.agent, hit)) is not None]
    return ranking


def _attack(
    store: MemoryStore,
    collection: Collection,
    poisons: Sequence[Poison],
    tier: str,
    defence: Defence,
    clean: dict,
    *,
    depth: int,
    ks: tuple[int, ...],
) -> list[dict]:
    """Poison the loaded ``store`` by ``tier`` under ``defence`` and measure: one dict per k."""
    inject(store, poisons, tier, trusted=defence.trusted_writes)
    readers = {agent: store.session(agent=agent, floor=defence.floor) for agent in {p.agent for p in poisons}}
    read = [
        (got := readers[poison.agent].memory_get(poison.key)) is not None and got.content == poison.text
        for poison in poisons
    ]
    overwrites = [flag for flag, poison in zip(read, poisons, strict=True) if poison.variant == "overwrite"]
    ranking = _search(store, collection, poisons, floor=defence.floor, depth=depth)
    targets = list(dict.fromkeys(poison.target for poison in poisons))
    everyone = [query.id for query in collection.queries]
    poisoned = {poison.id for poison in poisons}
    benign = {document.id for document in collection.documents}
    on_poison, laundered, caught, available = _later_saves(store, collection, poisons, targets, defence, depth=depth)
    per_agent = {}
    for document in collection.documents:
        per_agent[document.agent] = per_agent.get(document.agent, 0) + 1
    agents = {query.id: query.agent for query in collection.queries}
    common = {
        "poison rate": len(poisons) / (len(collection.documents) + len(poisons)),
        "benign density": sum(per_agent.get(agents[target], 0) for target in targets) / len(targets),
        "targets": len(targets),
        "poisons": len(poisons),
        "ISR": injection_success(read),
        "ISR overwrite": injection_success(overwrites),
    }
    ud = {f"target {name}": value for name, value in utility(collection.qrels, clean, ranking, targets).items()}
    ud |= {f"all {name}": value for name, value in utility(collection.qrels, clean, ranking, everyone).items()}
    tail = {
        "available reads": benign_reads(clean, ranking, everyone, benign),
        "available saves": available,
        "saves on poison": on_poison,
        "laundered saves": laundered,
        "saves caught": caught,
    }
    rows = []
    for k in ks:
        success = retrieval_success(ranking, targets, poisoned, k)
        rows.append({"k": k, **common, "ASR-r@k": success["any"], "ASR-r@k all": success["all"], **ud, **tail})
    return rows


def _later_saves(
    store: MemoryStore,
    collection: Collection,
    poisons: Sequence[Poison],
    targets: Sequence[str],
    defence: Defence,
    *,
    depth: int,
) -> tuple[int, int, int, float]:
    """Each target question asked again and its best hit saved as an answer: (saves resting on poison, those
    stamped trusted, those the low-water mark caught: made by a session trusted before it read the poison and
    untrusted after, the share of answers a trusted-floor session reads)."""
    name = _namer(collection, poisons)
    poisoned = {poison.id for poison in poisons}
    queries = {query.id: query for query in collection.queries}
    victims: dict = {}
    on_poison = laundered = caught = 0
    answers = []
    for number, target in enumerate(targets, start=1):
        query = queries[target]
        if defence.long_session:
            victim = victims.get(query.agent) or victims.setdefault(
                query.agent, store.session(agent=query.agent, floor=defence.floor)
            )
        else:
            victim = store.session(agent=query.agent, floor=defence.floor)
        trusted_before = victim.integrity is Integrity.TRUSTED
        found = [(hit, name(query.agent, hit)) for hit in victim.memory_search(query.text, max_results=depth)]
        found = [(hit, found_id) for hit, found_id in found if found_id is not None]
        if not found:
            continue
        best, best_id = found[0]
        saved = victim.memory_save(f"answer-{number}", best.memory.content, ["answer"])
        answers.append((query.agent, saved.key, saved.content))
        if best_id in poisoned:
            on_poison += 1
            laundered += saved.integrity is Integrity.TRUSTED
            caught += trusted_before and saved.integrity is Integrity.UNTRUSTED
    checkers = {agent: store.session(agent=agent, floor="trusted") for agent, _, _ in answers}
    kept = [
        (got := checkers[agent].memory_get(key)) is not None and got.content == content
        for agent, key, content in answers
    ]
    return on_poison, laundered, caught, share(kept)
