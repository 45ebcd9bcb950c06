"""memlab.cli.classroom: ``memlab classroom``'s flags and what it hands to the server. Serving the lesson is
tests/test_classroom_server.py's and tests/test_browser.py's."""

from __future__ import annotations

import pytest

from memlab import classroom_server
from memlab.cli import main


@pytest.fixture
def served(monkeypatch):
    calls = []

    def serve(notebook, **options):
        calls.append((notebook, options))
        return 0

    monkeypatch.setattr(classroom_server, "serve", serve)
    return calls


def test_the_defaults_listen_on_this_machine_only(served):
    # Guards: cli.classroom defaulting --host to 0.0.0.0 (every network the machine is on then reaches the lesson).
    assert main(["classroom"]) == 0
    ((notebook, options),) = served
    assert notebook is None and options["host"] == "127.0.0.1" and options["theme"] == "light"
    assert options["max_kernels"] == classroom_server.KERNELS_IN_ALL
    assert options["class_store"] is None


def test_every_flag_reaches_the_server(served):
    argv = ["classroom", "--port", "0", "--theme", "dark", "--class", "/srv/class", "--max-kernels", "3",
            "--kernels-per-visitor", "1", "--idle-seconds", "60", "--notebook", "n.ipynb"]  # fmt: skip
    assert main(argv) == 0
    ((notebook, options),) = served
    assert notebook == "n.ipynb"
    assert options == {
        "host": "127.0.0.1", "port": 0, "theme": "dark", "class_store": "/srv/class", "max_kernels": 3,
        "kernels_per_visitor": 1, "idle_seconds": 60, "log": None,
    }  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "log"), [([], None), (["--log", "v.log"], "v.log"), (["-v"], "-"), (["-v", "--log", "v.log"], "v.log")]
)
def test_voilas_messages_go_to_a_file_unless_v_or_log_says_otherwise(served, argv, log):
    assert main(["classroom", *argv]) == 0
    ((_, options),) = served
    assert options["log"] == log


def test_an_unknown_theme_is_a_usage_error(served, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["classroom", "--theme", "pink"])
    assert exited.value.code == 2 and served == []
