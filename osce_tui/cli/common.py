"""Helpers every command module shares: config, library, consoles, errors."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console

from ..config import Config, ConfigError, load_config
from ..library import FileLoadError, Library, NotFoundError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

console = Console()
console_err = Console(stderr=True)


class CliError(Exception):
    """A user-facing error: printed without a traceback, exits with ``code``."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        self.code = code
        super().__init__(message)


def add_library_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cases-dir",
        action="append",
        type=Path,
        default=[],
        metavar="DIR",
        help="extra folder of case files, searched before the bundled ones (repeatable)",
    )


def add_role_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--doctor", metavar="SPEC", help="who plays the doctor: human, offline or a model spec")
    p.add_argument("--patient", metavar="SPEC", help="who plays the patient: offline, human or a model spec")
    p.add_argument("--judge", metavar="SPEC", help="who scores: offline or a model spec")
    p.add_argument("--rubric", metavar="R", help="rubric id or path (default from config: osce-practice)")
    p.add_argument("--sessions-dir", type=Path, metavar="DIR", help="where sessions are saved")


def config_from_args(args: argparse.Namespace) -> Config:
    """Config with CLI flags on top of env and file."""
    cli: dict[str, Any] = {}
    if getattr(args, "sessions_dir", None):
        cli["sessions_dir"] = args.sessions_dir
    if getattr(args, "rubric", None):
        cli["rubric"] = args.rubric
    roles = {r: getattr(args, r, None) for r in ("doctor", "patient", "judge")}
    roles = {k: v for k, v in roles.items() if v}
    if roles:
        cli["roles"] = roles
    if getattr(args, "max_connections", None):
        cli["max_connections"] = args.max_connections
    try:
        return load_config(cli)
    except ConfigError as exc:
        raise CliError(str(exc)) from exc


def library_from_args(args: argparse.Namespace, config: Config | None = None) -> Library:
    config = config or config_from_args(args)
    return Library(
        case_dirs=getattr(args, "cases_dir", None) or [],
        user_case_dirs=config.cases_dirs,
        user_rubric_dirs=config.rubrics_dirs,
    )


def get_case(library: Library, case_id: str):
    try:
        return library.case(case_id)
    except (NotFoundError, FileLoadError) as exc:
        raise CliError(str(exc)) from exc


def get_rubric(library: Library, rubric_id: str):
    try:
        return library.rubric(rubric_id)
    except (NotFoundError, FileLoadError) as exc:
        raise CliError(str(exc)) from exc
