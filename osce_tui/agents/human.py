"""A human at the keyboard as the doctor or the patient.

The engine owns one input queue per role. A human agent waits on it; the UI
(TUI, line mode, tests) puts text in with ``Encounter.submit``. A takeover or a
phase request wakes a waiting human with an ``Interrupt`` so the engine can
re-dispatch the turn.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from ..domain.case import Case, Doorway
from ..domain.session import PatientNote, Session
from .base import AgentReply, DoctorAgent, DoctorTurn, OnDelta, PatientAgent, SubmitNote
from .commands import CommandError, parse_doctor_input


@dataclass(frozen=True)
class Interrupt:
    """Put on a human's queue to stop waiting (takeover, phase change, end)."""

    reason: str


class HumanInterrupted(Exception):
    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


class HumanDoctor(DoctorAgent):
    spec = "human"

    def __init__(self, queue: asyncio.Queue, on_command_error=None):
        self.queue = queue
        self.on_command_error = on_command_error

    async def act(self, doorway: Doorway, session: Session, on_delta: OnDelta | None = None) -> DoctorTurn:
        while True:
            item = await self.queue.get()
            if isinstance(item, Interrupt):
                raise HumanInterrupted(item.reason)
            if isinstance(item, PatientNote):
                return DoctorTurn(actions=[SubmitNote(note=item)])
            try:
                return DoctorTurn(actions=[parse_doctor_input(str(item))])
            except CommandError as exc:
                # A typo must not end the turn: report it and keep waiting.
                if self.on_command_error:
                    await self.on_command_error(str(exc))


class HumanPatient(PatientAgent):
    spec = "human"

    def __init__(self, queue: asyncio.Queue):
        self.queue = queue

    async def _next_text(self) -> str:
        while True:
            item = await self.queue.get()
            if isinstance(item, Interrupt):
                raise HumanInterrupted(item.reason)
            if str(item).strip():
                return str(item).strip()

    async def reply(self, case: Case, session: Session, doctor_text: str, on_delta: OnDelta | None = None) -> AgentReply:
        return AgentReply(text=await self._next_text())

    async def challenging_question(self, case: Case, session: Session, on_delta: OnDelta | None = None) -> AgentReply | None:
        # A human SP asks the question in their own words as their next reply.
        return None
