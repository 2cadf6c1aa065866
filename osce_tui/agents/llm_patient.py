"""A standardized patient played by a language model.

The prompt is grounded only on what the patient could know: the persona, the
history facts with their lay answers and the doorway demographics. Exam
findings, test results, the diagnosis and the differential never enter the
prompt, so the model cannot leak them however it is asked.
"""

from __future__ import annotations

from ..domain.case import Case
from ..domain.session import GenerationSettings, Session
from ..prompts import prompt_hashes, render
from ..providers.base import BadResponseError, ChatMessage, ChatProvider, Done, TextDelta
from .base import AgentReply, OnDelta, PatientAgent, emit

LANGUAGES = {
    "en": "English",
    "de": "German",
    "fr": "French",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "ar": "Arabic",
    "ru": "Russian",
    "tr": "Turkish",
    "pl": "Polish",
}

PATIENT_PROMPTS = ["patient", "patient_challenge"]

# Empty content with a 200 is most often a reasoning model that spent its token
# budget thinking (the text never reached ``content``) or a wrong model name on a
# permissive server.
EMPTY_HINT = "check the model name, or raise generation max_tokens if it is a reasoning model"


def language_name(code: str) -> str:
    return LANGUAGES.get(code.split("-")[0].lower(), code)


def _speaker_intro(case: Case) -> str:
    p, d = case.persona, case.doorway
    if p.speaker == "patient":
        return "- You are the patient yourself. Speak in the first person about your own health."
    who = p.speaker_name or f"the patient's {p.speaker}"
    return (
        f"- You are {who}, the {p.speaker} of the patient {d.patient_name}, and you answer for them. "
        f"Speak as the {p.speaker} (\"my child\", \"she\", \"he\"), describing what you have noticed; "
        "you only know what you have seen or been told."
    )


def _age(case: Case) -> str:
    d = case.doorway
    unit = d.age_unit if d.age != 1 else d.age_unit.rstrip("s")
    return f"{d.age} {unit} old"


def _facts(case: Case) -> str:
    lines = []
    for fact in case.history:
        flag = " (may volunteer)" if fact.volunteer else ""
        lines.append(f"- {fact.question}{flag} -> {fact.answer}")
    return "\n".join(lines)


def system_prompt(case: Case) -> str:
    """The patient's whole briefing, built from patient-visible case fields only."""
    p, d = case.persona, case.doorway
    return render(
        "patient",
        speaker_intro=_speaker_intro(case),
        name=d.patient_name,
        age=_age(case),
        sex=d.sex,
        setting=d.setting,
        chief_complaint=d.chief_complaint,
        affect=p.affect,
        notes=p.notes or "none",
        facts=_facts(case),
        default_answer=p.default_answer,
        opening=p.opening_statement,
        vocabulary=", ".join(p.lay_vocabulary) or "ordinary everyday words",
        language=language_name(case.language),
    )


def conversation(case: Case, session: Session, doctor_text: str | None) -> list[ChatMessage]:
    """System briefing + the spoken dialogue (doctor = user, patient = assistant)."""
    messages = [ChatMessage(role="system", content=system_prompt(case))]
    for turn in session.utterances():
        if turn.role == "doctor":
            messages.append(ChatMessage(role="user", content=turn.text))
        elif turn.role == "patient":
            messages.append(ChatMessage(role="assistant", content=turn.text))
    # The engine records the doctor's line before asking us; add it only if it is not there yet.
    if doctor_text and not (messages[-1].role == "user" and messages[-1].content == doctor_text):
        messages.append(ChatMessage(role="user", content=doctor_text))
    return messages


class LlmPatient(PatientAgent):
    def __init__(self, provider: ChatProvider, settings: GenerationSettings):
        self.provider = provider
        self.settings = settings
        self.spec = str(provider.spec)

    @staticmethod
    def prompt_hashes() -> dict[str, str]:
        return prompt_hashes(PATIENT_PROMPTS)

    async def _stream(self, messages: list[ChatMessage], on_delta: OnDelta | None) -> AgentReply:
        done: Done | None = None
        async for event in self.provider.stream_chat(messages, self.settings):
            if isinstance(event, TextDelta):
                await emit(on_delta, event.text)
            elif isinstance(event, Done):
                done = event
        assert done is not None  # providers always end with Done
        text = done.text.strip()
        if not text:
            # Silence would be recorded as the patient's answer and scored; it is a model failure.
            raise BadResponseError(f"the patient model returned an empty reply; {EMPTY_HINT}", spec=self.spec)
        return AgentReply(text=text, usage=done.usage, meta={"model": self.spec})

    async def reply(self, case: Case, session: Session, doctor_text: str, on_delta: OnDelta | None = None) -> AgentReply:
        return await self._stream(conversation(case, session, doctor_text), on_delta)

    async def challenging_question(self, case: Case, session: Session, on_delta: OnDelta | None = None) -> AgentReply | None:
        if not case.challenging_questions:
            return None
        question = case.challenging_questions[0].question
        messages = conversation(case, session, None)
        messages.append(ChatMessage(role="user", content=render("patient_challenge", question=question)))
        reply = await self._stream(messages, on_delta)
        reply.meta["challenging_question"] = question
        return reply
