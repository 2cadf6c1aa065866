"""The offline checklist doctor: interviews, examines, closes, writes a note, ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from osce_tui.agents.base import ChangePhase, End, Examine, Order, Say, SubmitNote
from osce_tui.agents.complaint_table import PROFILES, profile_for
from osce_tui.agents.offline_doctor import OfflineDoctor, steps_asked, third_person
from osce_tui.agents.offline_patient import OfflinePatient
from osce_tui.agents.oracle import CaseOracle
from osce_tui.domain.case import Doorway
from osce_tui.domain.session import ExamRecord, Session

from .offline_fixture_case import make_case


async def drive(case, seed=0, max_turns=120):
    """Play doctor vs offline patient + oracle without the engine; return (session, turns)."""
    doctor, patient, oracle = OfflineDoctor(seed=seed), OfflinePatient(), CaseOracle()
    session = Session(case_id=case.id, phase="history")
    turns = []
    for _ in range(max_turns):
        turn = await doctor.act(case.doorway, session)
        turns.append(turn)
        for action in turn.actions:
            if isinstance(action, Say):
                session.add_turn("doctor", action.text, meta=dict(turn.meta))
                if session.phase == "closure" and not any(t.role == "patient" and t.phase == "closure" for t in session.turns):
                    reply = await patient.challenging_question(case, session)
                else:
                    reply = await patient.reply(case, session, action.text)
                session.add_turn("patient", reply.text, meta=reply.meta)
            elif isinstance(action, Examine):
                req = session.add_turn("doctor", "Examine", kind="exam_request")
                for request in action.requests:
                    for ans in oracle.examine(case, request):
                        session.exams.append(ExamRecord(request_turn=req.id, kind="exam", request=request, system=ans.system, result=ans.text, source=ans.source))
            elif isinstance(action, Order):
                req = session.add_turn("doctor", "Order", kind="test_order")
                for test in action.tests:
                    ans = oracle.order(case, test)
                    session.exams.append(ExamRecord(request_turn=req.id, kind="test", request=test, system=ans.system, result=ans.text, source=ans.source))
            elif isinstance(action, ChangePhase):
                session.phase = action.phase
            elif isinstance(action, SubmitNote):
                session.note = action.note
            elif isinstance(action, End):
                return session, turns
    raise AssertionError("the offline doctor never ended")


async def test_full_encounter_produces_a_note_and_ends():
    case = make_case()
    session, turns = await drive(case)
    assert isinstance(turns[-1].actions[0], End)
    note = session.note
    assert note is not None
    assert note.hpi.startswith("45-year-old male presents with abdominal pain.")
    assert "Location: Right here, just under his breastbone" in note.hpi  # the patient's answer, third person
    assert "Epigastric tenderness" in note.pe  # from the exam results in the session
    assert len(note.diagnoses) == 3 and all(d.history_findings for d in note.diagnoses)
    assert 1 <= len(note.workup) <= 8
    # Phases were walked in order with one action per turn.
    phase_changes = [a.phase for t in turns for a in t.actions if isinstance(a, ChangePhase)]
    assert phase_changes == ["exam", "closure", "note"]
    assert all(len(t.actions) == 1 for t in turns)


async def test_history_is_one_non_repeating_question_per_turn_adapted_to_the_complaint():
    case = make_case()
    session, turns = await drive(case)
    questions = [t.text for t in session.utterances("doctor") if t.phase == "history"]
    assert len(questions) == len(set(questions)) >= 25
    first = questions[0]
    assert "Mr. Turner" in first and "Dr. " in first and "What brings you in today?" in first
    steps = [t.meta["step"] for t in session.utterances("doctor") if t.phase == "history"]
    assert steps[:2] == ["intro", "onset"]
    assert {"location", "radiation", "quality", "severity", "timing", "aggravating", "relieving", "pmh", "medications",
            "allergies", "surgery", "family", "tobacco", "alcohol", "drugs", "occupation", "concerns"} <= set(steps)
    profile = profile_for("Abdominal pain")
    assert any(q for _sid, q in profile.associated if q in questions)  # complaint-specific associated symptoms
    # The patient's answers came from the case: most questions matched a fact.
    matched = [t for t in session.utterances("patient") if t.phase == "history" and t.meta.get("fact_ids")]
    assert len(matched) >= 12


async def test_exam_phase_examines_then_orders_then_closes():
    case = make_case()
    session, turns = await drive(case)
    kinds = [type(a).__name__ for t in turns for a in t.actions]
    i = kinds.index("Examine")
    assert kinds[i : i + 3] == ["Examine", "Order", "ChangePhase"]
    assert any(e.kind == "exam" and e.source == "case" for e in session.exams)
    assert any(e.kind == "test" for e in session.exams)


async def test_closure_summarises_and_answers_the_challenging_question():
    case = make_case()
    session, _ = await drive(case)
    closure = [t for t in session.turns if t.phase == "closure" and t.kind == "utterance"]
    assert closure[0].role == "doctor" and "summarise" in closure[0].text and "tests" in closure[0].text
    assert closure[1].role == "patient" and closure[1].text == "Is this cancer?"
    assert closure[2].role == "doctor" and "checking for" in closure[2].text  # answered, plainly


async def test_deterministic_given_seed_and_seed_changes_wording_only():
    case = make_case()
    a, _ = await drive(case, seed=3)
    b, _ = await drive(case, seed=3)
    assert [t.text for t in a.turns] == [t.text for t in b.turns]
    c, _ = await drive(case, seed=4)
    steps = lambda s: [t.meta.get("step") for t in s.turns if t.role == "doctor" and t.kind == "utterance"]  # noqa: E731
    assert steps(a) == steps(c)


async def test_doctor_only_uses_doorway_and_session():
    """The doctor's whole interface is the doorway: a bare doorway works."""
    doorway = Doorway.model_validate(make_case().doorway.model_dump())
    turn = await OfflineDoctor().act(doorway, Session(case_id="anything", phase="history"))
    assert isinstance(turn.actions[0], Say)


async def test_resumes_from_the_session_and_skips_what_was_asked():
    case = make_case()
    session = Session(case_id=case.id, phase="history")
    doctor = OfflineDoctor()
    first = await doctor.act(case.doorway, session)
    session.add_turn("doctor", first.actions[0].text)  # no meta: recognised by wording
    second = await OfflineDoctor().act(case.doorway, session)  # a fresh agent (e.g. after a resume)
    assert second.actions[0].text != first.actions[0].text
    session.add_turn("doctor", second.actions[0].text)
    assert {"intro", "onset"} <= steps_asked(session)


async def test_child_case_talks_to_the_parent_and_skips_adult_social_history():
    case = make_case("parent")
    session, _ = await drive(case)
    questions = [t.text for t in session.utterances("doctor") if t.phase == "history"]
    assert "You must be here with Sam" in questions[0]
    text = " ".join(questions).lower()
    assert "alcohol" not in text and "sexually" not in text
    assert "vaccinations" in text and "smoke at home" in text
    assert session.note is not None


async def test_note_phase_submits_once_then_ends():
    case = make_case()
    doctor = OfflineDoctor()
    session = Session(case_id=case.id, phase="note")
    first = await doctor.act(case.doorway, session)
    assert isinstance(first.actions[0], SubmitNote)
    second = await doctor.act(case.doorway, session)  # engine did not store it: still only once
    assert isinstance(second.actions[0], End)


def test_streams_say_text():
    import asyncio

    pieces: list[str] = []
    case = make_case()
    turn = asyncio.run(OfflineDoctor().act(case.doorway, Session(case_id=case.id, phase="history"), pieces.append))
    assert "".join(pieces) == turn.actions[0].text


@pytest.mark.parametrize(
    ("complaint", "sex", "key"),
    [
        ("Chest pain", "male", "chest_pain"),
        ("Abdominal pain", "male", "abdominal_pain"),
        ("Lower abdominal pain", "female", "pelvic_pain"),
        ("Lower abdominal pain", "male", "abdominal_pain"),
        ("Headache", "female", "headache"),
        ("Cough and fever", "female", "cough_fever"),
        ("Racing heart and weight loss", "female", "palpitations"),
        ("Feeling low", "female", "low_mood"),
        ("A mole on the back that has changed", "male", "skin_lesion"),
        ("Low back pain", "male", "back_pain"),
        ("Something unusual", "male", "generic"),
    ],
)
def test_complaint_table(complaint, sex, key):
    assert profile_for(complaint, sex).key == key


def test_every_profile_is_usable():
    for p in PROFILES:
        assert p.associated and p.exams and p.tests and len(p.differential) >= 3


def test_third_person():
    doorway = make_case().doorway
    assert third_person("I feel sick and I haven't eaten. My dad had it.", doorway) == (
        "He feels sick and he hasn't eaten. His dad had it."
    )


@pytest.mark.skipif(not (Path(__file__).resolve().parents[1] / "rubrics").is_dir(), reason="no bundled rubrics")
async def test_through_the_engine_offline_everything(tmp_path):
    from osce_tui.config import load_config
    from osce_tui.engine import Encounter, EncounterSetup
    from osce_tui.library import Library

    library = Library()
    case = make_case()
    setup = EncounterSetup(
        case=case, rubric=library.rubric("osce-practice"), doctor="offline", patient="offline", judge="offline",
        config=load_config({}), sessions_dir=tmp_path, mode="encounter", seed=0, trial=0,
    )
    session = await Encounter(setup).run()
    assert session.status == "finished" and session.phase == "scored"
    assert session.note is not None and len(session.note.diagnoses) == 3
    assert any(t.role == "patient" and t.meta.get("fact_ids") for t in session.turns)
    assert any(e.kind == "exam" for e in session.exams)
