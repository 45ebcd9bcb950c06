"""The relevance lab: collections, analyzers compared on the real store, IR measures and significance."""

from memlab.eval.blind import BlindCase, blind_case
from memlab.eval.collections import Collection, CollectionError, Document, Query
from memlab.eval.configurations import ALL_ROWS
from memlab.eval.locomo import load_locomo
from memlab.eval.named import load_collection
from memlab.eval.runner import Results, run
from memlab.eval.trec import load_trec

__all__ = [
    "Collection",
    "CollectionError",
    "Document",
    "Query",
    "load_locomo",
    "load_trec",
    "load_collection",
    "Results",
    "run",
    "ALL_ROWS",
    "BlindCase",
    "blind_case",
]
