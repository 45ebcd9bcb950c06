"""Ranking files: a tuned ranking saved, loaded and served; bad files refused naming the file and the field; and a
ranking file changes only the order of what a session sees, never what it may see."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pytest

from memlab import InvalidArgument, Level, MemoryStore, Ranking
from memlab.cli import main
from memlab.cli.serve import serving_store
from memlab.search.ranking import FORMAT, MAX_WEIGHT, VERSION, RankingFileError, read

BOOSTED = Ranking(tag_boost=MAX_WEIGHT)  # a tag the query names decides the order
UNBOOSTED = Ranking(tag_boost=0.0, tags=0.0)  # tags count for nothing: the content decides


def _file(tmp_path: Path, document: object, name: str = "ranking.json") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document))
    return path


def _document(**ranking: object) -> dict:
    return {"format": FORMAT, "version": VERSION, "ranking": {**Ranking().as_dict(), **ranking}}


def test_a_saved_ranking_loads_back_with_what_it_was_tuned_on(tmp_path):
    ranking = Ranking(key=0.0, source=2.0, tag_boost=4.0)
    tuned_on = {"collection": "mine", "documents": 7, "queries": 4, "date": "2026-12-01"}
    path = ranking.save(tmp_path / "ranking.json", tuned_on=tuned_on, figures={"held_out": {"S@10": 0.5}})
    assert Ranking.load(path) == ranking
    saved = read(path)
    assert (saved.version, saved.tuned_on, saved.figures) == (VERSION, tuned_on, {"held_out": {"S@10": 0.5}})
    assert [p.name for p in tmp_path.iterdir()] == ["ranking.json"]  # no partial file left beside it


def test_figures_json_cannot_hold_are_refused_and_nothing_is_written(tmp_path):
    with pytest.raises(InvalidArgument, match="plain finite JSON"):
        Ranking().save(tmp_path / "ranking.json", figures={"S@10": math.nan})
    assert not list(tmp_path.iterdir())


def test_a_ranking_file_in_a_missing_folder_is_refused_naming_it(tmp_path, capsys):
    with pytest.raises(InvalidArgument, match=f"cannot write {tmp_path / 'nope' / 'r.json'}: No such file"):
        Ranking().save(tmp_path / "nope" / "r.json")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("content", "field", "message"),
    [
        ("ranking: {tag_boost: 2}", None, "not JSON (Expecting value at line 1 column 1)"),
        ('{"format": "memlab-ranking", ', None, "not JSON"),
        ("[1.0, 1.0, 1.0]", None, "a JSON object is expected, not an array"),
        ('"memlab-ranking"', None, "a JSON object is expected, not a string"),
        ({"version": 1, "ranking": {}}, "format", "missing"),
        ({"format": "something-else", "version": 1, "ranking": {}}, "format", "not a ranking file"),
        ({**_document(), "version": VERSION + 1}, "version", f"format version {VERSION + 1} is newer"),
        ({**_document(), "version": "1"}, "version", "must be a positive integer"),
        ({**_document(), "colour": "blue"}, "colour", "unknown field"),
        ({**_document(), "tuned_on": ["locomo"]}, "tuned_on", "must be an object"),
        ({**_document(), "ranking": [1.0, 2.0]}, "ranking", "must be an object of parameters"),
    ],
)
def test_a_file_that_is_not_a_ranking_file_is_refused_naming_it(tmp_path, content, field, message):
    path = _file(tmp_path, content)
    with pytest.raises(RankingFileError) as refused:
        Ranking.load(path)
    assert isinstance(refused.value, InvalidArgument)
    assert str(refused.value).startswith(f"{path}: ") and message in str(refused.value)
    assert refused.value.path == path and refused.value.field == field


def test_a_missing_or_unknown_parameter_is_refused_naming_it(tmp_path):
    document = _document()
    del document["ranking"]["fusion_k"]
    with pytest.raises(RankingFileError, match=r"ranking\.json: ranking\.fusion_k: missing"):
        Ranking.load(_file(tmp_path, document))
    with pytest.raises(RankingFileError, match=r"ranking\.json: ranking\.colour: unknown parameter"):
        Ranking.load(_file(tmp_path, _document(colour=1.0)))


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("-1.0", "-1.0"),
        ("NaN", "nan"),
        ("Infinity", "inf"),
        ("-Infinity", "-inf"),
        ("1e999", "inf"),
        ("1e6", "1000000.0"),
        ('"2"', "'2'"),
        ("true", "True"),
        ("null", "None"),
    ],
)
def test_a_weight_out_of_range_is_refused_naming_the_file_and_the_field(tmp_path, text, shown):
    """JSON has no NaN or Infinity, but Python's reader accepts them (and 1e999 reads as inf): all are refused,
    and so is anything above MAX_WEIGHT, where bm25 times the weight heads for overflow."""
    path = _file(tmp_path, json.dumps(_document()).replace('"tag_boost": 2.0', f'"tag_boost": {text}'))
    with pytest.raises(RankingFileError) as refused:
        Ranking.load(path)
    assert str(refused.value) == f"{path}: ranking.tag_boost: must be a finite number in [0, 1000], not {shown}"


def test_a_name_given_twice_is_refused_rather_than_one_of_them_believed(tmp_path):
    text = json.dumps(_document()).replace('"tag_boost": 2.0', '"tag_boost": 2.0, "tag_boost": 0.0')
    with pytest.raises(RankingFileError, match="ranking.json: tag_boost: appears twice"):
        Ranking.load(_file(tmp_path, text))


def test_a_ranking_in_code_has_the_same_bound():
    with pytest.raises(InvalidArgument, match=r"Ranking\.fusion_k must be a finite number in \[0, 1000\]"):
        Ranking(fusion_k=MAX_WEIGHT * 10)
    assert Ranking(fusion_k=MAX_WEIGHT).fusion_k == MAX_WEIGHT


def test_a_ranking_that_ranks_nothing_is_refused_naming_the_file(tmp_path):
    with pytest.raises(RankingFileError, match="ranking.json: ranking: a Ranking needs lexical > 0 or dense > 0"):
        Ranking.load(_file(tmp_path, _document(lexical=0.0, dense=0.0)))


def test_a_dense_ranking_file_needs_a_store_with_an_embedder(tmp_path):
    ranking = Ranking.load(Ranking.hybrid().save(tmp_path / "hybrid.json"))
    with pytest.raises(InvalidArgument, match=r"dense retrieval \(dense > 0 or lexical = 0\).*embedder"):
        MemoryStore(ranking=ranking)


def _serve_args(db: Path, ranking: Path | None) -> argparse.Namespace:
    return argparse.Namespace(db=str(db), policy=None, analyzer=None, ranking=None if ranking is None else str(ranking))


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not JSON"),
        ({**_document(), "version": 7}, "version: format version 7 is newer"),
        (_document(tag_boost=-3), "ranking.tag_boost: must be a finite number"),
        (_document(dense=0.75), "ranking.dense: this ranking uses dense retrieval and memlab serve has no embedder"),
    ],
)
def test_serve_with_a_bad_ranking_file_exits_with_the_message_and_touches_nothing(tmp_path, capsys, content, message):
    path = _file(tmp_path, content)
    assert main(["serve", "--db", str(tmp_path / "memories"), "--ranking", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"memlab serve: {path}: ") and message in err and "Traceback" not in err
    assert not (tmp_path / "memories").exists()


def test_serve_with_a_missing_ranking_file_says_so(tmp_path, capsys):
    assert main(["serve", "--db", str(tmp_path / "memories"), "--ranking", str(tmp_path / "nope.json")]) == 2
    assert f"{tmp_path / 'nope.json'}: no such file" in capsys.readouterr().err


WORDS = ("ann", "tea", "jazz", "chess", "lisbon")
LEVELS = (Level.PUBLIC, Level.INTERNAL, Level.CONFIDENTIAL)


def _fill(db: Path) -> None:
    """Memories at three levels in two agents, some shadowing others, some deleted; tags that queries name."""
    with MemoryStore(db) as store:
        for agent in ("main", "other"):
            for number in range(24):
                level = LEVELS[number % 3]
                session = store.session(level, agent)
                words = [WORDS[(number + i) % len(WORDS)] for i in range(1 + number % 3)]
                key = f"m{number % 10}"  # keys repeat across levels: higher versions shadow lower ones
                session.memory_save(key, " ".join(words), tags=[WORDS[number % 4]], source=f"ann said {words[0]}")
                if number % 7 == 0:
                    session.memory_delete(key)


def test_a_ranking_file_changes_only_the_order_of_what_each_session_sees(tmp_path):
    """Noninterference for ranking files: at every taint and in every agent, the hits a served store returns with
    a ranking file are exactly those without it, for files at the edges of the allowed range.

    Guards: ``ranked = [row for row in ranked if row[1] < 0]`` after the fetch in memlab/storage/lexical.py's
    ``_rank`` (a ranking folded into what is found: a hit scoring 0 under the file's weights dropped)."""
    db = tmp_path / "memories"
    _fill(db)
    files = [
        BOOSTED.save(tmp_path / "boosted.json"),
        UNBOOSTED.save(tmp_path / "unboosted.json"),
        Ranking(key=0, content=0, tags=0, source=0, when=0, tag_boost=0).save(tmp_path / "zero.json"),
        Ranking(key=MAX_WEIGHT, content=0, tags=MAX_WEIGHT, source=MAX_WEIGHT, when=0).save(tmp_path / "edge.json"),
    ]
    queries = [" ".join(WORDS[i : i + n]) for i in range(len(WORDS)) for n in (1, 2)]
    with MemoryStore(db) as plain:
        for path in files:
            with serving_store(_serve_args(db, path)) as served:
                assert served.ranking == Ranking.load(path)
                for agent in ("main", "other"):
                    for taint in LEVELS:
                        for query in queries:
                            expected = plain.session(taint, agent).memory_search(query, max_results=100)
                            got = served.session(taint, agent).memory_search(query, max_results=100)
                            assert sorted(h.memory.key for h in got) == sorted(h.memory.key for h in expected)
                            assert {(h.memory.key, h.memory.classification) for h in got} == {
                                (h.memory.key, h.memory.classification) for h in expected
                            }
    # And the files do reorder: were every ranking to order alike, the comparison above would prove nothing.
    assert [h.memory.key for h in _hits(db, files[0])] != [h.memory.key for h in _hits(db, files[1])]


def _hits(db: Path, ranking_file: Path) -> list:
    with serving_store(_serve_args(db, ranking_file)) as store:
        return store.session(Level.CONFIDENTIAL).memory_search("ann jazz", max_results=100)


def test_a_served_store_ranks_by_the_file(tmp_path):
    """Same store, same query: the ranking file decides which memory comes first."""
    db = tmp_path / "memories"
    with MemoryStore(db) as store:
        session = store.session()
        session.memory_save("words", "jazz records and jazz concerts with jazz friends")
        session.memory_save("tagged", "records and concerts", tags=["jazz"])
    boosted, unboosted = BOOSTED.save(tmp_path / "boosted.json"), UNBOOSTED.save(tmp_path / "unboosted.json")
    for path, first in ((boosted, "tagged"), (unboosted, "words")):
        with serving_store(_serve_args(db, path)) as served:
            assert [h.memory.key for h in served.session().memory_search("jazz")] == [
                first,
                *{"tagged", "words"} - {first},
            ]
