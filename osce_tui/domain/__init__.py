"""Pure data models: cases, rubrics, sessions and scores. No I/O but parsing."""

from .case import (
    CASE_SCHEMA_VERSION,
    Case,
    ChallengingQuestion,
    Closure,
    DifferentialItem,
    Diagnosis,
    Doorway,
    ExamFinding,
    GuidelineFeature,
    HistoryFact,
    Investigation,
    LcpKey,
    NoteKey,
    Persona,
    Vitals,
)
from .rubric import Criterion, Rubric, RubricSection
from .scores import ItemScore, ScoreSet, SectionScore
from .session import (
    PHASE_ORDER,
    SESSION_SCHEMA_VERSION,
    ExamRecord,
    GenerationSettings,
    NoteDiagnosis,
    PatientNote,
    Phase,
    Role,
    RoleAssignment,
    RoleChange,
    RunMetadata,
    Session,
    Turn,
    Usage,
)

__all__ = [name for name in dir() if not name.startswith("_")]
