"""`osce-tui` (home), `osce-tui run CASE` and session replay: the Textual app.

textual is imported inside the handlers only, so headless commands stay light.
"""

from __future__ import annotations

import argparse

from .common import CliError


def register(sub: argparse._SubParsersAction) -> None:
    pass


def cmd_home(args: argparse.Namespace) -> int:
    raise CliError("the TUI is not built yet")


def cmd_replay(args: argparse.Namespace) -> int:
    raise CliError("the TUI is not built yet")
