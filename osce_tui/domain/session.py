"""The session: one encounter as it happened, saved as JSON after every turn."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from .scores import ScoreSet

SESSION_SCHEMA_VERSION = 1

Role = Literal["doctor", "patient", "examiner", "system"]
Phase = Literal["doorway", "history", "exam", "closure", "note", "scored"]
PHASE_ORDER: tuple[Phase, ...] = ("doorway", "history", "exam", "closure", "note", "scored")
TurnKind = Literal[
    "utterance",  # spoken text
    "exam_request",  # doctor asks to examine something
    "exam_result",  # oracle's finding
    "test_order",  # doctor orders an investigation
    "test_result",  # oracle's result
    "phase",  # phase change marker
    "note",  # patient note submitted
    "diagnosis",  # CRAFT-MD final diagnosis
    "system",  # anything else the engine records
]


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


class Usage(BaseModel):
    """Token usage; summed per role and per session."""

    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    cost_usd: float | None = None

    def __add__(self, other: "Usage") -> "Usage":
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            calls=self.calls + other.calls,
            cost_usd=cost,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class GenerationSettings(BaseModel):
    """Per-role sampling settings. Providers pass only what their API accepts."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None


class RoleAssignment(BaseModel):
    spec: str = Field(description="Model spec: human, offline, openai/<m>, anthropic/<m>, ...")
    settings: GenerationSettings = Field(default_factory=GenerationSettings)


class RoleChange(BaseModel):
    """A takeover: who played a role from which turn on."""

    role: Role
    from_spec: str
    to_spec: str
    at_turn: int = Field(description="Index into ``turns`` of the first turn under the new spec.")
    at: datetime = Field(default_factory=utcnow)


class Turn(BaseModel):
    id: str = Field(description="Stable id, e.g. 't0007'; judges cite these as evidence.")
    role: Role
    text: str
    phase: Phase = "history"
    kind: TurnKind = "utterance"
    spec: str | None = Field(default=None, description="Who produced it (model spec or 'human').")
    started_at: datetime = Field(default_factory=utcnow)
    finished_at: datetime | None = None
    usage: Usage | None = None
    meta: dict[str, Any] = Field(default_factory=dict, description="E.g. matched fact id and score.")


class ExamRecord(BaseModel):
    """An exam request or test order and what the oracle answered."""

    request_turn: str
    result_turn: str | None = None
    kind: Literal["exam", "test"]
    request: str
    system: str | None = Field(default=None, description="Body system or test name it mapped to.")
    result: str
    source: Literal["case", "normal", "unknown"] = "case"


class NoteDiagnosis(BaseModel):
    name: str
    history_findings: list[str] = Field(default_factory=list, max_length=3)
    exam_findings: list[str] = Field(default_factory=list, max_length=3)


class PatientNote(BaseModel):
    """USMLE Step 2 CS-shaped patient note."""

    hpi: str = ""
    pe: str = ""
    diagnoses: list[NoteDiagnosis] = Field(default_factory=list, max_length=3)
    workup: list[str] = Field(default_factory=list, max_length=8)

    @field_validator("workup")
    @classmethod
    def _no_blank_workup(cls, items: list[str]) -> list[str]:
        return [w.strip() for w in items if w.strip()]


class RunMetadata(BaseModel):
    package_version: str = ""
    git_revision: str | None = None
    seed: int | None = None
    mode: Literal["encounter", "craftmd", "epag", "imported"] = "encounter"
    arm: str | None = Field(default=None, description="CRAFT-MD arm or other experimental condition.")
    answer_format: str | None = None
    trial: int = 0
    batch_id: str | None = None
    prompts: dict[str, str] = Field(default_factory=dict, description="Prompt name -> hash of the prompt text.")
    extra: dict[str, Any] = Field(default_factory=dict)


SessionStatus = Literal["in_progress", "finished", "failed", "aborted"]


class Session(BaseModel):
    schema_version: int = SESSION_SCHEMA_VERSION
    id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    case_id: str
    case_hash: str = ""
    rubric_id: str = "osce-practice"
    roles: dict[str, RoleAssignment] = Field(default_factory=dict, description="doctor, patient, judge.")
    role_changes: list[RoleChange] = Field(default_factory=list)
    phase: Phase = "doorway"
    status: SessionStatus = "in_progress"
    turns: list[Turn] = Field(default_factory=list)
    exams: list[ExamRecord] = Field(default_factory=list)
    note: PatientNote | None = None
    final_diagnosis: str | None = Field(default=None, description="CRAFT-MD: the doctor's final answer.")
    scores: list[ScoreSet] = Field(default_factory=list)
    usage: dict[str, Usage] = Field(default_factory=dict, description="Per role.")
    run: RunMetadata = Field(default_factory=RunMetadata)
    error: str | None = None

    # -- helpers the engine and judges share ----------------------------

    def next_turn_id(self) -> str:
        return f"t{len(self.turns) + 1:04d}"

    def add_turn(self, role: Role, text: str, **fields: Any) -> Turn:
        turn = Turn(id=self.next_turn_id(), role=role, text=text, phase=fields.pop("phase", self.phase), **fields)
        self.turns.append(turn)
        self.touch()
        return turn

    def touch(self) -> None:
        self.updated_at = utcnow()

    def utterances(self, role: Role | None = None) -> list[Turn]:
        return [t for t in self.turns if t.kind == "utterance" and (role is None or t.role == role)]

    def add_usage(self, role: str, usage: Usage) -> None:
        self.usage[role] = self.usage.get(role, Usage()) + usage

    @property
    def total_usage(self) -> Usage:
        total = Usage()
        for u in self.usage.values():
            total = total + u
        return total

    def latest_scores(self, rubric_id: str | None = None, final_only: bool = True) -> ScoreSet | None:
        for s in reversed(self.scores):
            if (rubric_id is None or s.rubric_id == rubric_id) and (s.final or not final_only):
                return s
        return None

    def put_scores(self, scores: ScoreSet) -> None:
        """Add a score set beside the existing ones; final sets are never overwritten.

        Live (non-final) sets are collapsed to the newest one per key so the
        file stays small while the encounter runs.
        """
        if not scores.final:
            self.scores = [s for s in self.scores if s.final or s.key != scores.key]
        self.scores.append(scores)
        self.touch()
