"""The case: everything one standardized-patient encounter needs.

A case file (``cases/<id>.toml``) carries what the four scoring protocols use:
the doorway (what the examinee sees before entering), the SP's persona and
history facts (the question bank for MedQA-CS and the knowledge base the
offline patient retrieves from), physical-exam findings and test results (the
exam oracle's source), the closure and patient-note keys, the differential,
CRAFT-MD's vignette and choices, EPAG's weighted guideline features and LCP's
expected inquiry order.

Fields the doctor side must never see are everything except ``doorway``;
``Case.doorway_only()`` exists so prompt builders can make that explicit.
"""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

CASE_SCHEMA_VERSION = 1

HistoryCategory = Literal[
    "chief_complaint",
    "onset",
    "location",
    "radiation",
    "quality",
    "severity",
    "timing",
    "modifiers",
    "associated",
    "pmh",
    "medications",
    "allergies",
    "surgery",
    "hospitalizations",
    "family",
    "social_tobacco",
    "social_alcohol",
    "social_drugs",
    "social_occupation",
    "social_sexual",
    "social_diet",
    "social_exercise",
    "social_travel",
    "social_living",
    "ros",
    "obgyn",
    "development",
    "immunizations",
    "ideas_concerns",
    "other",
]
"""History categories. They drive the offline doctor's checklist, EPAG and LCP."""

BodySystem = Literal[
    "general",
    "vitals",
    "heent",
    "neck",
    "cardiovascular",
    "respiratory",
    "abdominal",
    "genitourinary",
    "rectal",
    "pelvic",
    "breast",
    "musculoskeletal",
    "back",
    "extremities",
    "neurological",
    "mental_status",
    "skin",
    "lymph",
]
"""Body systems the exam oracle maps requests onto."""


class _Strict(BaseModel):
    """Case files are hand-written: reject unknown keys so typos surface."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Vitals(_Strict):
    """Vital signs shown at the doorway."""

    blood_pressure: str = Field(description="Systolic/diastolic in mmHg, e.g. '148/92'.")
    heart_rate: int = Field(ge=10, le=300, description="Beats per minute.")
    respiratory_rate: int = Field(ge=4, le=80, description="Breaths per minute.")
    temperature_c: float = Field(ge=30, le=45, description="Degrees Celsius.")
    spo2: int | None = Field(default=None, ge=50, le=100, description="Oxygen saturation, % on room air.")
    weight_kg: float | None = None
    height_cm: float | None = None
    other: dict[str, str] = Field(default_factory=dict, description="Anything else, e.g. glucose.")

    def parts(self, *, compact: bool = False) -> list[str]:
        """Vital signs as display strings; ``compact`` drops units for narrow panels."""
        if compact:
            out = [f"BP {self.blood_pressure}", f"HR {self.heart_rate}", f"RR {self.respiratory_rate}", f"T {self.temperature_c:g}°C"]
            out += [f"SpO₂ {self.spo2}%"] if self.spo2 is not None else []
            out += [f"{self.weight_kg:g} kg"] if self.weight_kg is not None else []
        else:
            out = [
                f"BP {self.blood_pressure} mmHg",
                f"HR {self.heart_rate}/min",
                f"RR {self.respiratory_rate}/min",
                f"Temp {self.temperature_c:g} °C",
            ]
            out += [f"SpO2 {self.spo2}% on room air"] if self.spo2 is not None else []
            out += [f"weight {self.weight_kg:g} kg"] if self.weight_kg is not None else []
            out += [f"height {self.height_cm:g} cm"] if self.height_cm is not None else []
        return out + [f"{k} {val}" for k, val in self.other.items()]


class Doorway(_Strict):
    """What the examinee reads on the door before entering the room."""

    patient_name: str
    age: int = Field(ge=0, le=120)
    age_unit: Literal["years", "months", "weeks", "days"] = "years"
    sex: Literal["female", "male", "intersex", "unspecified"]
    setting: str = Field(description="Where the encounter happens, e.g. 'Emergency department'.")
    chief_complaint: str
    vitals: Vitals
    tasks: list[str] = Field(min_length=1)
    time_limit_minutes: int = 15


class Persona(_Strict):
    """How the standardized patient (or the parent speaking for them) behaves."""

    speaker: Literal["patient", "parent", "caregiver", "partner"] = "patient"
    speaker_name: str | None = Field(default=None, description="Name of the proxy speaker, if not the patient.")
    affect: str = Field(description="Emotional state to portray, e.g. 'anxious, holds chest'.")
    lay_vocabulary: list[str] = Field(default_factory=list, description="Words the SP uses instead of medical terms.")
    notes: str = Field(default="", description="Notes for the SP: what to volunteer, how to act.")
    opening_statement: str = Field(description="What the SP says when asked an open question about the visit.")
    default_answer: str = Field(
        default="No, not that I know of.",
        description="Answer to any question the case does not cover. Must not add findings.",
    )


class HistoryFact(_Strict):
    """One item of the question bank and the SP's answer to it."""

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    category: HistoryCategory
    question: str = Field(description="Canonical question the examinee should ask.")
    paraphrases: list[str] = Field(min_length=2, description="Other ways to ask the same thing.")
    answer: str = Field(description="The SP's answer, in lay language.")
    keywords: list[str] = Field(default_factory=list, description="Extra retrieval terms.")
    required: bool = Field(default=True, description="Counts toward history coverage.")
    volunteer: bool = Field(default=False, description="SP may say it unprompted in the opening.")


class ExamFinding(_Strict):
    """Physical-exam finding for one system, with what the examinee should do."""

    system: BodySystem
    component: str = Field(description="Named exam component, e.g. 'Cardiac auscultation'.")
    maneuvers: list[str] = Field(default_factory=list, description="Maneuvers that count, e.g. 'palpate PMI'.")
    finding: str
    abnormal: bool = False
    target: bool = Field(default=True, description="Part of the expected exam (MedQA-CS coverage).")
    reason: str = Field(default="", description="Why this exam is indicated (reason relevance).")


class Investigation(_Strict):
    """An investigation the doctor may order and its result."""

    name: str
    aliases: list[str] = Field(default_factory=list)
    result: str
    abnormal: bool = False


class ChallengingQuestion(_Strict):
    question: str
    sample_answer: str


class Closure(_Strict):
    """Key for the closure: what a good examinee explains before leaving."""

    impressions: str
    management: list[str] = Field(min_length=1, description="Plan items: tests, treatment, follow-up.")
    counselling: list[str] = Field(default_factory=list, description="Counselling points, e.g. smoking cessation.")


class NoteKey(_Strict):
    """Model patient note (HPI and PE) for reference and judges."""

    hpi: str
    pe: str


class DifferentialItem(_Strict):
    diagnosis: str
    synonyms: list[str] = Field(default_factory=list)
    history_findings: list[str] = Field(min_length=1)
    exam_findings: list[str] = Field(default_factory=list)


class Diagnosis(_Strict):
    """The final (correct) diagnosis and CRAFT-MD material."""

    name: str
    synonyms: list[str] = Field(default_factory=list)
    vignette: str = Field(description="Third-person vignette for CRAFT-MD's vignette arm.")
    choices: list[str] = Field(min_length=4, description="Answer options incl. the correct one (first 4 used for 4-choice).")

    @model_validator(mode="after")
    def _correct_answer_among_choices(self) -> "Diagnosis":
        lowered = {c.lower() for c in self.choices}
        names = {self.name.lower(), *(s.lower() for s in self.synonyms)}
        if not lowered & names:
            raise ValueError("choices must include the correct diagnosis (name or a synonym)")
        return self


class GuidelineFeature(_Strict):
    """EPAG: a diagnostic-guideline feature and how much it matters."""

    feature: str
    weight: Literal["high", "medium"] = "medium"
    fact_ids: list[str] = Field(default_factory=list, description="History facts that establish it.")

    @property
    def points(self) -> int:
        return 2 if self.weight == "high" else 1


class LcpKey(_Strict):
    """LCP/RAE: expected order of inquiry and the clinician's round count."""

    expected_order: list[str] = Field(min_length=3, description="History fact ids in the order a clinician asks.")
    clinician_rounds: int = Field(ge=1)
    expected_exams: list[str] = Field(default_factory=list, description="Exam components (or systems) a clinician requests.")
    expected_tests: list[str] = Field(default_factory=list)
    treatment: list[str] = Field(default_factory=list, description="Key treatment steps.")


class Case(_Strict):
    """A whole OSCE case. ``id`` comes from the file name, not the file."""

    schema_version: int = CASE_SCHEMA_VERSION
    id: str = Field(default="", description="Set by the loader from the file name.")
    title: str
    specialty: str
    language: str = "en"
    difficulty: Literal["foundation", "core", "advanced"] | None = None
    tags: list[str] = Field(default_factory=list)
    source: str = Field(default="original", description="'original' or the dataset an importer read.")

    doorway: Doorway
    persona: Persona
    history: list[HistoryFact] = Field(min_length=1)
    exam: list[ExamFinding] = Field(default_factory=list)
    tests: list[Investigation] = Field(default_factory=list)
    challenging_questions: list[ChallengingQuestion] = Field(default_factory=list)
    closure: Closure | None = None
    note: NoteKey | None = None
    differential: list[DifferentialItem] = Field(default_factory=list, max_length=5)
    additional_diagnoses: list[str] = Field(default_factory=list)
    diagnosis: Diagnosis
    workup: list[str] = Field(default_factory=list)
    guideline_features: list[GuidelineFeature] = Field(default_factory=list)
    lcp: LcpKey | None = None

    @field_validator("history")
    @classmethod
    def _unique_fact_ids(cls, facts: list[HistoryFact]) -> list[HistoryFact]:
        seen: set[str] = set()
        for fact in facts:
            if fact.id in seen:
                raise ValueError(f"duplicate history fact id {fact.id!r}")
            seen.add(fact.id)
        return facts

    @model_validator(mode="after")
    def _references_resolve(self) -> "Case":
        ids = {f.id for f in self.history}
        for feature in self.guideline_features:
            for fid in feature.fact_ids:
                if fid not in ids:
                    raise ValueError(f"guideline feature {feature.feature!r} names unknown fact id {fid!r}")
        if self.lcp:
            for fid in self.lcp.expected_order:
                if fid not in ids:
                    raise ValueError(f"lcp.expected_order names unknown fact id {fid!r}")
        return self

    # -- convenience -----------------------------------------------------

    def fact(self, fact_id: str) -> HistoryFact:
        for f in self.history:
            if f.id == fact_id:
                return f
        raise KeyError(fact_id)

    def all_diagnosis_names(self) -> list[str]:
        """Correct diagnosis with synonyms, then differential names and synonyms."""
        names = [self.diagnosis.name, *self.diagnosis.synonyms]
        for d in self.differential:
            names += [d.diagnosis, *d.synonyms]
        return names

    def content_hash(self) -> str:
        """Stable hash of the case content; sessions record it to detect edits."""
        payload = self.model_dump(mode="json", exclude={"id"})
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
        return "sha256:" + hashlib.sha256(blob).hexdigest()[:16]

    def protocol_gaps(self) -> list[str]:
        """What this case lacks for each protocol (empty means complete).

        Imported cases may legitimately be partial; ``cases validate --strict``
        and the bundled-case test require an empty list.
        """
        gaps: list[str] = []
        if len(self.history) < 25:
            gaps.append(f"medqa-cs: {len(self.history)} history facts (need 25+)")
        if not any(e.target for e in self.exam):
            gaps.append("medqa-cs: no target physical-exam findings")
        if not self.closure:
            gaps.append("medqa-cs: no closure key")
        if not self.challenging_questions:
            gaps.append("medqa-cs: no challenging question")
        if not self.note:
            gaps.append("medqa-cs: no patient-note key")
        if len(self.differential) != 3:
            gaps.append(f"medqa-cs: differential has {len(self.differential)} diagnoses (need exactly 3)")
        if not self.workup:
            gaps.append("medqa-cs: no workup")
        if not self.tests:
            gaps.append("medqa-cs: no test results")
        categories = {f.category for f in self.history}
        missing = {"onset", "pmh", "medications", "allergies", "family"} - categories
        if missing:
            gaps.append(f"medqa-cs: no history fact for {', '.join(sorted(missing))}")
        if not any(c.startswith("social_") for c in categories):
            gaps.append("medqa-cs: no social history fact")
        if len(self.diagnosis.choices) < 4:
            gaps.append("craft-md: fewer than 4 choices")
        correct = {self.diagnosis.name.lower(), *(s.lower() for s in self.diagnosis.synonyms)}
        if not correct & {c.lower() for c in self.diagnosis.choices[:4]}:
            gaps.append("craft-md: the correct diagnosis is not among the first 4 choices (4-choice format)")
        if not self.guideline_features:
            gaps.append("epag: no guideline features")
        if not self.lcp:
            gaps.append("lcp: no expected order / clinician rounds")
        return gaps
