"""The judge interface: one module per rubric section, offline and LLM strategies.

Each module in ``osce_tui.judges`` (communication, history, physical_exam,
closure, differential, craftmd, epag, lcp) provides:

- ``score_offline(section, case, session) -> SectionScore`` — deterministic,
  fast enough to run after every turn for the live panels;
- ``async score_llm(section, case, session, provider, settings) -> SectionScore``
  — the model-judged version, sharing the same output types.

Every ItemScore carries an explanation and evidence turn ids. Failures are
recorded as ``status="unscored"`` with the reason, never as a silent zero.
"""

from __future__ import annotations

from typing import Protocol

from ..domain.case import Case
from ..domain.rubric import RubricSection
from ..domain.scores import SectionScore
from ..domain.session import GenerationSettings, Session
from ..providers.base import ChatProvider


class OfflineSectionJudge(Protocol):
    def __call__(self, section: RubricSection, case: Case, session: Session) -> SectionScore: ...


class LlmSectionJudge(Protocol):
    async def __call__(
        self,
        section: RubricSection,
        case: Case,
        session: Session,
        provider: ChatProvider,
        settings: GenerationSettings,
    ) -> SectionScore: ...
