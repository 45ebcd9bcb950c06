"""``memlab cache``: the dense rows' embedding cache, shown or cleared."""

from __future__ import annotations

import argparse

from memlab.cli.options import Commands, add_command

__all__ = ["add_cache"]


def add_cache(commands: Commands) -> None:
    embeddings = add_command(
        commands,
        "cache",
        "show or clear the dense rows' embedding cache ($MEMLAB_CACHE, else ~/.cache/memlab)",
        run_cache,
    )
    embeddings.add_argument("action", nargs="?", choices=["show", "clear"], default="show", help="default: show")


def run_cache(args: argparse.Namespace) -> int:
    """Print the cache file and its size, or remove it (``clear``); 0."""
    from memlab.search.embedding_cache import EmbeddingCache

    cache = EmbeddingCache()
    if args.action == "clear":
        print(f"{cache.path}: {'removed' if cache.clear() else 'nothing to remove'}")
    else:
        size = cache.path.stat().st_size if cache.path.exists() else 0
        print(f"{cache.path}: {size / 1e6:.1f} MB" if size else f"{cache.path}: empty")
    return 0
