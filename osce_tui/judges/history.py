"""History taking (MedQA-CS): questions consistent with the case's question bank,
original (no repeats), and covering the facts the case requires.

Criteria this module scores offline:
- ``question_consistency`` (``per="question"``): one item per doctor turn that
  asks a history question (item id = turn id, as the model judge uses), the
  points spread evenly over them; a turn earns the share of its questions that
  match an item of the case's question bank. Turns asking only communication
  questions ("anything else?") are excluded, neither for nor against;
- ``question_originality`` (``per="question"``): the same items, earning the
  share of their questions that do not repeat an earlier one (same fact asked
  again, or a near-identical sentence);
- ``fact_coverage`` (``per="fact"``): one item per required fact, its share of
  the criterion's points earned when the fact was elicited.
"""

from __future__ import annotations

from typing import Any, Callable

from ..domain.case import Case
from ..domain.rubric import Criterion, RubricSection
from ..domain.scores import ItemScore, SectionScore
from ..domain.session import Session
from .common import excluded, fmt_list, run_section, scored, spread
from .dialogue import QuestionRecord, analyse, fact_label

HISTORY_PHASES = {"history", "doorway"}


def _questions_by_turn(case: Case, session: Session) -> dict[str, list[QuestionRecord]]:
    """History-phase doctor turns that ask something → their question sentences, in order."""
    out: dict[str, list[QuestionRecord]] = {}
    for q in analyse(case, session).questions:
        if q.phase in HISTORY_PHASES:
            out.setdefault(q.turn_id, []).append(q)
    return out


def _per_question_items(
    criterion: Criterion,
    case: Case,
    session: Session,
    judge: Callable[[list[QuestionRecord]], tuple[float, str]],
) -> list[ItemScore]:
    """One item per doctor question turn (item id = turn id), points spread over the counted turns.

    A turn holding only communication questions ("anything else?") is
    excluded: it is neither for nor against the question bank.
    """
    by_turn = _questions_by_turn(case, session)
    counted = [t for t, qs in by_turn.items() if any(not q.generic for q in qs)]
    if not counted:
        return [scored(criterion, 0.0, "No history questions asked yet.")]
    each = spread(criterion.points, len(counted))
    items = []
    for turn_id, qs in by_turn.items():
        real = [q for q in qs if not q.generic]
        label = " ".join(q.text for q in qs)[:80]
        if not real:
            items.append(
                excluded(criterion, "A communication question, not a history question: not counted.", item_id=turn_id, label=label)
            )
            continue
        fraction, expl = judge(real)
        items.append(scored(criterion, fraction, expl, [turn_id], max_points=each, item_id=turn_id, label=label))
    return items


def _consistency(qs: list[QuestionRecord]) -> tuple[float, str]:
    hits = [q for q in qs if q.fact_ids]
    if len(hits) == len(qs):
        return 1.0, "In the case's question bank (" + ", ".join(sorted({f for q in qs for f in q.fact_ids})) + ")."
    missed = [q.text for q in qs if not q.fact_ids]
    return len(hits) / len(qs), f"Not in the case's question bank: {fmt_list(missed, 3)}."


def _originality(qs: list[QuestionRecord]) -> tuple[float, str]:
    repeats = [q for q in qs if q.repeat_of]
    if not repeats:
        return 1.0, "A new question."
    return 1 - len(repeats) / len(qs), "Repeats an earlier question: " + fmt_list(
        [f"{q.text!r} (first asked in {q.repeat_of})" for q in repeats], 3
    ) + "."


def score_consistency(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    qs = [q for qs in _questions_by_turn(case, session).values() for q in qs if not q.generic]
    extra["questions_asked"] = len(qs)
    extra["questions_in_bank"] = sum(1 for q in qs if q.fact_ids)
    return _per_question_items(criterion, case, session, _consistency)


def score_originality(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    qs = [q for qs in _questions_by_turn(case, session).values() for q in qs if not q.generic]
    extra["repeated_questions"] = sum(1 for q in qs if q.repeat_of)
    return _per_question_items(criterion, case, session, _originality)


def score_fact_coverage(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    required = [f for f in case.history if f.required]
    if not required:
        return [excluded(criterion, "The case marks no history fact as required.")]
    analysis = analyse(case, session)
    each = spread(criterion.points, len(required))
    items = []
    for fact in required:
        hit = analysis.first_hit.get(fact.id)
        if hit:
            how = {
                "meta": "the patient engine recorded answering it",
                "question": f"the doctor's question matched the question bank (similarity {hit.score:.0f})",
                "answer": "the patient's reply contained this fact",
            }[hit.via]
            expl = f"Elicited: {how}."
        else:
            expl = "Not elicited."
        items.append(
            scored(
                criterion,
                1.0 if hit else 0.0,
                expl,
                analysis.evidence(fact.id),
                max_points=each,
                item_id=fact.id,
                label=fact_label(fact),
            )
        )
    extra["facts_elicited"] = sum(1 for f in required if f.id in analysis.first_hit)
    extra["facts_required"] = len(required)
    return items


SCORERS = {
    "question_consistency": score_consistency,
    "question_originality": score_originality,
    "fact_coverage": score_fact_coverage,
}


def score_offline(section: RubricSection, case: Case, session: Session) -> SectionScore:
    return run_section(section, case, session, SCORERS, "history")
