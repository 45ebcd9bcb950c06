"""``memlab classroom``: serve the classroom notebook with Voila on 127.0.0.1, and print the address to open.

Voila (the ``lab`` extra: ``pip install -e '.[lab]'``) runs the notebook in a kernel per visitor and shows its
widgets without its code; each page load is a fresh lesson.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["find_notebook", "free_port", "serve"]

NOTEBOOK = Path("notebooks") / "06_classroom.ipynb"
STARTUP_SECONDS = 60


def find_notebook(path: str | Path | None = None) -> Path:
    """The notebook to serve: ``path``, else ``notebooks/06_classroom.ipynb`` of this checkout or of the
    current folder.

    Raises:
        FileNotFoundError: no such notebook.

    Examples:
        >>> find_notebook().name
        '06_classroom.ipynb'
    """
    candidates = [Path(path)] if path else [Path(__file__).resolve().parents[1] / NOTEBOOK, Path.cwd() / NOTEBOOK]
    for candidate in candidates:
        if candidate.is_file():
            return candidate.resolve()
    raise FileNotFoundError(f"no classroom notebook at {' or '.join(map(str, candidates))}; pass --notebook PATH")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def serve(notebook: str | Path | None = None, *, port: int = 8866, theme: str = "light") -> int:
    """Run Voila on ``notebook`` at ``http://127.0.0.1:PORT/`` until it stops (Ctrl-C); print the URL once ready.

    Returns:
        The exit status: 0 after Ctrl-C, 2 when Voila or the notebook is missing, else Voila's own.
    """
    if importlib.util.find_spec("voila") is None:
        print("memlab classroom needs Voila: pip install -e '.[lab]' (or pip install voila)", file=sys.stderr)
        return 2
    try:
        path = find_notebook(notebook)
    except FileNotFoundError as error:
        print(f"memlab classroom: {error}", file=sys.stderr)
        return 2
    port = port or free_port()
    command = [
        sys.executable, "-m", "voila", str(path), "--no-browser", f"--port={port}", "--Voila.ip=127.0.0.1",
        "--Voila.port_retries=0", f"--theme={theme}",
    ]  # fmt: skip
    voila = subprocess.Popen(command)
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _listening(port):
            if voila.poll() is not None:
                print(f"memlab classroom: Voila stopped (status {voila.returncode})", file=sys.stderr)
                return voila.returncode or 1
            if time.monotonic() > deadline:
                print(f"memlab classroom: Voila did not listen on port {port} in {STARTUP_SECONDS} s", file=sys.stderr)
                voila.terminate()
                return 1
            time.sleep(0.2)
        print(f"memlab classroom: open http://127.0.0.1:{port}/ (Ctrl-C stops it)", flush=True)
        return voila.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        if voila.poll() is None:
            voila.terminate()
            voila.wait(timeout=10)
