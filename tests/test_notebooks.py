"""How the notebooks are kept: saved as JupyterLab saves them, and running them writes nothing into the repository."""

from __future__ import annotations

import functools
import html
import json
import re
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


def _cells(name: str, kind: str) -> list[dict]:
    notebook = json.loads((ROOT / "notebooks" / f"{name}.ipynb").read_text(encoding="utf-8"))
    return [cell for cell in notebook["cells"] if cell["cell_type"] == kind]


def _text(output: dict) -> str:
    data = output.get("data", {})
    text = output.get("text") or data.get("text/plain") or ""
    return "".join(text) + "".join(data.get("text/html", ""))


MINE = ["01_tour", "02_shadowing", "03_audit_trail", "05_policy_leaks", "06_classroom", "07_memory_poisoning"]


def test_the_classroom_opens_clean_and_speaks_of_the_page():
    """Finding 2: 06 opened with every exercise done and its answer printed, and pointed at hidden code cells."""
    code = "".join("".join(cell["source"]) for cell in _cells("06_classroom", "code"))
    assert "classroom()" in code and ".click" not in code and "memory_save" not in code
    assert [
        o for cell in _cells("06_classroom", "code") for o in cell["outputs"]
    ] == []  # nothing pinned, nothing stale
    words = " ".join("".join(cell["source"]) for cell in _cells("06_classroom", "markdown")).lower()
    assert "cell" not in words and "run " not in words  # Voila shows no code: the text names buttons and tabs
    assert all(word in words for word in ("predict first", "check", "show the answer", "reset the lesson"))


@pytest.mark.parametrize(
    "factory, notebook",
    [
        ("simulator", "01_tour"),
        ("stemming_lab", "04_stemming_relevance"),
        ("policy_lab", "05_policy_leaks"),
        ("classroom", "06_classroom"),
        ("poisoning_lab", "07_memory_poisoning"),
    ],
)
def test_the_widgets_appear_in_the_notebooks(factory, notebook):
    """Finding 4: stemming_lab and policy_lab appeared in no notebook; the classroom brings the audit viewer and
    the shadow inspector."""
    code = "".join("".join(cell["source"]) for cell in _cells(notebook, "code"))
    assert f"mw.{factory}(" in code


@pytest.mark.parametrize("name", MINE)
def test_pinned_outputs_read_cleanly(name):
    """Finding 7: NaN-filled tables, <NA> steps, literal **markers**, rows wrapped over two lines."""
    for cell in _cells(name, "code"):
        for output in cell["outputs"]:
            shown = _text(output)
            for blemish in ("NaN", "<NA>", "**", "Memory("):
                assert blemish not in shown, (name, blemish, shown[:200])
            if output["output_type"] == "stream":
                assert max(map(len, shown.splitlines())) <= 120, (name, shown[:200])


def test_the_tour_shows_no_stray_result_and_highlights_matches():
    """Finding 7: 01 printed a stray Memory(...) under its saves and a literal **migration** snippet."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(ROOT / "notebooks" / "01_tour.ipynb", as_version=4)
    NotebookClient(notebook, timeout=120, resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    shown = [_text(output) for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs]
    assert not any("Memory(" in text or "NaN" in text or "**" in text for text in shown)
    assert any("<mark>migration</mark> <mark>ships</mark>" in text for text in shown)


def _page(environ: dict[str, str], monkeypatch) -> list[str]:
    """What a page of 06 shows when its kernel has ``environ``: its Markdown, and each output as text and HTML."""
    import nbformat
    from nbclient import NotebookClient

    for name in ("MEMLAB_CLASS", "MEMLAB_TEACHER_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    notebook = nbformat.read(ROOT / "notebooks" / "06_classroom.ipynb", as_version=4)
    NotebookClient(notebook, timeout=120, resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    return [
        "".join(cell.source) if cell.cell_type == "markdown" else "".join(_text(output) for output in cell.outputs)
        for cell in notebook.cells
    ]


def test_a_lesson_prints_no_line_that_goes_stale_as_the_student_works(monkeypatch):
    """Issue 23: "The lesson started with 0 memories and ..." was printed once, pinned by an nbval check cell, and
    stayed on the page however many memories the lesson then held (and after "reset the lesson"). The sessions and
    what each sees are the simulator's, live; nothing is printed beside them.
    Guards: the print cell put back (with its NBVAL_CHECK_OUTPUT pin)."""
    shown = _page({}, monkeypatch)
    assert not any("memories and" in text or "started with" in text for text in shown)
    assert any("For the teacher" in text for text in shown)  # a lesson of its own still shows the teacher's view


def test_a_students_page_shows_nothing_for_the_teacher(monkeypatch, tmp_path):
    """Issue 23: a student's page in a class showed the notebook's "For the teacher" section (its heading and text
    are Markdown, which Voila shows on every page). The teacher's view now carries its own heading, made only
    where the view is.
    Guards: the "## For the teacher" Markdown cell put back."""
    student = _page({"MEMLAB_CLASS": str(tmp_path / "class"), "MEMLAB_TEACHER_TOKEN": "t0ken"}, monkeypatch)
    assert any("Your name" in text for text in student)  # this is a student's page
    assert not any("For the teacher" in text or "Teacher's view" in text for text in student)
    alone = _page({}, monkeypatch)
    assert any("For the teacher" in text for text in alone)


@functools.cache
def _executed(name: str) -> tuple[tuple[str, tuple[dict, ...]], ...]:
    """Notebook ``name`` run top to bottom (once per test session): each code cell's source and outputs."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    NotebookClient(notebook, timeout=300, resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    return tuple(("".join(c.source), tuple(c.outputs)) for c in notebook.cells if c.cell_type == "code")


def _output_of(name: str, marker: str) -> list[dict]:
    """The outputs of the code cell of ``name`` whose source holds ``marker``."""
    return next(outputs for source, outputs in _executed(name) if marker in source)


def _narrowest(table_html: str) -> int:
    """How many characters wide a table is at its narrowest (its min-content width): cells wrap at spaces, so
    each column is as wide as its longest word, and the columns add up."""
    widths: dict[int, int] = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table_html, re.DOTALL):
        for column, cell in enumerate(re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.DOTALL)):
            words = html.unescape(re.sub(r"<[^>]+>", " ", cell)).split() or [""]
            widths[column] = max(widths.get(column, 0), *map(len, words))
    return sum(widths.values())


FITS_1024 = 110
"""Characters a table may need at its narrowest and still fit at 1024 px: about 6.5 px a character of 12-13 px
text and 12 px of padding a column, in the ~900 px a notebook's output gets at that width."""


@pytest.mark.parametrize("name", ["01_tour", "02_shadowing", "03_audit_trail"])
def test_no_notebook_shows_a_stray_result(name):
    """Issue 23: 02's second cell showed a stray ``Memory(...)`` (its last line a save, whose result Jupyter shows).
    (05's counterexamples show a ``Memory(...)`` on purpose: what the observer saw.)
    Guards: the trailing semicolon of 02's saves dropped."""
    for source, outputs in _executed(name):
        for output in outputs:
            assert "Memory(" not in _text(output), (name, source[:80])


def test_the_relevance_measures_are_a_table_not_wrapped_text():
    """Issue 23: 04's measures table, printed as text, wrapped nDCG@10 and MRR onto extra lines at 1024 px.
    Guards: the measures printed with ``to_string()``."""
    outputs = _output_of("04_stemming_relevance", "measures_table")
    assert [output["output_type"] for output in outputs] == ["execute_result"]
    table = outputs[0]["data"]["text/html"]
    assert "<table" in table and "nDCG@10</th>" in table and "MRR</th>" in table
    assert _narrowest(table) <= FITS_1024


def test_the_policies_are_described_in_a_table_that_wraps_at_words():
    """Issue 23: 05 printed each policy's description on one long line, which wrapped mid-word at 1024 px.
    Guards: the descriptions printed with ``print``."""
    outputs = _output_of("05_policy_leaks", "names()")
    assert [output["output_type"] for output in outputs] == ["execute_result"]
    table = outputs[0]["data"]["text/html"]
    assert "<table" in table and "frozen-taint" in table and "white-space:nowrap" not in table
    assert "…" not in table and "..." not in table  # every description whole


@pytest.mark.parametrize("marker", ["store.audit()", "store.history("])
def test_the_tours_tables_fit_at_1024_px_and_scroll_inside_their_output(marker):
    """Issue 23: 01's history table was cut at the right even at 1400 px (nine columns, microsecond timestamps)."""
    outputs = _output_of("01_tour", marker)
    table = outputs[0]["data"]["text/html"]
    assert "overflow-x:auto" in table  # wider than the page: it scrolls, never cut
    assert not re.search(r"\d{2}:\d{2}:\d{2}\.\d{6}", table) and "NaN" not in table
    assert _narrowest(table) <= FITS_1024


@pytest.mark.parametrize(
    "name, marker",
    [
        ("02_shadowing", "visibility_figure(store"),
        ("03_audit_trail", "audit_timeline_figure(audit)"),
        ("04_stemming_relevance", "measures_figure(results)"),
        ("07_memory_poisoning", "poisoning_figure(table"),
    ],
)
def test_the_charts_follow_the_pages_theme(name, marker):
    """Issue 23: the charts stayed white boxes in JupyterLab's and Voila's dark theme (PNGs drawn on white).
    Each is now an SVG in the page's text colour on no background (tests/test_figures.py checks the drawing).
    Guards: ``%matplotlib inline`` and a PNG of the chart (04: ``Image(report.chart(...))``); 04's error bars
    left black (matplotlib's ``ecolor``)."""
    outputs = _output_of(name, marker)
    assert [sorted(output["data"]) for output in outputs] == [["text/html", "text/plain"]]  # no PNG beside it
    shown = outputs[0]["data"]["text/html"]
    assert "<svg" in shown and "currentColor" in shown
    assert "#ffffff" not in shown.lower() and "#000000" not in shown  # no white box, no black unseen on a dark page


def test_the_poisoning_table_fits_at_1024_px_and_is_read_from_the_cached_results():
    """Issue 36: 07's table of the defences at one rate, every ranking, read from data/results/poison/locomo/poison.csv
    (never a list of rows of its own). Guards: the table printed as text, or made from a hard-coded list of rows."""
    outputs = _output_of("07_memory_poisoning", "at_rate(table")
    assert [output["output_type"] for output in outputs] == ["execute_result"]
    table = outputs[0]["data"]["text/html"]
    assert "<table" in table and "ASR-r@10</th>" in table and "UD S@10</th>" in table
    from memlab.poison import results

    cached = results(ROOT / "data" / "results" / "poison" / "locomo" / "poison.csv")
    for defence in cached["row"].unique():
        assert table.count(f">{defence}<") == cached["ranking"].nunique()  # a row per defence and ranking
    assert _narrowest(table) <= FITS_1024
