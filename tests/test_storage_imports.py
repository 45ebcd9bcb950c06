"""Opening an existing SQLite store and every tool call use the bare ``sqlite3`` connection: sqlite-utils (whose
import loads pandas and numpy) is never imported to open or create a store, numpy only for dense search."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from memlab import Level, MemoryStore

HEAVY = ("sqlite_utils", "pandas", "numpy")
STORAGE = Path(__file__).parent.parent / "memlab" / "storage"
# The modules of the SQLite store's open and call path (the folder's and PostgreSQL's are checked beside theirs).
CALL_PATH = [
    *(
        STORAGE / f"{name}.py"
        for name in (
            "sqlite",
            "audit",
            "rows",
            "seal",
            "chain",
            "schema",
            "indexes",
            "lexical",
            "vectors",
            "erasure",
            "verify",
        )
    ),
    *(STORAGE.parent / f"{name}.py" for name in ("session", "tools", "arguments", "records")),
]

_CALLS = """
import sys
heavy = {HEAVY!r}
from memlab import Level, MemoryStore, tools
from memlab.storage.sqlite import SqliteStorage
# What `import memlab` itself loads is checked where `import memlab` is; from here on, importing any of
# them fails (a None in sys.modules makes `import` raise), even where `import memlab` has loaded it already.
loaded = {{name for name in sys.modules if name.split(".")[0] in heavy}}
for name in loaded:
    sys.modules[name] = None
SqliteStorage({path!r}).close()
with MemoryStore({path!r}, layout="file") as store:
    session = store.session(Level.INTERNAL, "main")
    assert tools.call(session, "memory_save", {{"key": "k2", "content": "lisbon in may"}})["saved"]
    assert tools.call(session, "memory_get", {{"key": "k1"}})["found"]
    assert tools.call(session, "memory_search", {{"query": "lisbon"}})["results"]
    assert tools.call(session, "memory_list", {{}})["memories"]
    assert tools.call(session, "memory_delete", {{"key": "k2"}})["deleted"]
    session.memory_save_many([{{"key": "k3", "content": "porto"}}])
    session.escalate(Level.CONFIDENTIAL)
    list(store.storage.session_rows())
print(sorted(name for name in sys.modules if name.split(".")[0] in heavy and name not in loaded))
"""


def test_opening_an_existing_store_and_every_tool_call_import_no_heavy_module(tmp_path):
    # Guards: SqliteStorage.__init__ using `self.db` (the sqlite-utils Database, imported when asked for) for one
    # of its pragmas (seen failing). A module-level `import sqlite_utils` does not show here while `import memlab`
    # loads it before the block: test_no_module_level_import_of_a_heavy_module catches that.
    path = tmp_path / "store.db"
    with MemoryStore(path, layout="file") as store:
        store.session(Level.PUBLIC, "main").memory_save("k1", "lisbon trip", tags=["travel"])
    code = _CALLS.format(HEAVY=HEAVY, path=str(path))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", f"imported on the open and call path: {result.stdout}"


def test_creating_a_store_and_its_first_save_import_no_heavy_module(tmp_path):
    # A new store's first save (file and folder layouts, a new agent's file) wrote its tables through sqlite-utils,
    # whose import loads pandas and numpy: a quarter of a second before the first memory was saved.
    # Guards: `import sqlite_utils` back in schema._create.
    code = f"""
import sys
from memlab import Level, MemoryStore
for layout, path in (("file", {str(tmp_path / "store.db")!r}), ("folder", {str(tmp_path / "folder")!r})):
    with MemoryStore(path, layout=layout) as store:
        store.session(Level.PUBLIC, "main").memory_save("k1", "lisbon trip", tags=["travel"])
print(sorted({{name.split(".")[0] for name in sys.modules}} & set({HEAVY!r})))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", f"imported to create a store: {result.stdout}"


def test_no_module_level_import_of_a_heavy_module():
    # Guards: `import sqlite_utils` (or numpy) at the top of any module of the call path (seen failing before
    # the fix: sqlite, audit, schema, indexes, verify imported sqlite_utils and vectors numpy at module level).
    found = []
    for path in CALL_PATH:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:  # module level, not inside a function
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            found += [f"{path.name}: {name}" for name in names if name.split(".")[0] in HEAVY]
    assert found == []
