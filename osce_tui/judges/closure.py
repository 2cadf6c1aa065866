"""Closure (MedQA-CS): impressions 20, management 30, challenging question 30,
language 10, compassion 10 — judged on the doctor's closure-phase talk.

- ``impressions``: half for naming the working diagnosis or a differential
  item (any synonym or lay term), half for covering the key terms of the
  case's impression (full credit at half of them);
- ``management``: share of the case's plan items the doctor explained;
- ``challenging_question``: one item per challenging question of the case
  (points split evenly; excluded while the patient has not asked it), judged on the doctor's reply before the
  patient speaks again: full credit when it covers ≥30% of the sample
  answer's key terms, half for a substantive reply that misses them, none
  for no reply;
- ``language``: medical jargon used without a plain explanation in the same or
  next sentence costs ``JARGON_PENALTY`` points per distinct term;
- ``compassion``: distinct empathy phrases anywhere in the encounter (two or
  more: full, one: half).
"""

from __future__ import annotations

import re
from typing import Any

from ..domain.case import Case
from ..domain.rubric import Criterion, RubricSection
from ..domain.scores import ItemScore, SectionScore
from ..domain.session import Session, Turn
from .common import doctor_utterances, excluded, fmt_list, run_section, scored
from .diagnosis_match import dx_key, synonyms_of
from .text import TokenPool, contains_any, fold, normalise, sentences, similarity

JARGON_PENALTY = 2.5

JARGON = (
    "myocardial infarction", "infarction", "infarct", "ischemia", "ischaemia", "ischemic", "angina", "coronary",
    "ecg", "ekg", "electrocardiogram", "troponin", "cardiac enzymes", "echocardiogram", "echo", "angiography",
    "angiogram", "catheterization", "catheterisation", "stent", "embolism", "embolus", "thrombosis", "dissection",
    "aneurysm", "pericarditis", "pneumothorax", "pneumonia", "gerd", "reflux", "esophagitis", "oesophagitis",
    "endoscopy", "egd", "colonoscopy", "ct", "cat scan", "mri", "ultrasound", "biopsy", "cbc", "bmp", "cmp",
    "lipid panel", "d-dimer", "hba1c", "a1c", "hypertension", "hyperlipidemia", "dyslipidemia", "diabetes mellitus",
    "tachycardia", "bradycardia", "arrhythmia", "dyspnea", "edema", "etiology", "idiopathic", "benign", "malignant",
    "malignancy", "neoplasm", "metastasis", "prognosis", "differential", "auscultation", "palpation", "urinalysis",
    "hematuria", "dysuria", "neuropathy", "syncope", "vertigo", "migraine", "cholecystitis", "pancreatitis",
    "appendicitis", "nephrolithiasis", "pyelonephritis", "sepsis", "nsaid", "nsaids", "ppi", "statin",
    "beta blocker", "anticoagulation", "anticoagulant", "thrombolysis", "lumbar puncture", "spirometry",
)

# Phrases that signal the doctor is unpacking a term for the patient.
EXPLAIN_MARKERS = (
    "which means", "that means", "meaning", "which is", "that is", "i e", "in other words", "basically",
    "simply put", "a test", "blood test", "a scan", "a picture", "pictures of", "a tracing", "a kind of",
    "a type of", "a sort of", "a way to", "where we", "which looks", "that looks", "that checks", "to check",
    "to look at", "called", "also known as", "in plain", "we call", "it's when", "it is when", "this is when",
    "heart tracing", "heart attack", "of the heart", "of your heart", "stomach acid",
)

EMPATHY = (
    "i understand", "i can see", "i can imagine", "i can tell", "that must be", "this must be", "must be hard",
    "must be scary", "must be difficult", "must be frightening", "must be worrying", "i am sorry", "i'm sorry",
    "sorry to hear", "i know this is", "it's understandable", "it is understandable", "understandably",
    "that sounds", "sounds scary", "sounds difficult", "you're not alone", "you are not alone", "i'm here",
    "i am here", "thank you for sharing", "thank you for telling", "it's normal to feel", "it is normal to feel",
    "i hear you", "you seem worried", "you look worried", "you seem anxious", "i see you're", "i see that you",
    "we'll take good care", "we will take good care", "we'll work through", "we will work through",
    "we'll figure this out", "we will figure this out", "together", "reassure",
)

CLOSURE_PHASES = {"closure"}


def _closure_turns(session: Session) -> list[Turn]:
    return doctor_utterances(session, CLOSURE_PHASES)


def _closure_text(session: Session) -> str:
    return "\n".join(t.text for t in _closure_turns(session))


def _no_closure(criterion: Criterion) -> list[ItemScore]:
    return [scored(criterion, 0.0, "No closure-phase talk from the doctor.")]


def score_impressions(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    turns = _closure_turns(session)
    if not turns:
        return _no_closure(criterion)
    text = _closure_text(session)
    folded = " " + dx_key(text) + " "
    named = []
    for name in case.all_diagnosis_names():
        if any(len(k) >= 2 and f" {k} " in folded for k in synonyms_of(name)):
            named.append(name)
    key = case.closure.impressions if case.closure else case.diagnosis.name
    cov = TokenPool(text).coverage(key)
    fraction = 0.5 * (1.0 if named else 0.0) + 0.5 * min(1.0, cov / 0.5)
    expl = (
        f"Named: {fmt_list(sorted(set(named)), 3)}. " if named else "Did not name the working diagnosis or a differential. "
    ) + f"Covered {cov:.0%} of the key impression terms (full credit at 50%)."
    return [scored(criterion, fraction, expl, [t.id for t in turns])]


def score_management(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    if not case.closure:
        return [excluded(criterion, "The case has no closure key (management plan).")]
    turns = _closure_turns(session)
    if not turns:
        return _no_closure(criterion)
    pool = TokenPool(_closure_text(session))
    covered = [m for m in case.closure.management if pool.contains(m, 0.5)]
    missing = [m for m in case.closure.management if m not in covered]
    extra["management_covered"] = covered
    return [
        scored(
            criterion,
            len(covered) / len(case.closure.management),
            f"Explained {len(covered)} of {len(case.closure.management)} plan items: {fmt_list(covered, 4)}. "
            f"Missing: {fmt_list(missing, 4)}.",
            [t.id for t in turns],
        )
    ]


def challenge_turns(case: Case, session: Session) -> list[tuple[int, Turn, int]]:
    """(index in turns, patient turn, which challenging question) for each one asked, first time only.

    The offline patient records ``challenging_index`` in the turn's meta; for
    other patients (models, imported sessions) a patient question close to one
    of the case's challenging questions counts.
    """
    patient = [(i, t) for i, t in enumerate(session.turns) if t.role == "patient" and t.kind == "utterance"]
    flagged_by_engine = any("intent" in t.meta for _, t in patient)
    found: dict[int, tuple[int, Turn, int]] = {}
    for i, t in patient:
        flagged = t.meta.get("challenging_index")
        if isinstance(flagged, int) and 0 <= flagged < len(case.challenging_questions):
            found.setdefault(flagged, (i, t, flagged))
        elif not flagged_by_engine and "?" in t.text:
            for qi, cq in enumerate(case.challenging_questions):
                if qi not in found and similarity(t.text, cq.question) >= 80:
                    found[qi] = (i, t, qi)
    return sorted(found.values(), key=lambda x: x[0])


def _replies_after(session: Session, idx: int) -> list[Turn]:
    """The doctor's utterances after turn ``idx`` up to the patient's next utterance."""
    replies: list[Turn] = []
    for t in session.turns[idx + 1 :]:
        if t.kind != "utterance":
            continue
        if t.role == "patient":
            break
        if t.role == "doctor":
            replies.append(t)
    return replies


def _judge_reply(reply: str, sample: str, asked: str) -> tuple[float, str]:
    cov = TokenPool(reply).coverage(sample)
    if cov >= 0.3:
        return 1.0, f"addresses it (covers {cov:.0%} of the sample answer's key terms)"
    if len(reply.split()) >= 12 or TokenPool(reply).coverage(asked) >= 0.3:
        return 0.5, f"replies but misses most of the key points (covers {cov:.0%})"
    return 0.0, "the reply does not engage with the question"


def score_challenging(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    if not case.challenging_questions:
        return [excluded(criterion, "The case has no challenging question.")]
    asked = {qi: (idx, turn) for idx, turn, qi in challenge_turns(case, session)}
    each = criterion.points / len(case.challenging_questions)
    items = []
    for qi, cq in enumerate(case.challenging_questions):
        if qi not in asked:
            items.append(
                excluded(criterion, "The patient has not asked this question in this session.", item_id=f"q{qi + 1}", label=cq.question)
            )
            items[-1].max_points = each
            continue
        idx, turn = asked[qi]
        replies = _replies_after(session, idx)
        if replies:
            frac, why = _judge_reply(" ".join(r.text for r in replies), cq.sample_answer, turn.text)
            expl = f"Challenging question answered: {why}."
        else:
            frac, expl = 0.0, "The doctor did not answer the patient's challenging question."
        items.append(
            scored(criterion, frac, expl, [turn.id, *(r.id for r in replies)], max_points=each, item_id=f"q{qi + 1}", label=cq.question)
        )
    return items


_SPLIT_MARKERS = [normalise(m) for m in EXPLAIN_MARKERS]


def _explained(sentence_list: list[str], i: int) -> bool:
    window = " ".join(sentence_list[i : i + 2])
    if "(" in sentence_list[i] or " - " in sentence_list[i] or "\u2014" in sentence_list[i]:
        return True
    n = " " + normalise(window) + " "
    return any(f" {m} " in n for m in _SPLIT_MARKERS)


def unexplained_jargon(text: str) -> dict[str, str]:
    """Jargon term → the sentence it was used in without a plain explanation."""
    sents = sentences(text)
    out: dict[str, str] = {}
    # Keyed by the folded form so "EKG" and "ECG" are one term.
    for i, s in enumerate(sents):
        for term in contains_any(s, JARGON):
            key = normalise(term)
            if key not in out and not _explained(sents, i):
                out[key] = s
    # A term explained once need not be explained again.
    for i, s in enumerate(sents):
        for term in contains_any(s, JARGON):
            if _explained(sents, i):
                out.pop(normalise(term), None)
    return out


def score_language(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    turns = _closure_turns(session)
    if not turns:
        return _no_closure(criterion)
    bad = unexplained_jargon(_closure_text(session))
    lost = min(criterion.points, JARGON_PENALTY * len(bad))
    fraction = 1 - lost / criterion.points if criterion.points else 0.0
    expl = (
        f"Unexplained medical terms: {fmt_list(sorted(bad))} (-{JARGON_PENALTY:g} each)."
        if bad
        else "Plain language: no unexplained medical jargon."
    )
    ev = [t.id for t in turns if any(term in contains_any(t.text, bad) for term in bad)]
    return [scored(criterion, fraction, expl, ev or [t.id for t in turns])]


_ACK_EMOTION = re.compile(
    r"\b(you seem|you look|you sound|you must|i can see|i can hear|i can tell|i understand|i know|must be|"
    r"that sounds|it sounds|how)\b[^.?!]{0,40}\b(worr\w*|scar\w*|anxious|frighten\w*|afraid|upset|"
    r"concern\w*|nervous|stress\w*|difficult|hard|tough|frustrat\w*|sad|overwhelm\w*|distress\w*)"
)


_EMPATHY_RE = re.compile(r"\b(?:" + "|".join(re.escape(p) for p in sorted(EMPATHY, key=len, reverse=True)) + r")\b")


def empathic_statements(session: Session) -> dict[str, str]:
    """Distinct empathic phrases (or acknowledged emotions) → first doctor turn id."""
    found: dict[str, str] = {}
    for t in doctor_utterances(session):
        low = " " + re.sub(r"\s+", " ", fold(t.text)) + " "
        for m in _EMPATHY_RE.finditer(low):
            found.setdefault(m.group(0), t.id)
        for m in _ACK_EMOTION.finditer(low):
            found.setdefault(m.group(0).strip(), t.id)
    return found


def score_compassion(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    phrases = empathic_statements(session)
    n = len(phrases)
    fraction = 1.0 if n >= 2 else 0.5 if n == 1 else 0.0
    expl = f"Empathic statements: {fmt_list(sorted(phrases))}." if phrases else "No empathic statements found."
    return [scored(criterion, fraction, expl, list(phrases.values()))]


SCORERS = {
    "impressions": score_impressions,
    "management": score_management,
    "challenging_question": score_challenging,
    "language": score_language,
    "compassion": score_compassion,
}


def score_offline(section: RubricSection, case: Case, session: Session) -> SectionScore:
    return run_section(section, case, session, SCORERS, "closure")
