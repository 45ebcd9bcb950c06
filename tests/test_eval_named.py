"""memlab.eval.named: the collections memlab ships, by name, else a TREC-style folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlab.eval.collections import CollectionError
from memlab.eval.named import COLLECTIONS, load_collection

TINY = Path(__file__).parent / "fixtures" / "trec-tiny"


def test_the_shipped_collections():
    assert list(COLLECTIONS) == ["locomo", "locomo-topical", "locomo-turns", "preferences"]


@pytest.mark.parametrize("name", ["locomo", "locomo-topical", "locomo-turns"])
def test_a_shipped_name_reads_the_locomo_file_given(name, tmp_path):
    # Guards: named.load_collection ignoring `locomo` (always reading data/locomo10.json).
    with pytest.raises(CollectionError, match=str(tmp_path / "missing.json")):
        load_collection(name, locomo=tmp_path / "missing.json")


def test_any_other_name_is_a_folder():
    assert load_collection(str(TINY)).name == "trec-tiny"
    with pytest.raises(CollectionError, match="locomo, locomo-topical, locomo-turns, preferences.*nor is it a folder"):
        load_collection("no-such-collection")
