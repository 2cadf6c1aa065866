"""Plumbing every offline judge shares: criterion dispatch and item helpers.

A judge module maps criterion ids to scorer functions. ``run_section`` walks
the rubric section's criteria: a criterion that needs a model is marked
excluded (left out of the denominator, and the item says why); a criterion the
module has no offline scorer for is marked unscored with the reason; a scorer
that raises becomes an unscored item carrying the error — never a silent zero.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from ..domain.case import Case
from ..domain.rubric import Criterion, RubricSection
from ..domain.scores import ItemScore, SectionScore
from ..domain.session import Session, Turn

log = logging.getLogger(__name__)

OFFLINE = "offline"

Scorer = Callable[[Criterion, Case, Session, dict[str, Any]], list[ItemScore]]
"""(criterion, case, session, extra) -> items. ``extra`` is the section's extra dict."""


def excluded(criterion: Criterion, reason: str, *, item_id: str | None = None, label: str | None = None) -> ItemScore:
    return ItemScore(
        criterion_id=criterion.id,
        item_id=item_id,
        label=label or criterion.text,
        points=0.0,
        max_points=criterion.points,
        status="excluded",
        explanation=reason,
    )


def unscored(criterion: Criterion, reason: str) -> ItemScore:
    return ItemScore(
        criterion_id=criterion.id,
        label=criterion.text,
        points=0.0,
        max_points=criterion.points,
        status="unscored",
        explanation=reason,
    )


def scored(
    criterion: Criterion,
    fraction: float,
    explanation: str,
    evidence: list[str] | None = None,
    *,
    max_points: float | None = None,
    item_id: str | None = None,
    label: str | None = None,
) -> ItemScore:
    """An item worth ``max_points`` (default: the criterion's) earning ``fraction`` of it."""
    mp = criterion.points if max_points is None else max_points
    fraction = min(1.0, max(0.0, fraction))
    return ItemScore(
        criterion_id=criterion.id,
        item_id=item_id,
        label=label or criterion.text,
        points=mp * fraction,
        max_points=mp,
        status="scored",
        explanation=explanation,
        evidence=_unique(evidence or []),
    )


def _unique(ids: list[str]) -> list[str]:
    seen: set[str] = set()
    return [i for i in ids if i and not (i in seen or seen.add(i))]


def run_section(
    section: RubricSection,
    case: Case,
    session: Session,
    scorers: dict[str, Scorer],
    module: str,
) -> SectionScore:
    extra: dict[str, Any] = {}
    items: list[ItemScore] = []
    for criterion in section.criteria:
        if criterion.needs_model:
            items.append(
                excluded(
                    criterion,
                    "Needs a model judge: the offline judge cannot assess this, so it is left out of the section total.",
                )
            )
            continue
        scorer = scorers.get(criterion.id)
        if scorer is None:
            items.append(
                unscored(
                    criterion,
                    f"The offline {module} judge has no scorer for criterion {criterion.id!r} "
                    f"(known: {', '.join(sorted(scorers))}).",
                )
            )
            continue
        try:
            items.extend(scorer(criterion, case, session, extra))
        except Exception as exc:  # a judge bug must show in the panel, not crash the encounter
            log.exception("offline %s judge failed on %s", module, criterion.id)
            items.append(unscored(criterion, f"Offline judge error: {type(exc).__name__}: {exc}"))
    return SectionScore(section_id=section.id, title=section.title, judge=OFFLINE, items=items, extra=extra)


def spread(total: float, n: int) -> float:
    """Points per item when ``total`` is spread evenly over ``n`` items."""
    return total / n if n else 0.0


def doctor_utterances(session: Session, phases: set[str] | None = None) -> list[Turn]:
    return [t for t in session.utterances("doctor") if phases is None or t.phase in phases]


def patient_utterances(session: Session, phases: set[str] | None = None) -> list[Turn]:
    return [t for t in session.utterances("patient") if phases is None or t.phase in phases]


def fmt_list(items: list[str], limit: int = 6) -> str:
    if not items:
        return "none"
    shown = ", ".join(items[:limit])
    return shown + (f" (+{len(items) - limit} more)" if len(items) > limit else "")
