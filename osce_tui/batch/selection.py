"""What a batch run will do: the plan (cases × doctors × arms × formats × trials).

Each job is one encounter with a stable key (what resume compares) and a seed
derived from the run seed and the key, so an encounter's randomness does not
depend on which worker happens to run it or on what else is in the run.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Iterator

from ..domain.case import Case
from ..domain.rubric import Rubric
from .results import EncounterKey

MODES = ("encounter", "craftmd", "epag")
CRAFTMD_ARMS = ("vignette", "single-turn", "multi-turn", "summarized", "exam-only")
# Run order within one case/doctor/format/trial: the conversation before the arms made from it.
_RUN_ORDER = ("vignette", "multi-turn", "single-turn", "summarized", "exam-only")
ANSWER_FORMATS = ("4-choice", "many-choice", "free")
DEFAULT_RUBRIC_BY_MODE = {"craftmd": "craft-md", "epag": "epag"}
# Arms built from the multi-turn conversation: they need it first.
DERIVED_ARMS = ("single-turn", "summarized")


class PlanError(ValueError):
    """A plan that cannot run (unknown arm, no cases ...)."""


def split_list(value: str | None) -> list[str]:
    """'a, b,,c' -> ['a', 'b', 'c'] keeping order, dropping duplicates."""
    out: list[str] = []
    for part in (value or "").split(","):
        part = part.strip()
        if part and part not in out:
            out.append(part)
    return out


def parse_arms(value: str | None) -> list[str]:
    arms = split_list(value) or list(CRAFTMD_ARMS)
    unknown = [a for a in arms if a not in CRAFTMD_ARMS]
    if unknown:
        raise PlanError(f"unknown CRAFT-MD arm(s) {', '.join(unknown)}; choose from {', '.join(CRAFTMD_ARMS)}")
    # single-turn and summarized are made from the multi-turn conversation, so
    # that conversation is run (and reported) too; it goes first.
    if any(a in DERIVED_ARMS for a in arms) and "multi-turn" not in arms:
        arms.append("multi-turn")
    return sorted(arms, key=_RUN_ORDER.index)


def parse_formats(value: str | None) -> list[str]:
    formats = split_list(value) or ["free"]
    unknown = [f for f in formats if f not in ANSWER_FORMATS]
    if unknown:
        raise PlanError(f"unknown answer format(s) {', '.join(unknown)}; choose from {', '.join(ANSWER_FORMATS)}")
    return formats


def derive_seed(run_seed: int, key: EncounterKey) -> int:
    """A 31-bit seed from the run seed and the job key (stable across runs and machines)."""
    blob = f"{run_seed}|{sorted(key.as_dict().items())}".encode()
    return int(hashlib.sha256(blob).hexdigest()[:8], 16) & 0x7FFFFFFF


_SLUG = re.compile(r"[^A-Za-z0-9.-]+")


def slug(text: str) -> str:
    return _SLUG.sub("-", text).strip("-") or "x"


@dataclass(frozen=True)
class Job:
    case: Case
    key: EncounterKey
    seed: int

    @property
    def session_filename(self) -> str:
        """Deterministic per key, so a rerun finds (and continues) an interrupted session."""
        digest = hashlib.sha256(repr(sorted(self.key.as_dict().items())).encode()).hexdigest()[:8]
        parts = [slug(self.key.case), slug(self.key.doctor)]
        if self.key.arm:
            parts.append(slug(self.key.arm))
        if self.key.answer_format:
            parts.append(slug(self.key.answer_format))
        parts.append(f"t{self.key.trial}")
        return "_".join(parts) + f"_{digest}.json"


@dataclass
class BatchPlan:
    cases: list[Case]
    rubric: Rubric
    doctors: list[str]
    patient: str
    judge: str
    trials: int = 1
    seed: int = 0
    mode: str = "encounter"
    arms: list[str] = field(default_factory=list)
    answer_formats: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise PlanError(f"unknown mode {self.mode!r}; choose from {', '.join(MODES)}")
        if not self.cases:
            raise PlanError("no cases selected")
        if not self.doctors:
            raise PlanError("no doctor given")
        if self.trials < 1:
            raise PlanError("--trials must be at least 1")
        if self.mode == "craftmd":
            # Normalised: known names, run order, multi-turn present when an arm derives from it.
            self.arms = parse_arms(",".join(self.arms) or None)
            self.answer_formats = parse_formats(",".join(self.answer_formats) or None)
        else:
            self.arms, self.answer_formats = [], []

    def jobs(self) -> Iterator[Job]:
        """Every encounter; within a case/doctor/format/trial, multi-turn precedes the arms derived from it."""
        arms: list[str | None] = list(self.arms) or [None]
        formats: list[str | None] = list(self.answer_formats) or [None]
        for case in self.cases:
            for doctor in self.doctors:
                for fmt in formats:
                    for trial in range(self.trials):
                        for arm in arms:
                            key = EncounterKey(
                                case=case.id,
                                doctor=doctor,
                                patient=self.patient,
                                judge=self.judge,
                                rubric=self.rubric.id,
                                mode=self.mode,
                                arm=arm,
                                answer_format=fmt,
                                trial=trial,
                            )
                            yield Job(case, key, derive_seed(self.seed, key))

    def model_specs(self) -> list[str]:
        """Distinct model specs the run will call (not offline/human)."""
        out: list[str] = []
        for spec in [*self.doctors, self.patient, self.judge]:
            if spec not in ("offline", "human") and spec not in out:
                out.append(spec)
        return out
