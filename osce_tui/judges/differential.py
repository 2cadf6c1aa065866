"""Differential diagnosis on the patient note (MedQA-CS).

The note has up to three diagnosis slots. Per slot:
- ``dx_name``: full slot points (10 in the bundled rubric) when the name matches
  a diagnosis of the case's differential (or the final diagnosis), half when it
  only matches one of the case's additional, less likely diagnoses, none
  otherwise or when it repeats an earlier slot's diagnosis;
- ``dx_history_findings`` / ``dx_exam_findings``: each of up to three listed
  supporting findings that matches one of the case's findings for that
  diagnosis earns a third of the slot's points;
- ``dx_order``: full points when the first-listed diagnosis is the case's
  final diagnosis.

Names match through the case's synonyms, the built-in synonym/abbreviation
table and close spellings (osce_tui.judges.diagnosis_match).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..domain.case import Case, DifferentialItem
from ..domain.rubric import Criterion, RubricSection
from ..domain.scores import ItemScore, SectionScore
from ..domain.session import NoteDiagnosis, Session
from .common import run_section, scored
from .diagnosis_match import DiagnosisMatcher
from .text import TokenPool, content_tokens, similarity, stem

SLOTS = 3
FINDING_SIMILARITY = 70.0
FINDINGS_PER_DX = 3


@dataclass
class SlotMatch:
    slot: int
    listed: NoteDiagnosis | None
    item: DifferentialItem | None  # the case's differential entry it matched
    additional: str | None  # or the additional diagnosis it matched
    duplicate: bool = False


def _note_evidence(session: Session) -> list[str]:
    return [t.id for t in session.turns if t.kind == "note"][-1:]


def _final_matcher(case: Case) -> DiagnosisMatcher:
    return DiagnosisMatcher([case.diagnosis.name, *case.diagnosis.synonyms])


def match_slots(case: Case, session: Session) -> list[SlotMatch]:
    listed = list(session.note.diagnoses) if session.note else []
    final = _final_matcher(case)
    items = list(case.differential)
    matchers = [DiagnosisMatcher([d.diagnosis, *d.synonyms]) for d in items]
    out: list[SlotMatch] = []
    used: set[int] = set()
    used_additional: set[str] = set()
    for slot in range(SLOTS):
        nd = listed[slot] if slot < len(listed) else None
        if nd is None:
            out.append(SlotMatch(slot, None, None, None))
            continue
        hit = next((i for i, m in enumerate(matchers) if m.match(nd.name).matched), None)
        if hit is None and final.match(nd.name).matched:
            # The final diagnosis may be missing from the differential list: find
            # the differential entry that *is* the final diagnosis, if any.
            hit = next((i for i, d in enumerate(items) if final.match(d.diagnosis).matched), None)
            if hit is None:
                out.append(
                    SlotMatch(
                        slot,
                        nd,
                        # No reference findings exist for it: built without validation
                        # (a case file must list findings, this stand-in has none).
                        DifferentialItem.model_construct(
                            diagnosis=case.diagnosis.name,
                            synonyms=list(case.diagnosis.synonyms),
                            history_findings=[],
                            exam_findings=[],
                        ),
                        None,
                    )
                )
                continue
        if hit is not None:
            out.append(SlotMatch(slot, nd, items[hit], None, duplicate=hit in used))
            used.add(hit)
            continue
        add = next((a for a in case.additional_diagnoses if DiagnosisMatcher([a]).match(nd.name).matched), None)
        out.append(SlotMatch(slot, nd, None, add, duplicate=add in used_additional if add else False))
        if add:
            used_additional.add(add)
    return out


def _slot_label(m: SlotMatch) -> str:
    return f"Dx {m.slot + 1}: {m.listed.name}" if m.listed else f"Dx {m.slot + 1}: (empty)"


def score_names(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    each = criterion.points / SLOTS
    ev = _note_evidence(session)
    items = []
    for m in match_slots(case, session):
        if m.listed is None:
            frac, expl = 0.0, "No diagnosis listed in this slot." if session.note else "No patient note submitted."
        elif m.duplicate:
            frac, expl = 0.0, "Repeats a diagnosis already listed."
        elif m.item is not None:
            frac, expl = 1.0, f"Matches the case's differential: {m.item.diagnosis}."
        elif m.additional is not None:
            frac, expl = 0.5, f"Matches only an additional (less likely) diagnosis: {m.additional} (half points)."
        else:
            frac, expl = 0.0, "Not among the case's differential or additional diagnoses."
        items.append(
            scored(criterion, frac, expl, ev, max_points=each, item_id=f"dx{m.slot + 1}", label=_slot_label(m))
        )
    extra["diagnoses_listed"] = [d.name for d in session.note.diagnoses] if session.note else []
    return items


def _supports(listed: str, reference: str) -> bool:
    """Does a finding written on the note express the case's reference finding?

    Notes are often verbose or lay ("pressure in the middle of his chest" for
    "central pressure-like chest pain"), so two shared content stems making up
    a third of the shorter side are enough, besides close wording.
    """
    if similarity(listed, reference) >= FINDING_SIMILARITY or TokenPool(listed).coverage(reference) >= 0.6:
        return True
    a = {stem(t) for t in content_tokens(listed)}
    b = {stem(t) for t in content_tokens(reference)}
    shared = len(a & b)
    return shared >= 2 and shared / max(1, min(len(a), len(b))) >= 1 / 3


def _finding_matches(listed: list[str], reference: list[str]) -> list[tuple[str, str]]:
    """Listed findings (at most three) that match a reference finding, each reference used once."""
    pairs = []
    free = list(reference)
    for f in listed[:FINDINGS_PER_DX]:
        best = None
        for r in free:
            if _supports(f, r):
                best = r
                break
        if best is not None:
            pairs.append((f, best))
            free.remove(best)
    return pairs


def _score_findings(criterion: Criterion, case: Case, session: Session, kind: str) -> list[ItemScore]:
    each = criterion.points / SLOTS
    ev = _note_evidence(session)
    items = []
    for m in match_slots(case, session):
        label = _slot_label(m) + f" — {kind} findings"
        if m.listed is None:
            frac, expl = 0.0, "No diagnosis listed in this slot."
        elif m.item is None or m.duplicate:
            frac, expl = 0.0, "No reference findings: the diagnosis is not in the case's differential."
        else:
            listed = m.listed.history_findings if kind == "history" else m.listed.exam_findings
            reference = m.item.history_findings if kind == "history" else m.item.exam_findings
            pairs = _finding_matches(listed, reference)
            frac = len(pairs) / FINDINGS_PER_DX
            shown = "; ".join(f"{a!r} ≈ {b!r}" for a, b in pairs) or "none"
            expl = f"{len(pairs)} of up to {FINDINGS_PER_DX} listed {kind} findings support it: {shown}."
        items.append(
            scored(criterion, frac, expl, ev, max_points=each, item_id=f"dx{m.slot + 1}_{kind}", label=label)
        )
    return items


def score_history_findings(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    return _score_findings(criterion, case, session, "history")


def score_exam_findings(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    return _score_findings(criterion, case, session, "exam")


def score_order(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    ev = _note_evidence(session)
    if not session.note or not session.note.diagnoses:
        return [scored(criterion, 0.0, "No diagnoses listed on the note.", ev)]
    first = session.note.diagnoses[0].name
    ok = _final_matcher(case).match(first).matched
    extra["leading_correct"] = ok
    expl = (
        f"The first-listed diagnosis ({first}) is the case's final diagnosis."
        if ok
        else f"The first-listed diagnosis ({first}) is not the case's final diagnosis ({case.diagnosis.name})."
    )
    return [scored(criterion, 1.0 if ok else 0.0, expl, ev)]


SCORERS = {
    "dx_name": score_names,
    "dx_history_findings": score_history_findings,
    "dx_exam_findings": score_exam_findings,
    "dx_order": score_order,
}


def score_offline(section: RubricSection, case: Case, session: Session) -> SectionScore:
    return run_section(section, case, session, SCORERS, "differential")
