"""Communication and interpersonal skills: a checklist over the doctor's words.

- ``introduced_self``: gave a name and a role (half credit for one of them);
- ``used_patient_name``: addressed the patient by name at least once;
- ``open_ended_first``: the first real question was open ("what brings you
  in?", "tell me about…") rather than yes/no;
- ``patient_concerns``: invited further concerns ("anything else?");
- ``summarised``: summarised back what the patient said (full for an explicit
  summary, half for "you mentioned…" echoes only);
- ``recognised_emotion``: named or acknowledged the patient's feelings.
"""

from __future__ import annotations

import re
from typing import Any

from ..domain.case import Case
from ..domain.rubric import Criterion, RubricSection
from ..domain.scores import ItemScore, SectionScore
from ..domain.session import Session
from .common import doctor_utterances, run_section, scored
from .text import fold, questions

_NAME_INTRO = re.compile(
    r"\bmy name(?: is|'s)\s+\w|\b(?:Dr\.?|Doctor)\s+[A-Z][a-z]+|\b(?:I'm|I am|[Tt]his is)\s+(?:(?:Dr\.?|Doctor)\s+)?(?P<name>[A-Z][a-z]+)\b"
)
# Capitalised words after "I'm" that are not names.
_NOT_NAMES = frozenset({"The", "A", "An", "Here", "Going", "Sorry", "Just", "Not", "So", "Glad", "Happy", "Worried",
                        "Afraid", "Concerned", "Sure", "Doctor", "Dr", "Your", "One", "Very", "Really", "Okay", "Ok"})
_ROLE = re.compile(
    r"\b(dr\.?|doctor|physician|medical student|student doctor|student|resident|intern|nurse practitioner|clinician|gp)\b",
    re.I,
)
_OPEN_START = re.compile(
    r"^(what|how|tell me|describe|could you tell|can you tell|would you tell|walk me|in your own words|"
    r"what's|what has|what have)\b",
    re.I,
)
_CLOSED_START = re.compile(r"^(do|does|did|is|are|was|were|have|has|had|can|could|will|would|any)\b", re.I)
_CONCERNS = (
    "anything else",
    "something else",
    "any other concerns",
    "other concerns",
    "any other questions",
    "other questions",
    "anything more",
    "what else",
    "what worries you",
    "what are you most worried",
    "what concerns you",
    "what are your concerns",
    "is there more",
)
_SUMMARY_FULL = (
    "let me summarize",
    "let me summarise",
    "to summarize",
    "to summarise",
    "in summary",
    "to recap",
    "let me recap",
    "let me make sure i",
    "make sure i have",
    "if i understand correctly",
    "if i understood correctly",
    "just to make sure",
    "so far you've told me",
    "so far you have told me",
    "let me go over",
)
_SUMMARY_PARTIAL = ("you mentioned", "you said", "you told me", "you've told me", "you have told me")
_EMOTION_WORDS = (
    r"worr(y|ied|ying)|scar(ed|y)|anxious|anxiety|frighten(ed|ing)|afraid|upset|concern(ed)?|nervous|stress(ed|ful)|"
    r"difficult|hard|frustrat(ed|ing)|sad|overwhelm(ed|ing)|uncomfortable|distress(ed|ing)|fear"
)
_ACK = r"(you seem|you look|you sound|you're|you are|you feel|you must|i can see|i understand|must be|that sounds|it sounds|i can imagine|understandabl)"
_EMOTION_RE = re.compile(rf"{_ACK}[^.?!]*\b({_EMOTION_WORDS})|\b({_EMOTION_WORDS})\b[^.?!]*{_ACK}", re.I)
# Sympathy for pain or distress ("I'm sorry you're in so much pain") also
# acknowledges feelings; pain words count only after an apology, so that a
# question such as "Do you feel any pain?" is not mistaken for empathy.
_SORRY_FOR_DISTRESS = re.compile(
    r"\b(i'm sorry|i am sorry|sorry to hear|sorry that)\b[^.?!]*\b(pain|hurt(s|ing)?|suffer(ing)?|discomfort|unwell|"
    r"going through|rough|awful|terrible|poorly)\b",
    re.I,
)


def _has(text: str, phrases: tuple[str, ...]) -> bool:
    low = " " + re.sub(r"\s+", " ", fold(text)) + " "
    return any(p in low for p in phrases)


def _gives_name(text: str) -> bool:
    text = text.replace("\u2019", "'")
    for m in _NAME_INTRO.finditer(text):
        if m.group("name") is None or m.group("name") not in _NOT_NAMES:
            return True
    return False


def score_intro(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    turns = doctor_utterances(session)[:3]  # an introduction belongs at the start
    named = next((t for t in turns if _gives_name(t.text)), None)
    role = next((t for t in turns if _ROLE.search(t.text)), None)
    frac = (0.5 if named else 0.0) + (0.5 if role else 0.0)
    parts = [("gave a name" if named else "no name given"), ("stated a role" if role else "no role stated")]
    ev = [t.id for t in (named, role) if t]
    return [scored(criterion, frac, "Introduction in the first doctor turns: " + ", ".join(parts) + ".", ev)]


def _name_parts(full_name: str) -> list[str]:
    titles = {"mr", "mrs", "ms", "miss", "dr", "mx"}
    parts = [p.strip(".,").lower() for p in full_name.split()]
    return [p for p in parts if p and p not in titles and len(p) >= 2]


def score_name(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    parts = _name_parts(case.doorway.patient_name)
    for t in doctor_utterances(session):
        words = set(re.findall(r"[a-z'-]+", fold(t.text)))
        if any(p in words for p in parts):
            return [scored(criterion, 1.0, f"Addressed the patient by name ({case.doorway.patient_name}).", [t.id])]
    return [scored(criterion, 0.0, f"Never used the patient's name ({case.doorway.patient_name}).")]


def score_open_first(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    for t in doctor_utterances(session):
        for q in questions(t.text):
            s = fold(q).strip()
            if re.match(r"^(how are you|is it ok|may i|can i|is that ok)", s):
                continue  # pleasantries and consent are not the first history question
            if _OPEN_START.match(s) or re.match(r"^(so|and|now|okay|ok|well),?\s+(what|how|tell me)", s):
                return [scored(criterion, 1.0, f"First question was open-ended: {q!r}.", [t.id])]
            if _CLOSED_START.match(s) or s.endswith("?"):
                return [scored(criterion, 0.0, f"First question was closed: {q!r}.", [t.id])]
    return [scored(criterion, 0.0, "No question asked yet.")]


def score_concerns(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    for t in doctor_utterances(session):
        if _has(t.text, _CONCERNS):
            return [scored(criterion, 1.0, "Invited further concerns (e.g. 'anything else?').", [t.id])]
    return [scored(criterion, 0.0, "Never asked whether the patient had other concerns.")]


def score_summary(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    partial = None
    for t in doctor_utterances(session):
        if _has(t.text, _SUMMARY_FULL):
            return [scored(criterion, 1.0, "Summarised the history back to the patient.", [t.id])]
        if partial is None and _has(t.text, _SUMMARY_PARTIAL):
            partial = t
    if partial:
        return [scored(criterion, 0.5, "Echoed some of what the patient said but gave no explicit summary.", [partial.id])]
    return [scored(criterion, 0.0, "No summary of the history.")]


def score_emotion(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    for t in doctor_utterances(session):
        text = fold(t.text).replace("\u2019", "'")
        if _EMOTION_RE.search(text) or _SORRY_FOR_DISTRESS.search(text):
            return [scored(criterion, 1.0, "Acknowledged the patient's feelings.", [t.id])]
    return [scored(criterion, 0.0, "Did not acknowledge the patient's emotions.")]


SCORERS = {
    "introduced_self": score_intro,
    "used_patient_name": score_name,
    "open_ended_first": score_open_first,
    "patient_concerns": score_concerns,
    "summarised": score_summary,
    "recognised_emotion": score_emotion,
}

def score_offline(section: RubricSection, case: Case, session: Session) -> SectionScore:
    return run_section(section, case, session, SCORERS, "communication")
