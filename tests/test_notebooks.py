"""How the notebooks are kept: saved as JupyterLab saves them, and running them writes nothing into the repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_a_notebook_opens_unmodified_in_jupyterlab(path):
    """JupyterLab rewrites another kernelspec display name, and the notebook would open as modified."""
    kernelspec = json.loads(path.read_text(encoding="utf-8"))["metadata"]["kernelspec"]
    assert kernelspec == {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def _files_git_does_not_track(folder: Path) -> list[str]:
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--ignored", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return sorted(line for line in status if line.startswith(("??", "!!")))


def test_running_the_relevance_notebook_writes_nothing_into_the_repository():
    """It used to save its chart as notebooks/measures.png; now it writes into a temporary folder."""
    import nbformat
    from nbclient import NotebookClient

    folder = ROOT / "notebooks"
    before = _files_git_does_not_track(folder)
    notebook = nbformat.read(folder / "04_stemming_relevance.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, resources={"metadata": {"path": str(folder)}}).execute()
    assert _files_git_does_not_track(folder) == before
