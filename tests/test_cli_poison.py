"""memlab.cli.poison: ``memlab poison``'s refusals (each names its flag, exits 2, writes nothing), its JSON document,
its table and its files, on a tiny collection. The lab's figures are tests/test_poison_*.py's."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from memlab.cli import main

TINY = Path(__file__).parent / "fixtures" / "trec-tiny"
FAST = ["--collection", str(TINY), "--rankings", "lexical", "--rate", "0.2,0.4"]


@pytest.fixture
def unjudged(tmp_path) -> Path:
    """trec-tiny with every judgement 0: no question has an answer to poison."""
    folder = tmp_path / "unjudged"
    folder.mkdir()
    for name in ("docs.jsonl", "queries.jsonl"):
        (folder / name).write_text((TINY / name).read_text())
    lines = [line.rsplit(" ", 1)[0] + " 0" for line in (TINY / "qrels").read_text().splitlines()]
    (folder / "qrels").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tier", "email"], "--tier: unknown tier 'email'"),
        (["--rate", "0"], "--rate: rate must be a number strictly between 0 and 1"),
        (["--rate", "0.1,1.5"], "--rate: rate must be"),
        (["--rate", "lots"], "--rate: rate must be a number, not 'lots'"),
        (["--k", "1,11"], "--k: k must be one or more integers from 1 to the depth 10"),
        (["--k", "5", "--depth", "3"], "--k: k must be one or more integers from 1 to the depth 3"),
        (["--depth", "101"], "--depth: depth must be an integer from 1 to 100"),
        (["--seed", "1.5"], "--seed: seed must be an integer, not '1.5'"),
        (["--rows", "labels-only,firewall"], "--rows: unknown rows ['firewall']"),
        (["--rankings", "bm25"], "--rankings: unknown or repeated rankings"),
        (["--collection", "no-such-folder"], "--collection: "),
        (["--tier", "direct,email"], "--tier: unknown tier 'email'"),
        (["--variants", "match,typo"], "--variants: variants: unknown ['typo']"),
    ],
)
def test_a_refused_run_names_its_flag_exits_2_and_writes_nothing(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(["poison", "--collection", str(TINY), *argv]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(f"memlab poison: {message}") and captured.err.count("\n") == 1, captured.err
    assert captured.out == ""
    assert list(tmp_path.iterdir()) == []


def test_a_collection_without_a_judged_question_is_refused(tmp_path, monkeypatch, capsys, unjudged):
    monkeypatch.chdir(tmp_path)
    assert main(["poison", "--collection", str(unjudged)]) == 2
    assert "--collection: collection 'unjudged': no question carries a judged document" in capsys.readouterr().err
    assert [path.name for path in tmp_path.iterdir()] == ["unjudged"]


def test_json_is_the_only_thing_on_standard_output(tmp_path, capsys):
    assert main(["poison", *FAST, "--json", "--out", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["collection"] == "trec-tiny" and document["k"] == 10
    rows = pd.DataFrame(document["table"])
    assert list(dict.fromkeys(rows["row"])) == [
        "integrity-ignored",
        "labels-only",
        "trust-demoted",
        "floor-trusted",
        "low-water-mark",
    ]
    assert sorted(set(rows["rate"])) == [0.2, 0.4]
    assert (rows.loc[rows["row"] == "floor-trusted", "ASR-r@k"] == 0).all()
    assert all(line["policy lab"].startswith("bounded proof") for line in document["guarantees"])
    assert "wrote" in captured.err


def test_the_table_and_the_files(tmp_path, capsys):
    out = tmp_path / "results"
    assert main(["poison", *FAST, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Poisoning trec-tiny: tier direct, k = 10" in printed
    assert "Exact zeros and the policy lab's proofs they rest on" in printed
    assert sorted(path.name for path in out.iterdir()) == ["guarantees.csv", "poison.csv", "poison.png"]
    table = pd.read_csv(out / "poison.csv")
    assert set(table["k"]) == {1, 5, 10} and set(table["ranking"]) == {"lexical"}
    assert (out / "poison.png").read_bytes()[:4] == b"\x89PNG"
