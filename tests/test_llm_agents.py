"""LLM patient and LLM doctor: grounding, streaming, the marker protocol, the note."""

from __future__ import annotations

import json

import pytest

from osce_tui.agents.base import ChangePhase, End, Examine, FinalDiagnosis, Order, Say, SubmitNote
from osce_tui.agents.llm_doctor import LlmDoctor, SpokenStream, parse_doctor_message
from osce_tui.agents.llm_patient import LlmPatient, system_prompt
from osce_tui.domain.session import GenerationSettings, Session
from osce_tui.library import Library
from osce_tui.providers.base import BadResponseError
from osce_tui.providers.scripted import ScriptedProvider

S = GenerationSettings(temperature=0.2)


@pytest.fixture(scope="module")
def case():
    return Library().case("chest-pain-46m")


def encounter(case) -> Session:
    s = Session(case_id=case.id, phase="history")
    s.add_turn("doctor", "Hello, I'm Dr Lee. What brings you in today?")
    s.add_turn("patient", "I've got this heavy pressure in my chest.")
    return s


# -- patient ----------------------------------------------------------------------------


def test_patient_prompt_holds_only_patient_visible_facts(case):
    prompt = system_prompt(case)
    assert case.doorway.patient_name in prompt and case.persona.affect in prompt
    for fact in case.history:
        assert fact.answer in prompt
    hidden = [case.diagnosis.name, "NSTEMI", case.diagnosis.vignette]
    hidden += [e.finding for e in case.exam] + [t.result for t in case.tests]
    hidden += [d.diagnosis for d in case.differential] + case.additional_diagnoses
    hidden += [q.sample_answer for q in case.challenging_questions]
    if case.closure:
        hidden.append(case.closure.impressions)
    for text in hidden:
        assert text not in prompt, f"patient prompt leaks {text[:40]!r}"
    assert "Never name a disease" in prompt and "English" in prompt


def test_patient_prompt_parent_voice_and_language(case):
    persona = case.persona.model_copy(update={"speaker": "parent", "speaker_name": "Maria"})
    child = case.model_copy(update={"persona": persona, "language": "es"})
    prompt = system_prompt(child)
    assert "You are Maria, the parent of the patient" in prompt
    assert "Speak in this language: Spanish" in prompt


async def test_patient_streams_and_answers_from_the_dialogue(case):
    provider = ScriptedProvider(["About two hours ago, carrying boxes."])
    patient = LlmPatient(provider, S)
    session = encounter(case)
    session.add_turn("doctor", "When did it start?")
    deltas: list[str] = []
    reply = await patient.reply(case, session, "When did it start?", deltas.append)
    assert reply.text == "About two hours ago, carrying boxes." and "".join(deltas) == reply.text
    assert reply.usage.calls == 1
    sent = provider.calls[0]
    assert sent[0].role == "system"
    assert [m.role for m in sent[1:]] == ["user", "assistant", "user"]
    assert sent[-1].content == "When did it start?"  # not duplicated
    assert provider.settings_seen == [S]


async def test_patient_challenging_question(case):
    provider = ScriptedProvider(["Doctor, is this a heart attack like my dad had?"])
    reply = await LlmPatient(provider, S).challenging_question(case, encounter(case))
    assert reply is not None and "heart attack" in reply.text
    assert case.challenging_questions[0].question in provider.calls[0][-1].content
    no_q = case.model_copy(update={"challenging_questions": []})
    assert await LlmPatient(ScriptedProvider([]), S).challenging_question(no_q, encounter(case)) is None


# -- doctor: marker protocol -------------------------------------------------------------


def test_parse_markers_into_actions():
    actions, meta = parse_doctor_message(
        "Thank you, I'd like to examine you now.\nPHASE: exam\n**EXAM:** heart auscultation, lungs\nORDER: ECG; troponin\nPHASE: lunch"
    )
    assert actions == [
        Say(text="Thank you, I'd like to examine you now."),
        Examine(requests=["heart auscultation", "lungs"]),
        Order(tests=["ECG", "troponin"]),
        ChangePhase(phase="exam"),
    ]
    assert meta["ignored_markers"] == ["PHASE: lunch"]  # unknown phase is reported, not guessed
    actions, _ = parse_doctor_message("We're done here.\nEND: done")
    assert actions == [Say(text="We're done here."), End()]
    # words that merely start like a marker stay speech
    actions, _ = parse_doctor_message("Endoscopy may be needed later.\nExamining you now.")
    assert actions == [Say(text="Endoscopy may be needed later.\nExamining you now.")]


def test_craftmd_diagnosis_stops_without_speech():
    actions, meta = parse_doctor_message("Thanks for answering.\nDIAGNOSIS: Acute pericarditis.", "craftmd")
    assert actions == [FinalDiagnosis(text="Acute pericarditis")] and meta["spoken"] == "Thanks for answering."
    # CRAFT-MD has no exam: exam markers are not turned into exam actions
    actions, _ = parse_doctor_message("Any fever?\nEXAM: heart", "craftmd")
    assert actions == [Say(text="Any fever?")]


async def test_stream_filter_hides_markers_across_chunk_boundaries():
    out: list[str] = []
    stream = SpokenStream(out.append)
    text = "Let me listen to your heart.\nEX" + "AM: heart\nORD" + "ER: ECG"
    for i in range(0, len(text), 3):
        await stream.feed(text[i : i + 3])
    await stream.close()
    assert "".join(out) == "Let me listen to your heart."  # no line break left dangling
    out.clear()
    stream = SpokenStream(out.append)
    await stream.feed("Endo")
    assert out == []  # could still become END:
    await stream.feed("scopy later")
    await stream.close()
    assert "".join(out) == "Endoscopy later"


async def test_stream_filter_keeps_paragraph_breaks_between_spoken_lines():
    out: list[str] = []
    stream = SpokenStream(out.append)
    text = "\nFirst part.\n\nSecond part,\nPHASE: exam\nstill spoken.\nEXAM: heart\n"
    for i in range(0, len(text), 4):
        await stream.feed(text[i : i + 4])
    await stream.close()
    # Leading breaks dropped, inner ones kept (a marker line between two spoken lines
    # leaves one break), nothing after the last spoken line.
    assert "".join(out) == "First part.\n\nSecond part,\nstill spoken."


# -- doctor: what it sees and does ---------------------------------------------------------


async def test_doctor_sees_only_doorway_and_transcript(case):
    provider = ScriptedProvider(["Does the pain spread anywhere?"])
    doctor = LlmDoctor(provider, S)
    session = encounter(case)
    session.turns[-1].meta["fact_id"] = "secret_fact"  # engine metadata never reaches the model
    deltas: list[str] = []
    turn = await doctor.act(case.doorway, session, deltas.append)
    assert turn.actions == [Say(text="Does the pain spread anywhere?")] and "".join(deltas) == "Does the pain spread anywhere?"
    everything = "\n".join(m.content for m in provider.calls[0])
    assert case.doorway.chief_complaint in everything and str(case.doorway.vitals.heart_rate) in everything
    assert "CURRENT PART: HISTORY" in everything
    for hidden in [case.diagnosis.name, "NSTEMI", "secret_fact", case.exam[2].finding, case.tests[0].result, case.history[3].answer]:
        assert hidden not in everything
    assert [m.role for m in provider.calls[0]] == ["system", "user", "assistant", "user"]


async def test_doctor_exam_phase_sees_results_and_orders(case):
    provider = ScriptedProvider(["I'll check your heart.\nEXAM: cardiac auscultation\nORDER: ECG"])
    session = encounter(case)
    session.phase = "exam"
    session.add_turn("doctor", "Examine: chest palpation", kind="exam_request")
    session.add_turn("examiner", "No chest wall tenderness.", kind="exam_result", meta={"request": "chest palpation"})
    turn = await LlmDoctor(provider, S).act(case.doorway, session, None)
    assert turn.actions == [Say(text="I'll check your heart."), Examine(requests=["cardiac auscultation"]), Order(tests=["ECG"])]
    msgs = provider.calls[0]
    assert "CURRENT PART: PHYSICAL EXAM" in msgs[0].content
    assert msgs[-2].content == "EXAM: chest palpation" and msgs[-2].role == "assistant"
    assert msgs[-1].content == "[Exam finding — chest palpation] No chest wall tenderness."


async def test_doctor_writes_a_structured_note_in_the_note_phase(case):
    note = {
        "hpi": "46M with 2 h of central chest pressure on exertion.",
        "pe": "Diaphoretic; S4.",
        "diagnoses": [{"name": "NSTEMI", "history_findings": ["exertional pressure"], "exam_findings": ["S4"]}],
        "workup": ["ECG", "troponin"],
    }
    provider = ScriptedProvider([json.dumps(note)])
    session = encounter(case)
    session.phase = "note"
    turn = await LlmDoctor(provider, S).act(case.doorway, session, None)
    assert isinstance(turn.actions[0], SubmitNote) and isinstance(turn.actions[1], End)
    assert turn.actions[0].note.diagnoses[0].name == "NSTEMI" and turn.usage.calls == 1
    assert "ENCOUNTER TRANSCRIPT" in provider.calls[0][1].content


async def test_doctor_modes(case):
    session = encounter(case)
    craft = LlmDoctor(ScriptedProvider(["DIAGNOSIS: unstable angina"]), S, mode="craftmd")
    turn = await craft.act(case.doorway, session, None)
    assert turn.actions == [FinalDiagnosis(text="unstable angina")]
    assert "DIAGNOSIS:" in craft.provider.calls[0][0].content
    epag = LlmDoctor(ScriptedProvider(["Where is the pain?\nA) centre\nB) left\nC) right\nD) Other / not sure"]), S, mode="epag")
    turn = await epag.act(case.doorway, session, None)
    assert isinstance(turn.actions[0], Say) and "A) centre" in turn.actions[0].text
    assert set(craft.prompt_hashes()) == {"doctor_craftmd"}
    # out of questions: CRAFT-MD is told to answer, EPAG simply stops
    session.phase = "note"
    late = LlmDoctor(ScriptedProvider(["DIAGNOSIS: NSTEMI"]), S, mode="craftmd")
    assert (await late.act(case.doorway, session, None)).actions == [FinalDiagnosis(text="NSTEMI")]
    assert "final diagnosis now" in late.provider.calls[0][-1].content
    assert (await LlmDoctor(ScriptedProvider([]), S, mode="epag").act(case.doorway, session, None)).actions == [End()]
    with pytest.raises(ValueError, match="unknown doctor mode"):
        LlmDoctor(ScriptedProvider([]), S, mode="chat")


async def test_empty_doctor_message_is_an_error(case):
    with pytest.raises(BadResponseError, match="empty message"):
        await LlmDoctor(ScriptedProvider(["   "]), S).act(case.doorway, encounter(case), None)


async def test_empty_patient_reply_is_an_error_not_silence(case):
    session = encounter(case)
    session.add_turn("doctor", "When did it start?")
    with pytest.raises(BadResponseError, match="patient model returned an empty reply; check the model name"):
        await LlmPatient(ScriptedProvider(["  \n"]), S).reply(case, session, "When did it start?", None)
