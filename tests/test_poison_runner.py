"""The poisoning lab end to end on the toy collection: figures worked out by hand, the exact zeros the store's
rules promise, determinism, and bad input refused before any store is made."""

import math

import pandas as pd
import pytest

import memlab.poison.runner as runner
from memlab import InvalidArgument
from memlab.eval.measures import paired_test
from memlab.poison import TIERS, run, targets_for
from memlab.search import dense
from tests.poison_toy import toy, unjudged


@pytest.fixture(scope="module")
def table():
    # 3 memories at rate 0.5: p / (3 + p) = 0.5 gives p = 3 poisons, 2 targets (round(1.5)), so both judged
    # questions, 4 poisons: a match and an overwrite each (tests/test_poison_generate.py shows them).
    return run(toy(), rate=0.5, k=(1, 5), seed=0).set_index(["row", "k"])


def test_every_row_says_its_poison_rate_benign_density_k_tier_and_ranking(table):
    assert targets_for(toy(), 0.5) == 2
    first = table.loc[("labels-only", 1)]
    assert first["tier"] == "direct" and first["ranking"] == "lexical" and first["rate"] == 0.5
    assert first["poison rate"] == 4 / 7 and first["benign density"] == 3.0  # Ann's three memories
    assert (first["targets"], first["poisons"]) == (2, 4)
    assert [row for row, _ in table.index[::2]] == [
        "integrity-ignored",
        "labels-only",
        "trust-demoted",
        "floor-trusted",
        "low-water-mark",
    ]


def test_isr_by_hand(table):
    isr = table.xs(1, level="k")[["ISR", "ISR overwrite"]]
    assert isr.loc["integrity-ignored"].tolist() == [1.0, 1.0]  # everything trusted: the overwrites replace
    assert isr.loc["labels-only"].tolist() == [0.5, 0.0]  # the two matches read, the overwrites shadowed
    assert isr.loc["floor-trusted"].tolist() == [0.0, 0.0]


def test_asr_by_hand(table):
    # Each match repeats its question's words before the judged text, so it ranks first wherever it is seen;
    # the top 5 of 3 + 2 memories is never all poison.
    asr = table[["ASR-r@k", "ASR-r@k all"]]
    for row in ("integrity-ignored", "labels-only", "low-water-mark"):
        assert asr.loc[(row, 1)].tolist() == [1.0, 1.0]
        assert asr.loc[(row, 5)].tolist() == [1.0, 0.0]


def test_ud_by_hand_with_the_relevance_labs_paired_test(table):
    labels = table.loc[("labels-only", 1)]
    # trust first keeps each judged memory, second behind the match: S@10 stays 1, nDCG@10 falls to 1 / log2 3
    assert (labels["target S@10 clean"], labels["target S@10 poisoned"]) == (1.0, 1.0)
    assert labels["target nDCG@10 poisoned"] == pytest.approx(1 / math.log2(3))
    assert labels["target p nDCG@10"] == paired_test([1 / math.log2(3)] * 2, [1.0, 1.0])
    # over all three questions: the unjudged one counts 0, clean and poisoned
    assert labels["all S@10 clean"] == pytest.approx(2 / 3)
    assert labels["all nDCG@10 poisoned"] == pytest.approx(2 / math.log2(3) / 3)
    ignored = table.loc[("integrity-ignored", 1)]
    assert ignored["target S@10 poisoned"] == 0.0  # the overwrites replaced both judged memories
    assert ignored["target p S@10"] == paired_test([0.0, 0.0], [1.0, 1.0])


def test_floor_trusted_never_retrieves_a_poison_and_loses_nothing(table):
    floor = table.xs("floor-trusted", level="row")
    assert (floor[["ISR", "ISR overwrite", "ASR-r@k", "ASR-r@k all", "saves on poison"]] == 0).all().all()
    assert (floor["target S@10 poisoned"] == floor["target S@10 clean"]).all()
    assert (floor["all nDCG@10 poisoned"] == floor["all nDCG@10 clean"]).all()
    assert (floor[["available reads", "available saves"]] == 1.0).all().all()


def test_trust_first_an_overwrite_never_replaces_a_trusted_value(table):
    for row in ("labels-only", "floor-trusted", "low-water-mark"):
        assert (table.xs(row, level="row")["ISR overwrite"] == 0).all()


def test_the_low_water_mark_launders_nothing_and_costs_the_answers_that_rested_on_poison(table):
    lowered = table.loc[("low-water-mark", 1)]
    assert (lowered["saves on poison"], lowered["laundered saves"], lowered["available saves"]) == (2, 0, 0.0)
    ignored = table.loc[("integrity-ignored", 1)]
    assert (ignored["saves on poison"], ignored["laundered saves"]) == (2, 2)  # every poisoned answer trusted


@pytest.mark.parametrize("tier", TIERS)
def test_the_exact_zeros_hold_for_every_tier(tier):
    found = run(toy(), tier=tier, rate=0.5, k=(1, 5), seed=3, rows=["floor-trusted", "labels-only"])
    floor = found[found["row"] == "floor-trusted"]
    assert (floor[["ISR", "ASR-r@k", "ASR-r@k all"]] == 0).all().all()
    assert (found["ISR overwrite"] == 0).all()
    assert set(found["tier"]) == {tier}


def test_the_same_seed_gives_the_same_table():
    first = run(toy(), rate=0.3, seed=5, rows=["labels-only"])
    pd.testing.assert_frame_equal(first, run(toy(), rate=0.3, seed=5, rows=["labels-only"]))


@pytest.fixture
def no_store(monkeypatch):
    """Fail if the run makes a store: bad input is refused before anything is written."""

    class Refused:
        @staticmethod
        def throwaway(*args, **kwargs):
            raise AssertionError("a store was made")

    monkeypatch.setattr(runner, "MemoryStore", Refused)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"tier": "email"}, r"unknown tier 'email'"),
        ({"rate": 0}, r"rate must be a number strictly between 0 and 1"),
        ({"rate": 1}, r"rate must be"),
        ({"rate": 1.5}, r"rate must be"),
        ({"rate": "0.1"}, r"rate must be"),
        ({"k": 11}, r"k must be one or more integers from 1 to the depth 10, not 11"),
        ({"k": (1, 50), "depth": 20}, r"k must be .* depth 20"),
        ({"k": 0}, r"k must be"),
        ({"depth": 101}, r"depth must be an integer from 1 to 100"),
        ({"rows": ["trust-promoted"]}, r"unknown rows"),
        ({"rate": [0.1, 0.1]}, r"rate must be one number or distinct numbers"),
        ({"rate": [0.1, 2]}, r"rate must be"),
        ({"rate": True}, r"rate must be"),
        ({"seed": 1.5}, r"seed must be an integer"),
        ({"seed": "1"}, r"seed must be an integer"),
        ({"variants": []}, r"variants"),
        ({"variants": ["match", "typo"]}, r"variants: unknown"),
        ({"tier": ["direct", "direct"]}, r"tier must be one tier or distinct tiers"),
        ({"tier": ["direct", "email"]}, r"unknown tier 'email'"),
        ({"variants": ["match", "match"]}, r"variants must be distinct"),
        ({"rankings": ["bm25"]}, r"rankings"),
    ],
)
def test_bad_input_is_refused_naming_the_argument_and_no_store_is_made(no_store, arguments, message):
    with pytest.raises(InvalidArgument, match=message):
        run(toy(), **arguments)


def test_a_collection_without_judged_questions_is_refused_and_no_store_is_made(no_store):
    with pytest.raises(InvalidArgument, match="collection 'toy': no question carries a judged document"):
        run(unjudged())


def test_the_exact_zeros_hold_under_dense_and_hybrid_rankings_or_they_are_named_as_skipped():
    found = run(toy(), rate=0.5, k=(1, 5), rankings=["dense", "hybrid"], cache=False)
    if dense.missing():
        assert found.empty and set(found.attrs["skipped"]) == {"dense", "hybrid"}
        return
    assert set(found["ranking"]) == {"dense", "hybrid"} and not found.attrs["skipped"]
    floor = found[found["row"] == "floor-trusted"]
    assert (floor[["ISR", "ASR-r@k", "ASR-r@k all"]] == 0).all().all()
    assert (found["ISR overwrite"][found["row"] != "integrity-ignored"] == 0).all()
    assert (found["ISR overwrite"][found["row"] == "integrity-ignored"] == 1).all()


@pytest.fixture(scope="module")
def variants():
    rows = ["labels-only", "low-water-mark", "no-trust-first", "reads-never-lower"]
    return run(toy(), rate=0.5, k=(1,), seed=0, rows=rows).set_index("row")


def test_without_trust_first_the_overwrites_replace_the_trusted_values(variants):
    # the policy lab's untrusted-shadows: the zero of labels-only is the rule's, not the toy's
    assert variants.loc["no-trust-first", "ISR overwrite"] == 1.0
    assert variants.loc["no-trust-first", "target S@10 poisoned"] == 0.0
    assert variants.loc["labels-only", "ISR overwrite"] == 0.0


def test_what_the_low_water_mark_catches_a_store_whose_reads_never_lower_launders(variants):
    # a fresh victim per question: both answers rest on poison, each session trusted until that read
    assert (variants.loc["labels-only", "saves caught"], variants.loc["labels-only", "laundered saves"]) == (2, 0)
    # one long session: the first read lowers it, so the second answer is made by an already untrusted session
    assert variants.loc["low-water-mark", "saves caught"] == 1
    never = variants.loc["reads-never-lower"]
    assert (never["saves on poison"], never["laundered saves"], never["saves caught"]) == (2, 2, 0)
    assert never["available saves"] == 1.0  # every answer, poisoned ones included, reaches a trusted floor


def test_trust_demotion_by_hand(table):
    """Each match outranks its judged memory by less than twice (tests/test_trust_demotion.py shows the factor):
    demoted, it falls to second, out of the top 1 but still in the top 5; and since the victim's search still
    returns it, the read lowers the victim and every answer is saved untrusted (nothing laundered, nothing
    available to a trusted floor): demotion changes what ranks first, not what is read."""
    demoted = table.xs("trust-demoted", level="row")
    assert demoted.loc[1, ["ASR-r@k", "ASR-r@k all"]].tolist() == [0.0, 0.0]
    assert demoted.loc[5, "ASR-r@k"] == 1.0
    assert demoted.loc[1, "target nDCG@10 poisoned"] == demoted.loc[1, "target nDCG@10 clean"] == 1.0
    assert demoted.loc[1, ["saves on poison", "laundered saves", "available saves"]].tolist() == [0, 0, 0.0]
    assert table.loc[("labels-only", 1), "ASR-r@k"] == 1.0  # the same store, ranked by relevance alone


def test_several_rates_are_the_single_rate_runs_side_by_side():
    """One load per ranking, restored for each rate and defence: nothing one run writes reaches the next."""
    both = run(toy(), rate=[0.3, 0.5], seed=2)
    alone = pd.concat([run(toy(), rate=0.3, seed=2), run(toy(), rate=0.5, seed=2)], ignore_index=True)
    pd.testing.assert_frame_equal(both, alone)
    assert list(dict.fromkeys(both["rate"])) == [0.3, 0.5]


def test_progress_is_called_once_per_measured_store():
    calls = []
    run(toy(), rate=[0.3, 0.5], seed=2, rows=["labels-only", "floor-trusted"], progress=calls.append)
    assert len(calls) == runner.steps(["lexical"], ["labels-only", "floor-trusted"], [0.3, 0.5]) == 4
    assert calls[0] == "lexical labels-only 0.3"


def test_several_tiers_are_the_single_tier_runs_side_by_side():
    both = run(toy(), tier=["direct", "content"], rate=0.5, seed=1, rows=["labels-only"])
    alone = pd.concat(
        [run(toy(), tier=tier, rate=0.5, seed=1, rows=["labels-only"]) for tier in ("direct", "content")],
        ignore_index=True,
    )
    pd.testing.assert_frame_equal(both, alone)


def test_the_trigger_variant_makes_three_poisons_a_target_and_keeps_the_rate():
    """With three variants, a rate asks for fewer targets (three poisons each); the trigger poisons are read by a
    default floor like the matches (new keys) and never by a trusted floor."""
    from tests.backends import WordsEmbedder

    assert targets_for(toy(), 0.5, 3) == 1
    import memlab.poison.runner as module

    original = module.cached_embedder
    module.cached_embedder = lambda name, cache: WordsEmbedder() if name == "minilm" else original(name, cache)
    try:
        table = run(toy(), rate=0.5, seed=0, variants=["match", "overwrite", "trigger"]).set_index(["row", "k"])
    finally:
        module.cached_embedder = original
    labels = table.loc[("labels-only", 1)]
    assert (labels["targets"], labels["poisons"]) == (1, 3)
    assert labels["ISR"] == pytest.approx(2 / 3)  # the match and the trigger read, the overwrite shadowed
    assert table.loc[("floor-trusted", 1), "ISR"] == 0.0
