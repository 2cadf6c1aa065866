"""`osce-tui run`, bare `osce-tui` and `sessions replay`: argument handling.

The app itself is exercised in test_tui_encounter.py; here the handlers are
checked for what they do before any screen opens (bad input exits 2) and for
building the right app, with ``OsceApp.run`` replaced so no terminal is needed.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from osce_tui.cli import main
from osce_tui.tui import app as app_mod

from .tui_support import fixed_session, write_session


@pytest.fixture
def captured_apps(monkeypatch):
    apps = []

    def fake_run(self, *a, **kw):
        apps.append(self)

    monkeypatch.setattr(app_mod.OsceApp, "run", fake_run)
    return apps


def test_run_builds_an_encounter_request(captured_apps, tmp_path):
    code = main(["run", "chest-pain-46m", "--doctor", "offline", "--patient", "offline", "--sessions-dir", str(tmp_path), "--timers"])
    assert code == 0
    (app,) = captured_apps
    start = app.start
    assert isinstance(start, app_mod.RunRequest)
    assert (start.case.id, start.doctor, start.patient, start.judge, start.rubric, start.timers) == (
        "chest-pain-46m", "offline", "offline", "offline", "osce-practice", True)
    assert app.config.sessions_dir == tmp_path


def test_run_defaults_to_human_doctor(captured_apps):
    assert main(["run", "chest-pain-46m"]) == 0
    assert captured_apps[0].start.doctor == "human" and captured_apps[0].start.timers is False


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "no-such-case"], "unknown case"),
        (["run", "chest-pain-46m", "--doctor", "madeup/x"], "--doctor"),
        (["run", "chest-pain-46m", "--judge", "human"], "cannot be the judge"),
        (["run", "chest-pain-46m", "--rubric", "nope"], "unknown rubric"),
    ],
)
def test_run_rejects_bad_input_before_opening(captured_apps, capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert captured_apps == []


def test_bare_command_opens_home(captured_apps, monkeypatch):
    assert main([]) == 0
    assert captured_apps and captured_apps[0].start is None


def test_replay_loads_the_file(captured_apps, tmp_path, capsys):
    path = write_session(tmp_path, fixed_session(case_id="chest-pain-46m"))
    assert main(["sessions", "replay", str(path)]) == 0
    start = captured_apps[0].start
    assert isinstance(start, app_mod.ReplayRequest) and start.session.id == "abc123def456"
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["sessions", "replay", str(bad)]) == 2
    assert "corrupt JSON" in capsys.readouterr().err


def test_help_does_not_import_textual():
    code = "import sys; from osce_tui.cli import build_parser; build_parser(); print('textual' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
