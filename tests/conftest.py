"""Shared fixtures: the repo's paths, a small valid case, the shared data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or skip when this checkout has no shared folder beside it."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path, monkeypatch):
    """Tests never read the developer's real config or env overrides."""
    monkeypatch.setenv("OSCE_TUI_CONFIG", str(tmp_path / "no-config.toml"))
    for name in list(__import__("os").environ):
        if name.startswith("OSCE_TUI_") and name != "OSCE_TUI_CONFIG":
            monkeypatch.delenv(name, raising=False)
