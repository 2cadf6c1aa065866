"""The encounter state machine the TUI, line mode and batch all drive.

doorway -> history -> exam -> closure -> note -> scored. The doctor side
decides each turn (a human through the input queue, the offline engine or a
model); spoken turns get a patient reply, exam requests and test orders go to
the oracle, the patient asks the case's challenging question at closure, and
the note is captured as a structured object. After every turn the session is
saved atomically and the cheap offline judges re-score it for live panels;
at the end the chosen judge scores it for real.

The engine knows nothing about screens: it reports through ``observer``.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..agents.base import (
    AgentReply,
    ChangePhase,
    DoctorTurn,
    End,
    Examine,
    FinalDiagnosis,
    Order,
    Say,
    SubmitNote,
)
from ..agents.factory import make_doctor, make_oracle, make_patient
from ..agents.human import HumanInterrupted, Interrupt
from ..config import Config
from ..domain.case import Case
from ..domain.rubric import Rubric
from ..domain.session import (
    PHASE_ORDER,
    ExamRecord,
    PatientNote,
    Phase,
    Role,
    RoleAssignment,
    RoleChange,
    RunMetadata,
    Session,
    Turn,
    utcnow,
)
from ..providers.base import ProviderError, StructuredOutputError
from ..store import load_session, save_session, session_filename
from . import events as ev

log = logging.getLogger(__name__)

# Safety net for agents that never stop: no encounter needs more doctor turns.
MAX_DOCTOR_TURNS = 200
# A model doctor that keeps failing to produce a note gets this many tries.
NOTE_ATTEMPTS = 2


class EncounterFailed(Exception):
    """The encounter could not go on (provider failure with on_error='fail')."""


@dataclass
class EncounterSetup:
    """Everything needed to start (or resume) one encounter."""

    case: Case
    rubric: Rubric
    doctor: str = "human"
    patient: str = "offline"
    judge: str = "offline"
    config: Config = field(default_factory=Config)
    sessions_dir: Path | None = None  # default: config.sessions_dir
    session_path: Path | None = None  # exact file; default: sessions_dir/<stamp>_<case>_<id>.json
    mode: str = "encounter"  # encounter | craftmd | epag
    seed: int | None = None
    trial: int = 0
    http_client: Any = None  # passed to provider SDKs (tests: MockTransport)
    limiter: asyncio.Semaphore | None = None  # one semaphore for all model calls (batch)
    live_scoring: bool = True
    on_error: str = "fail"  # "fail": raise EncounterFailed; "pause": report and wait (TUI)
    run_extra: dict[str, Any] = field(default_factory=dict)
    batch_id: str | None = None
    arm: str | None = None
    answer_format: str | None = None


class Encounter:
    """One running encounter. Create, then ``await run()``."""

    def __init__(self, setup: EncounterSetup, observer: ev.Observer | None = None, *, session: Session | None = None):
        self.setup = setup
        self.case = setup.case
        self.rubric = setup.rubric
        self.config = setup.config
        self.observer = observer
        self.queues: dict[str, asyncio.Queue] = {"doctor": asyncio.Queue(), "patient": asyncio.Queue()}
        self.session = session or self._new_session()
        folder = Path(setup.sessions_dir or self.config.sessions_dir)
        self.session_path = Path(setup.session_path) if setup.session_path else folder / session_filename(self.session)
        self.oracle = make_oracle()
        self.doctor = self._make("doctor", self.session.roles["doctor"].spec)
        self.patient = self._make("patient", self.session.roles["patient"].spec)
        self._running = asyncio.Event()
        self._running.set()
        self._pending_phase: Phase | None = None
        self._end_requested = False
        self._phase_started = time.monotonic()
        self._challenge_asked = any(t.meta.get("challenging_question") for t in self.session.turns)
        # Roles whose human player is being waited on right now; only those get
        # woken by an Interrupt, so no stale wake-up lingers in a queue.
        self._waiting: set[str] = set()
        self._observer_tasks: set[asyncio.Future] = set()
        # Agents replaced by a takeover: their providers are closed when the run ends.
        self._retired: list[Any] = []
        # Why the last save failed (disk full, folder gone); None once a save succeeds.
        self.unsaved: str | None = None

    # -- construction --------------------------------------------------------

    @classmethod
    def resume(cls, path: Path, setup: EncounterSetup, observer: ev.Observer | None = None) -> "Encounter":
        """Continue an interrupted session from its file (roles as recorded)."""
        session = load_session(path)
        if session.case_id != setup.case.id:
            raise ValueError(f"{path}: session is for case {session.case_id!r}, not {setup.case.id!r}")
        setup.session_path = Path(path)
        session.status = "in_progress"
        session.error = None
        return cls(setup, observer, session=session)

    def _new_session(self) -> Session:
        s = self.setup
        gen = self.config.generation
        return Session(
            case_id=self.case.id,
            case_hash=self.case.content_hash(),
            rubric_id=self.rubric.id,
            roles={
                "doctor": RoleAssignment(spec=s.doctor, settings=gen.doctor),
                "patient": RoleAssignment(spec=s.patient, settings=gen.patient),
                "judge": RoleAssignment(spec=s.judge, settings=gen.judge),
            },
            run=RunMetadata(
                package_version=__version__,
                seed=s.seed,
                mode=s.mode if s.mode in ("encounter", "craftmd", "epag") else "encounter",
                trial=s.trial,
                batch_id=s.batch_id,
                arm=s.arm,
                answer_format=s.answer_format,
                prompts=_prompt_hashes(),
                extra=dict(s.run_extra),
            ),
        )

    def _make(self, role: str, spec: str):
        kw = dict(config=self.config, queue=self.queues[role], http_client=self.setup.http_client, limiter=self.setup.limiter)
        if role == "doctor":
            return make_doctor(
                spec, mode=self.setup.mode, seed=self.setup.seed, on_command_error=self._command_error, **kw
            )
        return make_patient(spec, **kw)

    # -- controls (called by the UI) -------------------------------------------

    def submit(self, role: Role, text: str) -> None:
        """Human input for ``role`` (doctor lines may be slash commands)."""
        self.queues[role].put_nowait(text)

    def submit_note(self, note: PatientNote) -> None:
        self.queues["doctor"].put_nowait(note)

    def takeover(self, role: Role, spec: str) -> None:
        """Hand ``role`` to another player (human <-> agent) from the next turn."""
        old = self.session.roles[role].spec
        if spec == old:
            return
        agent = self._make(role, spec)  # raises SpecError/MissingKeyError before anything changes
        if role == "doctor":
            self._retired.append(self.doctor)
            self.doctor = agent
        else:
            self._retired.append(self.patient)
            self.patient = agent
        self.session.roles[role] = RoleAssignment(spec=spec, settings=self.session.roles[role].settings)
        self.session.role_changes.append(RoleChange(role=role, from_spec=old, to_spec=spec, at_turn=len(self.session.turns)))
        # Wake a human who was waiting for this role so the new player takes the turn.
        self._interrupt(role, "takeover")
        self._save()
        self._notify(ev.RoleChanged(role, old, spec))

    def pause(self) -> None:
        self._running.clear()

    def resume_running(self) -> None:
        self._running.set()

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    def request_phase(self, phase: Phase) -> None:
        self._pending_phase = phase
        self._interrupt("doctor", "phase")

    def end(self) -> None:
        """Finish now: skip to scoring with what the session holds."""
        self._end_requested = True
        self._running.set()
        for role in list(self._waiting):
            self._interrupt(role, "end")

    def _interrupt(self, role: str, reason: str) -> None:
        if role in self._waiting:
            self.queues[role].put_nowait(Interrupt(reason))

    async def _human_wait(self, role: str, coro):
        """Await a human's input for ``role`` (marks the role as interruptible)."""
        # A request may have arrived between AwaitingHuman and now (observers
        # often answer synchronously): honour it instead of waiting.
        if self._end_requested or (role == "doctor" and self._pending_phase):
            coro.close()
            raise HumanInterrupted("end" if self._end_requested else "phase")
        self._waiting.add(role)
        try:
            return await coro
        finally:
            self._waiting.discard(role)

    # -- the loop --------------------------------------------------------------

    async def run(self) -> Session:
        """Drive the encounter to the end; returns the scored session."""
        try:
            if self.session.phase == "doorway":
                await self._set_phase("history", "start")
            await self._answer_dangling_question()
            doctor_turns = 0
            while self.session.phase != "scored" and not self._end_requested:
                await self._running.wait()
                if self._end_requested:
                    break
                if self._pending_phase:
                    target, self._pending_phase = self._pending_phase, None
                    await self._set_phase(target, "requested")
                    continue
                await self._enforce_budget()
                if self.session.phase == "scored":
                    break
                if doctor_turns >= MAX_DOCTOR_TURNS:
                    await self._set_phase("scored", f"turn cap ({MAX_DOCTOR_TURNS})")
                    break
                doctor_turns += 1
                if self.session.phase == "note":
                    await self._note_turn()
                else:
                    await self._doctor_turn()
            await self._finish()
            return self.session
        except asyncio.CancelledError:
            self.session.status = "aborted"
            self._save()
            self._notify(ev.EncounterEnded("aborted", "cancelled"))
            raise
        except EncounterFailed as exc:
            self.session.status = "failed"
            self.session.error = str(exc)
            self._save()
            self._notify(ev.EncounterEnded("failed", str(exc)))
            raise
        except Exception:
            # A bug or a dead UI (closed pipe) between a turn and its save: keep
            # that turn on disk, still in progress so it can be resumed. Saved
            # without notifying: the observer may be what just failed.
            try:
                save_session(self.session, self.session_path)
            except Exception:  # the original error is the one to report
                log.exception("could not save %s", self.session_path)
            raise
        finally:
            await asyncio.shield(self._close_providers())

    async def _close_providers(self) -> None:
        """Close the model providers of every agent this run used (their own HTTP clients, if any)."""
        seen: set[int] = set()
        for agent in (self.doctor, self.patient, *self._retired):
            provider = getattr(agent, "provider", None)
            if provider is None or id(provider) in seen:
                continue
            seen.add(id(provider))
            try:
                await provider.aclose()
            except Exception:  # closing is best effort; the session is already saved
                log.debug("closing %r failed", provider, exc_info=True)

    async def _doctor_turn(self) -> None:
        turn = await self._call_doctor()
        if turn is None:
            return
        for action in turn.actions:
            if self.session.phase == "scored" or self._end_requested:
                break
            await self._apply(action, turn)

    async def _call_doctor(self) -> DoctorTurn | None:
        # Player and spec are read together, before the observer hears of the
        # turn: a takeover made from the notification applies from the next turn.
        spec, agent = self.session.roles["doctor"].spec, self.doctor
        turn_id = self.session.next_turn_id()
        if spec == "human":
            self._notify(ev.AwaitingHuman("doctor", self.session.phase))
        else:
            self._notify(ev.TurnStarted("doctor", turn_id, spec))
        streamed: list[str] = []

        async def on_delta(text: str) -> None:
            streamed.append(text)
            self._notify(ev.TextDelta("doctor", turn_id, text))

        try:
            call = agent.act(self.case.doorway, self.session, on_delta)
            if spec == "human":
                call = self._human_wait("doctor", call)
            result = await self._with_timer(call)
        except HumanInterrupted:
            return None
        except _TimerExpired:
            await self._set_phase(_next_phase(self.session.phase), "timer")
            return None
        except StructuredOutputError as exc:
            if self.session.phase != "note":
                await self._provider_failed("doctor", exc)
                return None
            # The model answered, just not with a valid note: one of its note
            # attempts is used up; the encounter itself has not failed.
            self._notify(ev.ErrorOccurred(f"no valid patient note: {exc}", role="doctor", recoverable=True))
            return None
        except ProviderError as exc:
            await self._provider_failed("doctor", exc)
            return None
        if result.usage.calls or result.usage.total_tokens:
            self.session.add_usage("doctor", result.usage)
        result.meta.setdefault("streamed", "".join(streamed))
        result.meta["_spec"] = spec  # who produced it, even if the role changed hands meanwhile
        return result

    async def _apply(self, action: Any, turn: DoctorTurn) -> None:
        spec = turn.meta.get("_spec") or self.session.roles["doctor"].spec
        if isinstance(action, Say):
            if self._craftmd_no_question(action.text):
                await self._final_diagnosis(action.text, spec, turn)
                return
            t = self._record("doctor", action.text, spec=spec, usage=turn.usage, meta=_clean_meta(turn.meta))
            await self._patient_responds(t)
        elif isinstance(action, Examine):
            if self.session.phase == "history":
                await self._set_phase("exam", "exam requested")
            await self._examine(action.requests, spec)
        elif isinstance(action, Order):
            await self._order(action.tests, spec)
        elif isinstance(action, ChangePhase):
            await self._set_phase(action.phase, "doctor")
        elif isinstance(action, SubmitNote):
            self._take_note(action.note, spec)
            await self._set_phase("scored", "note submitted")
        elif isinstance(action, FinalDiagnosis):
            await self._final_diagnosis(action.text, spec, turn)
        elif isinstance(action, End):
            await self._set_phase("scored", "doctor ended")

    # -- patient ---------------------------------------------------------------

    async def _patient_responds(self, doctor_turn: Turn) -> None:
        """The patient answers ``doctor_turn`` (retrying after a takeover or a resumed error)."""
        while not self._end_requested:
            spec, agent = self.session.roles["patient"].spec, self.patient  # together: see _call_doctor
            turn_id = self.session.next_turn_id()
            if spec == "human":
                self._notify(ev.AwaitingHuman("patient", self.session.phase))
            else:
                self._notify(ev.TurnStarted("patient", turn_id, spec))

            async def on_delta(text: str, turn_id: str = turn_id) -> None:
                self._notify(ev.TextDelta("patient", turn_id, text))

            try:
                call = self._patient_reply(agent, doctor_turn, on_delta)
                reply = await (self._human_wait("patient", call) if spec == "human" else call)
            except HumanInterrupted:
                continue  # taken over (or a stale wake-up): ask whoever plays the patient now
            except ProviderError as exc:
                await self._provider_failed("patient", exc)
                continue
            if reply.usage.calls or reply.usage.total_tokens:
                self.session.add_usage("patient", reply.usage)
            meta = dict(reply.meta, reply_to=doctor_turn.id)
            self._record("patient", reply.text, spec=spec, usage=reply.usage, meta=meta)
            return

    async def _patient_reply(self, patient, doctor_turn: Turn, on_delta) -> AgentReply:
        """At closure the first reply is the case's challenging question."""
        if self.session.phase == "closure" and not self._challenge_asked and self.case.challenging_questions:
            reply = await patient.challenging_question(self.case, self.session, on_delta)
            if reply is not None:
                reply.meta["challenging_question"] = True
                self._challenge_asked = True
                return reply
        return await patient.reply(self.case, self.session, doctor_turn.text, on_delta)

    async def _answer_dangling_question(self) -> None:
        """After a resume: a doctor utterance the patient never answered gets its answer."""
        spoken = self.session.utterances()
        if spoken and spoken[-1].role == "doctor" and self.session.phase in ("history", "exam", "closure"):
            await self._patient_responds(spoken[-1])

    # -- oracle ----------------------------------------------------------------

    async def _examine(self, requests: list[str], spec: str) -> None:
        answers = [(r, a) for r in requests for a in self.oracle.examine(self.case, r)]
        self._oracle_round("exam", "Examine: " + ", ".join(requests), answers, spec)

    async def _order(self, tests: list[str], spec: str) -> None:
        answers = [(t, self.oracle.order(self.case, t)) for t in tests]
        self._oracle_round("test", "Order: " + ", ".join(tests), answers, spec)

    def _oracle_round(self, kind: str, request_text: str, answers: list, spec: str) -> None:
        """Record a doctor's exam/test request and the oracle's answers as turns."""
        request_kind, result_kind, label = ("exam_request", "exam_result", "system") if kind == "exam" else ("test_order", "test_result", "test")
        request_turn = self._record("doctor", request_text, kind=request_kind, spec=spec)
        for request, answer in answers:
            result_turn = self._record(
                "examiner",
                answer.text,
                kind=result_kind,
                spec="oracle",
                meta={"request": request, label: answer.system, "source": answer.source},
                save=False,
            )
            self.session.exams.append(
                ExamRecord(
                    request_turn=request_turn.id,
                    result_turn=result_turn.id,
                    kind=kind,
                    request=request,
                    system=answer.system,
                    result=answer.text,
                    source=answer.source,
                )
            )
            self._notify(ev.ExamResult(kind, request, answer.system, answer.text, answer.source, result_turn.id))
        self._after_turn()

    # -- note, diagnosis, phases ----------------------------------------------

    async def _note_turn(self) -> None:
        """Note phase: a human writes the note; an agent is asked for it."""
        spec, agent = self.session.roles["doctor"].spec, self.doctor  # together: see _call_doctor
        if spec == "human":
            self._notify(ev.AwaitingHuman("doctor", "note", what="note"))
            try:
                turn = await self._with_timer(self._human_wait("doctor", agent.act(self.case.doorway, self.session, None)))
            except HumanInterrupted:
                return
            except _TimerExpired:
                await self._set_phase("scored", "note timer")
                return
            turn.meta["_spec"] = spec
            for action in turn.actions:
                # In the note phase only the note, /end and /dx mean anything.
                if isinstance(action, (SubmitNote, End, FinalDiagnosis)):
                    await self._apply(action, turn)
                else:
                    self._notify(ev.ErrorOccurred("Note phase: submit the patient note, or /end to finish.", role="doctor"))
            return
        for _attempt in range(NOTE_ATTEMPTS):
            turn = await self._call_doctor()
            if turn is None:
                if self.session.phase == "scored" or self._end_requested:
                    return  # the note timer ran out, or the user ended it: no further model call
                continue
            notes = [a for a in turn.actions if isinstance(a, (SubmitNote, End, FinalDiagnosis))]
            for action in notes:
                await self._apply(action, turn)
            if self.session.phase == "scored":
                return
        self._record("system", "The doctor did not produce a patient note.", kind="system", spec="engine")
        await self._set_phase("scored", "no note")

    def _take_note(self, note: PatientNote, spec: str) -> None:
        self.session.note = note
        summary = f"Patient note: {len(note.diagnoses)} diagnoses ({', '.join(d.name for d in note.diagnoses)}), {len(note.workup)} workup items"
        self._record("doctor", summary, kind="note", spec=spec, meta={"note": note.model_dump()})
        if self.setup.mode == "craftmd" and not self.session.final_diagnosis and note.diagnoses:
            # The offline doctor answers CRAFT-MD through its note: top diagnosis.
            self.session.final_diagnosis = note.diagnoses[0].name

    async def _final_diagnosis(self, text: str, spec: str, turn: DoctorTurn) -> None:
        self.session.final_diagnosis = text
        self._record("doctor", text, kind="diagnosis", spec=spec, usage=turn.usage)
        if self.setup.mode == "craftmd":
            await self._set_phase("scored", "final diagnosis")

    def _craftmd_no_question(self, text: str) -> bool:
        """CRAFT-MD stop rule: in history, a model doctor that asks nothing has answered."""
        return (
            self.setup.mode == "craftmd"
            and self.session.phase == "history"
            and self.session.roles["doctor"].spec not in ("human", "offline")
            and "?" not in text
        )

    async def _set_phase(self, new: Phase, reason: str) -> None:
        old = self.session.phase
        if new == old or PHASE_ORDER.index(new) < PHASE_ORDER.index(old):
            return  # phases only move forward
        self.session.phase = new
        self._phase_started = time.monotonic()
        self._record("system", f"Phase: {new}", kind="phase", spec="engine", meta={"from": old, "reason": reason}, phase=new)
        self._notify(ev.PhaseChanged(old, new, reason))

    async def _enforce_budget(self) -> None:
        """Move on when the phase's turn budget is spent."""
        phase = self.session.phase
        budget = getattr(self.config.encounter, phase, None) if phase in ("history", "exam", "closure") else None
        if budget is None:
            return
        used = sum(1 for t in self.session.turns if t.role == "doctor" and t.phase == phase and t.kind != "phase")
        if used >= budget.max_turns:
            await self._set_phase(_next_phase(phase), f"turn budget ({budget.max_turns})")

    def phase_time_left(self) -> float | None:
        """Seconds left on the current phase timer (None when there is none)."""
        phase = self.session.phase
        if phase == "note":
            minutes = self.config.encounter.note_minutes
        else:
            budget = getattr(self.config.encounter, phase, None) if phase in ("history", "exam", "closure") else None
            minutes = budget.minutes if budget else None
        if minutes is None:
            return None
        return max(0.0, minutes * 60 - (time.monotonic() - self._phase_started))

    async def _with_timer(self, coro):
        """Await ``coro``, bounded by the phase timer when timers are enforced."""
        left = self.phase_time_left() if self.config.encounter.timers else None
        if left is None:
            return await coro
        try:
            return await asyncio.wait_for(coro, timeout=max(left, 0.01))
        except asyncio.TimeoutError:
            raise _TimerExpired() from None

    # -- errors, scoring, saving ----------------------------------------------

    async def _provider_failed(self, role: str, exc: ProviderError) -> None:
        self.session.error = f"{role}: {exc}"
        self._save()
        if self.setup.on_error != "pause":
            self._notify(ev.ErrorOccurred(str(exc), role=role, recoverable=False))
            raise EncounterFailed(f"{role}: {exc}") from exc
        # Pause first, then tell the UI: it may resume (retry), take over or end
        # straight from the notification.
        self.pause()
        self._notify(ev.ErrorOccurred(str(exc), role=role, recoverable=True))
        await self._running.wait()
        self.session.error = None

    async def _finish(self) -> None:
        if self.session.phase != "scored":
            await self._set_phase("scored", "ended")
        self._notify(ev.TurnStarted("examiner", "scores", self.session.roles["judge"].spec))
        scores = await self._final_scores()
        if scores is not None:
            self.session.put_scores(scores)
            self._notify(ev.ScoresUpdated(scores, final=True))
        self.session.status = "finished"
        self._save()
        self._notify(ev.EncounterEnded("finished", self.session.error or ""))

    async def _final_scores(self):
        from ..judges.runner import score_session

        judge = self.session.roles["judge"].spec
        provider = None
        try:
            provider = self._judge_provider(judge)
            return await score_session(self.case, self.session, self.rubric, judge, config=self.config, provider=provider)
        except ProviderError as exc:
            # Keep the encounter: score it offline and say plainly that the model judge failed.
            self.session.error = f"judge {judge} failed ({exc}); scored with the offline judge instead"
            self._notify(ev.ErrorOccurred(self.session.error, role="examiner"))
            failed_judge = f"judge {judge} failed ({exc}); "
        except Exception as exc:  # a judge bug must not lose the session
            return self._judging_failed("", exc)
        finally:
            if provider is not None:
                # A judge provider built here with its own HTTP client must not leak its sockets.
                await provider.aclose()
        try:
            return await score_session(self.case, self.session, self.rubric, "offline", config=self.config)
        except Exception as exc:  # the fallback too: keep the session, unscored
            return self._judging_failed(failed_judge + "offline fallback ", exc)

    def _judging_failed(self, prefix: str, exc: Exception) -> None:
        log.exception("judging failed")
        self.session.error = f"{prefix}judging failed: {exc!r}"
        self._notify(ev.ErrorOccurred(self.session.error, role="examiner", recoverable=False))
        return None

    def _judge_provider(self, judge: str):
        """A provider for a model judge, sharing the encounter's client and limiter."""
        if judge in ("offline", "human"):
            return None
        from ..providers.factory import make_provider

        return make_provider(judge, self.config, http_client=self.setup.http_client, limiter=self.setup.limiter)

    def _live_scores(self) -> None:
        # Live scores only feed panels; with nobody watching they are wasted work.
        if not self.setup.live_scoring or self.observer is None:
            return
        from ..judges.runner import score_live

        try:
            scores = score_live(self.case, self.session, self.rubric)
        except Exception as exc:  # live panels are a nicety; never stop the encounter
            log.exception("live scoring failed")
            self._notify(ev.ErrorOccurred(f"live scoring failed: {exc!r}", role="examiner"))
            return
        self.session.put_scores(scores)
        self._notify(ev.ScoresUpdated(scores, final=False))

    def _record(self, role: Role, text: str, *, save: bool = True, **fields: Any) -> Turn:
        turn = self.session.add_turn(role, text, **fields)
        turn.finished_at = utcnow()
        self._notify(ev.TurnFinished(turn))
        if save:
            self._after_turn()
        return turn

    def _after_turn(self) -> None:
        self._live_scores()
        self._save()

    def _save(self) -> None:
        try:
            save_session(self.session, self.session_path)
        except OSError as exc:
            # Disk full or folder gone: tell the user, keep the session in memory
            # (the next turn's save tries again; callers check ``unsaved`` at the end).
            self.unsaved = f"could not save {self.session_path}: {exc}"
            self._notify(ev.ErrorOccurred(self.unsaved, recoverable=True))
            return
        self.unsaved = None
        self._notify(ev.SessionSaved(self.session_path))

    def _command_error(self, message: str):
        # The human's turn is still open: report the typo and ask again.
        self._notify(ev.ErrorOccurred(message, role="doctor", recoverable=True))
        self._notify(ev.AwaitingHuman("doctor", self.session.phase))
        return _noop()

    def _notify(self, event: ev.EngineEvent) -> None:
        if self.observer is None:
            return
        result = self.observer(event)
        if inspect.isawaitable(result):
            # Observers may be async; schedule without blocking the stream. The
            # loop keeps only weak references to tasks, so hold them until done.
            task = asyncio.ensure_future(result)
            self._observer_tasks.add(task)
            task.add_done_callback(self._observer_tasks.discard)


class _TimerExpired(Exception):
    pass


async def _noop() -> None:
    return None


def _next_phase(phase: Phase) -> Phase:
    i = PHASE_ORDER.index(phase)
    return PHASE_ORDER[min(i + 1, len(PHASE_ORDER) - 1)]


def _clean_meta(meta: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in meta.items() if k not in ("streamed", "_spec")}


def _prompt_hashes() -> dict[str, str]:
    try:
        from ..prompts import prompt_hashes
    except ImportError:
        return {}
    try:
        return dict(prompt_hashes())
    except Exception:  # prompts are optional for offline runs
        return {}
