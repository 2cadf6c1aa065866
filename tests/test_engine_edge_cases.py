"""Engine edge cases: the note phase after a timer or an end(), final scoring failures, resumes."""

from __future__ import annotations

import asyncio

import pytest

from osce_tui.agents.base import DoctorAgent, DoctorTurn, SubmitNote
from osce_tui.config import Config
from osce_tui.domain.session import NoteDiagnosis, PatientNote
from osce_tui.engine import Encounter, EncounterSetup
from osce_tui.engine import events as ev
from osce_tui.library import Library
from osce_tui.providers.base import RateLimitError
from osce_tui.store import load_session, save_session

LIB = Library()

NOTE = PatientNote(hpi="46M with chest pain.", pe="Diaphoretic.", diagnoses=[NoteDiagnosis(name="Acute coronary syndrome")], workup=["ECG"])


@pytest.fixture
def case():
    return LIB.case("chest-pain-46m")


@pytest.fixture
def rubric():
    return LIB.rubric("osce-practice")


class NoteDoctor(DoctorAgent):
    """A model-like doctor that only writes notes; each call can fail or stall first."""

    spec = "scripted/note"

    def __init__(self, *, fail_first: bool = False, stall_s: float = 0.0):
        self.calls = 0
        self.fail_first = fail_first
        self.stall_s = stall_s

    async def act(self, doorway, session, on_delta=None) -> DoctorTurn:
        self.calls += 1
        if self.fail_first and self.calls == 1:
            raise RateLimitError("rate limited (429)", spec=self.spec)
        if self.stall_s:
            await asyncio.sleep(self.stall_s)
        return DoctorTurn(actions=[SubmitNote(note=NOTE)])


def _note_phase_encounter(case, rubric, tmp_path, doctor: NoteDoctor, observer=None, **kw) -> Encounter:
    setup = EncounterSetup(case=case, rubric=rubric, doctor="offline", patient="offline", sessions_dir=tmp_path, **kw)
    enc = Encounter(setup, observer)
    enc.doctor = doctor
    enc.request_phase("note")  # straight to the note
    return enc


async def test_end_during_a_paused_note_failure_makes_no_further_model_call(case, rubric, tmp_path):
    doctor = NoteDoctor(fail_first=True)
    enc = None

    def observer(event):
        if isinstance(event, ev.ErrorOccurred) and event.role == "doctor":
            enc.end()  # the user gives up on the failing model: score what there is

    enc = _note_phase_encounter(case, rubric, tmp_path, doctor, observer, on_error="pause")
    session = await asyncio.wait_for(enc.run(), 30)
    assert doctor.calls == 1, "end() was asked for; the model must not be called again"
    assert session.status == "finished" and session.note is None


async def test_note_timer_expiry_ends_the_note_phase_without_another_call(case, rubric, tmp_path):
    config = Config()
    config.encounter.timers = True
    config.encounter.note_minutes = 0.002  # ~0.1 s
    doctor = NoteDoctor(stall_s=2.0)
    enc = _note_phase_encounter(case, rubric, tmp_path, doctor, config=config)
    session = await asyncio.wait_for(enc.run(), 30)
    assert doctor.calls == 1, "the note timer ran out: the phase is over, no second attempt"
    assert session.phase == "scored" and session.note is None
    assert session.status == "finished"


async def test_model_judge_down_and_fallback_crash_still_finish_the_session(case, rubric, tmp_path, monkeypatch):
    """The model judge fails, then the offline fallback crashes too: the encounter is kept, unscored."""
    from osce_tui.judges import runner
    from osce_tui.providers.base import ProviderConnectionError

    async def judge(case_, session, rubric_, spec, **kw):
        if spec != "offline":
            raise ProviderConnectionError("judge server gone", spec=spec)
        raise ValueError("offline judge bug")

    monkeypatch.setattr(runner, "score_session", judge)
    setup = EncounterSetup(case=case, rubric=rubric, doctor="offline", patient="offline", sessions_dir=tmp_path)
    enc = Encounter(setup)
    enc._judge_provider = lambda spec: None
    enc.session.roles["judge"].spec = "openai/judge"
    session = await asyncio.wait_for(enc.run(), 30)
    on_disk = load_session(enc.session_path)
    assert on_disk.status == "finished" and on_disk.turns and on_disk.latest_scores() is None
    assert "judge server gone" in on_disk.error and "offline judge bug" in on_disk.error
    assert session.error == on_disk.error


async def test_resume_of_a_session_in_the_note_phase_asks_for_the_note(case, rubric, tmp_path):
    enc = _note_phase_encounter(case, rubric, tmp_path, NoteDoctor())
    # Stop right after the phase change: save by hand as a crash would have left it.
    await enc._set_phase("history", "start")
    await enc._set_phase("note", "requested")
    save_session(enc.session, enc.session_path)
    resumed = Encounter.resume(enc.session_path, EncounterSetup(case=case, rubric=rubric, doctor="offline", sessions_dir=tmp_path))
    resumed.doctor = doctor = NoteDoctor()
    session = await asyncio.wait_for(resumed.run(), 30)
    assert doctor.calls == 1 and session.note is not None and session.status == "finished"


async def test_observer_crash_still_saves_the_turn_it_was_shown(case, rubric, tmp_path):
    """A UI that dies while printing a turn (closed pipe) must not cost that turn on disk."""
    shown = []

    def observer(event):
        if isinstance(event, ev.TurnFinished) and event.turn.role == "patient":
            shown.append(event.turn.text)
            raise BrokenPipeError(32, "Broken pipe")

    enc = Encounter(EncounterSetup(case=case, rubric=rubric, doctor="offline", patient="offline", sessions_dir=tmp_path), observer)
    with pytest.raises(BrokenPipeError):
        await asyncio.wait_for(enc.run(), 30)
    on_disk = load_session(enc.session_path)
    assert on_disk.utterances("patient")[-1].text == shown[-1]
    assert on_disk.status == "in_progress"  # resumable


async def test_takeover_while_the_agent_is_thinking_credits_its_turn_to_the_agent(case, rubric, tmp_path):
    from osce_tui.agents.base import Say

    class SlowDoctor(DoctorAgent):
        async def act(self, doorway, session, on_delta=None) -> DoctorTurn:
            await asyncio.sleep(0.05)
            return DoctorTurn(actions=[Say(text="What brings you in today?")])

    enc = None

    def observer(event):
        if isinstance(event, ev.TurnStarted) and event.role == "doctor" and enc.session.roles["doctor"].spec == "offline":
            enc.takeover("doctor", "human")  # the user grabs the keyboard mid-turn
        elif isinstance(event, ev.AwaitingHuman):
            enc.end()

    enc = Encounter(EncounterSetup(case=case, rubric=rubric, doctor="offline", patient="offline", sessions_dir=tmp_path), observer)
    enc.doctor = SlowDoctor()
    session = await asyncio.wait_for(enc.run(), 30)
    said = session.utterances("doctor")[0]
    assert said.text == "What brings you in today?"
    assert said.spec == "offline", "the agent wrote this turn, not the human who took over"
    assert session.roles["doctor"].spec == "human"


class _Provider:
    def __init__(self):
        self.closed = 0

    async def aclose(self):
        self.closed += 1


async def test_agent_providers_are_closed_when_the_run_ends(case, rubric, tmp_path):
    """Model agents built by the engine own HTTP clients (chat, TUI): none may leak past the run."""
    enc = None

    def observer(event):
        if isinstance(event, ev.TurnFinished) and event.turn.role == "patient" and not enc._retired:
            enc.takeover("patient", "human")  # the first patient's provider is retired here
        elif isinstance(event, ev.AwaitingHuman):
            enc.end()

    enc = Encounter(EncounterSetup(case=case, rubric=rubric, doctor="offline", patient="offline", sessions_dir=tmp_path), observer)
    doctor_p, patient_p = _Provider(), _Provider()
    enc.doctor.provider, enc.patient.provider = doctor_p, patient_p
    await asyncio.wait_for(enc.run(), 30)
    assert (doctor_p.closed, patient_p.closed) == (1, 1)


async def test_a_failed_save_is_remembered_until_a_save_succeeds(case, rubric, tmp_path, monkeypatch):
    from osce_tui.engine import encounter as engine_module

    real = engine_module.save_session
    disk = {"full": True}

    def save(session, path):
        if disk["full"]:
            raise OSError(28, "No space left on device")
        return real(session, path)

    monkeypatch.setattr(engine_module, "save_session", save)
    errors = []
    enc = Encounter(EncounterSetup(case=case, rubric=rubric, doctor="offline", patient="offline", sessions_dir=tmp_path),
                    lambda e: errors.append(e.message) if isinstance(e, ev.ErrorOccurred) else None)
    await asyncio.wait_for(enc.run(), 30)
    assert enc.unsaved and "No space" in enc.unsaved
    assert any("could not save" in m for m in errors)
    assert not enc.session_path.exists()
    disk["full"] = False
    enc._save()
    assert enc.unsaved is None and load_session(enc.session_path).status == "finished"


async def test_a_model_that_cannot_write_a_valid_note_is_scored_without_one(case, rubric, tmp_path):
    from osce_tui.providers.base import StructuredOutputError

    class BadJsonDoctor(NoteDoctor):
        async def act(self, doorway, session, on_delta=None):
            self.calls += 1
            raise StructuredOutputError("no valid PatientNote after a corrective retry", spec=self.spec)

    doctor = BadJsonDoctor()
    enc = _note_phase_encounter(case, rubric, tmp_path, doctor)  # on_error="fail", as in batch
    session = await asyncio.wait_for(enc.run(), 30)
    assert doctor.calls == 2  # NOTE_ATTEMPTS
    assert session.status == "finished" and session.note is None and session.latest_scores() is not None
    assert any(t.text == "The doctor did not produce a patient note." for t in session.turns)


async def test_a_note_that_arrives_after_end_was_pressed_is_kept(case, rubric, tmp_path):
    doctor = NoteDoctor(stall_s=0.1)
    enc = None

    def observer(event):
        if isinstance(event, ev.TurnStarted) and event.role == "doctor":
            enc.end()  # pressed while the model is still writing the note

    enc = _note_phase_encounter(case, rubric, tmp_path, doctor, observer)
    session = await asyncio.wait_for(enc.run(), 30)
    assert doctor.calls == 1 and session.note is not None and session.status == "finished"
