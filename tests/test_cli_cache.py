"""memlab.cli.cache: ``memlab cache`` shows or clears the embedding cache named by MEMLAB_CACHE."""

from __future__ import annotations

import pytest

from memlab.cli import main


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMLAB_CACHE", str(tmp_path))
    return tmp_path


def test_an_empty_cache_is_shown_as_empty_and_clearing_it_removes_nothing(cache, capsys):
    assert main(["cache"]) == 0
    shown = capsys.readouterr().out.strip()
    assert shown.startswith(str(cache)) and shown.endswith(": empty")
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out.strip().endswith(": nothing to remove")


def test_a_cache_file_is_shown_by_size_and_cleared(cache, capsys):
    # Guards: cli.cache's clear printing "removed" without removing the file.
    assert main(["cache"]) == 0
    path = capsys.readouterr().out.strip().rsplit(": ", 1)[0]
    with open(path, "wb") as file:
        file.write(b"\0" * 2_500_000)
    assert main(["cache", "show"]) == 0
    assert capsys.readouterr().out.strip() == f"{path}: 2.5 MB"
    assert main(["cache", "clear"]) == 0
    assert capsys.readouterr().out.strip() == f"{path}: removed"
    assert not (cache / path.rsplit("/", 1)[1]).exists()


def test_an_unknown_action_is_a_usage_error(cache, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["cache", "purge"])
    assert exited.value.code == 2 and "invalid choice" in capsys.readouterr().err
