"""memlab.poison.cached: the lab's results read back from a CSV, and the bundled LoCoMo table's exact zeros."""

from __future__ import annotations

import pandas as pd
import pytest
from poison_toy import toy

from memlab.errors import InvalidArgument
from memlab.poison import RESULTS_PATH, results, run
from memlab.poison.cached import REQUIRED


def test_a_run_written_as_csv_reads_back_as_the_same_table(tmp_path):
    table = pd.concat([run(toy(), rate=rate, k=(1, 5)) for rate in (0.2, 0.5)], ignore_index=True)
    table.to_csv(tmp_path / "toy.csv", index=False)
    pd.testing.assert_frame_equal(results(tmp_path / "toy.csv"), table, check_dtype=False)


def test_the_default_is_the_bundled_locomo_table():
    assert (
        RESULTS_PATH.as_posix() == "data/results/poison/locomo/poison.csv"
    )  # from the repository's root, as tests run
    table = results()
    assert set(REQUIRED) <= set(table.columns)
    assert {"direct", "query", "content"} <= set(table["tier"])


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "no poisoning lab results at"),
        ("", "has no column row, ranking, tier"),
        ("row,ranking,tier,k,rate\nlabels-only,lexical,direct,10,0.01\n", "has no column poison rate, ISR"),
    ],
)
def test_a_missing_or_foreign_file_is_refused_naming_it(tmp_path, text, message):
    path = tmp_path / "results.csv"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidArgument, match=message) as refused:
        results(path)
    assert str(path) in str(refused.value)


def test_the_bundled_table_shows_the_proofs_as_exact_zeros():
    """Floor TRUSTED: no poisoned memory ever appears (ASR-r@k and ISR exactly 0, at every tier, rate, ranking and
    k); trust first: an overwrite never replaces a trusted value under labels only (``ISR overwrite`` 0); a store
    that ignores integrity is poisoned (ASR-r@10 above 0 at every rate)."""
    table = results()
    floor = table[table["row"] == "floor-trusted"]
    assert len(floor) and (floor[["ASR-r@k", "ASR-r@k all", "ISR", "ISR overwrite"]] == 0).all().all()
    labels_only = table[table["row"] == "labels-only"]
    assert len(labels_only) and (labels_only["ISR overwrite"] == 0).all()
    ignored = table[(table["row"] == "integrity-ignored") & (table["k"] == 10)]
    assert len(ignored) and (ignored["ASR-r@k"] > 0).all()
