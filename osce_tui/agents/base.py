"""What the engine asks of the patient, the doctor and the exam oracle.

Agents stream their text through ``on_delta`` as it is produced and return a
final reply. Cancellation is plain asyncio cancellation of the awaiting task.
The doctor side receives only the doorway and the session so far: hidden case
fields (facts, findings, diagnosis) never reach a doctor implementation.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Annotated, Any, Awaitable, Callable, Literal, Union

from pydantic import BaseModel, Field

from ..domain.case import Case, Doorway
from ..domain.session import PatientNote, Phase, Session, Usage

OnDelta = Callable[[str], Awaitable[None] | None]
"""Called with each text delta as it streams (sync or async)."""


async def emit(on_delta: OnDelta | None, text: str) -> None:
    """Call a sync-or-async delta callback."""
    if on_delta is None or not text:
        return
    result = on_delta(text)
    if result is not None:
        await result


# -- doctor actions ---------------------------------------------------------


class Say(BaseModel):
    """Speak to the patient (a question, an explanation, closure talk)."""

    kind: Literal["say"] = "say"
    text: str


class Examine(BaseModel):
    """Request physical-exam components or maneuvers ("auscultate the heart")."""

    kind: Literal["examine"] = "examine"
    requests: list[str] = Field(min_length=1)


class Order(BaseModel):
    """Order investigations ("ECG", "troponin")."""

    kind: Literal["order"] = "order"
    tests: list[str] = Field(min_length=1)


class ChangePhase(BaseModel):
    kind: Literal["phase"] = "phase"
    phase: Phase


class SubmitNote(BaseModel):
    kind: Literal["note"] = "note"
    note: PatientNote


class FinalDiagnosis(BaseModel):
    """CRAFT-MD: the doctor commits to a diagnosis and the conversation stops."""

    kind: Literal["diagnosis"] = "diagnosis"
    text: str


class End(BaseModel):
    """The doctor is done with the encounter."""

    kind: Literal["end"] = "end"


DoctorAction = Annotated[
    Union[Say, Examine, Order, ChangePhase, SubmitNote, FinalDiagnosis, End],
    Field(discriminator="kind"),
]


@dataclass
class DoctorTurn:
    """One doctor turn: usually one action; a model may say something and examine."""

    actions: list[Any]  # list[DoctorAction]
    usage: Usage = field(default_factory=Usage)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class AgentReply:
    text: str
    usage: Usage = field(default_factory=Usage)
    meta: dict[str, Any] = field(default_factory=dict)  # e.g. matched fact id, retrieval score


class PatientAgent(ABC):
    spec: str

    @abstractmethod
    async def reply(self, case: Case, session: Session, doctor_text: str, on_delta: OnDelta | None = None) -> AgentReply:
        """Answer the doctor's latest utterance in character."""

    @abstractmethod
    async def challenging_question(self, case: Case, session: Session, on_delta: OnDelta | None = None) -> AgentReply | None:
        """At closure: the case's challenging question (None if the case has none)."""


class DoctorAgent(ABC):
    spec: str

    @abstractmethod
    async def act(self, doorway: Doorway, session: Session, on_delta: OnDelta | None = None) -> DoctorTurn:
        """Decide the next turn from what the doctor may know: doorway + session so far."""


@dataclass(frozen=True)
class OracleAnswer:
    request: str
    system: str | None  # body system or test name matched; None if nothing matched
    text: str
    source: Literal["case", "normal", "unknown"]


class ExamOracle(ABC):
    """Answers exams and test orders from the case only; never invents abnormal findings."""

    @abstractmethod
    def examine(self, case: Case, request: str) -> list[OracleAnswer]:
        """One answer per body system/component the request maps to."""

    @abstractmethod
    def order(self, case: Case, test: str) -> OracleAnswer: ...
