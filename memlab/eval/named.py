"""The collections memlab ships, by name, for ``memlab eval --collection NAME``; any other value is a folder.

Three are LoCoMo (``data/locomo10.json``, under its licence), read the way each name says and derived when
loaded, so nothing but the one file ships: ``locomo`` (observations as memories, ``memlab.eval.locomo``),
``locomo-topical`` (the same, tagged with topical words, ``memlab.eval.topical``) and ``locomo-turns`` (the
dialog turns as memories, ``memlab.eval.turns``). One is generated and reads no file: ``preferences`` (facts
stated once, recalled by requests in other words, ``memlab.eval.preferences``; seed 0).

A collection memlab ships is a ``Shipped`` in ``COLLECTIONS``, a ``memlab.registry.Registry``: a new one is one
``COLLECTIONS.register(Shipped(name, load))``.

Examples:
    >>> load_collection("locomo-turns").name
    'locomo-turns'
    >>> load_collection("tests/fixtures/trec-tiny").name
    'trec-tiny'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memlab.eval.collections import Collection, CollectionError
from memlab.eval.locomo import LOCOMO_PATH, load_locomo
from memlab.eval.preferences import build_preferences
from memlab.eval.topical import retag_topical
from memlab.eval.trec import load_trec
from memlab.eval.turns import load_locomo_turns
from memlab.registry import Registry

__all__ = ["Shipped", "COLLECTIONS", "load_collection"]


@dataclass(frozen=True)
class Shipped:
    """A collection memlab ships: its name, and how it is read from the LoCoMo file (or made without it)."""

    name: str
    load: Callable[[Path], Collection]
    """Reads the collection from the LoCoMo file at the path given (a generated collection ignores it)."""


COLLECTIONS: Registry[Shipped] = Registry("collection", Shipped)
for _shipped in (
    Shipped("locomo", load_locomo),
    Shipped("locomo-topical", lambda path: retag_topical(load_locomo(path))),
    Shipped("locomo-turns", load_locomo_turns),
    Shipped("preferences", lambda path: build_preferences()),
):
    COLLECTIONS.register(_shipped)


def load_collection(name: str, *, locomo: str | Path = LOCOMO_PATH) -> Collection:
    """The shipped collection called ``name`` (from the LoCoMo file at ``locomo``), else the TREC-style folder
    at ``name`` (``memlab.eval.trec.load_trec``).

    Raises:
        CollectionError: ``name`` is neither a shipped collection nor a folder (the message lists the shipped ones),
            or the files are missing or malformed.
    """
    if name in COLLECTIONS:
        return COLLECTIONS.get(name).load(Path(locomo))
    if not Path(name).is_dir():
        raise CollectionError(f"{COLLECTIONS.unknown(name)}; nor is it a folder (a TREC-style collection)")
    return load_trec(name)
