"""A fresh process pays only for what it uses: ``import memlab`` and the calls of an agent on an existing store
load no heavy package; the auditor's DataFrames, an NLTK analyzer and the dense extra load theirs when asked."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from memlab import MemoryStore

# Each costs a tenth of a second to seconds to import; sqlite_utils imports pandas.
HEAVY = ("pandas", "numpy", "nltk", "onnxruntime", "matplotlib", "ipywidgets", "sqlite_utils")


def _loaded_after(code: str, *args: str, packages: tuple[str, ...] = HEAVY) -> list[str]:
    """The ``packages`` (the heavy ones by default) in ``sys.modules`` once ``code`` has run in a fresh interpreter."""
    script = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import json, sys
        print(json.dumps([name for name in {packages!r} if name in sys.modules]))
        """
    )
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_import_memlab_loads_no_heavy_package():
    # Guards: `import pandas as pd` at the top of memlab/store.py, `import numpy as np` at the top of dense.py.
    assert _loaded_after("import memlab") == []


def test_what_memlab_serve_imports_before_it_answers_loads_no_heavy_package():
    # The MCP SDK is what `memlab serve` needs; nothing of memlab's features beyond the five tools.
    assert _loaded_after("import memlab.cli, memlab.mcp_server, memlab.store") == []


@pytest.fixture(params=["folder", "file"])
def existing_store(request, tmp_path) -> str:
    """A store on disk with a few memories, written by another process (this one)."""
    path = tmp_path / ("store" if request.param == "folder" else "store.db")
    with MemoryStore(path, layout=request.param) as store:
        session = store.session("INTERNAL", "main")
        session.memory_save("diet", "The user is vegetarian and likes running", tags=["food"])
        session.memory_save("city", "The user lives in Lisbon", tags=["home"])
    return str(path)


def test_an_agents_calls_on_an_existing_store_load_no_heavy_package(existing_store):
    # Guards: snippets stemming with NLTK's PorterStemmer (`import nltk` on the first search).
    code = """
        import sys
        from memlab import MemoryStore, tools
        with MemoryStore(sys.argv[1]) as store:
            session = store.session("INTERNAL", "main")
            results = [
                tools.call(session, "memory_save", {"key": "pet", "content": "A cat named Miso", "tags": ["home"]}),
                tools.call(session, "memory_get", {"key": "diet"}),
                tools.call(session, "memory_search", {"query": "runs"}),
                tools.call(session, "memory_list", {"tag": "home"}),
            ]
        assert not any("error" in result for result in results), results
        assert results[2]["results"][0]["snippet"] == "The user is vegetarian and likes **running**", results[2]
        assert [memory["key"] for memory in results[3]["memories"]] == ["city", "pet"], results[3]
        """
    assert _loaded_after(code, existing_store) == []


def test_the_features_that_need_a_heavy_package_still_load_it(existing_store):
    code = """
        import sys
        from memlab import MemoryStore
        with MemoryStore(sys.argv[1]) as store:
            assert store.history("diet")["content"].tolist() == ["The user is vegetarian and likes running"]
        with MemoryStore(analyzer="nltk-porter") as store:
            store.session("PUBLIC").memory_save("k", "runners running")
            assert [hit.memory.key for hit in store.session("PUBLIC").memory_search("runner")] == ["k"]
        """
    assert {"pandas", "nltk"} <= set(_loaded_after(code, existing_store))


def test_memlab_eval_without_a_t_test_loads_no_scipy():
    # Guards: `from scipy import stats` at the top of memlab/eval/measures.py (1-2 s of every `memlab eval`, a
    # third of a second run's CPU beyond its searches, for `--test t` alone).
    code = """
        from memlab.cli import main
        assert main(["eval", "--collection", "tests/fixtures/trec-tiny", "--rows", "porter,memlab"]) in (0, None)
        """
    assert _loaded_after(code, packages=("scipy",)) == []


def test_the_t_test_still_loads_scipy_and_answers():
    from memlab.eval.measures import paired_test

    assert paired_test([1.0, 0.9, 1.0, 0.8], [0.0, 0.1, 0.2, 0.0], method="t") < 0.01
