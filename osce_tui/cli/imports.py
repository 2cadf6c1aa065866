"""`cases import` and `sessions import` (owned by the importers work)."""

from __future__ import annotations

import argparse


def register_case_import(cases_sub: argparse._SubParsersAction) -> None:
    """Add `cases import FORMAT SRC --out DIR`."""


def register_session_import(sessions_sub: argparse._SubParsersAction) -> None:
    """Add `sessions import FORMAT SRC --out DIR`."""
