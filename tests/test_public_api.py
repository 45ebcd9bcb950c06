"""memlab's public face: the docs import only public names, and ``memlab`` exports what the docs teach and
nothing they do not."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

import memlab
from memlab import InvalidArgument, MemoryStore

ROOT = Path(__file__).resolve().parent.parent
# The modules a reader is taught to import from: the package, and the labs and layers with an ``__all__`` of
# their own. Anything else (memlab.storage.schema, memlab.widgets.render, ...) is the implementation's.
PUBLIC_MODULES = (
    "memlab",
    "memlab.tools",
    "memlab.policies",
    "memlab.check",
    "memlab.eval",
    "memlab.eval.report",
    "memlab.poison",
    "memlab.widgets",
    "memlab.storage",
    "memlab.integrations.langgraph",
    "memlab.integrations.mem0",
)
_FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _pages() -> list[tuple[str, str]]:
    """(where, text) of every page and notebook a reader learns from."""
    pages = [(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")) for path in sorted(ROOT.glob("docs/*.md"))]
    pages.append(("README.md", (ROOT / "README.md").read_text(encoding="utf-8")))
    for path in sorted(ROOT.glob("notebooks/*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        pages.append((str(path.relative_to(ROOT)), "\n".join("".join(cell["source"]) for cell in cells)))
    return pages


def _code(where: str, text: str) -> list[str]:
    if where.endswith(".ipynb"):
        notebook = json.loads((ROOT / where).read_text(encoding="utf-8"))
        return ["".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code"]
    return _FENCE.findall(text)


def _memlab_imports() -> list[tuple[str, str, str | None]]:
    """(where, module, name) of every memlab import in the docs' code; name None for ``import module``."""
    found = []
    for where, text in _pages():
        for block in _code(where, text):
            try:
                tree = ast.parse(block)
            except SyntaxError:  # a shell session or a fragment: no imports to check
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "memlab":
                    found += [(where, node.module, alias.name) for alias in node.names]
                elif isinstance(node, ast.Import):
                    found += [(where, a.name, None) for a in node.names if a.name.split(".")[0] == "memlab"]
    return found


def test_the_docs_teach_imports():
    assert len(_memlab_imports()) >= 20


@pytest.mark.parametrize("where, module, name", _memlab_imports())
def test_the_docs_import_only_public_names(where, module, name):
    assert module in PUBLIC_MODULES, f"{where} imports from {module}, which is not a public module"
    if name is None:
        return
    exported = importlib.import_module(module).__all__
    public_submodule = f"{module}.{name}" in PUBLIC_MODULES
    assert name in exported or public_submodule, f"{where} imports {name} from {module}, which does not export it"


def test_memlab_exports_what_the_docs_teach_and_nothing_else():
    taught = "\n".join(text for _, text in _pages())
    untaught = [name for name in memlab.__all__ if not re.search(rf"\b{re.escape(name)}\b", taught)]
    assert untaught == [], f"memlab exports {untaught}, which no page or notebook teaches"
    imported = {name for _, module, name in _memlab_imports() if module == "memlab" and name is not None}
    public_submodules = {module.split(".")[1] for module in PUBLIC_MODULES if "." in module}
    assert imported - set(memlab.__all__) <= public_submodules


def test_a_private_import_is_caught():
    # Guards: PUBLIC_MODULES accepting any memlab module.
    assert "memlab.storage.schema" not in PUBLIC_MODULES and "memlab.widgets.render" not in PUBLIC_MODULES


def test_a_throwaway_store_lives_in_memory_or_in_postgresql_never_on_disk(tmp_path):
    with MemoryStore.throwaway() as scratch:
        assert scratch.session().memory_save("draft", "x").version == 1
    with pytest.raises(InvalidArgument, match="in memory or in PostgreSQL"):
        with MemoryStore.throwaway(str(tmp_path / "notes.db")):
            pass
    assert list(tmp_path.iterdir()) == []
