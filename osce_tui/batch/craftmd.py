"""CRAFT-MD arms that are not a live conversation: vignette, single-turn,
summarized and exam-only. (multi-turn is an engine encounter in craftmd mode.)

Each arm builds a session holding what the doctor is given, then asks the
doctor for its diagnosis once:

- vignette: the case's third-person vignette (``diagnosis.vignette``);
- single-turn: everything the patient said in the multi-turn conversation of
  the same case/doctor/format/trial, collapsed into one patient message — the
  same information, without the back-and-forth;
- summarized: that conversation summarised into a vignette (by the doctor's
  own model; offline, an extractive question → answer digest), then asked;
- exam-only: the case's physical-exam findings only.

The doctor always sees the doorway too (it is what every doctor agent
starts from). Multiple-choice formats add the options, lettered in the case's
order so the CRAFT-MD judge can map a bare letter back ("4-choice": the first
four choices, "many-choice": all of them). A model doctor answers through its
craftmd prompt ("DIAGNOSIS: ..."); the offline doctor answers with the top
diagnosis of the note it writes from the same turns, mapped onto the closest
option in multiple-choice formats.
"""

from __future__ import annotations

import asyncio
import hashlib
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..agents.base import FinalDiagnosis, Say, SubmitNote
from ..domain.case import Case
from ..domain.session import ExamRecord, RoleAssignment, RunMetadata, Session, Usage
from ..providers.base import ChatMessage
from ..store import save_session

if TYPE_CHECKING:
    from .runner import RunContext
    from .selection import Job

ASK_ATTEMPTS = 2


def choices_for(case: Case, answer_format: str | None) -> list[str]:
    if answer_format == "4-choice":
        return list(case.diagnosis.choices[:4])
    if answer_format == "many-choice":
        return list(case.diagnosis.choices)
    return []


def options_text(choices: list[str]) -> str:
    lines = [f"{chr(ord('A') + i)}. {c}" for i, c in enumerate(choices)]
    return "Answer options — your final diagnosis must be one of these:\n" + "\n".join(lines)


def _summarizer_prompt() -> str:
    return (resources.files(__package__) / "summarize_prompt.md").read_text(encoding="utf-8")


def summarizer_prompt_hash() -> str:
    return hashlib.sha256(_summarizer_prompt().encode("utf-8")).hexdigest()[:12]


def collapse_patient_turns(conversation: Session) -> str:
    """single-turn: the patient's words from the conversation, in order, as one message."""
    parts = [t.text.strip() for t in conversation.utterances("patient") if not t.meta.get("challenging_question")]
    return " ".join(p for p in parts if p)


def extractive_summary(case: Case, conversation: Session) -> str:
    """Offline summary: the doorway line and each question with the patient's answer.

    Without a model we cannot rewrite speech into clinical prose; pairing
    each question with its answer keeps the content and drops the chat.
    """
    d = case.doorway
    lines = [f"{d.age}-{d.age_unit[:-1]}-old {d.sex} patient presenting with: {d.chief_complaint}."]
    seen: set[str] = set()
    turns = conversation.turns
    for i, t in enumerate(turns):
        if t.role != "patient" or t.kind != "utterance" or t.meta.get("challenging_question"):
            continue
        answer = t.text.strip()
        if not answer or answer.lower() in seen:
            continue
        seen.add(answer.lower())
        question = next((p.text.strip() for p in reversed(turns[:i]) if p.role == "doctor" and p.kind == "utterance"), "")
        lines.append(f"- Asked: {question} — Reported: {answer}" if question else f"- Reported: {answer}")
    return "\n".join(lines)


def _transcript(conversation: Session) -> str:
    lines = []
    for t in conversation.turns:
        if t.kind == "utterance" and t.role in ("doctor", "patient"):
            lines.append(f"{t.role.capitalize()}: {t.text.strip()}")
    return "\n".join(lines)


async def summarize(case: Case, conversation: Session, doctor: str, ctx: "RunContext") -> tuple[str, Usage]:
    if doctor == "offline":
        return extractive_summary(case, conversation), Usage()
    from ..providers.factory import make_provider

    provider = make_provider(doctor, ctx.config, http_client=ctx.http_client, limiter=ctx.limiter)
    try:
        done = await provider.complete(
            [
                ChatMessage(role="system", content=_summarizer_prompt()),
                ChatMessage(role="user", content="CONVERSATION\n" + _transcript(conversation)),
            ],
            ctx.config.generation.doctor,
        )
    finally:
        await provider.aclose()
    return done.text.strip(), done.usage


def _new_session(job: "Job", ctx: "RunContext", extra: dict[str, Any]) -> Session:
    key = job.key
    gen = ctx.config.generation
    from .runner import _prompt_hashes

    session = Session(
        case_id=job.case.id,
        case_hash=job.case.content_hash(),
        rubric_id=ctx.plan.rubric.id,
        roles={
            "doctor": RoleAssignment(spec=key.doctor, settings=gen.doctor),
            "patient": RoleAssignment(spec=key.patient, settings=gen.patient),
            "judge": RoleAssignment(spec=key.judge, settings=gen.judge),
        },
        run=RunMetadata(
            package_version=__version__,
            seed=job.seed,
            mode="craftmd",
            arm=key.arm,
            answer_format=key.answer_format,
            trial=key.trial,
            batch_id=ctx.batch_id,
            prompts=_prompt_hashes(),
            extra=extra,
        ),
    )
    session.phase = "history"
    return session


async def _add_arm_material(job: "Job", ctx: "RunContext", session: Session, conversation: Session | None) -> None:
    case, arm = job.case, job.key.arm
    if arm == "vignette":
        session.add_turn("system", "Case vignette: " + case.diagnosis.vignette, kind="system", spec="batch",
                         meta={"material": arm})
    elif arm == "single-turn":
        assert conversation is not None
        text = collapse_patient_turns(conversation)
        session.add_turn("patient", text or "(the patient said nothing)", spec=conversation.roles["patient"].spec,
                         meta={"collapsed_from": conversation.id})
    elif arm == "summarized":
        assert conversation is not None
        summary, usage = await summarize(case, conversation, job.key.doctor, ctx)
        session.add_turn("system", "Summary of the conversation with the patient: " + summary, kind="system",
                         spec=job.key.doctor, usage=usage, meta={"summarized_from": conversation.id, "material": arm})
        if usage.calls or usage.total_tokens:
            session.add_usage("summarizer", usage)
    elif arm == "exam-only":
        if not case.exam:
            raise ValueError(f"case {case.id} has no physical-exam findings for the exam-only arm")
        header = session.add_turn("system", "Physical examination findings:", kind="system", spec="batch")
        for f in case.exam:
            t = session.add_turn("examiner", f.finding, kind="exam_result", spec="oracle",
                                 meta={"request": f.component, "system": f.system, "source": "case", "material": arm})
            # Recorded as exam results too, as an encounter's exams would be (judges and agents read these).
            session.exams.append(ExamRecord(request_turn=header.id, result_turn=t.id, kind="exam", request=f.component,
                                            system=f.system, result=f.finding, source="case"))
    else:
        raise ValueError(f"not a one-shot CRAFT-MD arm: {arm!r}")


def pick_choice(names: list[str], choices: list[str]) -> str | None:
    """The option the doctor's ranked differential points to.

    The top-ranked name decides when it matches an option or resembles one
    (shared words, close spelling); lower-ranked names are only consulted
    when it resembles none. Only the options are used, never the case key.
    """
    from rapidfuzz import fuzz, process

    from ..judges.diagnosis_match import DiagnosisMatcher

    if not names or not choices:
        return None
    for name in names:
        for choice in choices:
            if DiagnosisMatcher([choice]).match(name).matched:
                return choice
        best = process.extractOne(name, choices, scorer=fuzz.token_set_ratio)
        if best and best[1] >= 50:
            return best[0]
    best = process.extractOne(names[0], choices, scorer=fuzz.WRatio)
    return best[0] if best else None


def offline_view(session: Session) -> Session:
    """What the offline doctor reads: it reasons over what the patient said and
    the exam results, so written material (vignette, summary) is shown to it as
    the patient's account. The saved session keeps the true framing."""
    view = session.model_copy(deep=True)
    for t in view.turns:
        if t.role == "system" and t.meta.get("material"):
            t.role, t.kind = "patient", "utterance"
    return view


async def ask_diagnosis(doctor_agent: Any, job: "Job", session: Session, choices: list[str]) -> str:
    """Ask the doctor for its answer; record the turns and usage on the session."""
    case, spec = job.case, job.key.doctor
    if spec == "offline":
        # The offline doctor states its differential in the note it writes from the turns so far.
        session.phase = "note"
        turn = await doctor_agent.act(case.doorway, offline_view(session), None)
        notes = [a.note for a in turn.actions if isinstance(a, SubmitNote)]
        if notes:
            session.note = notes[0]
        names = [d.name for n in notes for d in n.diagnoses]
        names += [a.text for a in turn.actions if isinstance(a, FinalDiagnosis)]
        if not names:
            return ""
        return (pick_choice(names, choices) if choices else None) or names[0]
    last_said = ""
    for attempt in range(ASK_ATTEMPTS):
        turn = await doctor_agent.act(case.doorway, session, None)
        if turn.usage.calls or turn.usage.total_tokens:
            session.add_usage("doctor", turn.usage)
        dx = next((a.text for a in turn.actions if isinstance(a, FinalDiagnosis)), None)
        if dx:
            return dx
        said = " ".join(a.text for a in turn.actions if isinstance(a, Say)).strip()
        if said:
            last_said = said
            session.add_turn("doctor", said, spec=spec, usage=turn.usage)
        if attempt + 1 < ASK_ATTEMPTS:
            session.add_turn("system", "No more questions can be answered. Give your final diagnosis now as "
                             "'DIAGNOSIS: <diagnosis>'.", kind="system", spec="batch")
    return last_said  # the judge extracts what it can from the last thing said


async def run_oneshot_arm(
    job: "Job", ctx: "RunContext", path: Path, conversation: Session | None, holder: dict[str, Session]
) -> Session:
    from ..agents.factory import make_doctor
    from ..judges.runner import score_session

    key = job.key
    choices = choices_for(job.case, key.answer_format)
    extra: dict[str, Any] = {}
    if choices:
        extra["choices"] = choices
    if conversation is not None:
        extra["source_session"] = conversation.id
    session = _new_session(job, ctx, extra)
    holder["session"] = session
    await _add_arm_material(job, ctx, session, conversation)
    ask = "Based on this information, what is the most likely diagnosis?"
    if choices:
        ask = options_text(choices) + "\n" + ask
    session.add_turn("system", ask, kind="system", spec="batch")
    save_session(session, path)
    doctor = make_doctor(key.doctor, config=ctx.config, queue=asyncio.Queue(), mode="craftmd", seed=job.seed,
                         http_client=ctx.http_client, limiter=ctx.limiter)
    answer = await ask_diagnosis(doctor, job, session, choices)
    session.final_diagnosis = answer
    session.add_turn("doctor", answer or "(no diagnosis given)", kind="diagnosis", spec=key.doctor)
    session.phase = "scored"
    provider = None
    if key.judge not in ("offline", "human"):
        from ..providers.factory import make_provider

        provider = make_provider(key.judge, ctx.config, http_client=ctx.http_client, limiter=ctx.limiter)
    scores = await score_session(job.case, session, ctx.plan.rubric, key.judge, config=ctx.config, provider=provider)
    session.put_scores(scores)
    session.status = "finished"
    save_session(session, path)
    return session
