"""Physical exam (MedQA-CS): coverage of the case's target exams, reason
relevance (model-only), and a penalty for exams outside the expected systems.

Arithmetic follows MedQA-CS: coverage is worth 60 points spread evenly over the
target exams, so 3 of 5 targets earns 36/60. ``reason_relevance`` needs a model
and is excluded offline (out of the denominator, said in its explanation).

The extra-exam penalty is an item worth 0 with negative points: each distinct
body system examined that the case does not expect deducts
``PENALTY_PER_EXTRA_SYSTEM`` points, up to the criterion's points, and never
more than the coverage points earned (the section cannot go below zero).
General appearance and vital signs are never extra.
"""

from __future__ import annotations

from typing import Any

from ..domain.case import Case, ExamFinding
from ..domain.rubric import Criterion, RubricSection
from ..domain.scores import ItemScore, SectionScore
from ..domain.session import ExamRecord, Session
from .common import excluded, fmt_list, run_section, scored, spread
from .text import TokenPool, normalise, similarity

PENALTY_PER_EXTRA_SYSTEM = 2.0
FREE_SYSTEMS = frozenset({"general", "vitals"})
_COVERAGE_ID = "exam_coverage"


def _targets(case: Case) -> list[ExamFinding]:
    return [e for e in case.exam if e.target]


def _exam_records(session: Session) -> list[ExamRecord]:
    return [r for r in session.exams if r.kind == "exam"]


def _record_covers(record: ExamRecord, finding: ExamFinding, same_system_targets: int) -> bool:
    system_ok = (record.system or "").lower() == finding.system
    pool = TokenPool(record.request)
    wording_ok = pool.contains(finding.component, 0.5) or any(pool.contains(m, 0.6) for m in finding.maneuvers)
    if system_ok and (same_system_targets == 1 or wording_ok):
        return True
    if system_ok and record.result and normalise(finding.finding) in normalise(record.result):
        return True
    # An unmapped request can still name the component or a maneuver outright.
    return not record.system and wording_ok


def _unlinked_requests(session: Session) -> list[ExamRecord]:
    """Exam-request turns with no ExamRecord (imported sessions), as bare records."""
    linked = {r.request_turn for r in session.exams}
    return [
        ExamRecord(request_turn=t.id, kind="exam", request=t.text, system=None, result="", source="unknown")
        for t in session.turns
        if t.kind == "exam_request" and t.id not in linked
    ]


def covered_findings(case: Case, session: Session, findings: list[ExamFinding] | None = None) -> dict[int, list[str]]:
    """Index into ``findings`` (default: the target exams) → evidence turn ids of the requests that covered it."""
    findings = _targets(case) if findings is None else findings
    records = _exam_records(session) + _unlinked_requests(session)
    per_system: dict[str, int] = {}
    for t in findings:
        per_system[t.system] = per_system.get(t.system, 0) + 1
    out: dict[int, list[str]] = {}
    for i, t in enumerate(findings):
        ev: list[str] = []
        for r in records:
            if _record_covers(r, t, per_system[t.system]):
                ev += [r.request_turn] + ([r.result_turn] if r.result_turn else [])
        if ev:
            out[i] = ev
    return out


def score_coverage(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    targets = _targets(case)
    if not targets:
        return [excluded(criterion, "The case lists no target physical-exam components.")]
    covered = covered_findings(case, session)
    each = spread(criterion.points, len(targets))
    extra["exams_covered"] = len(covered)
    extra["exams_targeted"] = len(targets)
    items = []
    for i, t in enumerate(targets):
        ev = covered.get(i, [])
        items.append(
            scored(
                criterion,
                1.0 if ev else 0.0,
                f"Performed ({t.system})." if ev else f"Not performed: expected {t.component} ({t.system}).",
                ev,
                max_points=each,
                item_id=f"{t.system}:{normalise(t.component).replace(' ', '_')}",
                label=t.component,
            )
        )
    return items


def expected_systems(case: Case) -> set[str]:
    """Systems a focused exam of this case may touch without penalty.

    The target exams' systems, the systems of the clinician's expected exams
    (``case.lcp.expected_exams`` names components or systems), and the free
    systems (general appearance, vitals).
    """
    systems = {t.system for t in _targets(case)}
    if case.lcp:
        for name in case.lcp.expected_exams:
            systems |= {f.system for f in case.exam if f.system == name.lower() or similarity(f.component, name) >= 85}
    return systems | FREE_SYSTEMS


def score_extra_penalty(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    expected = expected_systems(case)
    extra_systems: dict[str, list[str]] = {}
    unmapped = []
    for r in _exam_records(session):
        if not r.system:
            unmapped.append(r.request)
        elif r.system.lower() not in expected:
            extra_systems.setdefault(r.system.lower(), []).append(r.request_turn)
    penalty = min(criterion.points, PENALTY_PER_EXTRA_SYSTEM * len(extra_systems))
    earned = sum(i.points for i in extra.get("_coverage_items", []))
    if extra.get("_coverage_items") is not None:
        penalty = min(penalty, earned)
    extra["extra_exam_systems"] = sorted(extra_systems)
    expl = (
        f"Examined {len(extra_systems)} system(s) the case does not call for ({fmt_list(sorted(extra_systems))}): "
        f"-{PENALTY_PER_EXTRA_SYSTEM:g} each, capped at {criterion.points:g} and at the coverage points earned."
        if extra_systems
        else "No exams outside the expected systems."
    )
    if unmapped:
        expl += f" Not judged (request not mapped to a system): {fmt_list(unmapped, 3)}."
    return [
        ItemScore(
            criterion_id=criterion.id,
            label=criterion.text,
            points=-penalty,
            max_points=0.0,
            status="scored",
            explanation=expl,
            evidence=[t for ids in extra_systems.values() for t in ids],
        )
    ]


def _coverage_then_remember(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    items = score_coverage(criterion, case, session, extra)
    extra["_coverage_items"] = [i for i in items if i.status == "scored"]
    return items


SCORERS = {
    _COVERAGE_ID: _coverage_then_remember,
    "extra_exam_penalty": score_extra_penalty,
}


def score_offline(section: RubricSection, case: Case, session: Session) -> SectionScore:
    result = run_section(section, case, session, SCORERS, "physical_exam")
    result.extra.pop("_coverage_items", None)
    return result
