"""End to end over real HTTP: an LLM doctor on a local OpenAI-compatible SSE server.

The server (tests/sse_server.py) runs in a thread on 127.0.0.1 at a free port;
the doctor is ``openai-api/local/doc-model`` (LOCAL_BASE_URL), the patient the
offline engine, the judge offline. The scripted "model" reads the phase from
the system prompt the way a real model would and answers with the marker
protocol, so the whole stack is exercised: SDK streaming, marker parsing,
engine phases, oracle, structured note via json_schema, usage, autosave.
"""

from __future__ import annotations

import json

import pytest

from osce_tui.config import Config
from osce_tui.engine import Encounter, EncounterSetup
from osce_tui.engine import events as ev
from osce_tui.library import Library
from osce_tui.store import load_session

from .sse_server import ChatServer

HISTORY_QUESTIONS = [
    "Hello, I'm Dr Quinn. What brings you in today?",
    "When did the pain start, and what were you doing?",
    "Does the pain spread anywhere, like your arm or jaw?",
    "Do you smoke?",
]

NOTE = {
    "hpi": "46-year-old man with 2 hours of exertional central chest pressure, diaphoresis.",
    "pe": "Diaphoretic, S4 at the apex, lungs clear.",
    "diagnoses": [
        {"name": "Acute coronary syndrome (NSTEMI)", "history_findings": ["exertional chest pressure"], "exam_findings": ["S4 gallop"]},
        {"name": "Aortic dissection", "history_findings": ["sudden chest pain"], "exam_findings": []},
    ],
    "workup": ["ECG", "serial troponin", "chest x-ray"],
}


def doctor_model(body: dict) -> str:
    """Answers like a cooperative model following the doctor prompt."""
    messages = body["messages"]
    system = messages[0]["content"]
    asked = sum(1 for m in messages if m["role"] == "assistant")
    if "response_format" in body or "Write the patient note" in system:
        return json.dumps(NOTE)
    if "CURRENT PART: HISTORY" in system:
        if asked < len(HISTORY_QUESTIONS):
            return HISTORY_QUESTIONS[asked]
        return "Thank you, that helps. I'd like to examine you now.\nPHASE: exam\nEXAM: heart auscultation, lung auscultation"
    if "CURRENT PART: PHYSICAL EXAM" in system:
        return "I'd also like some tests.\nORDER: ECG, troponin\nPHASE: closure"
    if "CURRENT PART: CLOSURE" in system:
        if "[Test result" in messages[-1]["content"] or messages[-1]["role"] != "user" or not any(
            "heart attack" in m["content"].lower() for m in messages if m["role"] == "user"
        ):
            return (
                "Mr Ortiz, your heart may not be getting enough blood. We'll give you medicine to protect it, "
                "repeat your blood tests and ask the heart team to see you."
            )
        return "That's a very fair worry. It may be a small heart attack, and we are treating it right now.\nPHASE: note"
    raise AssertionError("unexpected prompt: " + system[:80])


@pytest.fixture
def server():
    with ChatServer(doctor_model) as srv:
        yield srv


async def test_llm_doctor_encounter_over_local_sse_server(server, monkeypatch, tmp_path):
    monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
    monkeypatch.delenv("LOCAL_API_KEY", raising=False)
    lib = Library()
    case = lib.case("chest-pain-46m")
    setup = EncounterSetup(
        case=case,
        rubric=lib.rubric("osce-practice"),
        doctor="openai-api/local/doc-model",
        patient="offline",
        judge="offline",
        config=Config(provider={"max_retries": 0, "timeout": 10}, prices={"openai-api/local/doc-model": {"input": 1, "output": 2}}),
        sessions_dir=tmp_path,
        seed=0,
    )
    seen: list = []
    enc = Encounter(setup, observer=seen.append)
    session = await enc.run()

    assert session.status == "finished" and session.phase == "scored"
    doctor_lines = [t.text for t in session.utterances("doctor")]
    assert doctor_lines[: len(HISTORY_QUESTIONS)] == HISTORY_QUESTIONS
    assert all("PHASE:" not in line and "EXAM:" not in line for line in doctor_lines)
    # the offline patient answered each question, and asked its challenging question at closure
    assert len(session.utterances("patient")) >= len(HISTORY_QUESTIONS)
    assert any(t.meta.get("challenging_question") for t in session.turns)
    # exams and tests went to the oracle
    kinds = {r.kind for r in session.exams}
    assert kinds == {"exam", "test"} and any(r.system == "cardiovascular" for r in session.exams)
    # structured note through json_schema
    assert session.note is not None and session.note.diagnoses[0].name.startswith("Acute coronary")
    assert any("response_format" in r for r in server.requests)
    # streaming with usage on every chat call
    streamed = [r for r in server.requests if r.get("stream")]
    assert streamed and all(r["stream_options"] == {"include_usage": True} for r in streamed)
    assert all(r["model"] == "doc-model" for r in server.requests)
    usage = session.usage["doctor"]
    assert usage.calls == len(server.requests) and usage.output_tokens > 0 and usage.cost_usd > 0
    # no key configured: a placeholder, never a real secret
    assert set(server.auth_headers) == {"Bearer not-needed"}
    # marker lines never reached the live stream
    doctor_deltas = "".join(e.text for e in seen if isinstance(e, ev.TextDelta) and e.role == "doctor")
    assert "HISTORY" not in doctor_deltas and "PHASE:" not in doctor_deltas and "What brings you in" in doctor_deltas
    # saved, with the prompt hashes recorded
    saved = load_session(enc.session_path)
    assert saved.status == "finished" and "doctor_encounter" in saved.run.prompts
    assert saved.scores and saved.scores[-1].final
