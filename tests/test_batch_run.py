"""`batch run`: results files, resume, failures that do not stop the run, Ctrl-C, CRAFT-MD arms."""

from __future__ import annotations

import asyncio
import json

import pytest

from osce_tui.batch.progress import NullReporter
from osce_tui.batch.results import read_results
from osce_tui.batch.runner import run_batch
from osce_tui.batch.selection import BatchPlan, parse_arms
from osce_tui.cli import main
from osce_tui.config import Config
from osce_tui.library import Library
from osce_tui.providers.base import ChatMessage, ProviderConnectionError
from osce_tui.providers.scripted import ScriptedProvider

CASES = ["chest-pain-46m", "palpitations-weight-loss-32f"]


@pytest.fixture(scope="module")
def library() -> Library:
    return Library()


def _asked(messages: list[ChatMessage]) -> int:
    return sum(1 for m in messages if m.role == "assistant")


def _encounter_doctor(messages: list[ChatMessage]) -> str:
    # One question, then end the encounter: fast, but a real engine run.
    return "What brings you in today?" if _asked(messages) == 0 else "END:"


def _broken(messages: list[ChatMessage]) -> str:
    raise ProviderConnectionError("server gone", spec="scripted/batch-broken")


def _craftmd_doctor(library: Library):
    names = {c.doorway.chief_complaint: c.diagnosis.name for c in library.cases().values()}

    def reply(messages: list[ChatMessage]) -> str:
        system = messages[0].content
        if "clinical vignette" in system:  # the summarizer
            return "A patient described their symptoms in detail."
        correct = next((n for cc, n in names.items() if cc in system), "unknown")
        if _asked(messages) == 0 and not any("most likely diagnosis" in m.content for m in messages):
            return "When did this start?"
        return f"DIAGNOSIS: {correct}"

    return reply


@pytest.fixture(autouse=True)
def scripts(library):
    ScriptedProvider.register("batch-ok", _encounter_doctor)
    ScriptedProvider.register("batch-broken", _broken)
    ScriptedProvider.register("batch-craftmd", _craftmd_doctor(library))
    yield


def _plan(library: Library, doctors: list[str], trials: int = 2, **kw) -> BatchPlan:
    rubric = library.rubric(kw.pop("rubric", "osce-practice"))
    return BatchPlan(cases=[library.case(c) for c in CASES], rubric=rubric, doctors=doctors,
                     patient="offline", judge="offline", trials=trials, **kw)


async def test_run_writes_files_and_resume_skips_finished(tmp_path, library):
    plan = _plan(library, ["scripted/batch-ok"])
    out = await run_batch(plan, tmp_path, Config(), max_connections=2)
    assert (out.finished, out.failed, out.skipped, out.exit_code) == (4, 0, 0, 0)
    records = read_results(tmp_path).records
    assert len(records) == 4
    rec = records[0]
    assert rec.status == "finished" and rec.sections and rec.total is not None
    assert rec.usage.calls >= 2 and (tmp_path / rec.session_path).is_file()
    assert len(list((tmp_path / "sessions").glob("*.json"))) == 4
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["counts"]["finished"] == 4
    header = json.loads((tmp_path / "run.json").read_text())["runs"][0]
    assert set(header["cases"]) == set(CASES) and header["seed"] == 0 and header["prompts"]

    # Same plan again: nothing to do.
    again = await run_batch(plan, tmp_path, Config(), max_connections=2)
    assert (again.finished, again.skipped) == (0, 4)
    assert len(read_results(tmp_path).records) == 4
    # One more trial: only the new encounters run.
    more = await run_batch(_plan(library, ["scripted/batch-ok"], trials=3), tmp_path, Config())
    assert (more.finished, more.skipped) == (2, 4)
    assert len(json.loads((tmp_path / "run.json").read_text())["runs"]) == 3


async def test_failing_provider_marks_failed_without_stopping_others(tmp_path, library):
    plan = _plan(library, ["scripted/batch-ok", "scripted/batch-broken"], trials=1)
    reporter = NullReporter()
    out = await run_batch(plan, tmp_path, Config(), max_connections=4, reporter=reporter)
    assert (out.finished, out.failed, out.exit_code) == (2, 2, 1)
    assert reporter.failed == 2
    failed = [r for r in read_results(tmp_path).records if r.status == "failed"]
    assert {r.doctor for r in failed} == {"scripted/batch-broken"}
    assert all("server gone" in r.error for r in failed)
    # The failed session is kept on disk with its error.
    assert all(r.session_path and (tmp_path / r.session_path).is_file() for r in failed)
    # A rerun retries the failures only.
    again = await run_batch(plan, tmp_path, Config())
    assert (again.skipped, again.failed, again.finished) == (2, 2, 0)


async def test_cancel_keeps_finished_work(tmp_path, library):
    plan = _plan(library, ["scripted/batch-ok"], trials=3)  # 6 encounters, one worker each step

    class StopAfterTwo(NullReporter):
        def finished(self, record):
            super().finished(record)
            if self.done == 2:
                task.cancel()

    reporter = StopAfterTwo()
    task = asyncio.create_task(run_batch(plan, tmp_path, Config(), max_connections=1, reporter=reporter))
    out = await task
    assert out.interrupted and out.exit_code == 130
    done = read_results(tmp_path).finished()
    assert 2 <= len(done) < 6
    assert (tmp_path / "summary.json").is_file()
    rest = await run_batch(plan, tmp_path, Config())
    assert rest.skipped == len(done) and rest.finished == 6 - len(done)
    # An encounter cut off mid-way was continued in its own file, not duplicated.
    from osce_tui.store import load_session

    files = list((tmp_path / "sessions").glob("*.json"))
    assert len(files) == 6 and all(load_session(f).status == "finished" for f in files)


async def test_agent_bug_is_recorded_not_raised(tmp_path, library):
    def buggy(messages):
        raise ValueError("unexpected shape")

    ScriptedProvider.register("batch-buggy", buggy)
    out = await run_batch(_plan(library, ["scripted/batch-buggy"], trials=1), tmp_path, Config())
    assert out.failed == 2 and out.exit_code == 1
    assert all(r.error == "ValueError: unexpected shape" for r in read_results(tmp_path).records)


async def test_craftmd_all_arms_with_model_doctor(tmp_path, library):
    plan = _plan(library, ["scripted/batch-craftmd"], trials=1, rubric="craft-md", mode="craftmd",
                 arms=parse_arms(None), answer_formats=["4-choice"])
    out = await run_batch(plan, tmp_path, Config(), max_connections=4)
    assert out.failed == 0, [r.error for r in out.records]
    records = read_results(tmp_path).records
    assert {r.arm for r in records} == {"vignette", "single-turn", "multi-turn", "summarized", "exam-only"}
    assert all(r.sections["diagnosis"] == 100 for r in records), [(r.arm, r.extra) for r in records]
    single = next(r for r in records if r.arm == "single-turn")
    from osce_tui.store import load_session

    s = load_session(tmp_path / single.session_path)
    assert s.run.arm == "single-turn" and s.run.extra["choices"] and s.run.extra["source_session"]
    assert any(t.role == "patient" for t in s.turns)


def test_parse_arms_adds_the_conversation_derived_arms_need():
    assert parse_arms("summarized") == ["multi-turn", "summarized"]
    with pytest.raises(ValueError):
        parse_arms("telepathy")


def test_cli_run_exit_codes(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["batch", "run", "--cases", CASES[0], "--doctor", "scripted/batch-ok,scripted/batch-broken",
                 "--out", str(out), "--quiet"])
    assert code == 1
    assert len(read_results(out).records) == 2
    assert main(["batch", "run", "--cases", CASES[0], "--doctor", "human", "--out", str(out)]) == 2
    assert main(["batch", "run", "--cases", "no-such-case", "--out", str(out)]) == 2
    assert main(["batch", "run", "--cases", CASES[0], "--arms", "vignette", "--out", str(out)]) == 2
    assert "human" in capsys.readouterr().err


def test_cli_batch_score_appends_scores(tmp_path, library):
    out = tmp_path / "run"
    assert main(["batch", "run", "--cases", CASES[0], "--doctor", "scripted/batch-ok", "--out", str(out), "--quiet"]) == 0
    session_file = next((out / "sessions").glob("*.json"))
    from osce_tui.store import load_session

    before = len(load_session(session_file).scores)
    # Into another folder: the original is untouched.
    other = tmp_path / "rescored"
    assert main(["batch", "score", str(out / "sessions"), "--judge", "offline", "--rubric", "medqa-cs", "--out", str(other)]) == 0
    copied = other / session_file.name
    assert len(load_session(session_file).scores) == before
    s = load_session(copied)
    assert len(s.scores) == before + 1 and s.scores[-1].rubric_id == "medqa-cs"
    # In place, with the session's own rubric: a new set beside the old ones.
    assert main(["batch", "score", str(session_file)]) == 0
    assert len(load_session(session_file).scores) == before + 1
    assert main(["batch", "score", str(tmp_path / "missing.json")]) == 2


async def test_craftmd_offline_end_to_end(tmp_path, library):
    plan = _plan(library, ["offline"], trials=1, rubric="craft-md", mode="craftmd",
                 arms=parse_arms(None), answer_formats=["4-choice", "free"])
    out = await run_batch(plan, tmp_path, Config())
    assert out.failed == 0, [r.error for r in out.records]
    records = read_results(tmp_path).records
    assert len(records) == 2 * 5 * 2
    for r in records:
        assert r.sections["diagnosis"] in (0.0, 100.0) and r.extra.get("final_diagnosis")
    four = [r for r in records if r.answer_format == "4-choice" and r.arm != "multi-turn"]
    for r in four:  # multiple choice: the offline answer is mapped onto one of the options
        assert r.extra["final_diagnosis"] in library.case(r.case).diagnosis.choices[:4]


async def test_epag_and_encounter_offline(tmp_path, library):
    epag = BatchPlan(cases=[library.case(CASES[0])], rubric=library.rubric("epag"), doctors=["offline"],
                     patient="offline", judge="offline", mode="epag")
    out = await run_batch(epag, tmp_path / "epag", Config())
    assert (out.finished, out.failed) == (1, 0)
    rec = read_results(tmp_path / "epag").records[0]
    assert rec.mode == "epag" and rec.rubric == "epag" and rec.sections
    enc = _plan(library, ["offline"], trials=1)
    out = await run_batch(enc, tmp_path / "enc", Config())
    assert (out.finished, out.failed) == (2, 0)
    assert all(r.total and r.total > 0 for r in read_results(tmp_path / "enc").records)


def test_pick_choice_prefers_the_top_ranked_name():
    from osce_tui.batch.craftmd import pick_choice

    choices = ["Acute pyelonephritis", "Acute appendicitis", "Ureteric colic", "Biliary colic"]
    assert pick_choice(["Renal colic", "Acute appendicitis"], choices) in ("Ureteric colic", "Biliary colic")
    assert pick_choice(["appendicitis"], choices) == "Acute appendicitis"
    assert pick_choice([], choices) is None


def test_batch_modules_do_not_import_textual():
    import subprocess
    import sys

    code = (
        "import sys, osce_tui.batch.runner, osce_tui.batch.report, osce_tui.batch.agreement, "
        "osce_tui.batch.rescore, osce_tui.cli.batch, osce_tui.cli.report; "
        "sys.exit(1 if any(m == 'textual' or m.startswith('textual.') for m in sys.modules) else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
