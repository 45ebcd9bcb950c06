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


def test_the_tables_end_with_a_legend_of_every_column_and_the_page_to_read(capsys, monkeypatch):
    # Guards: eval's tables never saying what S@k, nDCG, MRR or index_vs_baseline mean (issue 37).
    import re

    from memlab.eval.report import LEGEND

    monkeypatch.setenv("COLUMNS", "80")
    assert main(["eval", "--collection", str(TINY), "--rows", "porter,memlab", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    tables, legend = out.split("What the columns mean")
    last = " ".join(legend.split("\nRead ")[-1].split())
    assert last == "docs/relevance-lab.md: how the rows are built, the collections, and what the figures say."
    assert (Path(__file__).resolve().parent.parent / "docs" / "relevance-lab.md").is_file()
    assert max(map(len, legend.splitlines())) <= 80
    headers = {
        word
        for line in tables.splitlines()
        if line.startswith(" ") and ("analyzer" in line or "index_seconds" in line)
        for word in line.split()
    }
    plain = {"analyzer", "index_seconds", "search_seconds", "ms_per_query"}  # their tables' titles say what they are
    explained = {re.sub(r"^(S|R)@\d+$", r"\1@k", header) for header in headers} - plain
    assert explained == {"S@k", "R@k", "nDCG@10", "MAP", "MRR", "context", "index_vs_baseline"}
    assert explained <= set(LEGEND)
    for measure in ("S@k", "nDCG@10", "MRR", "index_vs_baseline"):
        assert re.search(rf"^  {re.escape(measure)} +\S", legend, re.MULTILINE), measure
