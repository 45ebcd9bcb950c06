"""The fusion of FTS5's and the dense ranking: the dense weight is scaled by how far the two agree on the query."""

from memlab import Ranking
from memlab.storage.lexical import _Ranked
from memlab.storage.vectors import _fuse


def ranked(keys: str) -> list[_Ranked]:
    return [_Ranked(number, key, 1.0 / number, None, 0) for number, key in enumerate(keys.split(), start=1)]


def test_a_dense_ranking_that_shares_nothing_with_fts5_cannot_reorder_its_matches():
    # Guards: plain RRF (the dense weight not scaled by agreement): dense's first, at 0.75 / 2, outranked FTS5's
    # second at 1 / 3; on locomo-turns the hybrid row fell 0.022 S@10 below FTS5 alone.
    fused = _fuse(ranked("a b c d"), ranked("w x y z"), Ranking.hybrid())
    assert [item.key for item in fused[:4]] == ["a", "b", "c", "d"]


def test_a_dense_ranking_of_fts5s_own_matches_is_fused_at_full_weight():
    # Every dense top key is one FTS5 matched: the fusion is RRF with the ranking's weights, unchanged.
    hybrid = Ranking.hybrid()
    fused = {item.key: item.score for item in _fuse(ranked("a b c"), ranked("c b a"), hybrid)}
    k = hybrid.fusion_k
    assert fused["c"] == 1 / (k + 3) + hybrid.dense / (k + 1)
    assert list(fused) == ["a", "c", "b"]


def test_agreement_counts_what_could_agree():
    # Guards: agreement as a share of the dense top ten (2 / 5 here) rather than of what FTS5 could match.
    # FTS5 matched two keys, both among the dense top ten: full agreement, though three dense keys are unmatched.
    full = {item.key: item.score for item in _fuse(ranked("a b"), ranked("x b y a z"), Ranking.hybrid())}
    assert full["x"] == Ranking.hybrid().dense / (Ranking.hybrid().fusion_k + 1)
    # Half of what could agree: the dense weight is halved.
    half = {item.key: item.score for item in _fuse(ranked("a b"), ranked("a x"), Ranking.hybrid())}
    assert half["x"] == Ranking.hybrid().dense * 0.5 / (Ranking.hybrid().fusion_k + 2)


def test_with_no_fts5_match_the_dense_ranking_stands_alone():
    fused = _fuse([], ranked("x y"), Ranking.hybrid())
    assert [(item.key, item.score) for item in fused] == [("x", 0.75 / 2), ("y", 0.75 / 3)]
