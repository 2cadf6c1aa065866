"""The offline standardized patient: answers retrieved from the case, never invented.

Each doctor utterance is split into clauses. Conversational moves (greeting,
open question, empathy, "any questions?") are recognised by pattern; every
other clause is matched against the case's history facts with BM25 over an
expanded clinical lexicon (``retrieval.FactIndex``). A matched fact is answered
with the case's own lay answer; a question nothing matches gets the persona's
default answer, so the patient never adds a symptom the case does not hold.

``AgentReply.meta`` explains every answer: ``fact_ids``, their ``scores`` and
the ``intent`` (the judges credit history questions by ``fact_ids``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..domain.case import Case
from ..domain.session import Session
from . import utterance as U
from .base import AgentReply, OnDelta, PatientAgent, emit
from .retrieval import index_for

# A statement ("I'll listen to your heart now", "We'll do some blood tests")
# only pulls a fact when the fact explains nearly all of it (plain words weigh
# little in coverage, so "tests" alone barely lowers it); otherwise the
# patient just acknowledges it.
STATEMENT_MIN_COVERAGE = 0.9

_DR_NAME = re.compile(r"\b(?:i'm|i am|my name is|this is)\s+(?:dr\.?|doctor)\s+([A-Z][a-zA-Z'-]+)", re.IGNORECASE)
_SAFE_LOWER_STARTS = frozenset(
    "no yes not it it's the my about maybe just only never sometimes nothing none a an well oh "
    "actually usually mostly probably there that that's there's we he she they our his her around "
    "since on in at for when every once twice yeah nope".split()
)


@dataclass
class _Draft:
    """The reply being assembled for one utterance."""

    pieces: list[tuple[str, bool]] = field(default_factory=list)  # (text, is a fact answer)
    fact_ids: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    intents: list[str] = field(default_factory=list)
    uncovered_question: bool = False
    challenge_index: int | None = None

    def say(self, text: str, intent: str) -> None:
        if text:
            self.pieces.append((text, intent.startswith("history:")))
        if intent not in self.intents:
            self.intents.append(intent)


class OfflinePatient(PatientAgent):
    """Retrieval-based standardized patient (spec ``offline``)."""

    spec = "offline"

    async def reply(self, case: Case, session: Session, doctor_text: str, on_delta: OnDelta | None = None) -> AgentReply:
        reply = self.answer(case, session, doctor_text)
        await stream_words(on_delta, reply.text)
        return reply

    async def challenging_question(self, case: Case, session: Session, on_delta: OnDelta | None = None) -> AgentReply | None:
        index = next_challenge(case, session)
        if index is None:
            return None
        text = case.challenging_questions[index].question
        await stream_words(on_delta, text)
        return AgentReply(text=text, meta={"fact_ids": [], "scores": [], "intent": "challenging_question", "challenging_index": index})

    # -- the synchronous core (also what the benchmark times) ----------------

    def answer(self, case: Case, session: Session | None, doctor_text: str) -> AgentReply:
        text = doctor_text.strip()
        if not text:
            return AgentReply(text="Sorry, doctor?", meta={"fact_ids": [], "scores": [], "intent": "empty"})
        history = _PastReplies.of(session)
        draft = _Draft()

        if U.is_greeting(text):
            draft.say(_greeting(case, text, history.greeted and not U.is_open_question(text)), "greeting")
        elif U.asks_how_are_you(text) and not U.is_open_question(text):
            draft.say(_how_are_you(case), "small_talk")
        names = _people(case)
        if U.asks_identity(text, names):
            draft.say(_identity(case, text), "identity")
        if U.asks_age(text):
            draft.say(_age(case), "age")
        if U.is_empathy(text):
            draft.say(_empathy(case), "empathy")
        if U.is_open_question(text):
            self._open_question(case, history, draft)
        if U.asks_consent(text):
            draft.say("Yes, that's fine.", "consent")
        if U.is_check_in(text):
            draft.say("Yes, that makes sense.", "check_in")
        if U.asks_for_questions(text):
            self._invite_questions(case, session, draft)

        index = index_for(case)
        per_clause: list[list] = []
        for clause in U.clauses(text):
            if _conversational(clause) or U.asks_identity(clause, names) or U.asks_age(clause):
                continue
            question = U.is_question(clause)
            matches = index.retrieve(clause)
            if matches and not question and matches[0].coverage < STATEMENT_MIN_COVERAGE:
                matches = []
            if not matches:
                draft.uncovered_question |= question
            per_clause.append(matches)
        for matches in per_clause:
            for m in matches:
                if m.fact_id in draft.fact_ids:
                    continue
                fact = index.by_id[m.fact_id]
                answer = fact.answer
                if m.fact_id in history.fact_ids:
                    answer = "Like I said, " + _lower_first(answer)
                draft.fact_ids.append(m.fact_id)
                draft.scores.append(round(m.score, 3))
                draft.say(answer, "history:" + fact.category)

        if draft.uncovered_question and not draft.fact_ids:
            # A question nothing in the case answers: the default, never a new finding.
            # (When another clause did match, the unmatched one is usually a fragment
            # of the same question, and a trailing "No" would contradict the answer.)
            draft.say(case.persona.default_answer, "not_covered")
        if not draft.pieces:
            draft.say(_acknowledge(case), "statement")

        meta = {
            "fact_ids": draft.fact_ids,
            "scores": draft.scores,
            "intent": _primary_intent(draft.intents),
            "intents": draft.intents,
        }
        if draft.challenge_index is not None:
            meta["challenging_index"] = draft.challenge_index
        return AgentReply(text=_join(draft.pieces), meta=meta)

    def _open_question(self, case: Case, history: "_PastReplies", draft: _Draft) -> None:
        cc_ids = [f.id for f in case.history if f.category == "chief_complaint"]
        if "open_question" in history.intents:
            # Asked again ("tell me more"): add what the SP may volunteer and has not said yet.
            extra = [f for f in case.history if f.volunteer and f.category != "chief_complaint" and f.id not in history.fact_ids]
            if extra:
                fact = extra[0]
                draft.fact_ids.append(fact.id)
                draft.scores.append(0.0)
                draft.say(fact.answer, "open_question")
                return
            draft.say("Like I said, " + _lower_first(case.persona.opening_statement), "open_question")
        else:
            draft.say(case.persona.opening_statement, "open_question")
        for fid in cc_ids:
            if fid not in draft.fact_ids:
                draft.fact_ids.append(fid)
                draft.scores.append(0.0)

    def _invite_questions(self, case: Case, session: Session | None, draft: _Draft) -> None:
        index = next_challenge(case, session) if session is not None else (0 if case.challenging_questions else None)
        if index is None:
            draft.say("No, I think you've covered everything. Thank you.", "no_questions")
            return
        draft.challenge_index = index
        draft.say(case.challenging_questions[index].question, "challenging_question")


# -- helpers -----------------------------------------------------------------


@dataclass
class _PastReplies:
    fact_ids: set[str]
    intents: set[str]
    greeted: bool
    texts: list[str]

    @classmethod
    def of(cls, session: Session | None) -> "_PastReplies":
        facts: set[str] = set()
        intents: set[str] = set()
        texts: list[str] = []
        if session is not None:
            for turn in session.turns:
                if turn.role != "patient":
                    continue
                texts.append(turn.text)
                meta = turn.meta or {}
                inner = meta.get("retrieval") if isinstance(meta.get("retrieval"), dict) else {}
                facts.update(meta.get("fact_ids") or inner.get("fact_ids") or [])
                intents.update(meta.get("intents") or [])
                if meta.get("intent"):
                    intents.add(meta["intent"])
        return cls(facts, intents, "greeting" in intents, texts)


def next_challenge(case: Case, session: Session | None) -> int | None:
    """Index of the first challenging question the patient has not asked yet."""
    asked: set[int] = set()
    spoken = ""
    if session is not None:
        for turn in session.turns:
            if turn.role == "patient":
                spoken += "\n" + turn.text
                if isinstance(turn.meta, dict) and isinstance(turn.meta.get("challenging_index"), int):
                    asked.add(turn.meta["challenging_index"])
    for i, cq in enumerate(case.challenging_questions):
        if i not in asked and cq.question not in spoken:
            return i
    return None


def _conversational(clause: str) -> bool:
    """Clauses answered by the conversational moves, not by retrieval."""
    return (
        U.is_greeting(clause)
        or U.is_open_question(clause)
        or U.is_empathy(clause)
        or U.asks_for_questions(clause)
        or U.asks_consent(clause)
        or U.is_check_in(clause)
        or U.asks_how_are_you(clause)
    )


_RELATION_WORDS = {"mother": "mum", "father": "dad", "mom": "mom", "mum": "mum", "dad": "dad"}


def _relation(case: Case) -> str:
    """How the proxy speaker relates to the patient.

    The speaker name's parenthesis says it best ("Janet Pembroke (daughter)");
    the persona notes are only a fallback for a parent, because notes also
    mention the patient's own relatives.
    """
    p = case.persona
    m = re.search(r"\(([^)]+)\)", p.speaker_name or "")
    if m:
        word = m.group(1).strip().lower()
        return _RELATION_WORDS.get(word, word)
    if p.speaker == "parent":
        blob = " ".join([p.notes, p.affect, p.opening_statement]).lower()
        for words, label in ((("mum", "mother"), "mum"), (("mom",), "mom"), (("father", "dad"), "dad")):
            if any(re.search(rf"\b{w}\b", blob) for w in words):
                return label
        return "parent"
    return {"caregiver": "carer", "partner": "partner"}.get(p.speaker, "carer")


def _greeting(case: Case, doctor_text: str, again: bool) -> str:
    m = _DR_NAME.search(doctor_text)
    hello = f"Hello, Dr. {m.group(1).capitalize()}." if m else "Hi, doctor."
    if again:
        return "Hi again."
    if case.persona.speaker == "patient":
        if U.asks_how_are_you(doctor_text) and not U.is_open_question(doctor_text):
            return hello + " Not great, to be honest."
        return hello
    first = case.doorway.patient_name.split()[0]
    name = (case.persona.speaker_name or "").split("(")[0].strip()
    who = f"I'm {name}, {first}'s {_relation(case)}." if name else f"I'm {first}'s {_relation(case)}."
    return f"{hello} {who}"


def _people(case: Case) -> list[str]:
    """Name parts of the patient and the proxy speaker (for identity checks)."""
    speaker = (case.persona.speaker_name or "").split("(")[0]
    return [*case.doorway.patient_name.split(), *speaker.split()]


def _identity(case: Case, doctor_text: str) -> str:
    """Confirm who is in the room; the doorway is the only source (no invented date of birth)."""
    patient = case.doorway.patient_name
    if case.persona.speaker == "patient":
        if not U.requests_name(doctor_text):
            return f"Yes, that's me, {patient}."
        wants_age = re.search(r"\b(birth|dob|age)\b", doctor_text, re.IGNORECASE)
        return f"It's {patient}." + (f" I'm {case.doorway.age}." if wants_age and case.doorway.age_unit == "years" else "")
    name = (case.persona.speaker_name or "").split("(")[0].strip()
    me = f"I'm {name}, {patient.split()[0]}'s {_relation(case)}" if name else f"I'm {patient.split()[0]}'s {_relation(case)}"
    return f"This is {patient}. {me}."


def _age(case: Case) -> str:
    d = case.doorway
    unit = d.age_unit if d.age != 1 else d.age_unit.rstrip("s")
    if case.persona.speaker == "patient":
        return f"I'm {d.age}." if d.age_unit == "years" else f"I'm {d.age} {unit} old."
    pronoun = {"female": "She's", "male": "He's"}.get(d.sex, "They're")
    return f"{pronoun} {d.age} {unit} old."


def _how_are_you(case: Case) -> str:
    if case.persona.speaker != "patient":
        return "We're hanging in there, thanks, but we're worried."
    return "Not great, to be honest."


def _empathy(case: Case) -> str:
    affect = case.persona.affect.lower()
    if case.persona.speaker != "patient":
        pronoun = {"female": "her", "male": "him"}.get(case.doorway.sex, "them")
        return f"Thank you. We've been really worried about {pronoun}."
    if any(w in affect for w in ("anxious", "worried", "scared", "frightened", "nervous", "fearful")):
        return "Thank you, doctor. I'm just really worried."
    if any(w in affect for w in ("pain", "uncomfortable", "distress", "grimac")):
        return "Thanks, doctor. It's been pretty rough."
    return "Thank you, doctor."


def _acknowledge(case: Case) -> str:
    return "Okay." if case.persona.speaker == "patient" else "Okay, thank you."


def _lower_first(text: str) -> str:
    first = text.split(" ", 1)[0].strip(",.").lower()
    if first in _SAFE_LOWER_STARTS:
        return text[0].lower() + text[1:]
    return text


def _join(pieces: list[tuple[str, bool]]) -> str:
    """Join pieces the way people talk: a fact answer after another starts with 'And'."""
    text = ""
    prev_fact = False
    for piece, is_fact in pieces:
        piece = piece.strip()
        if not piece:
            continue
        if not text:
            text = piece
        elif is_fact and prev_fact and _lower_first(piece) != piece:
            text += " And " + _lower_first(piece)
        else:
            text += " " + piece
        prev_fact = is_fact
    return text


def _primary_intent(intents: list[str]) -> str:
    for preferred in ("challenging_question", "open_question"):
        if preferred in intents:
            return preferred
    for intent in intents:
        if intent.startswith("history:"):
            return intent
    return intents[0] if intents else "statement"


async def stream_words(on_delta: OnDelta | None, text: str) -> None:
    """Send the answer word by word so the UI shows it typing (no sleeps)."""
    words = text.split(" ")
    for i, word in enumerate(words):
        await emit(on_delta, word if i == len(words) - 1 else word + " ")


__all__ = ["OfflinePatient", "next_challenge", "stream_words"]
