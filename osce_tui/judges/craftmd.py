"""CRAFT-MD diagnostic accuracy: extract the doctor's final diagnosis and check it.

The answer is ``session.final_diagnosis`` when the doctor gave one, else the
last doctor utterance. Extraction (osce_tui.judges.diagnosis_match) yields
CRAFT-MD's kinds: ``single``, ``multiple`` (several diagnoses without
committing to one) or ``none``. Following CRAFT-MD, only a single diagnosis
can be correct; for ``multiple`` the extra records whether any listed name
would have matched. An answer that is a bare option letter ("B", "(c)") is
mapped to the case's choices first (multiple-choice arms).

``extra``: {"extracted": [...], "kind": ..., "correct": bool, "matched": name,
"how": match kind, "any_match": bool, "answer_turn": turn id}.
"""

from __future__ import annotations

import re
from typing import Any

from ..domain.case import Case
from ..domain.rubric import Criterion, RubricSection
from ..domain.scores import ItemScore, SectionScore
from ..domain.session import Session
from .common import run_section, scored
from .diagnosis_match import DiagnosisMatcher, extract_diagnoses


def _answer(session: Session) -> tuple[str | None, str | None]:
    """(answer text, turn id) — the explicit final diagnosis wins over the last utterance."""
    dx_turns = [t for t in session.turns if t.kind == "diagnosis"]
    if session.final_diagnosis:
        return session.final_diagnosis, dx_turns[-1].id if dx_turns else None
    if dx_turns:
        return dx_turns[-1].text, dx_turns[-1].id
    doctor = session.utterances("doctor")
    if doctor:
        return doctor[-1].text, doctor[-1].id
    return None, None


def _letter_choice(answer: str, case: Case) -> str | None:
    m = re.match(r"^\s*\(?([A-Za-z])[).:]?\s*(?:$|[-:)]\s*)", answer)
    if not m:
        return None
    i = ord(m.group(1).upper()) - ord("A")
    return case.diagnosis.choices[i] if 0 <= i < len(case.diagnosis.choices) else None


def judge_answer(case: Case, answer: str | None) -> dict[str, Any]:
    known = [*case.all_diagnosis_names(), *case.additional_diagnoses, *case.diagnosis.choices]
    if answer and (choice := _letter_choice(answer, case)):
        answer = choice
    kind, extracted = extract_diagnoses(answer, known)
    matcher = DiagnosisMatcher([case.diagnosis.name, *case.diagnosis.synonyms])
    hit = matcher.match_any(extracted)
    return {
        "extracted": extracted,
        "kind": kind,
        "correct": kind == "single" and hit is not None,
        "any_match": hit is not None,
        "matched": hit.target if hit else None,
        "how": hit.how if hit else None,
    }


def score_accuracy(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    answer, turn_id = _answer(session)
    result = judge_answer(case, answer)
    extra.update(result)
    extra["answer_turn"] = turn_id
    if result["kind"] == "none":
        expl = "No diagnosis could be extracted from the doctor's final answer."
    elif result["kind"] == "multiple":
        expl = (
            f"Several diagnoses given without committing to one ({'; '.join(result['extracted'])}); "
            f"counted incorrect{' although one matches' if result['any_match'] else ''}."
        )
    elif result["correct"]:
        expl = f"Correct: {result['extracted'][0]!r} matches {case.diagnosis.name!r} ({result['how']})."
    else:
        expl = f"Incorrect: {result['extracted'][0]!r} does not match {case.diagnosis.name!r}."
    return [scored(criterion, 1.0 if result["correct"] else 0.0, expl, [turn_id] if turn_id else [])]


SCORERS = {"diagnostic_accuracy": score_accuracy}


def score_offline(section: RubricSection, case: Case, session: Session) -> SectionScore:
    return run_section(section, case, session, SCORERS, "craftmd")
