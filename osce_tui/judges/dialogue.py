"""Which history facts did the doctor elicit, with which question, in what order?

Shared by the history, EPAG and LCP judges. Three sources of evidence, in
order of trust:

1. the offline patient's own record: a patient turn's ``meta["fact_ids"]``
   names the facts it answered;
2. the doctor's question matched lexically against each fact's canonical
   question and paraphrases (content-token similarity, rapidfuzz);
3. the patient's reply matched against a fact's answer text (so a fact the
   patient told in reply to an open question still counts), with a strict
   overlap threshold because short answers ("No.") are ambiguous.

Results are cached per (case, session state) because the live panel runs
several judges over the same dialogue after every turn.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from rapidfuzz import fuzz

from ..domain.case import Case, HistoryFact
from ..domain.session import Session, Turn
from .text import content_tokens, normalise, questions, similarity, stem

QUESTION_MATCH = 75.0
"""Minimum similarity (0-100) of a doctor question to a fact's question/paraphrase."""
ANSWER_OVERLAP = 0.7
ANSWER_MIN_SHARED = 3
REPEAT_SIMILARITY = 90.0

# Questions that belong to good communication, not to the case's question bank:
# they are neither counted against consistency nor as repeats.
GENERIC_QUESTIONS = (
    "what brings you in",
    "what brings you here",
    "what brings you to",
    "how can i help",
    "how may i help",
    "what can i do for you",
    "anything else",
    "something else",
    "anything more",
    "any other concerns",
    "any other questions",
    "any questions",
    "how are you",
    "is that ok",
    "is that okay",
    "is that alright",
    "does that make sense",
    "do you understand",
    "may i",
    "can i examine",
    "shall we",
    "would you like",
    "what would you like me to call you",
    "how would you like",
    "what worries you",
    "what are you most worried",
    "what concerns you",
    # Identity, age and permission: good practice, not items of the question bank.
    "what is your name",
    "what's your name",
    "your full name",
    "date of birth",
    "how old are you",
    "how old is",
    "are you ok to",
    "are you okay to",
    "is it ok if i",
    "is it okay if i",
    "can i ask you",
)
# "Are you Daniel Ortiz?", "Is this Leo?", "Am I speaking to ...": identity checks.
_IDENTITY_FRAMES = ("are you", "is this", "is it", "is your name", "am i speaking to", "am i talking to", "you must be")

Via = Literal["meta", "question", "answer"]


@dataclass
class FactHit:
    fact_id: str
    via: Via
    doctor_turn: str | None
    patient_turn: str | None
    score: float
    order: int


@dataclass
class QuestionRecord:
    turn_id: str
    text: str
    phase: str
    fact_ids: list[str] = field(default_factory=list)
    score: float = 0.0
    generic: bool = False
    repeat_of: str | None = None


@dataclass
class DialogueAnalysis:
    questions: list[QuestionRecord]
    first_hit: dict[str, FactHit]

    @property
    def elicited_in_order(self) -> list[str]:
        return [h.fact_id for h in sorted(self.first_hit.values(), key=lambda h: h.order)]

    def evidence(self, fact_id: str) -> list[str]:
        hit = self.first_hit.get(fact_id)
        if not hit:
            return []
        return [t for t in (hit.doctor_turn, hit.patient_turn) if t]


def is_generic(question: str, names: tuple[str, ...] = ()) -> bool:
    """A communication question (greeting, check-in, identity) rather than a history question.

    ``names`` are the lower-cased name parts of the people in the room, so an
    identity check ("Are you Daniel Ortiz?") is recognised.
    """
    n = " " + normalise(question) + " "
    if any(f" {g} " in n or n.strip().startswith(g) for g in GENERIC_QUESTIONS):
        return True
    return any(f" {frame} {name} " in n for frame in _IDENTITY_FRAMES for name in names)


class _FactIndex:
    def __init__(self, case: Case):
        self.facts = case.history
        self.strings: list[tuple[str, str]] = []
        for f in case.history:
            for s in (f.question, *f.paraphrases):
                self.strings.append((f.id, s))
        self.answer_stems = {f.id: {stem(t) for t in content_tokens(f.answer)} for f in case.history}
        self.keywords = {f.id: [k.lower() for k in f.keywords] for f in case.history}
        self._memo: dict[str, tuple[list[str], float]] = {}

    def match_question(self, q: str) -> tuple[list[str], float]:
        """Facts whose question the doctor's sentence asks (best one, plus ties).

        Memoised per sentence: live scoring re-reads the whole dialogue after
        every turn, and this is the costly part.
        """
        cached = self._memo.get(q)
        if cached is None:
            cached = self._memo[q] = self._match_question(q)
        return list(cached[0]), cached[1]

    def _match_question(self, q: str) -> tuple[list[str], float]:
        scores: dict[str, float] = {}
        for fid, s in self.strings:
            sc = similarity(q, s)
            if sc > scores.get(fid, 0.0):
                scores[fid] = sc
        nq = " " + normalise(q) + " "
        for fid, kws in self.keywords.items():
            if any(f" {normalise(k)} " in nq for k in kws if k):
                scores[fid] = max(scores.get(fid, 0.0), QUESTION_MATCH)
        if not scores:
            return [], 0.0
        best = max(scores.values())
        if best < QUESTION_MATCH:
            return [], best
        return [fid for fid, sc in scores.items() if sc >= best - 2], best

    def match_answer(self, reply: str) -> list[tuple[str, float]]:
        reply_stems = {stem(t) for t in content_tokens(reply)}
        out = []
        for fid, ans in self.answer_stems.items():
            if not ans or not reply_stems:
                continue
            shared = len(ans & reply_stems)
            ov = shared / min(len(ans), len(reply_stems))
            if shared >= ANSWER_MIN_SHARED and ov >= ANSWER_OVERLAP:
                out.append((fid, ov * 100))
        return out


_INDEX_CACHE: dict[int, tuple[Case, _FactIndex]] = {}
_ANALYSIS_CACHE: dict[tuple, DialogueAnalysis] = {}


def _index(case: Case) -> _FactIndex:
    hit = _INDEX_CACHE.get(id(case))
    if hit and hit[0] is case:
        return hit[1]
    idx = _FactIndex(case)
    if len(_INDEX_CACHE) > 16:
        _INDEX_CACHE.clear()
    _INDEX_CACHE[id(case)] = (case, idx)
    return idx


def _state_key(case: Case, session: Session) -> tuple:
    last: Turn | None = session.turns[-1] if session.turns else None
    return (id(case), session.id, len(session.turns), last.id if last else None, last.text if last else None)


def analyse(case: Case, session: Session) -> DialogueAnalysis:
    key = _state_key(case, session)
    cached = _ANALYSIS_CACHE.get(key)
    if cached is not None:
        return cached
    result = _analyse(case, session)
    if len(_ANALYSIS_CACHE) > 64:
        _ANALYSIS_CACHE.clear()
    _ANALYSIS_CACHE[key] = result
    return result


def _analyse(case: Case, session: Session) -> DialogueAnalysis:
    idx = _index(case)
    known = {f.id for f in case.history}
    speaker = (case.persona.speaker_name or "").split("(")[0]
    names = tuple(normalise(n) for n in (*case.doorway.patient_name.split(), *speaker.split()) if len(n) > 1)
    records: list[QuestionRecord] = []
    first: dict[str, FactHit] = {}
    last_doctor: Turn | None = None
    last_doctor_records: list[QuestionRecord] = []

    def hit(fid: str, via: Via, d: str | None, p: str | None, score: float, order: int) -> None:
        if fid in known and fid not in first:
            first[fid] = FactHit(fid, via, d, p, score, order)

    for order, turn in enumerate(session.turns):
        if turn.kind != "utterance":
            continue
        if turn.role == "doctor":
            last_doctor = turn
            last_doctor_records = []
            for q in questions(turn.text):
                rec = QuestionRecord(turn_id=turn.id, text=q, phase=turn.phase, generic=is_generic(q, names))
                if not rec.generic:
                    rec.fact_ids, rec.score = idx.match_question(q)
                records.append(rec)
                last_doctor_records.append(rec)
                for fid in rec.fact_ids:
                    hit(fid, "question", turn.id, None, rec.score, order)
        elif turn.role == "patient":
            d_id = last_doctor.id if last_doctor else None
            if isinstance(turn.meta.get("fact_ids"), list):
                # The patient engine says exactly which facts it disclosed: that
                # is authoritative, and lexical guesses for this exchange yield.
                meta_ids = [f for f in turn.meta["fact_ids"] if isinstance(f, str) and f in known]
                for rec in last_doctor_records:
                    if rec.generic:
                        continue
                    agreed = [f for f in rec.fact_ids if f in meta_ids]
                    rec.fact_ids = agreed or list(meta_ids)
                    rec.score = 100.0 if rec.fact_ids else rec.score
                _retract_question_hits(first, d_id, meta_ids)
                for fid in meta_ids:
                    hit(fid, "meta", d_id, turn.id, 100.0, order)
            else:
                for fid, sc in idx.match_answer(turn.text):
                    hit(fid, "answer", d_id, turn.id, sc, order)
            # A question hit gets the patient's reply as evidence too.
            for h in first.values():
                if h.via == "question" and h.doctor_turn == d_id and h.patient_turn is None:
                    h.patient_turn = turn.id
    _mark_repeats(records)
    return DialogueAnalysis(questions=records, first_hit=first)


def _retract_question_hits(first: dict[str, FactHit], doctor_turn: str | None, keep: list[str]) -> None:
    """Drop lexical hits of this doctor turn that the patient engine did not confirm."""
    for fid in [f for f, h in first.items() if h.via == "question" and h.doctor_turn == doctor_turn and f not in keep]:
        del first[fid]


def _mark_repeats(records: list[QuestionRecord]) -> None:
    seen_facts: dict[str, str] = {}
    seen_texts: list[tuple[str, str]] = []
    for rec in records:
        if rec.generic:
            continue
        n = normalise(rec.text)
        for prev_text, prev_turn in seen_texts:
            if prev_turn != rec.turn_id and fuzz.token_sort_ratio(n, prev_text) >= REPEAT_SIMILARITY:
                rec.repeat_of = prev_turn
                break
        if rec.repeat_of is None and rec.fact_ids and all(f in seen_facts for f in rec.fact_ids):
            prev = seen_facts[rec.fact_ids[0]]
            if prev != rec.turn_id:
                rec.repeat_of = prev
        for f in rec.fact_ids:
            seen_facts.setdefault(f, rec.turn_id)
        seen_texts.append((n, rec.turn_id))


def fact_label(fact: HistoryFact) -> str:
    return f"{fact.category}: {fact.question}"
