"""Stemmer statistics, and SQLite FTS5's porter tokenizer checked against NLTK on LoCoMo's vocabulary."""

import json
from pathlib import Path

import pytest
from nltk.stem import PorterStemmer, SnowballStemmer

from memlab import InvalidArgument
from memlab.eval.stemstats import disagreements, fts5_stems, vocabulary, words_of

LOCOMO = Path(__file__).resolve().parent.parent / "data" / "locomo10.json"

MARTIN = PorterStemmer(PorterStemmer.MARTIN_EXTENSIONS).stem
NLTK_DEFAULT = PorterStemmer(PorterStemmer.NLTK_EXTENSIONS).stem
ORIGINAL = PorterStemmer(PorterStemmer.ORIGINAL_ALGORITHM).stem
SNOWBALL = SnowballStemmer("english").stem


@pytest.fixture(scope="module")
def locomo() -> list[dict]:
    return json.loads(LOCOMO.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def observation_words(locomo) -> list[str]:
    """The distinct words of every LoCoMo observation (the memories of the relevance lab)."""
    texts = [
        observation[0]
        for sample in locomo
        for session in sample["observation"].values()
        for observations in session.values()
        for observation in observations
    ]
    return sorted({word for text in texts for word in words_of(text)})


@pytest.fixture(scope="module")
def turn_words(locomo) -> list[str]:
    """The distinct words of every conversation turn."""
    texts = [
        turn["text"]
        for sample in locomo
        for session in sample["conversation"].values()
        if isinstance(session, list)
        for turn in session
    ]
    return sorted({word for text in texts for word in words_of(text)})


def test_words_of_splits_like_unicode61():
    assert words_of("Don't re-use my_var, Café 2023!") == ["don", "t", "re", "use", "my", "var", "café", "2023"]


def test_vocabulary_on_a_toy_text():
    stats = vocabulary(["Running runs; the runner ran.", "RUNS again"], lambda word: word[:3])
    assert stats["words"] == 6  # running runs the runner ran again
    assert stats["stems"] == 4  # run the ran aga
    assert stats["reduction"] == pytest.approx(1 - 4 / 6)
    assert stats["mean_class_size"] == pytest.approx(6 / 4)
    assert stats["largest_classes"] == [
        ("run", ["runner", "running", "runs"]),
        ("aga", ["again"]),
        ("ran", ["ran"]),
        ("the", ["the"]),
    ]


def test_vocabulary_lists_at_most_ten_classes_and_handles_no_words():
    stats = vocabulary([" ".join(f"w{i}" for i in range(30))], str)
    assert len(stats["largest_classes"]) == 10
    assert stats["reduction"] == 0.0
    assert vocabulary(["?!"], str) == {
        "words": 0,
        "stems": 0,
        "reduction": 0.0,
        "mean_class_size": 0.0,
        "largest_classes": [],
    }


def test_fts5_porter_stems_and_unicode61_does_not():
    words = ["running", "runs", "ran"]
    assert fts5_stems(words) == {"running": "run", "runs": "run", "ran": "ran"}
    assert fts5_stems(words, "unicode61") == {"running": "running", "runs": "runs", "ran": "ran"}


def test_fts5_stems_folds_case_and_diacritics_and_splits():
    assert fts5_stems(["Café", "don't", "--", "running", "running"]) == {
        "Café": "cafe",
        "don't": "don t",
        "--": "",
        "running": "run",
    }


def test_fts5_porter_leaves_tokens_over_64_characters_alone():
    at_limit, over_limit = "a" * 61 + "ing", "a" * 62 + "ing"
    assert fts5_stems([at_limit, over_limit]) == {at_limit: "a" * 61, over_limit: over_limit}


def test_fts5_stems_rejects_unknown_tokenizers():
    with pytest.raises(InvalidArgument, match="no such tokenizer"):
        fts5_stems(["x"], "klingon")


def test_fts5_porter_equals_nltk_martin_extensions_on_locomo_observations(observation_words):
    assert len(observation_words) > 3_000
    assert disagreements(observation_words, fts5_stems(observation_words).__getitem__, MARTIN).empty


def test_fts5_porter_differs_from_martin_only_by_folding_diacritics_on_locomo_turns(turn_words):
    assert len(turn_words) > 5_000
    found = disagreements(turn_words, fts5_stems(turn_words).__getitem__, MARTIN)
    assert found.to_dict("records") == [{"word": "café", "a": "cafe", "b": "café"}]


def test_nltk_default_mode_and_snowball_differ_from_fts5_porter(observation_words):
    fts5 = fts5_stems(observation_words).__getitem__
    nltk_default = disagreements(observation_words, fts5, NLTK_DEFAULT)
    snowball = disagreements(observation_words, fts5, SNOWBALL)
    assert 0.01 < len(nltk_default) / len(observation_words) < len(snowball) / len(observation_words) < 0.05
    assert {"always", "birthday", "boys"} <= set(nltk_default.word)  # NLTK keeps "y" where Porter makes it "i"
    assert {"anxious", "always"} <= set(snowball.word)


def test_original_algorithm_and_martin_extensions_disagree(observation_words):
    found = disagreements(observation_words, ORIGINAL, MARTIN)
    assert not found.empty
    assert found.set_index("word").loc["possibly"].tolist() == ["possibli", "possibl"]


def test_disagreements_are_sorted_and_distinct():
    found = disagreements(["b", "a", "b", "c"], str.upper, lambda word: "A" if word == "a" else word)
    assert found.columns.tolist() == ["word", "a", "b"]
    assert found.to_dict("records") == [{"word": "b", "a": "B", "b": "b"}, {"word": "c", "a": "C", "b": "c"}]
