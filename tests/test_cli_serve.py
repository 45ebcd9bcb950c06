"""memlab.cli.serve: ``memlab serve``'s store, taint and agent, from flags or the environment, refused before any
protocol starts. Serving over stdio to a real MCP client is tests/test_mcp.py's."""

from __future__ import annotations

import argparse

import pytest

from memlab import Ranking
from memlab.cli import main
from memlab.cli.serve import serving_store
from memlab.errors import InvalidArgument


@pytest.fixture(autouse=True)
def no_environment(monkeypatch):
    for name in ("MEMLAB_DB", "MEMLAB_TAINT", "MEMLAB_AGENT", "MEMLAB_INTEGRITY", "MEMLAB_FLOOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(
    ("argv", "environment", "message"),
    [
        (["--db", "{db}", "--taint", "SECRET"], {}, "unknown level 'SECRET'"),
        (["--db", "{db}"], {"MEMLAB_TAINT": "TOP"}, "MEMLAB_TAINT='TOP'"),
        (["--db", "{db}", "--agent", "a\x00b"], {}, "memlab serve: "),
        (["--db", "{db}", "--policy", "nope"], {}, "nope"),
    ],
)
def test_a_bad_taint_agent_or_policy_exits_2_before_serving(tmp_path, monkeypatch, capsys, argv, environment, message):
    # Guards: cli.serve calling from_environment without the variable's origin (the message then not naming it).
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    argv = [part.format(db=tmp_path / "store.db") for part in argv]
    assert main(["serve", *argv]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "environment", "message"),
    [
        (["--integrity", "trusty"], {}, "unknown integrity 'trusty'; expected one of untrusted, trusted"),
        (["--floor", "high"], {}, "unknown integrity 'high'; expected one of untrusted, trusted"),
        ([], {"MEMLAB_INTEGRITY": "raised"}, "(MEMLAB_INTEGRITY='raised')"),
        ([], {"MEMLAB_FLOOR": "top"}, "(MEMLAB_FLOOR='top')"),
        (["--taint", "INTERNAL@trusty"], {}, "memlab serve: "),
        (["--integrity", "untrusted", "--floor", "trusted", "--taint", "SECRET@untrusted"], {}, "unknown level"),
    ],
)
def test_a_bad_integrity_or_floor_exits_2_in_one_line_and_touches_nothing(
    tmp_path, monkeypatch, capsys, argv, environment, message
):
    # Guards: serve parsing --integrity and --floor after the store is opened (the file then exists).
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert main(["serve", "--db", str(tmp_path / "store.db"), *argv]) == 2
    error = capsys.readouterr().err
    assert error.startswith("memlab serve: ") and message in error and error.count("\n") == 1
    assert not (tmp_path / "store.db").exists()


def test_without_a_store_serve_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["serve"])
    assert exited.value.code == 2 and "--db is required (or set MEMLAB_DB)" in capsys.readouterr().err


def namespace(**given) -> argparse.Namespace:
    return argparse.Namespace(**{"db": None, "policy": None, "analyzer": None, "ranking": None, "origins": {}} | given)


def test_the_served_store_is_opened_with_its_policy_and_ranking(tmp_path):
    path = Ranking(tag_boost=3.0).save(tmp_path / "ranking.json")
    with serving_store(namespace(db=str(tmp_path / "s.db"), policy="global-stats", ranking=str(path))) as store:
        assert store.policy.name == "global-stats" and store.ranking.tag_boost == 3.0


def test_a_dense_ranking_file_is_refused_before_the_store_is_opened(tmp_path):
    path = Ranking.hybrid().save(tmp_path / "ranking.json")
    with pytest.raises(InvalidArgument, match="ranking.dense: this ranking uses dense retrieval"):
        serving_store(namespace(db=str(tmp_path / "s.db"), ranking=str(path)))
    assert not (tmp_path / "s.db").exists()
