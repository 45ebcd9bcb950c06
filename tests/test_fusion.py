"""The fusion of FTS5's and the dense ranking: the dense weight is scaled by how far the two agree on the query."""

import random

from memlab import MemoryStore, Ranking
from memlab.arguments import MAX_RESULTS_CAP
from memlab.storage.lexical import Ranked
from memlab.storage.vectors import FUSION_DEPTH, fuse
from tests.backends import WordsEmbedder


def ranked(keys: str) -> list[Ranked]:
    return [Ranked(number, key, 1.0 / number, None, 0) for number, key in enumerate(keys.split(), start=1)]


def test_a_dense_ranking_that_shares_nothing_with_fts5_cannot_reorder_its_matches():
    # Guards: plain RRF (the dense weight not scaled by agreement): dense's first, at 0.75 / 2, outranked FTS5's
    # second at 1 / 3; on locomo-turns the hybrid row fell 0.022 S@10 below FTS5 alone.
    fused = fuse(ranked("a b c d"), ranked("w x y z"), Ranking.hybrid())
    assert [item.key for item in fused[:4]] == ["a", "b", "c", "d"]


def test_a_dense_ranking_of_fts5s_own_matches_is_fused_at_full_weight():
    # Every dense top key is one FTS5 matched: the fusion is RRF with the ranking's weights, unchanged.
    hybrid = Ranking.hybrid()
    fused = {item.key: item.score for item in fuse(ranked("a b c"), ranked("c b a"), hybrid)}
    k = hybrid.fusion_k
    assert fused["c"] == 1 / (k + 3) + hybrid.dense / (k + 1)
    assert list(fused) == ["a", "c", "b"]


def test_agreement_counts_what_could_agree():
    # Guards: agreement as a share of the whole dense ranking's weight rather than of what FTS5 could match
    # (the best it can be: FTS5's two matches at the dense ranking's first two ranks).
    hybrid = Ranking.hybrid()
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
    hybrid = Ranking.hybrid()
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
        for ranking in (Ranking.hybrid(), Ranking(), Ranking.dense_only()):
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
    fused = fuse([], ranked("x y"), Ranking.hybrid())
    assert [(item.key, item.score) for item in fused] == [("x", 0.75 / 2), ("y", 0.75 / 3)]
