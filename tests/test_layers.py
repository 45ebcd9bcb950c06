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
def imports(module: str, *, typing: bool = False) -> frozenset[str]:
    """The memlab modules ``module`` imports, at any depth of its code but under ``if TYPE_CHECKING:`` (there too
    with ``typing``: a cycle of annotations is a cycle a reader follows)."""
    modules = _modules()
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node) and not typing:
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
        for target in sorted(imports(module, typing=True)):
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
    """Annotations count: a module that imports one under ``TYPE_CHECKING`` that imports it back is a cycle."""
    assert _cycle() == []


def test_a_cycle_is_found(monkeypatch):
    # Guards: _cycle missing a back edge (the test above could then never fail).
    graph = {"memlab.a": frozenset({"memlab.b"}), "memlab.b": frozenset({"memlab.a"})}
    this = sys.modules[__name__]
    monkeypatch.setattr(this, "imports", lambda module, typing=False: graph[module])
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


LABS_AND_WIDGETS = ("memlab.check", "memlab.eval", "memlab.poison", "memlab.widgets")


@pytest.mark.parametrize("module", sorted(name for name in _modules() if name.startswith(LABS_AND_WIDGETS)))
def test_the_labs_and_widgets_use_the_public_api(module):
    assert not {name for name in imports(module) if name.startswith("memlab.storage")}


# -- attributes: no reach-through, no other module's private names -------------------------------------------

PROTOCOL_NAMES = frozenset({"_replace", "_asdict", "_fields", "_make"})
"""Names with an underscore that are public by a protocol: namedtuple's methods."""
OUTSIDE_THE_STORE = (*LABS_AND_WIDGETS, "memlab.integrations", "memlab.cli")
OUTSIDE_THE_STORE_MODULES = ("memlab.classroom_server", "memlab.classroom_voila", "memlab.classprogress", "memlab.demo")


def _private(name: str) -> bool:
    if name in PROTOCOL_NAMES or (name.startswith("_repr_") and name.endswith("_")):
        return False  # namedtuple's API and IPython's display protocol are public by convention
    return name.startswith("_") and not name.startswith("__")


def _defined(tree: ast.AST) -> set[str]:
    """The names a module defines: its functions, classes, globals, class attributes and ``self.`` attributes."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.alias) and node.asname:
            names.add(node.asname)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            names.add(node.value)  # __slots__ entries and attribute names set with setattr
    return names


def private_uses(source: str) -> list[str]:
    """Where ``source`` uses another object's private name outside the module that defines it: an import of one,
    or an attribute of another object that the module does not define itself."""
    tree = ast.parse(source)
    own = _defined(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("memlab"):
            found += [f"line {node.lineno}: imports {alias.name}" for alias in node.names if _private(alias.name)]
        elif isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own:
            # An object's own (``self``, ``cls``, ``super()``) names are its class's, wherever they are defined.
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if not (isinstance(node.value, ast.Call) and ast.unparse(node.value.func) == "super"):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("module", sorted(_modules()))
def test_no_module_uses_another_modules_private_names(module):
    assert private_uses(_modules()[module].read_text(encoding="utf-8")) == []


def test_a_private_name_used_from_another_module_is_found():
    # Guards: private_uses missing a private import or attribute (the test above could then never fail).
    source = "from memlab.storage.rows import _memory\n\ndef f(store):\n    return store._check(), store.storage._c\n"
    assert sorted(private_uses(source)) == [
        "line 1: imports _memory",
        "line 4: store._check",
        "line 4: store.storage._c",
    ]
    assert private_uses("class A:\n    def f(self, other):\n        return self._x + other._x\n    _x = 1\n") == []


def reach_throughs(source: str) -> list[str]:
    """Where ``source`` reaches through a store to its storage (``store.storage.anything``)."""
    return [
        f"line {node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "storage"
    ]


@pytest.mark.parametrize(
    "module",
    sorted(name for name in _modules() if name.startswith(OUTSIDE_THE_STORE) or name in OUTSIDE_THE_STORE_MODULES),
)
def test_the_labs_widgets_classroom_integrations_and_cli_never_reach_into_storage(module):
    assert reach_throughs(_modules()[module].read_text(encoding="utf-8")) == []


def test_a_reach_through_is_found():
    # Guards: reach_throughs missing a chained attribute (the test above could then never fail).
    assert reach_throughs("conn = world.store.storage.conn\n") == ["line 1: world.store.storage.conn"]
