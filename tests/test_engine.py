"""Encounter engine: phases, stop rules, takeover, cancellation, autosave, resume."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from osce_tui.agents.base import DoctorAgent, DoctorTurn, PatientAgent, Say
from osce_tui.config import Config
from osce_tui.domain.session import NoteDiagnosis, PatientNote
from osce_tui.engine import Encounter, EncounterFailed, EncounterSetup
from osce_tui.engine import events as ev
from osce_tui.library import Library
from osce_tui.providers.base import RateLimitError
from osce_tui.store import load_session

LIB = Library()
CASE_ID = "chest-pain-46m"


@pytest.fixture
def case():
    return LIB.case(CASE_ID)


@pytest.fixture
def rubric():
    return LIB.rubric("osce-practice")


def make_setup(case, rubric, tmp_path, **kw) -> EncounterSetup:
    kw.setdefault("config", Config())
    return EncounterSetup(case=case, rubric=rubric, sessions_dir=tmp_path, **kw)


class Recorder:
    """Observer that records events and answers AwaitingHuman from a script."""

    def __init__(self, doctor_lines=(), patient_lines=(), note: PatientNote | None = None, end_when_done=True):
        self.events: list = []
        self.end_when_done = end_when_done
        self.doctor_lines = list(doctor_lines)
        self.patient_lines = list(patient_lines)
        self.note = note
        self.enc: Encounter | None = None

    def __call__(self, event):
        self.events.append(event)
        if isinstance(event, ev.AwaitingHuman) and self.enc is not None:
            if event.what == "note":
                if self.note is not None:
                    self.enc.submit_note(self.note)
                else:
                    self.enc.end()
            else:
                lines = self.doctor_lines if event.role == "doctor" else self.patient_lines
                if lines:
                    self.enc.submit(event.role, lines.pop(0))
                elif self.end_when_done:
                    self.enc.end()

    def of(self, kind):
        return [e for e in self.events if isinstance(e, kind)]


async def run_with(setup, recorder: Recorder) -> Encounter:
    enc = Encounter(setup, recorder)
    recorder.enc = enc
    await asyncio.wait_for(enc.run(), timeout=30)
    return enc


NOTE = PatientNote(
    hpi="46M with 2h of crushing central chest pain radiating to the left arm.",
    pe="Diaphoretic. Heart regular, no murmurs. Lungs clear.",
    diagnoses=[
        NoteDiagnosis(name="Acute coronary syndrome", history_findings=["crushing chest pain"], exam_findings=["diaphoresis"]),
        NoteDiagnosis(name="Aortic dissection"),
        NoteDiagnosis(name="Pulmonary embolism"),
    ],
    workup=["ECG", "Troponin", "Chest x-ray"],
)


async def test_offline_doctor_and_patient_reach_every_phase_and_score(case, rubric, tmp_path):
    rec = Recorder()
    enc = await run_with(make_setup(case, rubric, tmp_path, doctor="offline", patient="offline"), rec)
    s = enc.session
    phases = [e.new for e in rec.of(ev.PhaseChanged)]
    assert phases == ["history", "exam", "closure", "note", "scored"]
    assert s.status == "finished" and s.note is not None and s.note.diagnoses
    assert s.exams and all(x.result for x in s.exams)
    assert any(t.meta.get("challenging_question") for t in s.turns), "patient asked the challenging question"
    final = s.latest_scores()
    assert final is not None and final.final and final.total is not None
    assert rec.of(ev.ScoresUpdated)[-1].final
    assert any(not e.final for e in rec.of(ev.ScoresUpdated)), "live scores during the encounter"
    on_disk = load_session(enc.session_path)
    assert on_disk.status == "finished" and len(on_disk.turns) == len(s.turns)
    assert rec.of(ev.EncounterEnded)[-1].status == "finished"


async def test_human_doctor_script_with_commands(case, rubric, tmp_path):
    lines = [
        "Hello Mr Ellison, I'm Dr Lee, one of the doctors. What brings you in today?",
        "When did the pain start?",
        "/exam heart, lungs",
        "/order ECG",
        "/bogus",  # a typo is reported and does not use up the turn
        "/phase closure",
        "I think your heart may not be getting enough blood. We will do an ECG and blood tests.",
        "That is a fair worry; we are checking for exactly that right now.",
        "/note",
    ]
    rec = Recorder(doctor_lines=lines, note=NOTE)
    enc = await run_with(make_setup(case, rubric, tmp_path), rec)
    s = enc.session
    assert [x.kind for x in s.exams].count("test") == 1
    assert {x.request for x in s.exams if x.kind == "exam"} == {"heart", "lungs"}
    assert any("unknown command /bogus" in e.message for e in rec.of(ev.ErrorOccurred))
    closure_patient = [t for t in s.utterances("patient") if t.phase == "closure"]
    assert closure_patient and closure_patient[0].meta.get("challenging_question")
    assert s.note == NOTE
    assert s.status == "finished"
    # Patient answers name the fact they came from (explainable retrieval).
    first_answer = s.utterances("patient")[1]
    assert first_answer.meta.get("reply_to") == s.utterances("doctor")[1].id


async def test_every_turn_is_saved_before_the_next_one(case, rubric, tmp_path):
    checks: list[tuple[int, int]] = []
    rec = Recorder()

    def observer(event):
        rec(event)
        if isinstance(event, ev.SessionSaved):
            on_disk = json.loads(Path(event.path).read_text())
            checks.append((len(on_disk["turns"]), len(rec.enc.session.turns)))

    enc = Encounter(make_setup(case, rubric, tmp_path, doctor="offline"), observer)
    rec.enc = enc
    await enc.run()
    assert len(checks) >= len([t for t in enc.session.turns if t.kind == "utterance"])
    assert all(disk == mem for disk, mem in checks)


async def test_turn_budget_moves_the_phase_on(case, rubric, tmp_path):
    config = Config()
    config.encounter.history.max_turns = 3
    rec = Recorder(doctor_lines=["Hi, what brings you in?", "When did it start?", "Where is it?", "Any fever?"])
    enc = await run_with(make_setup(case, rubric, tmp_path, config=config), rec)
    reasons = {e.new: e.reason for e in rec.of(ev.PhaseChanged)}
    assert reasons["exam"] == "turn budget (3)"
    history_doctor = [t for t in enc.session.utterances("doctor") if t.phase == "history"]
    assert len(history_doctor) == 3


async def test_craftmd_final_diagnosis_stops_the_conversation(case, rubric, tmp_path):
    rec = Recorder(doctor_lines=["What brings you in?", "/dx acute coronary syndrome", "never asked"])
    enc = await run_with(make_setup(case, LIB.rubric("craft-md"), tmp_path, mode="craftmd"), rec)
    assert enc.session.final_diagnosis == "acute coronary syndrome"
    assert rec.doctor_lines == ["never asked"]
    assert enc.session.status == "finished"


class OneLineDoctor(DoctorAgent):
    spec = "scripted/test"

    def __init__(self, lines):
        self.lines = list(lines)

    async def act(self, doorway, session, on_delta=None):
        text = self.lines.pop(0)
        return DoctorTurn(actions=[Say(text=text)])


async def test_craftmd_no_question_rule_for_model_doctors(case, rubric, tmp_path):
    enc = Encounter(make_setup(case, LIB.rubric("craft-md"), tmp_path, mode="craftmd", doctor="offline"), None)
    enc.doctor = OneLineDoctor(["What brings you in?", "Does it spread anywhere?", "Most likely a heart attack."])
    enc.session.roles["doctor"].spec = "scripted/test"
    await asyncio.wait_for(enc.run(), 30)
    assert enc.session.final_diagnosis == "Most likely a heart attack."
    assert len(enc.session.utterances("patient")) == 2


async def test_takeover_doctor_from_agent_to_human_and_back(case, rubric, tmp_path):
    rec = Recorder(doctor_lines=["Do you smoke?", "Any family history of heart problems?"])
    enc = Encounter(make_setup(case, rubric, tmp_path, doctor="offline"), None)
    rec.enc = enc
    taken = {"done": False, "back": False}

    def observer(event):
        rec(event)
        doctor_turns = [t for t in enc.session.turns if t.role == "doctor"]
        if isinstance(event, ev.TurnFinished) and event.turn.role == "patient":
            if len(doctor_turns) == 3 and not taken["done"]:
                taken["done"] = True
                enc.takeover("doctor", "human")
            elif taken["done"] and not taken["back"] and not rec.doctor_lines:
                taken["back"] = True
                enc.takeover("doctor", "offline")

    enc.observer = observer
    await asyncio.wait_for(enc.run(), 30)
    s = enc.session
    assert [(c.from_spec, c.to_spec) for c in s.role_changes] == [("offline", "human"), ("human", "offline")]
    human_turns = [t for t in s.turns if t.spec == "human"]
    assert [t.text for t in human_turns] == ["Do you smoke?", "Any family history of heart problems?"]
    assert s.role_changes[0].at_turn <= s.turns.index(human_turns[0])
    assert s.status == "finished" and s.note is not None  # the offline doctor finished the job
    assert len(rec.of(ev.RoleChanged)) == 2


async def test_cancellation_keeps_the_session_as_aborted(case, rubric, tmp_path):
    rec = Recorder()
    enc = Encounter(make_setup(case, rubric, tmp_path), rec)  # human doctor who never types
    task = asyncio.create_task(enc.run())
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert load_session(enc.session_path).status == "aborted"


async def test_pause_holds_the_next_turn(case, rubric, tmp_path):
    enc = Encounter(make_setup(case, rubric, tmp_path, doctor="offline"), None)
    enc.pause()
    task = asyncio.create_task(enc.run())
    await asyncio.sleep(0.1)
    assert len(enc.session.utterances()) == 0
    enc.resume_running()
    await asyncio.wait_for(task, 30)
    assert enc.session.status == "finished"


async def test_resume_answers_the_dangling_question_and_finishes(case, rubric, tmp_path):
    rec = Recorder(doctor_lines=["Hello, what brings you in?"], end_when_done=False)
    enc = Encounter(make_setup(case, rubric, tmp_path), rec)
    rec.enc = enc
    task = asyncio.create_task(enc.run())
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Simulate a kill between the doctor's question and the patient's answer.
    s = load_session(enc.session_path)
    s.add_turn("doctor", "When did the pain start?", spec="human")
    from osce_tui.store import save_session

    save_session(s, enc.session_path)

    rec2 = Recorder(doctor_lines=["/end"])
    enc2 = Encounter.resume(enc.session_path, make_setup(case, rubric, tmp_path), rec2)
    rec2.enc = enc2
    await asyncio.wait_for(enc2.run(), 30)
    spoken = enc2.session.utterances()
    assert spoken[-2].text == "When did the pain start?" and spoken[-1].role == "patient"
    assert spoken[-1].meta["reply_to"] == spoken[-2].id
    assert enc2.session.status == "finished"
    assert enc2.session.id == s.id


class FailingPatient(PatientAgent):
    spec = "scripted/fail"

    async def reply(self, case, session, doctor_text, on_delta=None):
        raise RateLimitError("rate limited (429) after 2 retries", spec="openai/x")

    async def challenging_question(self, case, session, on_delta=None):
        return None


async def test_provider_failure_fails_the_encounter_but_keeps_the_file(case, rubric, tmp_path):
    rec = Recorder(doctor_lines=["What brings you in?"])
    enc = Encounter(make_setup(case, rubric, tmp_path), rec)
    rec.enc = enc
    enc.patient = FailingPatient()
    with pytest.raises(EncounterFailed, match="429"):
        await enc.run()
    on_disk = load_session(enc.session_path)
    assert on_disk.status == "failed" and "429" in on_disk.error
    assert on_disk.utterances("doctor")[0].text == "What brings you in?"


async def test_provider_failure_in_pause_mode_waits_for_a_takeover(case, rubric, tmp_path):
    rec = Recorder(doctor_lines=["What brings you in?", "/end"])
    enc = Encounter(make_setup(case, rubric, tmp_path, on_error="pause"), None)
    rec.enc = enc

    def observer(event):
        rec(event)
        if isinstance(event, ev.ErrorOccurred) and event.role == "patient":
            enc.takeover("patient", "offline")
            enc.resume_running()

    enc.observer = observer
    enc.session.roles["patient"].spec = "scripted/fail"
    enc.patient = FailingPatient()
    await asyncio.wait_for(enc.run(), 30)
    assert enc.session.utterances("patient"), "the offline patient answered after the takeover"
    assert enc.session.status == "finished"
