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


def spawn_chat(tmp_path: Path, sessions: Path) -> subprocess.Popen:
    """`osce-tui chat` as a live process whose stdin the test writes to."""
    return subprocess.Popen(
        [*OSCE, "chat", "chest-pain-46m", "--sessions-dir", str(sessions)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
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
    proc = spawn_chat(tmp_path, sessions)
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


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_while_waiting_for_input_exits_promptly_and_keeps_the_session(tmp_path):
    """Ctrl-C with stdin still open (a terminal, or a pipe nobody closed) must not wait for one more line."""
    sessions = tmp_path / "s"
    proc = spawn_chat(tmp_path, sessions)
    try:
        proc.stdin.write("Hello, I'm Dr Lee. What brings you in?\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            files = list(sessions.glob("*.json"))
            if files and any(t["role"] == "patient" for t in json.loads(files[0].read_text())["turns"]):
                break
            time.sleep(0.05)
        else:
            pytest.fail("the encounter never got going")
        time.sleep(0.3)  # the reader is now blocked waiting for the next line
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            pytest.fail("chat hung after Ctrl-C until stdin produced another line")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
    assert code == 130
    assert "Interrupted. Session kept" in proc.stderr.read()
    assert json.loads(files[0].read_text())["status"] == "aborted"


def _chat_in_process(monkeypatch, capsys, stdin: str, *argv: str) -> tuple[int, str]:
    import io

    from osce_tui.cli import main

    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(["chat", "chest-pain-46m", *argv])
    return code, capsys.readouterr().out


def test_resume_shows_the_roles_the_session_was_played_with(tmp_path, monkeypatch, capsys):
    import asyncio

    from osce_tui.engine import Encounter, EncounterSetup
    from osce_tui.library import Library
    from osce_tui.store import save_session

    monkeypatch.setenv("OSCE_TUI_CONFIG", str(tmp_path / "none.toml"))
    lib = Library()

    async def started() -> Path:
        enc = Encounter(EncounterSetup(case=lib.case("chest-pain-46m"), rubric=lib.rubric("osce-practice"),
                                       doctor="human", patient="human", sessions_dir=tmp_path))
        save_session(enc.session, enc.session_path)
        return enc.session_path

    path = asyncio.run(started())
    code, out = _chat_in_process(monkeypatch, capsys, "/end\n", "--resume", str(path))
    assert code == 0
    assert "Doctor: human, patient: human, judge: offline" in out


def test_unscored_encounter_is_not_a_success(tmp_path, monkeypatch, capsys):
    from osce_tui.judges import runner

    async def broken(*a, **k):
        raise ValueError("judge bug")

    monkeypatch.setenv("OSCE_TUI_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setattr(runner, "score_session", broken)
    code, out = _chat_in_process(monkeypatch, capsys, "What brings you in?\n", "--sessions-dir", str(tmp_path / "s"))
    assert "Not scored." in out and "judge bug" in out
    assert code == 1
    saved = json.loads(next((tmp_path / "s").glob("*.json")).read_text())
    assert saved["turns"] and saved["status"] == "finished"


def test_chat_says_so_when_the_session_could_not_be_saved(tmp_path, monkeypatch, capsys):
    from osce_tui.engine import encounter as engine_module

    def full(session, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setenv("OSCE_TUI_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setattr(engine_module, "save_session", full)
    code, out = _chat_in_process(monkeypatch, capsys, "What brings you in?\n", "--sessions-dir", str(tmp_path / "s"))
    assert "Session saved" not in out
    assert "NOT saved" in out and "No space" in out
    assert code == 1


def test_undecodable_input_bytes_do_not_break_saving(tmp_path, monkeypatch, capsys):
    """Under a C/POSIX locale stdin decodes bad bytes to lone surrogates, which JSON cannot hold."""
    monkeypatch.setenv("OSCE_TUI_CONFIG", str(tmp_path / "none.toml"))
    code, out = _chat_in_process(monkeypatch, capsys, "Hello, what brings you in?\nDo you drink caf\udce9?\n",
                                 "--sessions-dir", str(tmp_path / "s"))
    assert code == 0
    saved = json.loads(next((tmp_path / "s").glob("*.json")).read_text())
    asked = [t["text"] for t in saved["turns"] if t["role"] == "doctor"]
    assert asked[-1].startswith("Do you drink caf") and saved["status"] == "finished"


def test_a_stdin_read_error_ends_the_encounter_instead_of_hanging(tmp_path, monkeypatch, capsys):
    import io

    from osce_tui.cli import main

    class Dropped(io.StringIO):
        """The terminal went away after one line (EIO)."""

        def __init__(self):
            super().__init__("What brings you in?\n")
            self.reads = 0

        def readline(self, *a):
            self.reads += 1
            if self.reads > 1:
                raise OSError(5, "Input/output error")
            return super().readline(*a)

    monkeypatch.setenv("OSCE_TUI_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setattr(sys, "stdin", Dropped())
    import threading

    result = {}
    t = threading.Thread(target=lambda: result.setdefault("code", main(["chat", "chest-pain-46m", "--sessions-dir", str(tmp_path / "s")])),
                         daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "chat hung after stdin failed"
    assert result["code"] == 0
    saved = json.loads(next((tmp_path / "s").glob("*.json")).read_text())
    assert saved["status"] == "finished"


def test_human_patient_answers_an_offline_doctor_from_a_pipe(tmp_path):
    proc = run_chat(tmp_path, "It hurts in my chest.\nTwo hours ago.\n", "--patient", "human", "--doctor", "offline")
    assert proc.returncode == 0, proc.stderr
    assert "Patient: It hurts in my chest." in proc.stdout and "Patient: Two hours ago." in proc.stdout
    assert "Total:" in proc.stdout
    saved = json.loads(next((tmp_path / "s").glob("*.json")).read_text())
    patient = [t for t in saved["turns"] if t["role"] == "patient"]
    assert [t["text"] for t in patient] == ["It hurts in my chest.", "Two hours ago."]
    assert all(t["spec"] == "human" for t in patient) and saved["status"] == "finished"
    # EOF came while the doctor's third question waited for an answer: it is kept, unanswered.
    assert [t["role"] for t in saved["turns"] if t["role"] in ("doctor", "patient")][-1] == "doctor"
