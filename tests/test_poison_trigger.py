"""The dense-trigger poison: the contradicting claim and a few words chosen against the embedder, seeded."""

import re
from collections.abc import Sequence

import numpy as np
import pytest

from memlab import InvalidArgument
from memlab.eval import Document, load_locomo, load_trec
from memlab.eval.runner import cached_embedder
from memlab.poison import ALL_VARIANTS, VARIANTS, generate, trigger
from memlab.search import dense
from tests.poison_toy import toy


class Bag:
    """A bag-of-words model: each word of ``words`` a dimension, weighted by its length (so the longest missing
    question word is the one that helps most, worked out by hand below)."""

    name = "bag-of-words"

    def __init__(self, words: Sequence[str]) -> None:
        self.words = {word: position for position, word in enumerate(words)}
        self.dimensions = len(self.words)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                if word in self.words:
                    vectors[row, self.words[word]] += len(word)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


def bag_of(collection) -> Bag:
    texts = [document.text for document in collection.documents] + [query.text for query in collection.queries]
    return Bag(sorted({word for text in texts for word in re.findall(r"\w+", text.lower())}))


def cosine(embedder, text: str, question: str) -> float:
    vectors = embedder.embed([text, question])
    return float(vectors[0] @ vectors[1])


def test_the_trigger_is_the_contradicting_claim_then_the_words_that_most_raise_its_similarity_to_the_question():
    collection = toy()
    bag = bag_of(collection)
    poisons = generate(collection, 2, seed=0, variants=ALL_VARIANTS, embedder=bag)
    city = {p.variant: p for p in poisons if p.target == "q-city"}
    # The claim is the match's, without its bridging phrase: the year swapped (2019 -> 2021), the judged tags.
    assert city["match"].text == 'Regarding "where did Ann move": Ann moved to Lisbon in 2021'
    claim = "Ann moved to Lisbon in 2021"
    # By hand, with the question's words weighted where 5, move 4, did 3, ann 3 (|q|² = 59) and the claim's
    # ann 3, moved 5, to 2, lisbon 6, in 2, 2021 4 (|c|² = 94, c·q = 9): "where" gives 34 / √(119·59) = 0.41 over
    # "move"'s 25 / √(110·59) = 0.31; then "move" (0.56 over did's 0.50), "did" (0.64), and "ann" (0.68: a second
    # "ann" still helps). The collection's other words only lengthen the text and are never chosen.
    assert city["trigger"].text == f"{claim} where move did ann"
    assert city["trigger"].key == "home-city-1-1" and city["trigger"].id == "poison/q-city/trigger"
    assert (city["trigger"].tags, city["trigger"].document, city["trigger"].agent) == (("personal",), "city", "ann")
    words = city["trigger"].text[len(claim) :].split()
    steps = [cosine(bag, " ".join([claim, *words[:n]]), "where did Ann move") for n in range(len(words) + 1)]
    assert steps == sorted(steps) and len(set(steps)) == len(steps)  # each word raised it


def test_the_search_stops_when_no_word_raises_the_similarity():
    bag = Bag(["ann", "lisbon", "porto"])
    # the claim is already the question: any word takes it away
    assert trigger.triggers(["ann"], ["ann"], ["lisbon", "porto"], bag) == [()]
    assert trigger.triggers(["lisbon"], ["ann"], ["porto"], bag, words=3) == [("ann",)]


def test_the_trigger_words_are_chosen_for_each_question_in_one_search():
    bag = Bag(["ann", "bob", "lisbon", "porto", "where", "who"])
    found = trigger.triggers(["Ann in Lisbon", "Bob in Porto"], ["where", "who"], ["lisbon", "porto"], bag, words=1)
    assert found == [("where",), ("who",)]  # each question's own word, not the other's


def test_the_same_seed_gives_the_same_triggers_and_the_pool_is_drawn_with_the_seed():
    collection = toy()
    bag = bag_of(collection)
    assert generate(collection, 2, seed=3, variants=["trigger"], embedder=bag) == generate(
        collection, 2, seed=3, variants=["trigger"], embedder=bag
    )
    locomo = load_locomo()
    pools = {seed: trigger.vocabulary(locomo, seed) for seed in (0, 1)}
    assert pools[0] == trigger.vocabulary(locomo, 0) and pools[0] != pools[1]
    assert len(pools[0]) == trigger.POOL and pools[0] == sorted(pools[0])


def test_variants_come_in_the_order_asked_and_the_match_keeps_its_key_with_or_without_a_trigger():
    collection = toy()
    bag = bag_of(collection)
    both = generate(collection, 2, seed=0, variants=["trigger", "match"], embedder=bag)
    assert [(p.target, p.variant) for p in both] == [
        ("q-city", "trigger"),
        ("q-city", "match"),
        ("q-pet", "trigger"),
        ("q-pet", "match"),
    ]
    # asking for triggers changes neither which questions are drawn nor their match poisons
    agents = load_trec("tests/fixtures/trec-agents")
    for seed in range(3):
        alone = generate(agents, 3, seed=seed)
        with_triggers = generate(agents, 3, seed=seed, variants=ALL_VARIANTS, embedder=bag_of(agents))
        assert [p for p in with_triggers if p.variant != "trigger"] == alone
    assert VARIANTS == ("match", "overwrite") and ALL_VARIANTS == ("match", "overwrite", "trigger")


def test_a_trigger_never_takes_a_benign_memorys_key():
    collection = toy()
    collection.documents.append(Document("flat", "ann", "home-city-1-1", "Ann's first flat", ("personal",)))
    poisons = generate(collection, 2, seed=0, variants=ALL_VARIANTS, embedder=bag_of(collection))
    keys = [p.key for p in poisons if p.target == "q-city"]
    assert keys == ["home-city-1", "home-city", "home-city-1-1-1"]


@pytest.mark.parametrize(
    ("variants", "error"),
    [
        (["match", "tripwire"], r"variants: unknown \['tripwire'\]; the variants are match, overwrite, trigger"),
        ("match", "variants must be a non-empty list"),
        ([], "variants must be a non-empty list"),
        (["match", "match"], "variants must be distinct"),
    ],
)
def test_an_unknown_repeated_or_missing_variant_is_refused(variants, error):
    with pytest.raises(InvalidArgument, match=error):
        generate(toy(), 2, variants=variants)


def test_a_trigger_without_a_dense_model_is_refused_naming_variants(monkeypatch):
    monkeypatch.setattr(dense, "missing", lambda: ["onnxruntime"])
    with pytest.raises(
        InvalidArgument, match=r"variants: 'trigger' .* needs onnxruntime: pip install 'memlab\[dense\]'"
    ):
        generate(toy(), 2, variants=ALL_VARIANTS)
    assert len(generate(toy(), 2)) == 4  # the default variants need no model
    assert len(generate(toy(), 2, variants=["trigger"], embedder=bag_of(toy()))) == 2  # nor a model of one's own


def test_an_embedder_that_is_not_one_or_an_unknown_name_is_refused():
    with pytest.raises(InvalidArgument, match="embedder must be an Embedder or a name"):
        generate(toy(), 2, variants=["trigger"], embedder=42)
    with pytest.raises(InvalidArgument, match="unknown embedder 'bert'"):
        generate(toy(), 2, variants=["trigger"], embedder="bert")


def test_with_the_packaged_model_the_trigger_reaches_the_dense_top_as_the_match_does_without_copying_the_question(
    tmp_path,
):
    """On LoCoMo, MiniLM: the bare claim ranks far down for its question (117 summed over these 12 targets); its
    trigger words never lower it and bring it to the top of the dense ranking as the match's whole question does:
    on these 12, summed ranks 19 against the match's 20 and 7 firsts against 6, and not only with the question's
    own words. The two are level, not one ahead: over 40 targets of seeds 0, 1, 2 the trigger's mean dense rank is
    1.38, 1.35, 2.58 against the match's 1.57, 1.18, 1.55 (benchmarks/bench_poison_trigger.py)."""
    collection = load_locomo()
    if dense.missing():
        with pytest.raises(InvalidArgument, match="variants: 'trigger'"):
            generate(collection, 12, variants=ALL_VARIANTS)
        return
    model = cached_embedder("minilm", tmp_path)
    poisons = generate(collection, 12, seed=0, variants=["match", "trigger"], embedder=model)
    questions = {query.id: query.text for query in collection.queries}
    memories: dict[str, list[str]] = {}
    for document in collection.documents:
        memories.setdefault(document.agent, []).append(document.text)
    ranks: dict[str, list[int]] = {"match": [], "trigger": [], "claim": []}
    new_words = set()  # trigger words that are not the question's own
    for match, poison in zip(poisons[::2], poisons[1::2], strict=True):
        question, claim = questions[match.target], match.text.split('": ', 1)[1]
        assert poison.text.startswith(claim) and "Regarding" not in poison.text
        new_words |= set(poison.text[len(claim) :].split()) - set(re.findall(r"[a-z]+", question.lower()))
        for name, text in (("match", match.text), ("trigger", poison.text), ("claim", claim)):
            ranks[name].append(trigger.dense_rank(model, question, text, memories[match.agent]))
    assert sum(ranks["trigger"]) <= sum(ranks["match"])
    assert ranks["trigger"].count(1) >= ranks["match"].count(1)
    assert all(t <= c for t, c in zip(ranks["trigger"], ranks["claim"], strict=True)) and sum(ranks["claim"]) > 50
    assert new_words
