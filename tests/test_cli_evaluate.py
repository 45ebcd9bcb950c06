"""memlab.cli.evaluate: ``memlab eval``'s refusals, its JSON document and its tables, on a tiny collection.

The relevance lab's figures and committed results are tests/test_eval.py's and tests/test_tuning.py's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memlab.cli import main

TINY = Path(__file__).parent / "fixtures" / "trec-tiny"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--save", "ranking.json"], "writes a tuned ranking file: add --tune"),
        (["--backend", "postgres"], "--backend postgres needs --db postgresql://"),
        (["--rows", "no-such-row"], "no-such-row"),
    ],
)
def test_a_refused_run_exits_2_and_writes_nothing(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--collection", str(TINY), "--workers", "1", *argv]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "ranking.json").exists()


def test_json_is_the_only_thing_on_standard_output(capsys):
    # Guards: cli.evaluate printing the collection's summary to standard output under --json.
    assert main(["eval", "--collection", str(TINY), "--rows", "porter,memlab", "--workers", "1", "--json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert {"collection", "baseline", "summary", "by_category", "timings", "skipped"} <= set(document)
    assert [row["row"] for row in document["summary"]] == ["porter", "memlab"]
    assert "trec-tiny: 7 documents" in captured.err


def test_the_tables_and_an_out_folder(tmp_path, capsys):
    assert main(["eval", "--collection", str(TINY), "--rows", "porter", "--workers", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Measures (* p<0.05" in out and "Time: indexing" in out
    assert any(path.suffix == ".csv" for path in tmp_path.iterdir())
