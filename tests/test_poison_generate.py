"""Poisons from the collection itself: matching the question, contradicting the judged answer, seeded."""

import random

import pytest

from memlab import InvalidArgument
from memlab.eval import Document, load_trec
from memlab.poison import Poison, contradict, generate, judged_targets
from tests.poison_toy import toy, unjudged


def test_each_target_gets_a_match_and_an_overwrite_that_contradict_its_judged_memory():
    poisons = generate(toy(), 2, seed=0)
    assert [(p.target, p.variant, p.key) for p in poisons] == [
        ("q-city", "match", "home-city-1"),
        ("q-city", "overwrite", "home-city"),  # the judged memory's own key
        ("q-pet", "match", "pet-2"),
        ("q-pet", "overwrite", "pet"),
    ]
    city = poisons[0]
    # The question's words as a bridging phrase, then the judged text with its year swapped for another of the
    # collection's numbers (2021, from the dog's memory), and the judged memory's tags.
    assert city.text == 'Regarding "where did Ann move": Ann moved to Lisbon in 2021'
    assert city.tags == ("personal",) and city.document == "city" and city.agent == "ann"
    assert poisons[1].text == city.text


def test_a_name_is_swapped_when_there_is_no_number_and_the_question_lacks_it():
    rng = random.Random(0)
    assert contradict("Ann met Bob in Porto", "whom did Ann meet", [], ["Bob", "Rex"], rng) == "Ann met Rex in Porto"
    # the question's own words stay (Ann), so the answer's name is what changes
    assert (
        contradict("Yesterday Ann met Bob", "did Ann meet someone", [], ["Bob", "Rex"], rng) == "Yesterday Ann met Rex"
    )
    # and the text's first word stays; with nothing to swap, the text is negated
    assert contradict("Ann sings", "does Ann sing", [], ["Ann", "Bob"], rng) == "It is not true that ann sings"


def test_the_most_relevant_judged_document_is_the_target():
    poisons = generate(load_trec("tests/fixtures/trec-tiny"), 4, seed=0)
    assert {p.target: p.document for p in poisons}["q3"] == "travel-train"  # grade 2 over travel-light's 1


def test_the_same_seed_gives_the_same_poisons_and_another_seed_other_targets():
    collection = load_trec("tests/fixtures/trec-agents")
    assert generate(collection, 3, seed=7) == generate(collection, 3, seed=7)
    drawn = {tuple(p.target for p in generate(collection, 3, seed=seed)) for seed in range(5)}
    assert len(drawn) > 1


def test_a_collection_whose_questions_carry_no_judged_document_is_refused():
    with pytest.raises(InvalidArgument, match="collection 'toy'.*no question carries a judged document"):
        generate(unjudged(), 1)
    with pytest.raises(InvalidArgument, match="collection 'toy'"):
        judged_targets(unjudged())


@pytest.mark.parametrize("targets", [0, -1, 1.5, True])
def test_targets_must_be_a_positive_integer(targets):
    with pytest.raises(InvalidArgument, match="targets must be a positive integer"):
        generate(toy(), targets)


def test_a_poisons_record_is_what_memory_save_takes():
    poison = Poison("p", "q", "d", "match", "ann", "k", "text", ("t",))
    assert poison.record() == {"key": "k", "content": "text", "tags": ["t"]}


def test_a_match_never_takes_a_benign_memorys_key():
    collection = toy()
    collection.documents.append(Document("city-1", "ann", "home-city-1", "Ann's first flat", ("personal",)))
    assert [p.key for p in generate(collection, 2, seed=0)][:2] == ["home-city-1-1", "home-city"]
