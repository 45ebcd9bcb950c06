"""Make the warm embeddings of the bundled LoCoMo: every document's MiniLM vector (float32) by text digest.

The relevance lab reads them as a read-only layer of the embedding cache (``memlab.search.embedding_cache``), so
``memlab eval`` embeds only the questions. Each agent's documents are embedded in one call, as the eval's
``memory_save_many`` embeds them. Run from the repository's root, after a change of the data or the model:

    python tools/embed_locomo.py            # writes data/locomo10.embeddings.npz
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from memlab.eval.locomo import LOCOMO_PATH, load_locomo
from memlab.search.dense import MiniLM
from memlab.search.embedding_cache import digest, fingerprint

WARM_PATH = Path("data") / "locomo10.embeddings.npz"


def embed_locomo(locomo: Path = LOCOMO_PATH, out: Path = WARM_PATH, *, threads: int = 1) -> int:
    """Write ``out``: the model's key, the documents' text digests (sorted) and their vectors, as the model gave
    them (float32: float16 would move the dense rows' ranking of a few questions)."""
    model = MiniLM(threads=threads)
    by_agent: dict[str, list[str]] = {}
    for document in load_locomo(locomo).documents:
        by_agent.setdefault(document.agent, []).append(document.text)
    vectors: dict[bytes, np.ndarray] = {}
    for texts in by_agent.values():
        for text, vector in zip(texts, model.embed(texts), strict=True):
            vectors.setdefault(digest(text), vector)
    keys = sorted(vectors)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        out,
        model=np.array(fingerprint(model)),
        digests=np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), 32),
        vectors=np.stack([vectors[key] for key in keys]).astype(np.float32),
    )
    return len(keys)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, default=LOCOMO_PATH, help="locomo10.json (default data/locomo10.json)")
    parser.add_argument("--out", type=Path, default=WARM_PATH, help=f"the file to write (default {WARM_PATH})")
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads (default 1)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    count = embed_locomo(args.locomo, args.out, threads=args.threads)
    size = args.out.stat().st_size
    print(f"{args.out}: {count} vectors, {size / 1e6:.2f} MB, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
