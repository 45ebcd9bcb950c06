"""``memlab classroom``: the classroom notebook served with Voila (``memlab.classroom_server``)."""

from __future__ import annotations

import argparse

from memlab.cli.options import Commands, add_command

__all__ = ["add_classroom"]


def add_classroom(commands: Commands) -> None:
    lesson = add_command(
        commands, "classroom", "serve the classroom notebook with Voila and print its URL", run_classroom
    )
    lesson.add_argument(
        "--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1: this machine)"
    )
    lesson.add_argument("--port", type=int, default=8866, help="the port (default 8866; 0: any free one)")
    lesson.add_argument("--theme", choices=["light", "dark"], default="light", help="the page's theme (default light)")
    lesson.add_argument("--notebook", default=None, help="the notebook (default: notebooks/06_classroom.ipynb)")
    lesson.add_argument(
        "--log",
        metavar="FILE",
        help="where Voila's own messages go, - for standard error (default: a new file in the temporary folder, "
        "named once the classroom listens; -v: standard error)",
    )
    lesson.add_argument(
        "--class",
        dest="class_store",
        metavar="DIR|URL",
        help="a class: every page in one class store, a folder or a postgresql:// URL of its owner",
    )
    from memlab.classroom_server import IDLE_SECONDS, KERNELS_IN_ALL, KERNELS_PER_VISITOR

    lesson.add_argument(
        "--max-kernels", type=int, default=KERNELS_IN_ALL, metavar="N",
        help=f"the most kernels at once, the preheated pool included (default {KERNELS_IN_ALL})",
    )  # fmt: skip
    lesson.add_argument(
        "--kernels-per-visitor", type=int, default=KERNELS_PER_VISITOR, metavar="N",
        help=f"the most kernels the pages of one client address hold (default {KERNELS_PER_VISITOR})",
    )  # fmt: skip
    lesson.add_argument(
        "--idle-seconds", type=int, default=IDLE_SECONDS, metavar="S",
        help=f"stop a kernel no page is connected to after S seconds idle (default {IDLE_SECONDS})",
    )  # fmt: skip


def run_classroom(args: argparse.Namespace) -> int:
    """Serve the lesson until Ctrl-C or SIGTERM; the status ``classroom_server.serve`` returns."""
    from memlab.classroom_server import serve
    from memlab.cli_output import verbosity

    log = args.log if args.log is not None or verbosity(args) <= 0 else "-"
    return serve(
        args.notebook, host=args.host, port=args.port, theme=args.theme, class_store=args.class_store,
        max_kernels=args.max_kernels, kernels_per_visitor=args.kernels_per_visitor, idle_seconds=args.idle_seconds,
        log=log,
    )  # fmt: skip
