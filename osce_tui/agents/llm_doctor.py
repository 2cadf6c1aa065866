"""A doctor played by a language model, driven by a line-marker protocol.

The model writes what it says to the patient; control lines at the end of its
message carry everything else (documented to the model in
``prompts/doctor_encounter.md``)::

    EXAM: heart auscultation, lung auscultation
    ORDER: ECG, troponin
    PHASE: closure
    DIAGNOSIS: acute pericarditis
    END: done

Markers were chosen over tool calls so that every OpenAI-compatible server,
however small, can play the doctor. They are parsed into Examine / Order /
ChangePhase / FinalDiagnosis / End actions; the remaining text becomes Say.
Marker lines are held back from the live stream so the user never sees them.
The patient note is requested as a structured PatientNote.

The doctor sees only the doorway and the session transcript (spoken turns and
exam/test results): never hidden case fields.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from ..domain.case import Doorway
from ..domain.session import GenerationSettings, PatientNote, Session, Turn
from ..prompts import prompt_hashes, render
from ..providers.base import BadResponseError, ChatMessage, ChatProvider, Done, TextDelta
from .base import ChangePhase, DoctorAgent, DoctorTurn, End, Examine, FinalDiagnosis, OnDelta, Order, Say, SubmitNote, emit
from .commands import PHASE_ALIASES, _items
from .llm_patient import EMPTY_HINT

Mode = Literal["encounter", "craftmd", "epag"]

MARKERS = {
    "EXAM": "exam",
    "EXAMINE": "exam",
    "ORDER": "order",
    "TESTS": "order",
    "PHASE": "phase",
    "DIAGNOSIS": "diagnosis",
    "FINAL DIAGNOSIS": "diagnosis",
    "END": "end",
}
_MARKER_LINE = re.compile(
    r"^[\s*_#>`-]*(" + "|".join(sorted(map(re.escape, MARKERS), key=len, reverse=True)) + r")[\s*_`]*:[\s*_`]*(.*?)[\s*_`]*$",
    re.IGNORECASE,
)
_DECORATION = " \t*_#>`-"

FORCE_DIAGNOSIS = "[No more questions are possible. Give your final diagnosis now as a line: DIAGNOSIS: <diagnosis>]"

PROMPTS_BY_MODE = {
    "encounter": ["doctor_encounter", "doctor_phase_history", "doctor_phase_exam", "doctor_phase_closure", "doctor_note"],
    "craftmd": ["doctor_craftmd"],
    "epag": ["doctor_epag"],
}


# -- the marker protocol --------------------------------------------------------


def marker_of(line: str) -> tuple[str, str] | None:
    """(kind, argument) when ``line`` is a control line, else None."""
    m = _MARKER_LINE.match(line)
    if not m:
        return None
    return MARKERS[m.group(1).upper()], m.group(2).strip()


def _could_become_marker(partial: str) -> bool:
    """Whether a line still being streamed might turn out to be a control line."""
    head = partial.lstrip(_DECORATION).upper()
    if not head:
        return True
    for keyword in MARKERS:
        if keyword.startswith(head.rstrip()) or head.startswith(keyword):
            return True
    return False


class SpokenStream:
    """Forwards streamed text to ``on_delta`` minus control lines.

    A line is forwarded as soon as it can no longer be a control line, so
    ordinary speech streams with at most a few characters of delay. Line breaks
    are held until more speech follows: a message that ends in control lines
    would otherwise leave a dangling blank line on the screen, which is not
    in what the engine records (the spoken text is stripped).
    """

    def __init__(self, on_delta: OnDelta | None):
        self._on_delta = on_delta
        self._line = ""
        self._streaming = False  # current line already judged spoken and partly forwarded
        self._newlines = 0  # line breaks owed before the next spoken text
        self._started = False  # some speech was forwarded already

    async def _say(self, text: str) -> None:
        if not text:
            return
        if self._newlines and self._started:
            await emit(self._on_delta, "\n" * self._newlines)
        self._newlines = 0
        self._started = True
        await emit(self._on_delta, text)

    async def feed(self, text: str) -> None:
        while text:
            piece, newline, text = text.partition("\n")
            self._line += piece
            if self._streaming:
                await self._say(piece)
            elif not _could_become_marker(self._line):
                self._streaming = True
                await self._say(self._line)
            if newline:
                await self._end_line()

    async def _end_line(self) -> None:
        if not self._streaming and marker_of(self._line) is None:
            await self._say(self._line)
        if self._streaming or marker_of(self._line) is None:
            self._newlines += 1
        self._line, self._streaming = "", False

    async def close(self) -> None:
        if not self._streaming and self._line and marker_of(self._line) is None:
            await self._say(self._line)
        self._line, self._streaming, self._newlines = "", False, 0


def parse_doctor_message(text: str, mode: Mode = "encounter") -> tuple[list[Any], dict[str, Any]]:
    """Split a model message into actions, in the order the engine should apply them."""
    spoken: list[str] = []
    exams: list[str] = []
    tests: list[str] = []
    phase: str | None = None
    diagnosis: str | None = None
    end = False
    ignored: list[str] = []
    for line in text.splitlines():
        found = marker_of(line)
        if found is None:
            spoken.append(line)
            continue
        kind, arg = found
        if kind == "exam" and arg:
            exams += _items(arg)
        elif kind == "order" and arg:
            tests += _items(arg)
        elif kind == "phase" and PHASE_ALIASES.get(arg.lower().strip(" .")):
            phase = PHASE_ALIASES[arg.lower().strip(" .")]
        elif kind == "diagnosis" and arg:
            diagnosis = arg.rstrip(".")
        elif kind == "end":
            end = True
        else:
            ignored.append(line.strip())
    say = "\n".join(spoken).strip()
    meta: dict[str, Any] = {}
    if ignored:
        meta["ignored_markers"] = ignored
    actions: list[Any] = []
    if say and not (mode == "craftmd" and diagnosis):
        actions.append(Say(text=say))
    elif say:
        # CRAFT-MD stops at the diagnosis: a last remark is kept, not spoken.
        meta["spoken"] = say
    if exams and mode == "encounter":
        actions.append(Examine(requests=exams))
    if tests and mode == "encounter":
        actions.append(Order(tests=tests))
    if diagnosis:
        actions.append(FinalDiagnosis(text=diagnosis))
    if phase and mode == "encounter":
        actions.append(ChangePhase(phase=phase))
    if end:
        actions.append(End())
    return actions, meta


# -- what the doctor may see ----------------------------------------------------


def doorway_text(d: Doorway) -> str:
    vitals = d.vitals.parts()
    tasks = "\n".join(f"  - {t}" for t in d.tasks)
    return (
        f"Patient: {d.patient_name}, {d.age} {d.age_unit} old, {d.sex}\n"
        f"Setting: {d.setting}\n"
        f"Chief complaint: {d.chief_complaint}\n"
        f"Vital signs: {', '.join(vitals)}\n"
        f"Your tasks:\n{tasks}"
    )


def _turn_message(turn: Turn) -> ChatMessage | None:
    """One session turn as the doctor model sees it (its own lines are 'assistant')."""
    if turn.role == "doctor":
        if turn.kind == "utterance":
            return ChatMessage(role="assistant", content=turn.text)
        if turn.kind == "exam_request":
            return ChatMessage(role="assistant", content="EXAM: " + turn.text.removeprefix("Examine: "))
        if turn.kind == "test_order":
            return ChatMessage(role="assistant", content="ORDER: " + turn.text.removeprefix("Order: "))
        if turn.kind == "diagnosis":
            return ChatMessage(role="assistant", content="DIAGNOSIS: " + turn.text)
        return None
    if turn.role == "patient" and turn.kind == "utterance":
        return ChatMessage(role="user", content=turn.text)
    if turn.role == "examiner" and turn.kind in ("exam_result", "test_result"):
        what = turn.meta.get("request") or ("exam" if turn.kind == "exam_result" else "test")
        label = "Exam finding" if turn.kind == "exam_result" else "Test result"
        return ChatMessage(role="user", content=f"[{label} — {what}] {turn.text}")
    if turn.kind == "phase" or (turn.role in ("system", "examiner") and turn.kind in ("system", "utterance")):
        return ChatMessage(role="user", content=f"[{turn.text}]")
    return None


def transcript_messages(session: Session) -> list[ChatMessage]:
    out = [m for m in (_turn_message(t) for t in session.turns) if m is not None]
    if not out or out[0].role != "user":
        out.insert(0, ChatMessage(role="user", content="[The patient is in the room. Begin the encounter.]"))
    return out


def transcript_text(session: Session) -> str:
    """Plain transcript for the note writer: who said or found what."""
    lines = []
    for turn in session.turns:
        msg = _turn_message(turn)
        if msg is None:
            continue
        who = {"doctor": "Doctor", "patient": "Patient"}.get(turn.role, "Examiner")
        lines.append(f"{who}: {msg.content}")
    return "\n".join(lines) or "(nothing was said)"


# -- the agent --------------------------------------------------------------------


class LlmDoctor(DoctorAgent):
    def __init__(self, provider: ChatProvider, settings: GenerationSettings, mode: Mode = "encounter"):
        if mode not in PROMPTS_BY_MODE:
            raise ValueError(f"unknown doctor mode {mode!r}: use encounter, craftmd or epag")
        self.provider = provider
        self.settings = settings
        self.mode = mode
        self.spec = str(provider.spec)

    def prompt_hashes(self) -> dict[str, str]:
        return prompt_hashes(PROMPTS_BY_MODE[self.mode])

    def system_prompt(self, doorway: Doorway, session: Session) -> str:
        door = doorway_text(doorway)
        if self.mode == "craftmd":
            fmt = session.run.answer_format
            hint = (
                f"- Answer format: {fmt}. If answer options are given in the conversation, choose one of them."
                if fmt
                else ""
            )
            return render("doctor_craftmd", doorway=door, answer_format=hint)
        if self.mode == "epag":
            return render("doctor_epag", doorway=door)
        phase = session.phase if session.phase in ("history", "exam", "closure") else "history"
        return render("doctor_encounter", doorway=door, phase_rule=render(f"doctor_phase_{phase}"))

    async def act(self, doorway: Doorway, session: Session, on_delta: OnDelta | None = None) -> DoctorTurn:
        late = session.phase in ("closure", "note")
        if self.mode == "encounter" and session.phase == "note":
            return await self._write_note(doorway, session)
        if self.mode == "epag" and late:
            return DoctorTurn(actions=[End()])  # pre-consultation has no closure or note
        messages = [ChatMessage(role="system", content=self.system_prompt(doorway, session))]
        messages += transcript_messages(session)
        if self.mode == "craftmd" and late:
            # The question budget is spent: the protocol needs an answer now.
            messages.append(ChatMessage(role="user", content=FORCE_DIAGNOSIS))
        spoken = SpokenStream(on_delta)
        done: Done | None = None
        async for event in self.provider.stream_chat(messages, self.settings):
            if isinstance(event, TextDelta):
                await spoken.feed(event.text)
            elif isinstance(event, Done):
                done = event
        await spoken.close()
        assert done is not None  # providers always end with Done
        actions, meta = parse_doctor_message(done.text, self.mode)
        if not actions:
            raise BadResponseError(f"the doctor model returned an empty message; {EMPTY_HINT}", spec=self.spec)
        meta["raw"] = done.text
        return DoctorTurn(actions=actions, usage=done.usage, meta=meta)

    async def _write_note(self, doorway: Doorway, session: Session) -> DoctorTurn:
        messages = [
            ChatMessage(role="system", content=render("doctor_note", doorway=doorway_text(doorway))),
            ChatMessage(role="user", content="ENCOUNTER TRANSCRIPT\n" + transcript_text(session)),
        ]
        note, usage = await self.provider.structured(messages, PatientNote, self.settings)
        return DoctorTurn(actions=[SubmitNote(note=note), End()], usage=usage)
