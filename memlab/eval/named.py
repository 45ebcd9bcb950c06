"""The collections memlab ships, by name, for ``memlab eval --collection NAME``; any other value is a folder.

All three are LoCoMo (``data/locomo10.json``, under its licence), read the way each name says and derived when
loaded, so nothing but the one file ships: ``locomo`` (observations as memories, ``memlab.eval.locomo``),
``locomo-topical`` (the same, tagged with topical words, ``memlab.eval.topical``) and ``locomo-turns`` (the
dialog turns as memories, ``memlab.eval.turns``).

Examples:
    >>> load_collection("locomo-turns").name
    'locomo-turns'
    >>> load_collection("tests/fixtures/trec-tiny").name
    'trec-tiny'
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from memlab.eval.collections import Collection, CollectionError
from memlab.eval.locomo import LOCOMO_PATH, load_locomo
from memlab.eval.topical import retag_topical
from memlab.eval.trec import load_trec
from memlab.eval.turns import load_locomo_turns

__all__ = ["NAMED", "load_collection"]

NAMED: dict[str, Callable[[Path], Collection]] = {
    "locomo": load_locomo,
    "locomo-topical": lambda path: retag_topical(load_locomo(path)),
    "locomo-turns": load_locomo_turns,
}


def load_collection(name: str, *, locomo: str | Path = LOCOMO_PATH) -> Collection:
    """The shipped collection called ``name`` (from the LoCoMo file at ``locomo``), else the TREC-style folder
    at ``name`` (``memlab.eval.trec.load_trec``)."""
    loader = NAMED.get(name)
    if loader is not None:
        return loader(Path(locomo))
    if not Path(name).is_dir():
        raise CollectionError(f"{name} is neither a collection memlab ships ({', '.join(NAMED)}) nor a folder")
    return load_trec(name)
