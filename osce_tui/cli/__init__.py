"""`osce-tui` entry point.

Each command group lives in its own module with a ``register(subparsers)``
function; this module only wires them together, so ``osce-tui --help`` and
headless commands never import textual (``tui`` is imported lazily).

Exit codes: 0 success, 1 a run finished with failed encounters, 2 bad usage
or bad input files.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib import import_module
from pathlib import Path

from .. import __version__
from .common import CliError, console_err

# Modules that contribute subcommands, in help order.
_COMMAND_MODULES = (
    "tui",  # (default) home, run
    "chat",
    "library_cmds",  # cases, rubrics, schema, sessions
    "batch",  # batch run, batch score
    "report",  # report, agreement
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="osce-tui",
        description="OSCE-style clinical consultations: practise, watch and score encounters.",
    )
    parser.add_argument("--version", action="version", version=f"osce-tui {__version__}")
    # Options for the bare `osce-tui` home screen. Their own dest names keep
    # subcommands' --cases-dir/--sessions-dir defaults from clobbering them.
    parser.add_argument("--cases-dir", dest="home_cases_dir", action="append", type=Path, default=[], metavar="DIR",
                        help="home screen: extra case folder, searched before the bundled ones (repeatable)")
    parser.add_argument("--sessions-dir", dest="home_sessions_dir", type=Path, metavar="DIR",
                        help="home screen: where sessions are saved and listed")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        # Bare `osce-tui` opens the TUI home screen.
        from .tui import cmd_home

        handler = cmd_home
        args.cases_dir, args.sessions_dir = args.home_cases_dir, args.home_sessions_dir
    try:
        code = handler(args)
    except CliError as exc:
        console_err.print(f"[bold red]error:[/] {exc}", highlight=False)
        return exc.code
    except KeyboardInterrupt:
        console_err.print("[yellow]interrupted[/]")
        return 130
    except BrokenPipeError:
        # Output piped into `head` or a closed pager: stop quietly, as Unix tools do.
        # (Sessions are saved before anything is printed, so nothing is lost.)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    return int(code or 0)


def run() -> None:
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    run()
