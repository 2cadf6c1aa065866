"""EPAG: how much of the diagnostic guideline the pre-consultation dialogue covered.

The dialogue is reduced to atomic facts — the case facts the patient disclosed
(offline patient's fact ids, or lexical matches; see osce_tui.judges.dialogue)
plus each doctor-question/patient-answer pair as text. A guideline feature is
covered when one of its ``fact_ids`` was elicited or, for features without
fact ids, when the feature's key terms appear in a Q/A pair (≥60% of them).

Criteria:
- ``guideline_unweighted`` (``per="feature"``): every feature counts the same;
- ``guideline_weighted`` (``per="feature"``): features weigh high=2, medium=1;
- ``diagnosis_top1`` / ``diagnosis_topk``: the separate diagnostician's ranked
  list (the patient note's diagnoses, else the final answer split into a list)
  has the correct diagnosis first / among the first ``TOP_K``. Excluded when the
  session holds no ranked list.

``extra``: {"unweighted": 0-1, "weighted": 0-1, "covered": [...], "top1": bool|None, "topk": bool|None}.
"""

from __future__ import annotations

from typing import Any

from ..domain.case import Case, GuidelineFeature
from ..domain.rubric import Criterion, RubricSection
from ..domain.scores import ItemScore, SectionScore
from ..domain.session import Session
from .common import excluded, run_section, scored
from .diagnosis_match import DiagnosisMatcher, extract_diagnoses
from .dialogue import analyse
from .text import TokenPool

TOP_K = 3


def qa_pairs(session: Session) -> list[tuple[str, str, str, str]]:
    """(doctor turn id, question, patient turn id, answer) for each answered doctor utterance."""
    pairs = []
    last = None
    for t in session.turns:
        if t.kind != "utterance":
            continue
        if t.role == "doctor":
            last = t
        elif t.role == "patient" and last is not None:
            pairs.append((last.id, last.text, t.id, t.text))
            last = None
    return pairs


def feature_coverage(case: Case, session: Session) -> dict[int, list[str]]:
    """Feature index → evidence turn ids, for covered features."""
    analysis = analyse(case, session)
    pools = [(d, p, TokenPool(q + "\n" + a)) for d, q, p, a in qa_pairs(session)]
    out: dict[int, list[str]] = {}
    for i, feat in enumerate(case.guideline_features):
        ev: list[str] = []
        for fid in feat.fact_ids:
            if fid in analysis.first_hit:
                ev += analysis.evidence(fid)
        if not ev and not feat.fact_ids:
            for d, p, pool in pools:
                if pool.contains(feat.feature, 0.6):
                    ev += [d, p]
                    break
        if ev:
            out[i] = ev
    return out


def _feature_items(
    criterion: Criterion, case: Case, session: Session, extra: dict[str, Any], weighted: bool
) -> list[ItemScore]:
    feats: list[GuidelineFeature] = case.guideline_features
    if not feats:
        return [excluded(criterion, "The case has no guideline features.")]
    covered = feature_coverage(case, session)
    weights = [f.points if weighted else 1 for f in feats]
    total_w = sum(weights)
    items = []
    for i, (feat, w) in enumerate(zip(feats, weights)):
        ev = covered.get(i, [])
        items.append(
            scored(
                criterion,
                1.0 if ev else 0.0,
                ("Covered" if ev else "Not covered") + (f" (weight {feat.weight}, {feat.points})" if weighted else "") + ".",
                ev,
                max_points=criterion.points * w / total_w,
                item_id=f"f{i + 1}",
                label=feat.feature,
            )
        )
    got = sum(w for i, w in enumerate(weights) if i in covered)
    extra["weighted" if weighted else "unweighted"] = round(got / total_w, 4)
    extra["covered"] = [feats[i].feature for i in sorted(covered)]
    return items


def score_unweighted(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    return _feature_items(criterion, case, session, extra, weighted=False)


def score_weighted(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    return _feature_items(criterion, case, session, extra, weighted=True)


def ranked_diagnoses(case: Case, session: Session) -> list[str]:
    if session.note and session.note.diagnoses:
        return [d.name for d in session.note.diagnoses]
    if session.final_diagnosis:
        _, names = extract_diagnoses(session.final_diagnosis, case.all_diagnosis_names())
        return names
    return []


def _rank_item(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any], k: int) -> list[ItemScore]:
    ranked = ranked_diagnoses(case, session)
    key = "top1" if k == 1 else "topk"
    if not ranked:
        extra.setdefault(key, None)
        return [excluded(criterion, "The session holds no ranked diagnosis list (no note diagnoses or final answer).")]
    matcher = DiagnosisMatcher([case.diagnosis.name, *case.diagnosis.synonyms])
    pos = next((i for i, n in enumerate(ranked) if matcher.match(n).matched), None)
    ok = pos is not None and pos < k
    extra[key] = ok
    where = f"ranked #{pos + 1}" if pos is not None else "not listed"
    return [scored(criterion, 1.0 if ok else 0.0, f"Correct diagnosis {where} in {ranked} (top-{k}).")]


def score_top1(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    return _rank_item(criterion, case, session, extra, 1)


def score_topk(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    return _rank_item(criterion, case, session, extra, TOP_K)


SCORERS = {
    "guideline_unweighted": score_unweighted,
    "guideline_weighted": score_weighted,
    "diagnosis_top1": score_top1,
    "diagnosis_topk": score_topk,
}


def score_offline(section: RubricSection, case: Case, session: Session) -> SectionScore:
    return run_section(section, case, session, SCORERS, "epag")
