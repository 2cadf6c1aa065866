"""Rubrics: sections of criteria, each criterion scored by a named judge module.

A rubric file (``rubrics/<id>.toml``) lists sections; each section names the
judge module that scores it (``osce_tui.judges.<module>``) and its criteria.
A criterion is HealthBench-shaped: an id, the text a judge reads, the points it
is worth and free tags. ``per`` says whether the criterion is judged once or
expanded over case items (one judgement per history fact, per target exam, per
differential diagnosis ...), in which case ``points`` is the total spread over
those items.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

JudgeModule = Literal[
    "communication",
    "history",
    "physical_exam",
    "closure",
    "differential",
    "craftmd",
    "epag",
    "lcp",
]
"""Judge modules; each has an offline and an LLM strategy (osce_tui.judges)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Criterion(_Strict):
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    text: str = Field(description="What the judge checks, in plain words.")
    points: float = Field(ge=0, description="Points when fully met (spread over items when expanded).")
    per: Literal["once", "fact", "exam", "diagnosis", "feature", "question"] = "once"
    tags: list[str] = Field(default_factory=list)
    needs_model: bool = Field(
        default=False,
        description="Only an LLM judge can score it; offline judges mark it excluded and say so.",
    )


class RubricSection(_Strict):
    id: str = Field(pattern=r"^[a-z0-9_]+$")
    title: str
    judge: JudgeModule
    description: str = ""
    criteria: list[Criterion] = Field(min_length=1)
    weight: float = Field(default=1.0, ge=0, description="Weight of this section in the rubric total.")

    @field_validator("criteria")
    @classmethod
    def _unique_ids(cls, criteria: list[Criterion]) -> list[Criterion]:
        ids = [c.id for c in criteria]
        dupes = {i for i in ids if ids.count(i) > 1}
        if dupes:
            raise ValueError(f"duplicate criterion ids: {sorted(dupes)}")
        return criteria

    @property
    def max_points(self) -> float:
        """Most points a section can give; penalty criteria only take points away."""
        return sum(c.points for c in self.criteria if "penalty" not in c.tags)

    def criterion(self, criterion_id: str) -> Criterion:
        for c in self.criteria:
            if c.id == criterion_id:
                return c
        raise KeyError(criterion_id)


class Rubric(_Strict):
    id: str = Field(default="", description="Set by the loader from the file name.")
    title: str
    protocol: Literal["medqa-cs", "craft-md", "epag", "lcp", "osce-practice", "custom"]
    description: str = ""
    reference: str = Field(default="", description="Citation of the protocol this reproduces.")
    sections: list[RubricSection] = Field(min_length=1)

    def section(self, section_id: str) -> RubricSection:
        for s in self.sections:
            if s.id == section_id:
                return s
        raise KeyError(section_id)
