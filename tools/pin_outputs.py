"""Execute notebooks and keep only the outputs that nbval checks.

Usage: python tools/pin_outputs.py notebooks/*.ipynb

Cells marked ``# NBVAL_CHECK_OUTPUT`` keep their fresh outputs (nbval compares against them); every
other cell is stripped, as the project commits notebooks.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbclient
import nbformat


def pin(path: Path) -> None:
    """Run the notebook at ``path`` in a fresh kernel and rewrite it with only the pinned outputs."""
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        if "NBVAL_CHECK_OUTPUT" not in cell.source:
            # nbval treats a cell with outputs and no execution count as unrun, so only pinned cells keep theirs.
            cell.outputs = []
            cell.execution_count = None
    notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, path)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        pin(Path(name))
        print("pinned", name)
