"""Reading a doctor's utterance: clauses, greetings, open questions, empathy.

The offline patient answers clause by clause. These helpers are plain regular
expressions: the patterns are the conversational moves of an OSCE opening and
closing, not medical content, so a short list covers them.
"""

from __future__ import annotations

import re
from typing import Iterable

_SENTENCE_SPLIT = re.compile(r"(?<=[?!.;])\s+|\n+")
# "..., and do you ...", "... and are you ...", "... also, have you ..."
_QUESTION_START = (
    r"(?:do|does|did|have|has|had|are|is|was|were|can|could|would|will|any|what|when|where|"
    r"how|which|who|why|tell|describe)"
)
_CLAUSE_SPLIT = re.compile(
    r"(?:,\s*|\s+)(?:and|also|plus|or)\s+(?:also\s+)?(?=" + _QUESTION_START + r"\b)"
    r"|,\s+(?=(?:and\s+)?(?:what|when|where|how|which|do|does|did|have|has|are|is|any)\b[^,]*\?)",
    re.IGNORECASE,
)

_GREETING = re.compile(
    r"\b(hello|hi|hey|good (?:morning|afternoon|evening)|nice to meet|pleasure to meet|"
    r"my name is|i am dr|i'm dr|i am doctor|i'm doctor|i'm one of the|i am one of the|"
    r"i'm a (?:medical student|student|doctor|resident|physician)|"
    r"i am a (?:medical student|student|doctor|resident|physician)|welcome)\b",
    re.IGNORECASE,
)
_HOW_ARE_YOU = re.compile(r"\bhow are (?:you|things)(?: doing| feeling| getting on)?(?: today| now)?\s*[?.!]*$", re.IGNORECASE)
_OPEN_QUESTION = re.compile(
    r"\b(what brings you|what brought you|what has brought you|what's brought you|"
    r"how can i help|how may i help|what can i do for you|what seems to be|"
    r"what(?:'s| is| has been) (?:going on|the problem|the matter|wrong|happening|bothering you)|"
    r"tell me (?:about )?(?:what|why) (?:brings|brought|is going|has been|you came)|"
    r"tell me what(?:'s| is| has been) (?:going on|happening|wrong)|why (?:have|did) you come|"
    r"reason for (?:your|the|today's) visit|what are you here for|why are you here|"
    r"in your own words|tell me more about (?:it|that|this|what)|how can we help|what can we do for you|"
    r"what seems to be the (?:problem|trouble|issue)|what(?:'s| is) the (?:trouble|story|issue)|"
    r"what(?:'s| is) up|what brings you)\b"
    # "what's been going on", "tell me what has been happening", "talk me through
    # what happened": open only when nothing narrows them ("...with your bowels").
    r"|\b(?:(?:tell|talk) me (?:about |through )?)?what(?:'s| is| has| have)?(?: been)? "
    r"(?:going on|happening|happened)(?: (?:with you|to you|today|lately|recently|then|so far|"
    r"this morning|at the moment))*(?=\s*(?:[?.!,;]|$|\band\b))",
    re.IGNORECASE,
)
_EMPATHY = re.compile(
    r"\b(sorry to hear|i'm sorry|i am sorry|that must (?:be|have been)|"
    r"(?:that|it) sounds (?:really |very |so )?(?:hard|difficult|scary|frightening|painful|awful|tough|"
    r"worrying|stressful|upsetting|uncomfortable|rough)|i (?:can )?understand|i can (?:see|imagine)|"
    r"don't worry|do not worry|we(?:'ll| will) take (?:good )?care|you're in the right place|"
    r"you are in the right place|we(?:'ll| will) (?:figure|find out|get to the bottom)|"
    r"thank you for (?:telling|sharing|coming)|thanks for (?:telling|sharing|coming)|"
    r"i appreciate|take your time|i know this is)\b",
    re.IGNORECASE,
)
_QUESTIONS_FOR_ME = re.compile(
    r"\b(any (?:other )?questions|anything you(?:'d| would) like to ask|anything you want to ask|"
    r"is there anything (?:else )?you(?:'d| would)? (?:like|want) to (?:ask|know)|"
    r"what questions do you have|do you have questions)\b",
    re.IGNORECASE,
)
_CONSENT = re.compile(
    r"\b(may i|can i|could i|is it (?:ok|okay|alright|all right) if i|do you mind if i|would it be (?:ok|okay|alright) (?:if|to)|"
    r"i(?:'d| would) like to) (?:examine|take a look|have a look|listen|feel|press|check|examine you)\b",
    re.IGNORECASE,
)
_CHECK_IN = re.compile(
    r"\b(does (?:that|this) make sense|do you understand|is that (?:ok|okay|alright|all right|clear)|"
    r"are you (?:ok|okay|happy) with (?:that|this)|does that sound (?:ok|okay|good|alright)|"
    r"is that something you(?:'d| would) be (?:ok|okay|happy) with|any questions about that)\b",
    re.IGNORECASE,
)
_INTERROGATIVE = re.compile(
    r"^\s*(?:so|and|now|okay|ok|alright|right|also|well|then)?[\s,]*"
    r"(?:do|does|did|have|has|had|are|is|was|were|can|could|would|will|any|what|what's|when|where|"
    r"how|which|who|why|tell|describe|show|point|ever)\b",
    re.IGNORECASE,
)
_IMPERATIVE_ASK = re.compile(
    r"\b(tell me|describe|show me|point to|point at|walk me through|let me know|explain|give (?:it|me)|rate (?:it|the|your))\b",
    re.IGNORECASE,
)


def clauses(text: str) -> list[str]:
    """Split an utterance into sentences, then into coordinated questions."""
    out: list[str] = []
    for sentence in _SENTENCE_SPLIT.split(text.strip()):
        sentence = sentence.strip()
        if not sentence:
            continue
        parts = [p.strip(" ,") for p in _CLAUSE_SPLIT.split(sentence)]
        out.extend(p for p in parts if p)
    return out


def is_greeting(text: str) -> bool:
    return bool(_GREETING.search(text))


def asks_how_are_you(text: str) -> bool:
    return bool(_HOW_ARE_YOU.search(text))


def is_open_question(text: str) -> bool:
    return bool(_OPEN_QUESTION.search(text))


def is_empathy(text: str) -> bool:
    return bool(_EMPATHY.search(text))


_NAME_REQUEST = re.compile(
    r"\b(what(?:'s| is) your (?:full )?name|(?:confirm|tell me|give me|spell) your (?:full )?name|"
    r"your (?:full )?name and (?:your )?(?:date of birth|dob|age)|(?:confirm|tell me|give me) your (?:date of birth|dob))\b",
    re.IGNORECASE,
)
_IDENTITY_FRAME = re.compile(r"\b(are you|is (?:this|it|that)|is your name|am i (?:speaking|talking) (?:to|with)|you must be)\b", re.IGNORECASE)
_AGE = re.compile(r"\b(how old are you|how old is (?:he|she|they|your \w+)|what(?:'s| is) (?:your|his|her) age)\b", re.IGNORECASE)


def asks_identity(text: str, names: Iterable[str] = ()) -> bool:
    """The doctor checks who they are talking to ("Are you Daniel Ortiz?", "What's your name?")."""
    if _NAME_REQUEST.search(text):
        return True
    wanted = [re.escape(n.lower()) for n in names if len(n) > 1]
    if not wanted:
        return False
    # The name must follow the frame ("are you Daniel"), so that a name used to
    # address the patient ("Graham, whereabouts is it?") is not an identity check.
    pattern = rf"{_IDENTITY_FRAME.pattern}\s+(?:(?:mr|mrs|ms|miss|dr)\.?\s+)?(?:{'|'.join(wanted)})\b"
    return bool(re.search(pattern, text.lower()))


def asks_age(text: str) -> bool:
    return bool(_AGE.search(text))


def asks_for_questions(text: str) -> bool:
    """The doctor invites the patient's questions (closure)."""
    return bool(_QUESTIONS_FOR_ME.search(text))


_PERMISSION_TO_TALK = re.compile(
    r"\b(are you (?:ok|okay|alright|all right|happy|comfortable) to (?:talk|chat|answer|go on|continue|carry on|start)|"
    r"(?:is it|would it be) (?:ok|okay|alright|all right) if i (?:ask|take|go)|"
    r"(?:may|can|could) i ask you (?:a few|some|a couple of)(?: more)? questions)\b",
    re.IGNORECASE,
)


def asks_consent(text: str) -> bool:
    """The doctor asks permission to examine, or to ask questions."""
    return bool(_CONSENT.search(text) or _PERMISSION_TO_TALK.search(text))


def requests_name(text: str) -> bool:
    """An open request for the name (not a yes/no check)."""
    return bool(_NAME_REQUEST.search(text))


def is_check_in(text: str) -> bool:
    """The doctor checks understanding or agreement ("does that make sense?")."""
    return bool(_CHECK_IN.search(text))


def is_question(text: str) -> bool:
    """A clause that asks for information (question mark, interrogative or 'tell me')."""
    t = text.strip()
    return t.endswith("?") or bool(_INTERROGATIVE.match(t)) or bool(_IMPERATIVE_ASK.search(t))
