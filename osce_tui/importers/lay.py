"""Rewrite third-person dataset sentences as the standardized patient's answer.

Only simple, mechanical rewrites are attempted ("She has had a cough for two
weeks." -> "I have had a cough for two weeks."). When a sentence has a shape
we do not handle, the original wording is kept: an answer in the dataset's
neutral voice is honest, a clumsy guess is not. Callers learn which happened
from the returned flag and count it in the import report.
"""

from __future__ import annotations

import re

from .text import upper_first

# third-person verb -> first-person form, after the subject became "I".
_VERBS = {
    "has": "have", "had": "had", "is": "am", "was": "was", "does": "do", "did": "did",
    "feels": "feel", "felt": "felt", "works": "work", "worked": "worked", "lives": "live", "lived": "lived",
    "drinks": "drink", "drank": "drank", "smokes": "smoke", "smoked": "smoked", "uses": "use", "used": "used",
    "takes": "take", "took": "took", "eats": "eat", "ate": "ate", "noticed": "noticed", "notices": "notice",
    "started": "started", "began": "began", "developed": "developed", "experienced": "experienced",
    "experiences": "experience", "gets": "get", "got": "got", "goes": "go", "went": "went", "can": "can",
    "cannot": "cannot", "will": "will", "would": "would", "recalls": "remember", "remembers": "remember",
    "sleeps": "sleep", "walks": "walk", "wakes": "wake", "traveled": "traveled", "travelled": "travelled",
    "returned": "returned", "visited": "visited", "tried": "tried", "tries": "try", "underwent": "underwent",
    "never": "never", "denied": "didn't have", "quit": "quit", "stopped": "stopped", "admits": "admit",
    "needs": "need", "wants": "want", "enjoys": "enjoy", "finds": "find", "found": "found", "needed": "needed",
    "exercises": "exercise",
}
_ADVERBS = r"(?:also|recently|now|currently|previously|still|often|occasionally|usually|sometimes|otherwise|just)"

_SUBJECT = r"(?:the patient|patient|she|he)"
_REPORT = re.compile(
    rf"^(?:{_SUBJECT}\s+)?(?:{_ADVERBS}\s+)?(reports|notes|states|mentions|describes|says|indicates|explains|"
    r"complains of|endorses|admits to|recalls)\s+(that\s+)?",
    re.IGNORECASE,
)
_HAD_VERBS = {"reports", "complains of", "endorses"}
_DENIES = re.compile(
    rf"^(?:{_SUBJECT}\s+(?:{_ADVERBS}\s+)?)?denies\s+(?:experiencing\s+|having\s+)?(any\s+)?", re.IGNORECASE
)
_PRESENTS = re.compile(rf"^{_SUBJECT}\s+(?:presents|presented)\s+(?:to (?:the )?[\w ]+? )?with\s+", re.IGNORECASE)
_BARE_VERB = re.compile(
    r"^(works|drinks|smokes|takes|lives|uses|has|eats|feels|sleeps|walks|exercises|enjoys|needs)\b", re.IGNORECASE
)
_CLAUSE_SUBJECT = re.compile(
    rf"(^|[.;:]\s+|,\s+(?:and|but)\s+|\s(?:and|but|because|when|where|that|which|so|since|although|while)\s+)"
    rf"({_SUBJECT})\s+(?:({_ADVERBS})\s+)?(\w+)",
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(r"\b(?:the patient's|patient's|his)\b", re.IGNORECASE)
_HER = re.compile(r"\bher\b(\s*)(\S*)", re.IGNORECASE)
_OBJECT_FOLLOWERS = {"", ".", ",", ";", ":", "to", "with", "and", "that", "about", "for", "from", "at", "in", "on", "up",
                     "out", "down", "off", "or", "as", "feel", "to."}
_LEFTOVER = re.compile(r"\b(?:she|he|her|him|his|hers|the patient|patient's)\b", re.IGNORECASE)

# "A 22-year-old man presented ..." names the patient as a noun: swapping only "his" would mix voices.
# Likewise when a relative describes the patient as "her daughter" / "the child".
_NOUN_SUBJECT = re.compile(
    r"\b\d+[- ](?:year|month|week|day)s?[- ]old\b|^(?:a|an|the) (?:man|woman|boy|girl|patient)\b|"
    r"\b(?:daughter|son|child|baby|infant|the mother|the father|the parents)\b",
    re.IGNORECASE,
)

# "I have tics and is taking ..." — a second, subject-less third-person verb we did not convert.
_DANGLING_VERB = re.compile(r"\b(?:and|but|or)\s+(?:is|has|does|was|reports|takes|works|lives)\b", re.IGNORECASE)

_PROXY_SUBJECT = re.compile(
    r"\b(the patient|the child|the baby|the infant|the newborn|the boy|the girl|the toddler)('s)?\b", re.IGNORECASE
)
_PROXY_REPORTER = re.compile(
    r"^(?:(?:his|her|the (?:child's|baby's|patient's))\s+(?:mother|father|parents?|caregiver)|the (?:mother|father|parents?))"
    r"\s+(?:also\s+)?(?:reports?|notes?|states?|says|mentions?|describes?|believes?)\s+(?:that\s+)?",
    re.IGNORECASE,
)


def _lead(text: str) -> str | None:
    """Rewrite how the sentence opens ('The patient reports ...', 'Denies ...', 'Works as ...'); None = unreliable."""
    if m := _DENIES.match(text):
        rest = text[m.end() :]
        if re.match(r"\w+ing\b", rest) and not m.group(1):  # "Denies smoking" has no safe "I haven't had" form
            return None
        return "I haven't had " + (m.group(1) or "") + rest
    if m := _PRESENTS.match(text):
        return "I've come in with " + text[m.end() :]
    if m := _REPORT.match(text):
        rest = text[m.end() :]
        if m.group(2):  # "... reports that the pain started" -> "the pain started"
            return upper_first(rest)
        if re.match(r"experiencing\b", rest, re.IGNORECASE):
            return "I've been " + rest
        if m.group(1).lower() in _HAD_VERBS and re.match(r"(?:an?|some|\w+)\b", rest) and not re.match(r"\w+ing\b", rest):
            return "I've had " + rest
        return None
    if m := _BARE_VERB.match(text):  # "Works as a chef." -> "I work as a chef."
        return "I " + _VERBS[m.group(1).lower()] + text[m.end() :]
    return text


def first_person(sentence: str) -> tuple[str, bool]:
    """Patient speaking about themself. Returns (answer, rewritten?)."""
    original = " ".join(sentence.split())
    text = _lead(original)
    if text is None:
        return original, False

    def subject(match: re.Match[str]) -> str:
        lead, _, adverb, verb = match.groups()
        mapped = _VERBS.get(verb.lower())
        if mapped is None:
            raise _Unreliable
        words = ["I"] + ([adverb.lower()] if adverb else []) + [mapped]
        return lead + " ".join(words)

    try:
        text = _CLAUSE_SUBJECT.sub(subject, text)
    except _Unreliable:
        return original, False
    text = re.sub(r"\b(and|but)\s+denies(?:\s+any)?\b", r"\1 I haven't had any", text, flags=re.IGNORECASE)
    text = _POSSESSIVE.sub("my", text)
    text = re.sub(r"\b(?:himself|herself)\b", "myself", text, flags=re.IGNORECASE)
    text = re.sub(r"\bhim\b", "me", text, flags=re.IGNORECASE)
    text = _HER.sub(lambda m: ("me" if m.group(2).lower() in _OBJECT_FOLLOWERS else "my") + m.group(1) + m.group(2), text)
    if _LEFTOVER.search(text) or _NOUN_SUBJECT.search(text) or _DANGLING_VERB.search(text):
        return original, False
    text = upper_first(text)
    return text, text != original


def proxy_voice(sentence: str, child_word: str) -> tuple[str, bool]:
    """Parent or caregiver speaking about the patient: third person stays natural.

    Only the clinical framing changes: "The patient" -> "My son", and a
    leading "His mother reports that" is dropped because she is the speaker.
    """
    original = " ".join(sentence.split())
    text = _PROXY_REPORTER.sub("", original)

    def replace(m: re.Match[str]) -> str:
        start = m.start() == 0
        return ("My " if start else "my ") + child_word + (m.group(2) or "")

    text = _PROXY_SUBJECT.sub(replace, text)
    text = upper_first(text)
    return text, text != original


def lay_answer(sentence: str, speaker: str, child_word: str = "child") -> tuple[str, bool]:
    """The SP's answer for one dataset sentence, in the speaker's voice where that is reliable."""
    if speaker == "patient":
        return first_person(sentence)
    return proxy_voice(sentence, child_word)


class _Unreliable(Exception):
    """Raised inside a substitution when a verb form is not in our table."""
