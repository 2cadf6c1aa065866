"""The model path end to end, as a user runs it: real SDK clients, a real HTTP server.

scripts/fake_openai_server.py runs in-process on 127.0.0.1 and plays doctor,
patient and judge; the CLI entry point (``osce_tui.cli.main``) drives `batch run`,
`batch score` and `chat` against it with failures injected: 429 then OK, 401,
a connection dropped mid-stream (what a killed server looks like to the
client), a server that is not there, and malformed judge JSON.
"""

from __future__ import annotations

import importlib.util
import io
import json
import sys
from pathlib import Path

import pytest

from osce_tui.cli import main
from osce_tui.store import load_session

ROOT = Path(__file__).resolve().parents[1]
CASES = "chest-pain-46m,headache-52f"
MODEL = "openai-api/local/m"
SECRET = "sk-e2e-secret-0123456789"


def _load_fake_server():
    spec = importlib.util.spec_from_file_location("fake_openai_server", ROOT / "scripts" / "fake_openai_server.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclass-free, but keep imports of it consistent
    spec.loader.exec_module(module)
    return module


fake = _load_fake_server()


@pytest.fixture
def server(monkeypatch):
    with fake.FakeOpenAI() as srv:
        monkeypatch.setenv("LOCAL_BASE_URL", srv.base_url)
        monkeypatch.delenv("LOCAL_API_KEY", raising=False)
        # Short client timeout and one SDK retry keep the failure cases quick.
        monkeypatch.setenv("OSCE_TUI_PROVIDER__TIMEOUT", "5")
        monkeypatch.setenv("OSCE_TUI_PROVIDER__MAX_RETRIES", "2")
        yield srv


def _results(out: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    latest: dict[str, dict] = {}
    for row in rows:  # a rerun appends; the last line per case is its state
        latest[row["case"]] = row
    return latest


def _batch_run(out: Path, *extra: str) -> int:
    return main(["batch", "run", "--cases", CASES, "--doctor", MODEL, "--judge", MODEL, "--out", str(out), "--quiet", *extra])


def test_batch_429_then_ok_is_retried_by_the_sdk(server, tmp_path):
    server.fail("429", 2)
    assert _batch_run(tmp_path / "out") == 0
    rows = _results(tmp_path / "out")
    assert {r["status"] for r in rows.values()} == {"finished"} and len(rows) == 2
    assert server.failed == {"429": 2}
    # The fake judge gives half marks: a total of 50 proves the model judge scored it.
    assert all(abs(r["total"] - 50) < 0.5 for r in rows.values())


def test_batch_401_fails_each_encounter_clearly_and_never_shows_the_key(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LOCAL_API_KEY", SECRET)
    server.fail("401")
    assert _batch_run(tmp_path / "out") == 1
    rows = _results(tmp_path / "out")
    assert len(rows) == 2  # the first failure did not stop the run
    for row in rows.values():
        assert row["status"] == "failed"
        assert "rejected the API key (401)" in row["error"] and "check LOCAL_API_KEY" in row["error"]
        assert server.base_url in row["error"]
    captured = capsys.readouterr()
    written = (tmp_path / "out" / "results.jsonl").read_text() + "".join(
        p.read_text() for p in (tmp_path / "out" / "sessions").glob("*.json")
    )
    assert SECRET not in written + captured.out + captured.err
    assert "Traceback" not in captured.err


def test_401_without_a_key_says_to_set_the_variable(server, tmp_path):
    server.fail("401")
    assert _batch_run(tmp_path / "out", "--limit", "1") == 1
    (row,) = _results(tmp_path / "out").values()
    assert "wants an API key, set LOCAL_API_KEY" in row["error"]


def test_dropped_connection_keeps_the_session_and_a_rerun_resumes_it(server, tmp_path):
    out = tmp_path / "out"
    server.fail("ok", 5)  # a few good turns, then the server "dies" mid-stream
    server.fail("drop")
    assert _batch_run(out, "--limit", "1") == 1
    (row,) = _results(out).values()
    assert row["status"] == "failed"
    assert "lost the connection to the OpenAI-compatible server 'local'" in row["error"] and "mid-reply" in row["error"]
    kept = load_session(out / row["session_path"])
    assert kept.status == "failed" and len(kept.utterances("doctor")) >= 2
    before = [t.text for t in kept.turns]

    server.clear_failures()
    assert _batch_run(out, "--limit", "1") == 0
    (row,) = _results(out).values()
    assert row["status"] == "finished" and row["total"] is not None
    resumed = load_session(out / row["session_path"])
    # The rerun continued the kept session: its turns are the start of the finished one.
    assert [t.text for t in resumed.turns[: len(before)]] == before
    doctor_lines = [t.text for t in resumed.utterances("doctor")]
    assert len(doctor_lines) == len(set(doctor_lines)), "a resumed encounter must not repeat the doctor's turns"


def test_server_not_running_is_a_connection_error_naming_the_url(server, tmp_path, monkeypatch):
    server.stop()
    monkeypatch.setenv("OSCE_TUI_PROVIDER__MAX_RETRIES", "0")
    assert _batch_run(tmp_path / "out", "--limit", "1") == 1
    (row,) = _results(tmp_path / "out").values()
    assert row["status"] == "failed"
    assert f"cannot connect to the OpenAI-compatible server 'local' at {server.base_url}" in row["error"]


def test_batch_score_with_malformed_judge_json_records_unscored_items(server, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["batch", "run", "--cases", CASES, "--out", str(out), "--quiet"]) == 0  # offline encounters
    server.fail("malformed")
    assert main(["batch", "score", str(out / "sessions"), "--judge", MODEL]) == 0
    for path in (out / "sessions").glob("*.json"):
        scores = load_session(path).latest_scores()
        assert scores.judge == MODEL and scores.final
        items = [it for s in scores.sections for it in s.items if it.status != "excluded"]
        assert items and all(it.status == "unscored" for it in items)
        assert all(it.explanation.startswith("unscored: malformed judge output") for it in items)
        assert scores.total is None  # never a silent zero
    assert "Traceback" not in capsys.readouterr().err
    # Truncated JSON got the corrective turn with json_schema still on, not a switch to prompt-only JSON.
    structured = [r for r in server.requests if fake.is_structured(r)]
    assert structured and all(r.get("response_format") for r in structured)


def test_chat_with_model_doctor_offline_patient_and_model_judge(server, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    code = main(["chat", "chest-pain-46m", "--doctor", MODEL, "--patient", "offline", "--judge", MODEL])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "Doctor: Hello, I'm the doctor on duty today." in printed.out
    assert "EXAM:" not in printed.out and "PHASE:" not in printed.out  # control lines never shown
    assert "Doctor: Thank you. I'd now like to examine you.\nPatient:" in printed.out  # no dangling blank line
    assert "judge openai-api/local/m" in printed.out and "Total: 50" in printed.out


def test_chat_with_model_patient_from_a_pipe(server, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO("Hello, what brings you in?\n/end\n"))
    assert main(["chat", "chest-pain-46m", "--patient", MODEL]) == 0
    out = capsys.readouterr().out
    assert "Patient: Well, I'm not really sure how to put it." in out and "Session saved:" in out


def test_fake_server_failure_schedule_is_used_up_in_order():
    srv = fake.FakeOpenAI()
    try:
        srv.fail("ok", 1)
        srv.fail("500", 1)
        srv.fail("malformed")
        kinds = [srv._next_failure(structured=False) for _ in range(3)]
        assert kinds == ["ok", "500", None]  # chat calls are never malformed
        assert srv._next_failure(structured=True) == "malformed"
        with pytest.raises(ValueError, match="unknown failure"):
            srv.fail("teapot")
        with pytest.raises(ValueError, match="loopback"):
            fake.FakeOpenAI(host="0.0.0.0")
    finally:
        srv._httpd.server_close()


def test_judge_server_down_is_a_failure_and_the_rerun_only_rescores(server, tmp_path, monkeypatch):
    """A judge that cannot be reached must not look like a finished encounter."""
    out = tmp_path / "out"
    judge = "openai-api/judge/m"
    monkeypatch.setenv("JUDGE_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    argv = ["batch", "run", "--cases", "chest-pain-46m", "--doctor", "offline", "--judge", judge, "--out", str(out), "--quiet"]
    assert main(argv) == 1
    row = _results(out)["chest-pain-46m"]
    assert row["status"] == "failed" and "judge" in row["error"]
    session_path = next((out / "sessions").rglob("*.json"))
    first = load_session(session_path)
    assert first.status == "finished"  # the conversation is kept (scored offline meanwhile, and said so)
    assert first.latest_scores().judge == "offline" and "offline judge instead" in first.error

    monkeypatch.setenv("JUDGE_BASE_URL", server.base_url)
    assert main(argv) == 0
    row = _results(out)["chest-pain-46m"]
    assert row["status"] == "finished" and abs(row["total"] - 50) < 0.5  # the model judge's half marks
    again = load_session(session_path)
    assert len(again.turns) == len(first.turns)  # not run again, only re-scored
    assert again.latest_scores().judge == judge
    assert [s.judge for s in again.scores if s.final] == ["offline", judge]  # nothing overwritten
