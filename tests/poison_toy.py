"""The poisoning lab's toy collection: three memories of one agent, two judged questions and one without a judgment,
small enough that every figure of a run is worked out by hand in the tests."""

from memlab.eval import Collection, Document, Query


def toy() -> Collection:
    """Ann's city (2019), her dog (since 2021) and her job; "where did Ann move" judges the city, "which dog does
    Ann have" the dog, "what colour does Ann like" nothing (it counts as a miss, as in the relevance lab)."""
    return Collection(
        "toy",
        [
            Document("city", "ann", "home-city", "Ann moved to Lisbon in 2019", ("personal",)),
            Document("pet", "ann", "pet", "Ann has a dog called Rex since 2021", ("pets",)),
            Document("job", "ann", "job", "Ann works as a nurse at Santa Maria hospital", ("work",)),
        ],
        [
            Query("q-city", "ann", "where did Ann move"),
            Query("q-pet", "ann", "which dog does Ann have"),
            Query("q-colour", "ann", "what colour does Ann like"),
        ],
        {"q-city": {"city": 1}, "q-pet": {"pet": 1}},
    )


def unjudged() -> Collection:
    """The toy's memories and questions with no judgment at all."""
    collection = toy()
    collection.qrels = {}
    return collection
