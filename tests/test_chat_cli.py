"""`osce-tui chat` from a pipe, and a process killed mid-encounter that resumes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

OSCE = [sys.executable, "-m", "osce_tui.cli"]


def _env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["OSCE_TUI_CONFIG"] = str(tmp_path / "none.toml")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def run_chat(tmp_path: Path, stdin: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*OSCE, "chat", "chest-pain-46m", "--sessions-dir", str(tmp_path / "s"), *extra],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(tmp_path),
    )


def test_piped_questions_get_answers_and_a_score_summary(tmp_path):
    proc = run_chat(tmp_path, "Hello, I am Dr Lee. What brings you in today?\nWhen did it start?\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "Chief complaint: Chest pain" in out
    assert "Doctor: When did it start?" in out
    patient_lines = [line for line in out.splitlines() if line.startswith("Patient: ")]
    assert len(patient_lines) == 2
    assert "two hours" in patient_lines[1].lower()  # the case's own onset answer
    assert "== Scores: rubric osce-practice, judge offline ==" in out
    assert "Total:" in out
    files = list((tmp_path / "s").glob("*.json"))
    assert len(files) == 1
    saved = json.loads(files[0].read_text())
    assert saved["status"] == "finished" and saved["scores"][-1]["final"]


def test_slash_commands_and_note_from_a_pipe(tmp_path):
    script = "\n".join(
        [
            "Hi Mr Ortiz, I'm Dr Lee. What brings you in?",
            "/exam heart",
            "/order troponin",
            "/phase closure",
            "I'm worried this is your heart; we'll run an ECG and blood tests and keep you on a monitor.",
            "/note",
            "46M with 2h of crushing chest pain",  # HPI
            "S4 gallop, diaphoretic",  # PE
            "NSTEMI",  # dx 1
            "pressure-like pain; radiation to left arm",
            "diaphoresis",
            "",  # no more diagnoses
            "ECG; troponin",  # workup
        ]
    )
    proc = run_chat(tmp_path, script + "\n", "--details")
    assert proc.returncode == 0, proc.stderr
    assert "[cardiovascular]" in proc.stdout
    saved = json.loads(next((tmp_path / "s").glob("*.json")).read_text())
    assert saved["note"]["diagnoses"][0]["name"] == "NSTEMI"
    assert saved["note"]["workup"] == ["ECG", "troponin"]
    assert any(t["meta"].get("challenging_question") for t in saved["turns"])


def test_unknown_case_is_a_clear_usage_error(tmp_path):
    proc = subprocess.run(
        [*OSCE, "chat", "chest-pain-64m"], input="", capture_output=True, text=True, env=_env(tmp_path), timeout=60
    )
    assert proc.returncode == 2
    assert "unknown case 'chest-pain-64m'" in proc.stderr and "chest-pain-46m" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_unknown_model_provider_is_a_clear_usage_error(tmp_path):
    proc = run_chat(tmp_path, "hello\n", "--patient", "gemini/pro")
    assert proc.returncode == 2
    assert "unknown model provider 'gemini'" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_killed_process_leaves_a_session_that_resumes(tmp_path):
    sessions = tmp_path / "s"
    proc = subprocess.Popen(
        [*OSCE, "chat", "chest-pain-46m", "--sessions-dir", str(sessions)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(tmp_path),
    )
    try:
        for line in ["Hello, I'm Dr Lee. What brings you in?", "Does the pain spread anywhere?", "Do you smoke?"]:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
        deadline = time.monotonic() + 60
        path = None
        while time.monotonic() < deadline:
            files = list(sessions.glob("*.json"))
            if files:
                path = files[0]
                turns = json.loads(path.read_text())["turns"]
                if sum(t["role"] == "patient" for t in turns) >= 3:
                    break
            time.sleep(0.05)
        else:
            pytest.fail("the encounter never got going")
        proc.send_signal(signal.SIGKILL)  # no chance to clean up
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    killed = json.loads(path.read_text())
    assert killed["status"] == "in_progress"
    assert [t["text"] for t in killed["turns"] if t["role"] == "doctor"][-1] == "Do you smoke?"

    resumed = subprocess.run(
        [*OSCE, "chat", "chest-pain-46m", "--resume", str(path)],
        input="Any family history of heart disease?\n/end\n",
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(tmp_path),
    )
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(path.read_text())
    assert final["id"] == killed["id"] and final["status"] == "finished"
    doctor = [t["text"] for t in final["turns"] if t["role"] == "doctor"]
    assert doctor[:3] == ["Hello, I'm Dr Lee. What brings you in?", "Does the pain spread anywhere?", "Do you smoke?"]
    assert "Any family history of heart disease?" in doctor
