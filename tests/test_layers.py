"""The layers go one way, and the imports hold it (docs/reference.md, "Where things live"): values import
nothing above them, policy rules know no session, storage knows no policy, the checkers and widgets use the
public API, and no module imports one that imports it back."""

from __future__ import annotations

import ast
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VALUES = {
    "memlab.levels",
    "memlab.labels",
    "memlab.records",
    "memlab.errors",
    "memlab.arguments",
    "memlab.viewrules",
    "memlab.registry",
}
ABOVE_STORAGE = (
    "memlab.policy",
    "memlab.policies",
    "memlab.session",
    "memlab.store",
    "memlab.tools",
    "memlab.tooldefs",
)


def _name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _modules() -> dict[str, Path]:
    return {_name(path): path for path in sorted((ROOT / "memlab").rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


@cache
def imports(module: str) -> frozenset[str]:
    """The memlab modules ``module`` imports, at any depth of its code but under ``if TYPE_CHECKING:``."""
    modules = _modules()
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            return
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "memlab" and not node.level:
            submodules = [f"{node.module}.{alias.name}" for alias in node.names]
            found.update(name for name in submodules if name in modules)
            if any(name not in modules for name in submodules):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(modules[module].read_text(encoding="utf-8")))
    return frozenset(found - {module})


def _cycle() -> list[str]:
    """An import cycle among memlab's modules, or [] (a depth-first search for a back edge)."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> list[str]:
        state[module] = 1
        path.append(module)
        for target in sorted(imports(module)):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[module] = 2
        return []

    for module in _modules():
        if module not in state and (found := visit(module)):
            return found
    return []


def test_no_module_imports_one_that_imports_it_back():
    assert _cycle() == []


def test_a_cycle_is_found(monkeypatch):
    # Guards: _cycle missing a back edge (the test above could then never fail).
    graph = {"memlab.a": frozenset({"memlab.b"}), "memlab.b": frozenset({"memlab.a"})}
    this = sys.modules[__name__]
    monkeypatch.setattr(this, "imports", graph.__getitem__)
    monkeypatch.setattr(this, "_modules", lambda: graph)
    assert _cycle() == ["memlab.a", "memlab.b", "memlab.a"]


@pytest.mark.parametrize("module", sorted(VALUES))
def test_values_import_nothing_above_them(module):
    assert imports(module) <= VALUES


@pytest.mark.parametrize("module", ["memlab.policy", "memlab.policies"])
def test_policy_rules_know_no_session_and_no_storage(module):
    assert not {
        name for name in imports(module) if name.startswith(("memlab.session", "memlab.store", "memlab.storage"))
    }


@pytest.mark.parametrize("module", sorted(name for name in _modules() if name.startswith("memlab.storage")))
def test_storage_knows_no_policy_session_or_tool(module):
    assert not {name for name in imports(module) if name.startswith(ABOVE_STORAGE)}


@pytest.mark.parametrize(
    "module", sorted(name for name in _modules() if name.startswith(("memlab.check", "memlab.eval", "memlab.widgets")))
)
def test_the_labs_and_widgets_use_the_public_api(module):
    assert not {name for name in imports(module) if name.startswith("memlab.storage")}
