"""Score types shared by offline and LLM judges, the TUI panels and reports."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Literal

from pydantic import BaseModel, Field

ItemStatus = Literal["scored", "excluded", "unscored"]
"""scored: points awarded or withheld with a reason; excluded: left out of the
denominator (e.g. needs a model judge); unscored: the judge failed — reason in
``explanation``, never a silent zero."""


class ItemScore(BaseModel):
    """One judgement: a criterion, or one expansion of it (a fact, an exam ...)."""

    criterion_id: str
    item_id: str | None = Field(default=None, description="Fact/exam/diagnosis id for expanded criteria.")
    label: str = Field(description="Short human label shown in panels.")
    points: float = 0.0
    max_points: float
    status: ItemStatus = "scored"
    explanation: str = ""
    evidence: list[str] = Field(default_factory=list, description="Turn ids that support the judgement.")

    @property
    def met(self) -> bool:
        return self.status == "scored" and self.max_points > 0 and self.points >= self.max_points


class SectionScore(BaseModel):
    section_id: str
    title: str
    judge: str = Field(description="Model spec of the judge, e.g. 'offline' or 'openai/gpt-4o'.")
    items: list[ItemScore] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict, description="Protocol outputs, e.g. extracted diagnosis.")

    @property
    def points(self) -> float:
        return sum(i.points for i in self.items if i.status == "scored")

    @property
    def max_points(self) -> float:
        return sum(i.max_points for i in self.items if i.status == "scored")

    @property
    def score_100(self) -> float | None:
        """Section score on 0-100, or None when nothing was scoreable."""
        if self.max_points <= 0:
            return None
        return round(100.0 * self.points / self.max_points, 2)


class ScoreSet(BaseModel):
    """All sections of one rubric scored by one judge with one prompt set.

    ``batch score`` appends new sets beside old ones; ``key`` identifies a set.
    """

    rubric_id: str
    judge: str
    prompt_hash: str = Field(default="offline", description="Hash of the judge prompts used ('offline' if none).")
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc))
    final: bool = Field(default=True, description="False for live/incremental scores during an encounter.")
    sections: list[SectionScore] = Field(default_factory=list)
    section_weights: dict[str, float] = Field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.rubric_id, self.judge, self.prompt_hash)

    @property
    def total(self) -> float | None:
        """Weighted mean of section scores on 0-100 (sections with no score skipped)."""
        num = den = 0.0
        for s in self.sections:
            if s.score_100 is None:
                continue
            w = self.section_weights.get(s.section_id, 1.0)
            num += w * s.score_100
            den += w
        return round(num / den, 2) if den else None

    def section(self, section_id: str) -> SectionScore | None:
        return next((s for s in self.sections if s.section_id == section_id), None)
