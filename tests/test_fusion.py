"""The fusion of FTS5's and the dense ranking: by default standardized scores (each ranking weighs by how far its
first scores stand out on the query: ``memlab.search.fusion``); with ``fusion_k > 0`` the third wave's reciprocal rank
fusion, the dense weight scaled by how far the two agree on the query."""

import random

from memlab import MemoryStore, Ranking
from memlab.arguments import MAX_RESULTS_CAP
from memlab.search.fusion import carried, contributions, standardized
from memlab.storage.lexical import Ranked
from memlab.storage.vectors import FUSION_DEPTH, fuse
from tests.backends import WordsEmbedder

RRF = Ranking(dense=0.75, fusion_k=1.0)  # the third wave's hybrid: reciprocal rank fusion scaled by agreement


def ranked(keys: str) -> list[Ranked]:
    return [Ranked(number, key, 1.0 / number, None, 0) for number, key in enumerate(keys.split(), start=1)]


def scored(pairs: str) -> list[Ranked]:
    """A ranking from "key:score" pairs, best first."""
    return [
        Ranked(number, key, float(score), None, 0)
        for number, (key, score) in enumerate((pair.split(":") for pair in pairs.split()), start=1)
    ]


def tail(count: int, top: float = 0.3) -> str:
    """A dense ranking's tail: ``count`` memories near ``top`` and slowly fading, as MiniLM's top 100 are."""
    return " ".join(f"x{n}:{top - 0.002 * n:.3f}" for n in range(count))


def order(fused: list[Ranked]) -> list[str]:
    return [item.key for item in fused]


def test_where_fts5s_matches_do_not_stand_out_a_confident_dense_first_leads():
    # The blind lexical case (the preferences collection): the request shares only a topic word with a few
    # memories, all matched alike; the memory it needs shares no word with it, and the model puts it first by far.
    # Guards: RRF (the third wave's rule, which put FTS5's first match first whatever its scores: on preferences
    # the hybrid fell 0.037 S@10 below dense), and a fusion of raw scores (bm25's scale swamps cosine's).
    lexical = scored("t1:6.0 t2:4.0 t3:4.0")
    dense = scored(f"need:0.62 {tail(40)} t1:0.21 t2:0.20 {tail(50, top=0.19).replace('x', 'y')}")
    assert order(fuse(lexical, dense, Ranking.hybrid()))[0] == "need"
    assert order(fuse(lexical, dense, RRF))[0] == "t1"


def test_a_flat_dense_ranking_cannot_push_out_fts5s_sharp_matches():
    # The weak-model case (short chat turns): FTS5's first match stands far out, the model's scores barely spread.
    lexical = scored("hit:14.0 a:6.0 b:5.5 c:5.0 d:4.5 e:4.0")
    dense = scored("x:0.41 y:0.40 z:0.40 a:0.39 w:0.39 v:0.38 hit:0.37 u:0.37")
    fused = order(fuse(lexical, dense, Ranking.hybrid()))
    assert fused[0] == "hit"
    assert fused.index("hit") < fused.index("x")


def test_a_memory_one_ranking_did_not_return_counts_as_its_lowest():
    # Guards: an unreturned memory counted as 0 (the mean): it would then outscore what the ranking did return
    # below its mean, and a memory FTS5 never matched would rise over one it matched.
    z, floor = standardized([("a", 3.0), ("b", 2.0), ("c", 1.0)])
    assert floor == z["c"] < 0
    fused = contributions([("a", 3.0), ("b", 2.0), ("c", 1.0)], [("d", 0.9), ("c", 0.5), ("e", 0.1)], Ranking.hybrid())
    # Each part is measured from its ranking's lowest: what a ranking did not return gets nothing from it, as its
    # lowest does, and no part is negative.
    assert fused["d"][0] == fused["c"][0] == 0.0 < fused["b"][0]
    assert fused["a"][0] == Ranking.hybrid().lexical * (z["a"] - floor)
    assert all(part >= 0 for parts in fused.values() for part in parts)
    assert list(fused).index("c") < list(fused).index("e")


def test_a_ranking_that_does_not_spread_weighs_nothing():
    # One match, or matches all tied: nothing says which is better, and they do not move the dense order.
    assert standardized([("a", 2.0)]) == ({"a": 0.0}, 0.0)
    assert standardized([("a", 2.0), ("b", 2.0)]) == ({"a": 0.0, "b": 0.0}, 0.0)
    fused = fuse(scored("t1:3.0 t2:3.0"), scored("x:0.9 t2:0.5 t1:0.1"), Ranking.hybrid())
    assert order(fused) == ["x", "t2", "t1"]


def test_which_ranking_carried_the_first_result():
    hybrid = Ranking.hybrid()
    assert carried(contributions([("a", 9.0), ("b", 1.0), ("c", 1.0)], [("c", 0.5), ("a", 0.4)], hybrid)) == "lexical"
    assert (
        carried(
            contributions(
                [("a", 2.1), ("b", 2.0)],
                [(key, float(s)) for key, s in (pair.split(":") for pair in f"need:0.7 {tail(60)}".split())],
                hybrid,
            )
        )
        == "dense"
    )
    assert carried({}) is None


def test_a_dense_ranking_that_shares_nothing_with_fts5_cannot_reorder_its_matches():
    # Guards: plain RRF (the dense weight not scaled by agreement): dense's first, at 0.75 / 2, outranked FTS5's
    # second at 1 / 3; on locomo-turns the hybrid row fell 0.022 S@10 below FTS5 alone.
    fused = fuse(ranked("a b c d"), ranked("w x y z"), RRF)
    assert [item.key for item in fused[:4]] == ["a", "b", "c", "d"]


def test_a_dense_ranking_of_fts5s_own_matches_is_fused_at_full_weight():
    # Every dense top key is one FTS5 matched: the fusion is RRF with the ranking's weights, unchanged.
    hybrid = RRF
    fused = {item.key: item.score for item in fuse(ranked("a b c"), ranked("c b a"), hybrid)}
    k = hybrid.fusion_k
    assert fused["c"] == 1 / (k + 3) + hybrid.dense / (k + 1)
    assert list(fused) == ["a", "c", "b"]


def test_agreement_counts_what_could_agree():
    # Guards: agreement as a share of the whole dense ranking's weight rather than of what FTS5 could match
    # (the best it can be: FTS5's two matches at the dense ranking's first two ranks).
    hybrid = RRF
    k = hybrid.fusion_k
    # FTS5 matched two keys, both in the dense ranking (at ranks 2 and 4): of the weight the fusion gives the dense
    # ranks 1 and 2, the share its ranks 2 and 4 hold.
    share = (1 / (k + 2) + 1 / (k + 4)) / (1 / (k + 1) + 1 / (k + 2))
    fused = {item.key: item.score for item in fuse(ranked("a b"), ranked("x b y a z"), hybrid)}
    assert fused["x"] == hybrid.dense * share / (k + 1)
    # Both matches at the dense ranking's top: full agreement, though three dense keys are unmatched.
    full = {item.key: item.score for item in fuse(ranked("a b"), ranked("b a x y z"), hybrid)}
    assert full["x"] == hybrid.dense / (k + 3)


def test_agreement_weighs_the_dense_ranks_as_the_fusion_does():
    # Guards: agreement counted over the dense top ten unweighted (AGREEMENT_DEPTH = 10, the rule before): a
    # dense ranking whose first key FTS5 did not match then counted as agreeing fully (9 of the 9 that could),
    # as one whose tenth it did not, though its first rank is what the fusion weighs most.
    hybrid = RRF
    lexical = ranked(" ".join(f"m{n}" for n in range(1, 10)))
    first_unmatched = fuse(lexical, ranked("x " + " ".join(f"m{n}" for n in range(1, 10))), hybrid)
    tenth_unmatched = fuse(lexical, ranked(" ".join(f"m{n}" for n in range(1, 10)) + " x"), hybrid)
    weight_x_first = {item.key: item.score for item in first_unmatched}["x"] * (hybrid.fusion_k + 1)
    weight_x_tenth = {item.key: item.score for item in tenth_unmatched}["x"] * (hybrid.fusion_k + 10)
    assert weight_x_tenth == hybrid.dense  # FTS5's nine matches are the dense ranking's first nine
    assert weight_x_first < 0.8 * hybrid.dense


def test_the_fused_top_results_do_not_depend_on_how_many_are_asked():
    """A search for 10 results returns the first 10 of the same search for 100: both rankings are read
    ``FUSION_DEPTH`` deep whatever the limit, so the agreement and the fused order are the same."""
    # Guards: FUSION_DEPTH = 50 (before): asked for 10, FTS5's ranking was read 50 deep and asked for 100 it was
    # read 100 deep, so the agreement, and with it the top ten, changed with max_results (and memlab eval, which
    # asks for 100, measured another ranking than an agent asking for the default 10 gets).
    assert FUSION_DEPTH >= MAX_RESULTS_CAP
    draw = random.Random(22)
    vocabulary = [f"w{n}" for n in range(24)]
    with MemoryStore(embedder=WordsEmbedder(), ranking=Ranking.hybrid()) as store:
        session = store.session()
        session.memory_save_many(
            [
                {"key": f"k{n}", "content": " ".join(draw.sample(vocabulary, 4)), "tags": draw.sample(vocabulary, 1)}
                for n in range(160)
            ]
        )
        queries = [" ".join(draw.sample(vocabulary, 3)) for _ in range(40)]
        for ranking in (Ranking.hybrid(), RRF, Ranking(), Ranking.dense_only()):
            store.ranking = ranking
            differing = []
            for query in queries:
                for asked in (1, 10, 37):
                    top = [hit.memory.key for hit in session.memory_search(query, max_results=asked)]
                    deep = [hit.memory.key for hit in session.memory_search(query, max_results=100)]
                    if top != deep[:asked]:
                        differing.append((query, asked))
            assert differing == [], ranking


def test_with_no_fts5_match_the_dense_ranking_stands_alone():
    fused = fuse([], scored("x:0.9 y:0.5 z:0.1"), Ranking.hybrid())
    z, floor = standardized([("x", 0.9), ("y", 0.5), ("z", 0.1)])
    expected = [(key, Ranking.hybrid().dense * (z[key] - floor)) for key in "xyz"]
    assert [(item.key, item.score) for item in fused] == expected
    fused = fuse([], ranked("x y"), RRF)
    assert [(item.key, item.score) for item in fused] == [("x", 0.75 / 2), ("y", 0.75 / 3)]


def test_a_key_ranked_twice_counts_where_it_first_ranks():
    # Guards: _first keeping a repeated key at its later place or with its later score.
    fused = contributions([("a", 3.0), ("b", 2.0), ("a", 1.0)], [], Ranking.hybrid())
    assert list(fused) == ["a", "b"] and fused["a"][0] == 2.0  # z +1 above the lowest, -1
    assert list(contributions([("a", 3.0), ("b", 2.0), ("a", 1.0)], [], RRF)) == ["a", "b"]
