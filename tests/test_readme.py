"""The README's Python examples run as written (the agent host loop, which needs a fake model, is in
``test_agents.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = re.findall(r"```python\n(.+?)\n```", (ROOT / "README.md").read_text(encoding="utf-8"), re.DOTALL)


def test_the_readme_has_the_examples_this_file_runs():
    assert len(BLOCKS) == 3 and "anthropic" in BLOCKS[2]


@pytest.mark.parametrize("index", [0, 1], ids=["use-it-from-python", "policy-lab-variant"])
def test_a_readme_example_runs(index, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the examples make their store in the working folder
    namespace: dict = {}
    exec(compile(BLOCKS[index], f"README.md block {index + 1}", "exec"), namespace)
    if "store" in namespace:
        store = namespace["store"]
        assert store.verify().ok and (tmp_path / "memories").is_dir()
        assert store.history("salary")["content"].tolist() == [""]  # purged
        store.close()
    else:
        assert "noninterference LEAK under policy public-reads-internal" in capsys.readouterr().out
