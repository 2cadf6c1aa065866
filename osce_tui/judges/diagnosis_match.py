"""Deciding whether a stated diagnosis is the correct one, without a model.

The rule follows how clinicians grade free-text diagnoses (and how CRAFT-MD's
dermatologists were told to): synonyms and abbreviations count; an answer that
is *broader* than the correct diagnosis counts ("lymphoma" for Hodgkin
lymphoma); an answer that is *narrower* does not ("tinea pedis" for tinea).
Qualifiers such as "acute" or "chronic" do not change the condition.

Matching steps, first hit wins: exact key (after folding and synonym
expansion) → broader/equal core tokens (answer ⊆ correct) → close spelling
(rapidfuzz token_sort_ratio ≥ 90).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Literal

from rapidfuzz import fuzz

from .dx_synonyms import BROADER, GENERIC_WORDS, QUALIFIERS, SYNONYM_GROUPS
from .text import stem, tokens

MatchHow = Literal["exact", "synonym", "broader", "fuzzy", "none"]

# A lone word like these names a body part or a symptom, not a diagnosis.
_VAGUE = frozenset({"rash", "pain", "skin", "cutaneous", "cell", "nail", "nails", "mass", "lump", "growth", "inflammation"})


def dx_key(name: str) -> str:
    """Folded, punctuation-free key: "Henoch-Schönlein purpura." → "henoch schonlein purpura"."""
    return " ".join(tokens(name))


def alternatives(name: str) -> list[str]:
    """A name and its parenthesised alternatives: "pernio (chilblains)" → ["pernio", "chilblains"]."""
    name = name.strip()
    inner = re.findall(r"\(([^()]*)\)", name)
    outer = re.sub(r"\([^()]*\)", " ", name).strip()
    out = [outer] if outer else []
    out += [i.strip() for i in inner if i.strip()]
    return out or [name]


@lru_cache(maxsize=1)
def _synonym_index() -> dict[str, frozenset[str]]:
    index: dict[str, set[str]] = {}
    for group in SYNONYM_GROUPS:
        keys = {dx_key(n) for n in group}
        for k in keys:
            index.setdefault(k, set()).update(keys)
    return {k: frozenset(v) for k, v in index.items()}


def synonyms_of(name: str, *, builtin: bool = True) -> set[str]:
    """Keys of a name, its parenthesised alternatives and their built-in synonyms."""
    keys = {dx_key(a) for a in alternatives(name)}
    keys.discard("")
    if builtin:
        index = _synonym_index()
        for k in list(keys):
            keys |= index.get(k, frozenset())
    return keys


def core_tokens(key: str) -> frozenset[str]:
    """Tokens that decide the condition: generic words and qualifiers removed, stemmed."""
    return frozenset(stem(t) for t in key.split() if t not in GENERIC_WORDS and t not in QUALIFIERS)


def _token_found(tok: str, pool: frozenset[str]) -> bool:
    if tok in pool:
        return True
    if len(tok) >= 5:
        return any(len(p) >= 5 and fuzz.ratio(tok, p) >= 88 for p in pool)
    return False


@dataclass(frozen=True)
class DxMatch:
    """Outcome of matching one stated diagnosis against a set of correct names."""

    candidate: str
    matched: bool
    how: MatchHow
    target: str | None = None
    score: float = 0.0


class DiagnosisMatcher:
    """Matches stated diagnoses against one correct diagnosis (with its synonyms).

    ``builtin=False`` uses only the names given (the case's own synonyms), so a
    benchmark can show what the built-in table adds.
    """

    def __init__(self, names: Iterable[str], *, builtin: bool = True):
        self.names = [n for n in names if n and n.strip()]
        if not self.names:
            raise ValueError("DiagnosisMatcher needs at least one correct diagnosis name")
        self.builtin = builtin
        keys: set[str] = set()
        for n in self.names:
            keys |= synonyms_of(n, builtin=builtin)
        if builtin:
            # Broader terms of the correct diagnosis also count (answer ⊇ correct).
            for k in list(keys):
                for broader in BROADER.get(k, ()):
                    keys |= synonyms_of(broader, builtin=True)
        self.keys = frozenset(keys)
        self.own_keys = frozenset(dx_key(a) for n in self.names for a in alternatives(n))
        self._cores = [(k, core_tokens(k)) for k in sorted(self.keys)]

    def match(self, candidate: str) -> DxMatch:
        cand_keys = synonyms_of(candidate, builtin=self.builtin)
        if not cand_keys:
            return DxMatch(candidate, False, "none")
        primary = dx_key(alternatives(candidate)[0])
        if primary in self.own_keys:
            return DxMatch(candidate, True, "exact", primary, 100.0)
        for ck in sorted(cand_keys):
            if ck in self.keys:
                return DxMatch(candidate, True, "synonym", ck, 100.0)
        best = DxMatch(candidate, False, "none")
        for ck in sorted(cand_keys):
            c_core = core_tokens(ck)
            if not c_core or (len(c_core) == 1 and next(iter(c_core)) in _VAGUE):
                continue
            for gk, g_core in self._cores:
                if g_core and all(_token_found(t, g_core) for t in c_core):
                    return DxMatch(candidate, True, "broader" if c_core != g_core else "exact", gk, 95.0)
                score = fuzz.token_sort_ratio(ck, gk)
                if score >= 90:
                    return DxMatch(candidate, True, "fuzzy", gk, float(score))
                if score > best.score:
                    best = DxMatch(candidate, False, "none", gk, float(score))
        return best

    def match_any(self, candidates: Iterable[str]) -> DxMatch | None:
        """First matching candidate, or None."""
        for c in candidates:
            m = self.match(c)
            if m.matched:
                return m
        return None


def split_diagnoses(text: str) -> list[str]:
    """Split a list of diagnoses on commas, semicolons, 'or', slashes and list lines.

    Parenthesised text is kept with its name ("morphea (localized
    scleroderma)" is one diagnosis); 'and' is not a separator because many
    names contain it.
    """
    parts: list[str] = []
    depth = 0
    buf = ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if depth <= 0 and ch in ",;\n":
            parts.append(buf)
            buf = ""
        else:
            buf += ch
    parts.append(buf)
    out: list[str] = []
    for p in parts:
        for q in re.split(r"\s+(?:or|vs\.?|versus|and/or)\s+|\s/\s", p, flags=re.I):
            q = clean_diagnosis(q)
            if q:
                out.append(q)
    return out


_LEAD = re.compile(
    r"^(?:\d+[.)]\s*|[-*•]\s*|(?:the|a|an|most|likely|probably|possibly|probable|possible|suspected|"
    r"diagnosis|final|is|of|it|this|that|i think|i believe)\b\s*:?\s*)+",
    re.I,
)


def clean_diagnosis(text: str) -> str:
    """Strip list markers, markdown, hedges and trailing punctuation from a name."""
    t = text.replace("**", "").replace("__", "").strip()
    t = _LEAD.sub("", t).strip()
    t = re.sub(r"[\s.:;!]+$", "", t).strip()
    return t


_NONE_RE = re.compile(
    r"\b(cannot|can't|unable to|not able to)\s+(determine|make|give|provide|say)|\bnot sure\b|"
    r"\bi don'?t know\b|\bneed more information\b|\binsufficient information\b|^\s*none\s*\.?\s*$",
    re.I,
)
_MARKER_RE = re.compile(
    r"(?:final|most likely|working|leading|primary|differential)?\s*diagnos[ie]s\s*(?:is|would be|:|of)\s*:?\s*"
    r"(?P<dx>[^\n.]+)",
    re.I,
)
_PHRASE_RE = re.compile(
    r"\b(?:consistent with|suggestive of|indicative of|likely|probably|suspect|diagnose you with|"
    r"you have|you may have|this is)\s+(?:an?\s+|the\s+)?(?P<dx>[^\n.;]+)",
    re.I,
)

ExtractionKind = Literal["single", "multiple", "none"]


def extract_diagnoses(answer: str | None, known_names: Iterable[str] = ()) -> tuple[ExtractionKind, list[str]]:
    """Pull the diagnosis (or diagnoses) out of a doctor's final answer.

    Order of evidence: an explicit "diagnosis: X" / "diagnosis is X"; a short
    answer taken whole; a hedged phrase ("consistent with X"); finally any
    known diagnosis name mentioned in the text. Returns the kind (CRAFT-MD's
    single / multiple / none) and the names found.
    """
    if not answer or not answer.strip():
        return "none", []
    text = answer.strip()
    if _NONE_RE.search(text) and not _MARKER_RE.search(text):
        return "none", []
    found: list[str] = []
    marker = _MARKER_RE.search(text)
    if marker:
        found = split_diagnoses(marker.group("dx"))
    elif len(text.split()) <= 12:
        found = split_diagnoses(text)
    else:
        phrase = _PHRASE_RE.search(text)
        if phrase:
            found = split_diagnoses(phrase.group("dx"))
        else:
            found = mentioned_names(text, known_names)
    found = _dedupe(found)
    if not found:
        return "none", []
    return ("single" if len(found) == 1 else "multiple"), found


def mentioned_names(text: str, names: Iterable[str]) -> list[str]:
    """Names (case names and built-in table entries) that occur in the text, in order of appearance."""
    folded = " " + dx_key(text) + " "
    hits: list[tuple[int, str]] = []
    candidates = list(names) + [g[0] for g in SYNONYM_GROUPS]
    seen_groups: set[frozenset[str]] = set()
    for name in candidates:
        keys = synonyms_of(name)
        group = frozenset(keys)
        if group in seen_groups:
            continue
        positions = [folded.find(f" {k} ") for k in keys if len(k) >= 3 and f" {k} " in folded]
        if positions:
            seen_groups.add(group)
            hits.append((min(positions), name))
    return [n for _, n in sorted(hits)]


def _dedupe(names: list[str]) -> list[str]:
    out: list[str] = []
    keys: list[set[str]] = []
    for n in names:
        k = synonyms_of(n)
        if any(k & other for other in keys):
            continue
        keys.append(k)
        out.append(n)
    return out

