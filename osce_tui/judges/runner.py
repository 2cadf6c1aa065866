"""Scoring a session against a rubric: live (offline, after every turn) and final.

``score_live`` runs the offline judge of every rubric section synchronously and
returns a non-final ScoreSet; it must stay fast because the engine calls it
after each turn (see benchmarks/bench_live_scoring.py). ``score_session`` is the
final scoring: offline judges for ``judge_spec == "offline"``, otherwise one
model-judge call per section through ``osce_tui.judges.llm``.
"""

from __future__ import annotations

import importlib
import logging
from types import ModuleType

from ..domain.case import Case
from ..domain.rubric import Rubric, RubricSection
from ..domain.scores import ItemScore, ScoreSet, SectionScore
from ..domain.session import Session
from .common import OFFLINE

log = logging.getLogger(__name__)

_MODULES: dict[str, ModuleType] = {}


def judge_module(name: str) -> ModuleType:
    """The offline judge module for a section's ``judge`` name (cached import)."""
    mod = _MODULES.get(name)
    if mod is None:
        mod = importlib.import_module(f"{__package__}.{name}")
        if not callable(getattr(mod, "score_offline", None)):
            raise AttributeError(f"judge module {mod.__name__} has no score_offline()")
        _MODULES[name] = mod
    return mod


def _failed_section(section: RubricSection, judge: str, exc: BaseException) -> SectionScore:
    """A section whose judge crashed: every criterion unscored with the reason."""
    reason = f"Judge failed: {type(exc).__name__}: {exc}"
    return SectionScore(
        section_id=section.id,
        title=section.title,
        judge=judge,
        items=[
            ItemScore(criterion_id=c.id, label=c.text, max_points=c.points, status="unscored", explanation=reason)
            for c in section.criteria
        ],
    )


def score_section_offline(section: RubricSection, case: Case, session: Session) -> SectionScore:
    try:
        return judge_module(section.judge).score_offline(section, case, session)
    except Exception as exc:  # keep the encounter going; the panel shows the failure
        log.exception("offline judge %s failed on section %s", section.judge, section.id)
        return _failed_section(section, OFFLINE, exc)


def _weights(rubric: Rubric) -> dict[str, float]:
    return {s.id: s.weight for s in rubric.sections}


def _offline_set(case: Case, session: Session, rubric: Rubric, *, final: bool) -> ScoreSet:
    return ScoreSet(
        rubric_id=rubric.id,
        judge=OFFLINE,
        prompt_hash=OFFLINE,
        final=final,
        sections=[score_section_offline(s, case, session) for s in rubric.sections],
        section_weights=_weights(rubric),
    )


def score_live(case: Case, session: Session, rubric: Rubric) -> ScoreSet:
    """Offline scores of the encounter so far (final=False)."""
    return _offline_set(case, session, rubric, final=False)


async def score_session(
    case: Case,
    session: Session,
    rubric: Rubric,
    judge_spec: str,
    *,
    config=None,
    provider=None,
) -> ScoreSet:
    """Final scores (final=True) with the offline judges or a model judge.

    For a model judge, ``provider`` is used when given (tests, batch sharing a
    client), else one is made from ``judge_spec`` and ``config``. A section
    whose model call fails outright is recorded as unscored, not dropped;
    missing keys and authentication errors propagate.
    """
    if judge_spec == OFFLINE:
        return _offline_set(case, session, rubric, final=True)

    from ..config import Config
    from ..providers.base import (
        AuthenticationError,
        MissingKeyError,
        ProviderConnectionError,
        ProviderTimeoutError,
        RateLimitError,
    )
    from . import llm

    # The judge itself is unavailable (after the SDK's own retries): no section
    # can succeed, and writing N "unscored" sections would look like a finished
    # job. Raise, so callers can fall back, count a failure and retry later.
    unavailable = (MissingKeyError, AuthenticationError, ProviderConnectionError, ProviderTimeoutError, RateLimitError)

    config = config or Config()
    owned = provider is None
    if provider is None:
        from ..providers.factory import make_provider

        provider = make_provider(judge_spec, config)
    settings = config.generation.judge
    spec = str(getattr(provider, "spec", judge_spec))
    sections: list[SectionScore] = []
    try:
        for section in rubric.sections:
            try:
                sections.append(await llm.score_section_llm(section, case, session, provider, settings))
            except unavailable:
                raise
            except Exception as exc:  # a bad reply for one section: that section is unscored
                log.warning("model judge %s failed on section %s: %s", spec, section.id, exc)
                sections.append(_failed_section(section, spec, exc))
    finally:
        if owned:
            await provider.aclose()
    return ScoreSet(
        rubric_id=rubric.id,
        judge=spec,
        prompt_hash=llm.prompt_hash(sorted({s.judge for s in rubric.sections})),
        final=True,
        sections=sections,
        section_weights=_weights(rubric),
    )
