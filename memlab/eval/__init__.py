"""The relevance lab: collections, analyzers compared on the real store, IR measures and significance."""

from memlab.eval.collections import Collection, CollectionError, Document, Query, load_locomo, load_trec
from memlab.eval.runner import ALL_ROWS, Results, run

__all__ = [
    "Collection",
    "CollectionError",
    "Document",
    "Query",
    "load_locomo",
    "load_trec",
    "Results",
    "run",
    "ALL_ROWS",
]
