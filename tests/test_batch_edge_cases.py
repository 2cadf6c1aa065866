"""`batch run` edge cases: failures that must not lose sessions, disk errors, torn results files."""

from __future__ import annotations

import asyncio
import json

import pytest

from osce_tui.batch.progress import NullReporter
from osce_tui.batch.results import ResultsWriter, read_results
from osce_tui.batch.runner import run_batch
from osce_tui.batch.selection import BatchPlan
from osce_tui.config import Config
from osce_tui.library import Library
from osce_tui.providers.base import ChatMessage, ProviderConnectionError
from osce_tui.providers.scripted import ScriptedProvider
from osce_tui.store import load_session

CASES = ["chest-pain-46m", "palpitations-weight-loss-32f"]


@pytest.fixture(scope="module")
def library() -> Library:
    return Library()


def _plan(library: Library, doctors: list[str], cases=CASES, trials: int = 1) -> BatchPlan:
    return BatchPlan(cases=[library.case(c) for c in cases], rubric=library.rubric("osce-practice"), doctors=doctors,
                     patient="offline", judge="offline", trials=trials)


def _asked(messages: list[ChatMessage]) -> int:
    return sum(1 for m in messages if m.role == "assistant")


async def test_provider_failure_is_continued_on_rerun_not_started_over(tmp_path, library):
    """The server goes away after two questions; the rerun continues that session file."""
    server_up = {"up": False}

    def doctor(messages):
        n = _asked(messages)
        if n >= 2 and not server_up["up"]:
            raise ProviderConnectionError("server gone", spec="scripted/flaky")
        return ["What brings you in today?", "When did it start?", "Does it spread anywhere?"][n] if n < 3 else "END:"

    ScriptedProvider.register("flaky", doctor)
    plan = _plan(library, ["scripted/flaky"], cases=CASES[:1])
    first = await run_batch(plan, tmp_path, Config())
    assert first.failed == 1
    rec = read_results(tmp_path).records[-1]
    failed = load_session(tmp_path / rec.session_path)
    asked = [t.text for t in failed.utterances("doctor")]
    assert asked == ["What brings you in today?", "When did it start?"]

    server_up["up"] = True
    again = await run_batch(plan, tmp_path, Config())
    assert (again.finished, again.failed) == (1, 0)
    rec = read_results(tmp_path).records[-1]
    done = load_session(tmp_path / rec.session_path)
    assert done.id == failed.id, "the failed session was thrown away and the encounter started over"
    assert [t.text for t in done.utterances("doctor")][:3] == [*asked, "Does it spread anywhere?"]
    assert done.status == "finished" and done.latest_scores() is not None


async def test_judging_failure_is_a_failed_record_and_the_rerun_only_rescores(tmp_path, library, monkeypatch):
    from osce_tui.judges import runner

    real = runner.score_session

    async def broken(*a, **k):
        raise ValueError("judge bug")

    monkeypatch.setattr(runner, "score_session", broken)
    plan = _plan(library, ["offline"], cases=CASES[:1])
    first = await run_batch(plan, tmp_path, Config())
    assert (first.finished, first.failed, first.exit_code) == (0, 1, 1)
    rec = read_results(tmp_path).records[-1]
    assert rec.status == "failed" and "judge bug" in rec.error
    kept = load_session(tmp_path / rec.session_path)
    assert kept.turns and kept.latest_scores() is None

    monkeypatch.setattr(runner, "score_session", real)
    again = await run_batch(plan, tmp_path, Config())
    assert (again.finished, again.failed) == (1, 0)
    rec = read_results(tmp_path).records[-1]
    assert rec.status == "finished" and rec.total is not None
    rescored = load_session(tmp_path / rec.session_path)
    assert rescored.id == kept.id and len(rescored.turns) >= len(kept.turns)
    assert [t.text for t in rescored.turns[: len(kept.turns)]] == [t.text for t in kept.turns]


async def test_finished_session_whose_results_line_was_lost_is_not_run_again(tmp_path, library):
    """Killed after the session was saved finished but before its line reached results.jsonl."""
    plan = _plan(library, ["offline"], cases=CASES[:1])
    await run_batch(plan, tmp_path, Config())
    rec = read_results(tmp_path).records[-1]
    before = load_session(tmp_path / rec.session_path)
    (tmp_path / "results.jsonl").write_text("")
    again = await run_batch(plan, tmp_path, Config())
    assert (again.finished, again.failed) == (1, 0)
    after = load_session(tmp_path / read_results(tmp_path).records[-1].session_path)
    assert after.id == before.id and len(after.scores) == len(before.scores)
    assert read_results(tmp_path).records[-1].total == rec.total


def _slow_streams(monkeypatch, state: dict | None = None, delay: float = 0.02) -> None:
    """Model calls that take a while (and, with ``state``, a count of those in flight)."""
    original = ScriptedProvider.stream_chat

    async def slow(self, messages, settings):
        holding = False
        try:
            async for event in original(self, messages, settings):
                if not holding and state is not None:  # the first event comes from inside the limiter
                    holding = True
                    state["now"] += 1
                    state["peak"] = max(state["peak"], state["now"])
                await asyncio.sleep(delay)  # suspended inside the limiter: the slot stays taken
                yield event
        finally:
            if holding:
                state["now"] -= 1

    monkeypatch.setattr(ScriptedProvider, "stream_chat", slow)


async def test_max_connections_bounds_every_model_call_in_the_run(tmp_path, library, monkeypatch):
    state = {"now": 0, "peak": 0}
    _slow_streams(monkeypatch, state, delay=0.005)
    ScriptedProvider.register("mc-doctor", lambda m: "What brings you in today?" if _asked(m) == 0 else "END:")
    ScriptedProvider.register("mc-patient", lambda m: "My chest hurts.")
    plan = BatchPlan(cases=[library.case(c) for c in CASES], rubric=library.rubric("osce-practice"),
                     doctors=["scripted/mc-doctor"], patient="scripted/mc-patient", judge="offline", trials=3)
    out = await run_batch(plan, tmp_path, Config(), max_connections=2)
    assert (out.finished, out.failed) == (6, 0), [r.error for r in out.records]
    assert state["peak"] == 2, state  # saturated, never exceeded, doctors and patients together


async def test_disk_error_in_one_worker_stops_the_others_cleanly(tmp_path, library, monkeypatch):
    _slow_streams(monkeypatch)
    ScriptedProvider.register("slow-ok", lambda m: "What brings you in today?" if _asked(m) == 0 else "END:")

    class DiskFull(NullReporter):
        def finished(self, record):
            super().finished(record)
            if self.done == 1:
                raise OSError(28, "No space left on device")

    plan = _plan(library, ["scripted/slow-ok"], trials=4)  # 8 encounters over several workers
    with pytest.raises(OSError, match="No space"):
        await run_batch(plan, tmp_path, Config(), max_connections=4, reporter=DiskFull())
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
    assert not others, f"workers left running after run_batch returned: {others}"
    sessions = [load_session(p) for p in (tmp_path / "sessions").glob("*.json")]
    assert sessions and all(s.status in ("finished", "aborted") for s in sessions)
    assert (tmp_path / "summary.json").is_file()


def test_torn_non_ascii_last_line_is_skipped_not_fatal(tmp_path):
    line = json.dumps({"case": "x", "doctor": "d", "patient": "p", "judge": "j", "rubric": "r", "status": "failed",
                       "error": "Schmerz – stark"}, ensure_ascii=False)
    good = line.replace("Schmerz – stark", "ok")
    raw = (good + "\n").encode() + line.encode()[: line.encode().index("–".encode()) + 1]  # cut inside the dash
    (tmp_path / "results.jsonl").write_bytes(raw)
    read = read_results(tmp_path)
    assert len(read.records) == 1 and len(read.skipped) == 1
    with ResultsWriter(tmp_path):
        pass  # and a writer starts its first line on a fresh line
    assert (tmp_path / "results.jsonl").read_bytes().endswith(b"\n")


async def test_rescore_records_a_judge_crash_on_one_session_and_scores_the_rest(tmp_path, library, monkeypatch):
    from osce_tui.batch.rescore import rescore
    from osce_tui.judges import runner

    await run_batch(_plan(library, ["offline"]), tmp_path, Config())
    real = runner.score_session
    crash_case = CASES[0]

    async def flaky(case, session, rubric, judge, **kw):
        if case.id == crash_case:
            raise ValueError("judge bug")
        return await real(case, session, rubric, judge, **kw)

    monkeypatch.setattr(runner, "score_session", flaky)
    results, problems = await rescore([tmp_path / "sessions"], library=library, rubric=None, judge="offline", config=Config())
    assert not problems
    by_case = {r.case_id: r for r in results}
    assert by_case[crash_case].status == "failed" and "judge bug" in by_case[crash_case].error
    assert by_case[CASES[1]].status == "scored"


async def test_session_that_could_not_be_saved_is_a_failed_record(tmp_path, library, monkeypatch):
    from osce_tui.engine import encounter as engine_module

    def full(session, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(engine_module, "save_session", full)
    out = await run_batch(_plan(library, ["offline"], cases=CASES[:1]), tmp_path, Config())
    assert (out.finished, out.failed) == (0, 1)
    rec = read_results(tmp_path).records[-1]
    assert rec.status == "failed" and "No space" in rec.error


def test_session_listing_skips_batch_run_files(tmp_path):
    from osce_tui.store import list_sessions

    (tmp_path / "run.json").write_text('{"format": 1, "runs": []}')
    (tmp_path / "summary.json").write_text("{}")
    summaries, errors = list_sessions(tmp_path)
    assert summaries == [] and errors == []


def test_cli_out_that_is_a_file_is_a_usage_error(tmp_path, capsys):
    from osce_tui.cli import main

    out = tmp_path / "results.txt"
    out.write_text("not a folder")
    assert main(["batch", "run", "--cases", CASES[0], "--out", str(out), "--quiet"]) == 2
    assert "is not a folder" in " ".join(capsys.readouterr().err.split())  # rich wraps long lines


def test_cli_disk_error_mid_run_is_reported_not_a_traceback(tmp_path, monkeypatch, capsys):
    from osce_tui.batch import results
    from osce_tui.cli import main

    def full(self, record):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(results.ResultsWriter, "append", full)
    code = main(["batch", "run", "--cases", CASES[0], "--out", str(tmp_path / "run"), "--quiet"])
    err = " ".join(capsys.readouterr().err.split())  # rich wraps long lines
    assert code == 1
    assert "No space left on device" in err and "Traceback" not in err
    assert "rerun" in err.lower() or "run the same command" in err.lower()
