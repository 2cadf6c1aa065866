"""The core never imports textual; only osce_tui.tui does.

Each check runs in a fresh interpreter so modules imported by other tests
cannot hide a leak.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

CORE_MODULES = [
    "osce_tui",
    "osce_tui.domain",
    "osce_tui.library",
    "osce_tui.store",
    "osce_tui.config",
    "osce_tui.engine",
    "osce_tui.batch",
    "osce_tui.judges",
    "osce_tui.agents",
    "osce_tui.providers",
    "osce_tui.importers",
    "osce_tui.cli",
]


def _loaded_after_import(module: str) -> set[str]:
    code = f"import sys, {module}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_does_not_import_textual(module):
    loaded = _loaded_after_import(module)
    assert not any(m == "textual" or m.startswith("textual.") for m in loaded), f"{module} pulled in textual"


def test_headless_cli_help_does_not_import_textual():
    code = (
        "import sys\n"
        "from osce_tui.cli import build_parser\n"
        "build_parser()\n"
        "print('textual' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_offline_encounter_does_not_import_provider_sdks():
    """An offline run must start fast: openai/anthropic load only when a model is used."""
    code = (
        "import sys, asyncio\n"
        "import osce_tui.engine, osce_tui.agents.factory\n"
        "print(any(m in sys.modules for m in ('openai', 'anthropic')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
