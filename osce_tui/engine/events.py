"""UI-agnostic events the encounter engine emits to its observer.

The TUI turns these into Textual messages, ``chat`` prints them, batch counts
them. An observer is any callable taking one event (sync or async).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Union

from ..domain.scores import ScoreSet
from ..domain.session import Phase, Role, Turn


@dataclass(frozen=True)
class TurnStarted:
    role: Role
    turn_id: str  # id the turn will get once finished
    spec: str  # who is producing it (human, offline, openai/...)


@dataclass(frozen=True)
class TextDelta:
    role: Role
    turn_id: str
    text: str


@dataclass(frozen=True)
class TurnFinished:
    turn: Turn


@dataclass(frozen=True)
class PhaseChanged:
    old: Phase
    new: Phase
    reason: str = ""  # "doctor", "budget", "timer", "human", "stop rule"


@dataclass(frozen=True)
class ExamResult:
    kind: str  # "exam" or "test"
    request: str
    system: str | None
    text: str
    source: str  # case / normal / unknown
    turn_id: str


@dataclass(frozen=True)
class ScoresUpdated:
    scores: ScoreSet
    final: bool


@dataclass(frozen=True)
class RoleChanged:
    role: Role
    old_spec: str
    new_spec: str


@dataclass(frozen=True)
class AwaitingHuman:
    """The engine waits for the human playing ``role`` (doctor or patient, or the note)."""

    role: Role
    phase: Phase
    what: str = "utterance"  # "utterance" or "note"


@dataclass(frozen=True)
class ErrorOccurred:
    message: str
    role: Role | None = None
    recoverable: bool = True
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SessionSaved:
    path: Path


@dataclass(frozen=True)
class EncounterEnded:
    status: str  # finished / aborted / failed
    reason: str = ""


EngineEvent = Union[
    TurnStarted,
    TextDelta,
    TurnFinished,
    PhaseChanged,
    ExamResult,
    ScoresUpdated,
    RoleChanged,
    AwaitingHuman,
    ErrorOccurred,
    SessionSaved,
    EncounterEnded,
]

Observer = Callable[[EngineEvent], Awaitable[None] | None]
