"""Building blocks shared by the case importers: demographics, facts, diagnosis.

Each importer turns its records into a plain dict shaped like ``Case`` and
calls ``finish_case`` to validate it. Conservative defaults for what the
datasets never say (patient name, setting, affect) live here, in one place,
and every use of one is noted on the report entry.
"""

from __future__ import annotations

import hashlib
import re

from pydantic import ValidationError

from ..domain.case import Case
from .lay import lay_answer
from .questions import paraphrases_for, question_for
from .report import CaseEntry
from .text import ensure_period, fact_id, lower_first

IMPORT_TAG = "imported"
DEFAULT_SETTING = "Outpatient clinic"
DEFAULT_AFFECT = "Calm and cooperative (the source does not describe the patient's manner)."
DEFAULT_TASKS = [
    "Take a focused history.",
    "Perform a focused physical examination.",
    "Discuss your initial impressions and workup plan with the patient.",
]

_AGE = re.compile(r"(\d+(?:\.\d+)?)[\s-]*(year|yr|month|mo|week|wk|day)s?[\s-]*old", re.IGNORECASE)
_AGE_PLAIN = re.compile(r"^\s*(\d{1,3})\s*(?:years?|y/?o|yrs?)?\b", re.IGNORECASE)
_FEMALE = re.compile(r"\b(?:female|woman|girl|lady|mother|daughter|she|her|gravida|pregnant)\b", re.IGNORECASE)
_MALE = re.compile(r"\b(?:male|man|boy|gentleman|father|son|he|his|him)\b", re.IGNORECASE)
_NEWBORN = re.compile(r"\b(?:newborn|neonate|neonatal)\b", re.IGNORECASE)
_UNITS = {"year": "years", "yr": "years", "month": "months", "mo": "months", "week": "weeks", "wk": "weeks", "day": "days"}


def parse_demographics(text: str, context: str = "") -> tuple[int, str, str, list[str]]:
    """(age, age_unit, sex, notes) from '35-year-old female' and similar.

    When the demographics line names no sex we look at pronouns in the rest
    of the record (``context``) and say so in the notes.
    """
    notes: list[str] = []
    m = _AGE.search(text)
    if m:
        age, unit = int(float(m.group(1))), _UNITS[m.group(2).lower()]
    elif _NEWBORN.search(text):
        age, unit = 0, "days"
    elif m2 := _AGE_PLAIN.match(text):
        age, unit = int(m2.group(1)), "years"
    else:
        age, unit = 40, "years"
        notes.append(f"doorway.age: no age in {text!r}; placeholder 40 years")
    demo = re.sub(r"\bmale\b", "", text, flags=re.IGNORECASE) if _FEMALE.search(text) else text
    if _FEMALE.search(text) and not _MALE.search(demo):
        sex = "female"
    elif _MALE.search(text) and not _FEMALE.search(text):
        sex = "male"
    else:
        she = len(re.findall(r"\b(?:she|her|hers|herself)\b", context, re.IGNORECASE))
        he = len(re.findall(r"\b(?:he|his|him|himself)\b", context, re.IGNORECASE))
        sex = "female" if she > he else "male" if he > she else "unspecified"
        notes.append(f"doorway.sex: not in demographics {text!r}; {sex!r} inferred from pronouns in the record")
    return age, unit, sex, notes


def speaker_for(age: int, unit: str) -> str:
    """Young children are spoken for by a parent, as in a real paediatric OSCE."""
    return "parent" if unit != "years" or age < 12 else "patient"


def child_word(age: int, unit: str, sex: str) -> str:
    if unit in ("days", "weeks") or (unit == "months" and age < 12):
        return "baby"
    return {"male": "son", "female": "daughter"}.get(sex, "child")


def placeholder_name(source: str, index: int) -> str:
    """Datasets have no names; a neutral, obviously generated one."""
    return f"{source} patient {index:03d}"


class FactBuilder:
    """Collects history facts with unique ids and counts how many answers stayed in source wording."""

    def __init__(self, speaker: str, child: str):
        self.speaker = speaker
        self.child = child
        self.facts: list[dict] = []
        self.kept_wording = 0
        self.rewritten = 0

    def _unique(self, base: str) -> str:
        ids = {f["id"] for f in self.facts}
        fid, n = base, 2
        while fid in ids:
            fid, n = f"{base}_{n}", n + 1
        return fid

    def answer(self, sentences: list[str]) -> str:
        out = []
        for s in sentences:
            text, changed = lay_answer(ensure_period(s), self.speaker, self.child)
            self.rewritten += changed
            self.kept_wording += not changed
            out.append(text)
        return " ".join(out)

    def add(
        self,
        category: str,
        answer: str,
        *,
        base_id: str | None = None,
        question: str | None = None,
        paraphrases: list[str] | None = None,
        keywords: list[str] | None = None,
        volunteer: bool = False,
    ) -> str:
        q = question or question_for(category)[0]
        fact = {
            "id": self._unique(fact_id(base_id or category)),
            "category": category,
            "question": q,
            "paraphrases": paraphrases if paraphrases and len(paraphrases) >= 2 else paraphrases_for(q, category),
            "answer": answer,
        }
        if keywords:
            fact["keywords"] = keywords
        if volunteer:
            fact["volunteer"] = True
        self.facts.append(fact)
        return fact["id"]


def split_diagnosis_name(name: str) -> tuple[str, list[str]]:
    """'Progressive multifocal encephalopathy (PML)' -> (full name, ['Progressive multifocal encephalopathy', 'PML'])."""
    name = " ".join(name.split()).strip().rstrip(".")
    synonyms = []
    m = re.match(r"^(.*?)\s*\(([^()]+)\)\s*$", name)
    if m:
        synonyms = [m.group(1).strip(), m.group(2).strip()]
    return name, [s for s in synonyms if s and s.lower() != name.lower()]


# Used only when a source file holds too few other diagnoses to fill four choices.
_FALLBACK_DISTRACTORS = [
    "Viral upper respiratory infection",
    "Generalized anxiety disorder",
    "Iron deficiency anemia",
    "Gastroesophageal reflux disease",
    "Migraine without aura",
    "Hypothyroidism",
]


def choices_for(case_key: str, correct: str, pool: list[str], given: list[str] | None = None) -> tuple[list[str], bool]:
    """Four answer options with the correct one first; (choices, synthetic?).

    Given options (CRAFT-MD's own MCQ choices) are used as they are. Otherwise
    distractors are other diagnoses from the same source file, picked by a
    hash of the case key so the choice is stable across re-imports.
    """
    if given:
        opts = _dedupe([correct, *given])
        if len(opts) >= 4:
            return opts, False
    lowered = correct.lower()
    candidates = sorted(
        {p for p in pool if p and p.lower() != lowered and lowered not in p.lower() and p.lower() not in lowered},
        key=lambda p: hashlib.sha256(f"{case_key}|{p}".encode()).hexdigest(),
    )
    opts = _dedupe([correct, *(given or []), *candidates])
    for extra in _FALLBACK_DISTRACTORS:
        if len(opts) >= 4:
            break
        if extra.lower() != lowered:
            opts = _dedupe([*opts, extra])
    return opts[:4] if not given else opts, True


def _dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.strip().lower()
        if key and key not in seen:
            seen.add(key)
            out.append(item.strip())
    return out


def finish_case(data: dict, entry: CaseEntry) -> Case:
    """Validate the assembled dict; a failure is an importer bug, reported with the record."""
    try:
        case = Case.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{entry.source}: imported case does not validate at {loc}: {first['msg']}") from exc
    case.id = entry.id
    entry.protocol_gaps = case.protocol_gaps()
    return case


def vignette_from(parts: list[str]) -> str:
    return " ".join(ensure_period(p) for p in parts if p and p.strip())


def symptom_phrase(symptom: str) -> str:
    return lower_first(symptom.strip().rstrip("."))
