"""Every Python example of the README and of ``docs/`` runs as written, each in a fresh working folder.

A block whose first line is ``# not run: <reason>`` is skipped here; that is kept for code that needs a network
model's API key (the README's Anthropic host loop, which ``test_agents.py`` runs against a fake client).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
NOT_RUN = re.compile(r"# not run: \S")


def python_blocks(page: Path) -> list[tuple[str, str]]:
    """``(id, code)`` for every fenced Python block of ``page``, numbered from 1 in the page."""
    blocks = re.findall(r"^```python\n(.*?)^```$", page.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)
    return [(f"{page.relative_to(ROOT)}:{number}", code) for number, code in enumerate(blocks, 1)]


EXAMPLES = [example for page in PAGES for example in python_blocks(page)]
RUN = [(name, code) for name, code in EXAMPLES if not NOT_RUN.match(code)]


def test_the_collector_finds_the_examples():
    names = [name for name, _ in EXAMPLES]
    assert "README.md:1" in names and any(name.startswith("docs/policy-lab.md") for name in names)
    for page in ("semantics", "storage", "relevance-lab", "agents-and-mcp"):  # each subject shows its API at work
        assert any(name.startswith(f"docs/{page}.md") for name, code in RUN), page
    skipped = [code for _, code in EXAMPLES if NOT_RUN.match(code)]
    assert skipped and all("anthropic" in code for code in skipped)  # only what needs a model's API key


@pytest.mark.parametrize("code", [code for _, code in RUN], ids=[name for name, _ in RUN])
def test_an_example_runs(code, request, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the examples make their stores in the working folder
    (tmp_path / "data").symlink_to(ROOT / "data")  # and read data/ as a user in the repository's root would
    namespace: dict = {"__name__": "__example__"}
    exec(compile(code, request.node.callspec.id, "exec"), namespace)
    store = namespace.get("store")
    if store is not None and hasattr(store, "verify"):
        assert store.verify().ok
        store.close()


def test_the_readme_quick_start_example_does_what_its_comments_say(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (code,) = [code for name, code in EXAMPLES if name == "README.md:1"]
    namespace: dict = {}
    exec(compile(code, "README.md:1", "exec"), namespace)
    store = namespace["store"]
    assert store.verify().ok and (tmp_path / "memories").is_dir()
    assert store.history("salary")["content"].tolist() == [""]  # purged
    store.close()


def test_the_policy_lab_variant_leaks(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (code,) = [code for name, code in EXAMPLES if name.startswith("docs/policy-lab.md")]
    exec(compile(code, "docs/policy-lab.md", "exec"), {})
    assert "noninterference LEAK under policy public-reads-internal" in capsys.readouterr().out


def test_the_readme_is_a_front_page():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 170
