"""Text normalisation and lexical matching shared by the offline judges.

Everything here is deterministic and cheap: the live score panel re-runs the
offline judges after every turn, so matching is token sets plus rapidfuzz
ratios, never anything that loads a model.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Iterable

from rapidfuzz import fuzz, process

# Function words carry no clinical meaning; dropping them keeps "do you smoke"
# and "are you a smoker" comparable.
STOPWORDS = frozenset(
    """
    a an the and or but if then so of to in on at by for with from into onto about as is are was were be been being
    am do does did doing done have has had having i me my mine you your yours we us our he him his she her it its
    they them their this that these those there here what which who whom whose when where why how any anything
    some something all each every no not nor can could would should will shall may might must just very really
    also too than up down out over again ever tell please let know like okay ok well now get got go going
    would ve ll re s t d m mr mrs ms miss dr yes yeah kind sort bit lot much many one thing things
    """.split()
)

# Spelling/abbreviation variants folded at token level before comparing.
TOKEN_EQUIVALENTS: dict[str, str] = {
    "ekg": "ecg",
    "electrocardiogram": "ecg",
    "xray": "x-ray",
    "cigarettes": "smoke",
    "cigarette": "smoke",
    "smoking": "smoke",
    "smoker": "smoke",
    "smokes": "smoke",
    "tobacco": "smoke",
    "drinking": "alcohol",
    "drink": "alcohol",
    "drinks": "alcohol",
    "medicines": "medication",
    "medicine": "medication",
    "medications": "medication",
    "meds": "medication",
    "pills": "medication",
    "allergic": "allergy",
    "allergies": "allergy",
    "hyperpigmentation": "pigmentation",
    "hidrocystoma": "hidrocystoma",
    "hydrocystoma": "hidrocystoma",
    "sebaceus": "sebaceous",
    "oesophageal": "esophageal",
    "oedema": "edema",
    "haemorrhage": "hemorrhage",
    "haemorrhagic": "hemorrhagic",
    "anaemia": "anemia",
    "diarrhoea": "diarrhea",
    "tumour": "tumor",
    "paediatric": "pediatric",
}

_WORD_RE = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")


@lru_cache(maxsize=16384)
def fold(text: str) -> str:
    """Lowercase, strip accents (Schönlein → schonlein), unify quotes and dashes."""
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u2013", "-").replace("\u2014", " - ")
    return text.lower()


def _fold_token(tok: str) -> str:
    tok = tok.strip("-'")
    if tok.endswith("'s"):
        tok = tok[:-2]
    return TOKEN_EQUIVALENTS.get(tok, tok)


@lru_cache(maxsize=8192)
def _tokens_cached(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for raw in _WORD_RE.findall(fold(text)):
        # Hyphenated words count as their parts too ("cocaine-induced").
        parts = raw.split("-") if "-" in raw else [raw]
        for p in parts:
            tok = _fold_token(p)
            if tok:
                out.append(tok)
    return tuple(out)


def tokens(text: str) -> list[str]:
    """All word tokens, folded."""
    return list(_tokens_cached(text))


@lru_cache(maxsize=8192)
def _content_cached(text: str) -> tuple[str, ...]:
    return tuple(t for t in _tokens_cached(text) if t not in STOPWORDS)


def content_tokens(text: str) -> list[str]:
    """Tokens that carry meaning (stopwords dropped)."""
    return list(_content_cached(text))


def normalise(text: str) -> str:
    """Space-joined folded tokens, for rapidfuzz comparisons."""
    return " ".join(_tokens_cached(text))


def content_string(text: str) -> str:
    return " ".join(_content_cached(text))


@lru_cache(maxsize=16384)
def stem(tok: str) -> str:
    """A crude suffix stripper: enough to equate 'radiates'/'radiating'/'radiation'."""
    for suffix in ("ations", "ation", "ating", "ated", "ates", "ate", "ings", "ing", "ness", "ies", "ied", "es", "ed", "ly", "s"):
        if len(tok) > len(suffix) + 3 and tok.endswith(suffix):
            base = tok[: -len(suffix)]
            # "travelled" -> "travell" -> "travel"; "stopping" -> "stopp" -> "stop"
            if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "aeiousl":
                base = base[:-1]
            elif len(base) > 4 and base.endswith("ll"):
                base = base[:-1]
            return _drop_e(base)
    return _drop_e(tok)


def _drop_e(tok: str) -> str:
    # "smoke"/"smoking" and "scale"/"scaling" share a stem once the final e goes.
    return tok[:-1] if len(tok) > 4 and tok.endswith("e") else tok


def token_in(tok: str, pool: set[str], pool_stems: set[str], pool_list: list[str], cutoff: float = 88) -> bool:
    """Is ``tok`` in the pool exactly, by stem, or by a close spelling (typos)?"""
    if tok in pool or stem(tok) in pool_stems:
        return True
    if len(tok) < 5 or not pool_list:
        return False
    hit = process.extractOne(tok, pool_list, scorer=fuzz.ratio, score_cutoff=cutoff)
    return hit is not None


class TokenPool:
    """A text pre-tokenised once so many phrases can be looked up in it cheaply."""

    def __init__(self, text: str):
        self.text = text
        self.list = sorted(set(content_tokens(text)))
        self.set = set(self.list)
        self.stems = {stem(t) for t in self.list}

    def coverage(self, phrase: str) -> float:
        """Fraction of the phrase's content tokens found in this pool (0-1)."""
        toks = content_tokens(phrase)
        if not toks:
            return 0.0
        found = sum(1 for t in toks if token_in(t, self.set, self.stems, self.list))
        return found / len(toks)

    def contains(self, phrase: str, threshold: float = 0.6) -> bool:
        return self.coverage(phrase) >= threshold


def phrase_coverage(phrase: str, text: str) -> float:
    return TokenPool(text).coverage(phrase)


def similarity(a: str, b: str) -> float:
    """0-100 similarity of two short texts on their content tokens.

    token_set_ratio rewards one text containing the other, which is what a
    question matched against a canonical question needs; blending in
    token_sort_ratio keeps extra distinctive words from being ignored, and the
    plain ratio guard stops one shared word from scoring 100.
    """
    ca, cb = content_string(a), content_string(b)
    if not ca or not cb:
        return float(fuzz.ratio(normalise(a), normalise(b)))
    set_ratio = fuzz.token_set_ratio(ca, cb)
    sort_ratio = fuzz.token_sort_ratio(ca, cb)
    if min(len(ca.split()), len(cb.split())) == 1:
        return min(set_ratio, max(fuzz.ratio(ca, cb), sort_ratio + 10))
    # Blend: containment counts, but words of one side missing from the other
    # (e.g. "family" in "medical problems in your family") still cost.
    return 0.6 * set_ratio + 0.4 * sort_ratio


def overlap(a: str, b: str) -> float:
    """Stem overlap of content tokens, relative to the smaller side (0-1)."""
    sa = {stem(t) for t in content_tokens(a)}
    sb = {stem(t) for t in content_tokens(b)}
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / min(len(sa), len(sb))


_SENTENCE_RE = re.compile(r"(?<=[.?!])\s+|\n+")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if s.strip()]


_QUESTION_START = re.compile(
    r"^(what|when|where|why|how|who|which|whose|do|does|did|is|are|was|were|have|has|had|can|could|would|will|"
    r"any|anything|tell me|describe|walk me|so you|and you)\b"
)


def is_question(sentence: str) -> bool:
    s = fold(sentence).strip()
    if s.endswith("?"):
        return True
    return bool(_QUESTION_START.match(s)) and len(s.split()) >= 2


def questions(text: str) -> list[str]:
    """Interrogative sentences of an utterance (a turn may ask several)."""
    return [s for s in sentences(text) if is_question(s)]


def contains_any(text: str, phrases: Iterable[str]) -> list[str]:
    """Phrases (folded) that occur in ``text`` as whole-word sequences."""
    folded = " " + normalise(text) + " "
    hits = []
    for p in phrases:
        np = normalise(p)
        if np and f" {np} " in folded:
            hits.append(p)
    return hits
