"""memlab.search.ranking: the Ranking value (bounds, presets, weights, the embedder it needs) and when_words.

Ranking files (save, load and every refusal) are tests/test_ranking_file.py's.
"""

from __future__ import annotations

import math

import pytest

from memlab.errors import InvalidArgument
from memlab.search.ranking import COLUMNS, MAX_WEIGHT, Ranking, when_words


@pytest.mark.parametrize(
    ("parameter", "value"),
    [
        ("key", -0.1),
        ("content", MAX_WEIGHT + 1),
        ("tags", math.nan),
        ("source", math.inf),
        ("tag_boost", True),  # a boolean is not a weight
        ("fusion_k", "1"),
        ("dense", None),
    ],
)
def test_every_parameter_is_a_finite_number_within_bounds(parameter, value):
    # Guards: ranking._in_range accepting a boolean (True taken as a weight of 1).
    with pytest.raises(InvalidArgument, match=f"Ranking.{parameter} must be a finite number"):
        Ranking(**{parameter: value})


@pytest.mark.parametrize("value", [0, 0.0, MAX_WEIGHT, 3])
def test_the_bounds_are_inclusive(value):
    assert Ranking(key=value).key == value


def test_a_ranking_must_rank_by_something():
    with pytest.raises(InvalidArgument, match="lexical > 0 or dense > 0"):
        Ranking(lexical=0, dense=0)


@pytest.mark.parametrize(
    ("ranking", "uses_dense"),
    [
        (Ranking(), False),
        (Ranking.plain(), False),
        (Ranking.hybrid(), True),
        (Ranking.dense_only(), True),
        (Ranking(lexical=0, dense=0.5), True),
    ],
)
def test_a_ranking_with_dense_weight_needs_an_embedder(ranking, uses_dense):
    assert ranking.uses_dense is uses_dense
    ranking.require_embedder(object())
    if uses_dense:
        with pytest.raises(InvalidArgument, match="embedder='minilm'"):
            ranking.require_embedder(None)
    else:
        ranking.require_embedder(None)


def test_weights_follow_the_index_columns():
    ranking = Ranking(key=2, content=3, tags=4, source=5, when=6)
    assert COLUMNS == ("key", "content", "tags", "source", "when")
    assert ranking.weights() == (2.0, 3.0, 4.0, 5.0, 6.0)
    assert all(isinstance(weight, float) for weight in ranking.weights())


def test_as_dict_round_trips_and_a_ranking_is_a_hashable_value():
    ranking = Ranking.hybrid()
    assert Ranking(**ranking.as_dict()) == ranking
    assert {ranking: "hybrid"}[Ranking.hybrid()] == "hybrid"
    assert Ranking.plain() != Ranking()
    assert (Ranking.plain().tag_boost, Ranking.plain().source, Ranking.plain().when) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("occurred_at", "words"),
    [
        (None, None),
        ("2023-05-08", "2023-05-08 8 May 2023 Monday"),
        ("2023-05-08T13:56:00", "2023-05-08 8 May 2023 Monday 13:56"),
        ("2024-02-29T00:05:59+02:00", "2024-02-29 29 February 2024 Thursday 00:05"),  # its own zone's wall time
        ("1999-12-31", "1999-12-31 31 December 1999 Friday"),
    ],
)
def test_when_words(occurred_at, words):
    assert when_words(occurred_at) == words
