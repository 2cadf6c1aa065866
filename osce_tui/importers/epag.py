"""EPAG patient profiles + weighted guideline table -> cases with guideline features.

Assumed layout (that of the EPAG release, ``data/patient_profile_en.json`` and
``data/gold_label_en.csv``; our fixture is synthetic):

PROFILES.json — a list of objects::

    {"pid": "...", "disease_name": "...", "setting": "", "typicality": "...",
     "details": {"basic_information": {"Age": "52 years", "Gender": "Male", "Height": 170, "Weight": 80},
                 "history_of_present_illness": {"Location", "Quality", "Severity", "Duration", "Timing",
                                                "Context", "Modifying Factors", "Associated Signs and Symptoms"},
                 "additional_information": [...], "pain_area": [...],
                 "past_history": [...], "social_history": [...]},
     "simple_info": {"Age", "Gender", "Department", "Chief Complaint", ...},
     "token": {...}}

GOLD.csv — ``disease,weight,symptom`` (``feature`` is accepted for
``symptom``); weight ``h``/``high``/``2`` or ``m``/``medium``/``1``. Rows are
joined to profiles by disease name (case-insensitive; "Name, ABBR" also
matches "Name" or "ABBR").
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from ..domain.case import Case
from .casebuild import (
    DEFAULT_AFFECT,
    DEFAULT_SETTING,
    DEFAULT_TASKS,
    IMPORT_TAG,
    FactBuilder,
    child_word,
    choices_for,
    finish_case,
    parse_demographics,
    placeholder_name,
    speaker_for,
    split_diagnosis_name,
)
from .questions import classify, classify_social
from .report import CaseEntry, ImportInputError, read_json_file
from .text import ensure_period, flatten_text, humanize_key, is_empty_value, slug
from .vitals import parse_vitals

SOURCE = "epag"
_HPI_CATEGORIES = {
    "location": "location", "quality": "quality", "severity": "severity", "duration": "onset", "onset": "onset",
    "timing": "timing", "context": "other", "modifying factors": "modifiers", "associated signs and symptoms": "associated",
    "radiation": "radiation",
}
_WEIGHTS = {"h": "high", "high": "high", "2": "high", "m": "medium", "medium": "medium", "1": "medium"}
_STOP = {"with", "and", "the", "for", "from", "history", "of", "or", "in", "on", "to", "esp", "etc", "including", "after",
         "during", "upon", "than", "new", "onset", "symptoms", "signs"}


def read_gold(path: Path) -> dict[str, list[tuple[str, str]]]:
    """disease (as written) -> [(feature, 'high'|'medium')]."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            cols = {(h or "").strip().lower(): h for h in reader.fieldnames or []}
            feature_col = cols.get("symptom") or cols.get("feature")
            if "disease" not in cols or "weight" not in cols or not feature_col:
                raise ImportInputError(path, "header must be disease,weight,symptom (or feature)", 1)
            table: dict[str, list[tuple[str, str]]] = {}
            for row in reader:
                line = reader.line_num
                disease = (row.get(cols["disease"]) or "").strip()
                feature = (row.get(feature_col) or "").strip()
                weight = _WEIGHTS.get((row.get(cols["weight"]) or "").strip().lower())
                if not disease and not feature:
                    continue
                if not disease or not feature or weight is None:
                    raise ImportInputError(path, "row needs disease, feature and a weight of h/m (high/medium)", line)
                table.setdefault(disease, []).append((feature, weight))
    except FileNotFoundError:
        raise ImportInputError(path, "no such file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ImportInputError(path, f"cannot read CSV ({exc})") from None
    if not table:
        raise ImportInputError(path, "no guideline rows")
    return table


def read_profiles(path: Path) -> list[dict]:
    data = read_json_file(path)
    if not isinstance(data, list) or not data:
        raise ImportInputError(path, "expected a non-empty JSON list of patient profiles")
    for i, p in enumerate(data):
        if not isinstance(p, dict) or not p.get("disease_name") or not isinstance(p.get("details"), dict):
            raise ImportInputError(path, f"profile {i} needs 'disease_name' and a 'details' object")
    return data


def _disease_keys(name: str) -> set[str]:
    name = name.strip().lower()
    keys = {name}
    if "," in name:
        head, tail = name.rsplit(",", 1)
        keys |= {head.strip(), tail.strip()}
    return keys


def match_gold(disease: str, gold: dict[str, list[tuple[str, str]]]) -> str | None:
    wanted = _disease_keys(disease)
    for name in gold:
        if wanted & _disease_keys(name):
            return name
    return None


def import_files(profiles_path: Path, gold_path: Path) -> list[tuple[CaseEntry, Case]]:
    profiles = read_profiles(profiles_path)
    gold = read_gold(gold_path)
    pool = sorted({*gold, *(str(p["disease_name"]) for p in profiles)})
    out = []
    for index, profile in enumerate(profiles, start=1):
        out.append(convert(profile, index=index, gold=gold, pool=pool, source_name=Path(profiles_path).name))
    return out


def _stems(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {w[:5] for w in words if len(w) >= 4 and w not in _STOP}


def link_facts(feature: str, facts: list[dict]) -> list[str]:
    """Facts whose answer shares at least half of the feature's content words (by 5-letter stem)."""
    stems = _stems(feature)
    if not stems:
        return []
    need = max(1, (len(stems) + 1) // 2)
    return [f["id"] for f in facts if len(stems & _stems(f["answer"])) >= need]


def convert(profile: dict, *, index: int, gold: dict, pool: list[str], source_name: str) -> tuple[CaseEntry, Case]:
    disease = str(profile["disease_name"]).strip()
    pid = str(profile.get("pid") or index)
    dx_name, dx_synonyms = split_diagnosis_name(disease)
    entry = CaseEntry(id=f"{SOURCE}-{slug(pid, 16)}-{slug(dx_name, 40)}", source=f"{source_name} profile {index} (pid {pid})")
    details: dict = profile["details"]
    simple: dict = profile.get("simple_info") or {}
    for key, value in profile.items():
        if key not in {"pid", "disease_name", "setting", "typicality", "details", "simple_info", "token"}:
            entry.unmapped_field(key, value)
    if "token" in profile:
        entry.notes.append("'token' (the generator's token usage) is a model-run artefact and was not imported")

    basic = details.get("basic_information") or {}
    age_text = str(basic.get("Age") or simple.get("Age") or "")
    sex_text = str(basic.get("Gender") or simple.get("Gender") or "")
    age_text = age_text if re.search(r"[a-z]", age_text, re.IGNORECASE) else f"{age_text} years"
    age, unit, sex, notes = parse_demographics(f"{age_text}-old {sex_text}".replace("years-old", "year-old"), "")
    entry.defaults += notes
    facts = FactBuilder(speaker_for(age, unit), child_word(age, unit, sex))

    cc = flatten_text(simple.get("Chief Complaint")) or "Not stated"
    facts.add("chief_complaint", f"I came in because of {cc[:1].lower() + cc[1:]}.", volunteer=True)
    for key, value in (details.get("history_of_present_illness") or {}).items():
        if is_empty_value(value):
            continue
        category = _HPI_CATEGORIES.get(key.strip().lower())
        if category is None:
            entry.notes.append(f"HPI field {key!r} has no history category; filed as 'other'")
            category = "other"
        facts.add(category, ensure_period(flatten_text(value)), base_id=f"hpi_{key}", keywords=[humanize_key(key).lower()])
    areas = [flatten_text(a) for a in details.get("pain_area") or [] if not is_empty_value(a)]
    if areas:
        facts.add("location", ensure_period("; ".join(areas)), base_id="pain_area", question="Where exactly is the discomfort?",
                  paraphrases=["Which areas are affected?", "Can you point to where you feel it?"])
    past = [flatten_text(p) for p in details.get("past_history") or [] if not is_empty_value(p)]
    if past:
        facts.add("pmh", " ".join(ensure_period(p) for p in past), base_id="past_history")
    for item in details.get("social_history") or []:
        text = flatten_text(item)
        if is_empty_value(text):
            continue
        for category in classify_social(text) or ["social_living"]:
            facts.add(category, ensure_period(text), base_id=category)
    for item in details.get("additional_information") or []:
        text = flatten_text(item)
        if not is_empty_value(text):
            category = classify(text)
            facts.add(category, ensure_period(text), base_id=f"info_{category}")
    for key, value in details.items():
        if key not in {"basic_information", "history_of_present_illness", "pain_area", "past_history", "social_history",
                       "additional_information"}:
            entry.unmapped_field(f"details.{key}", value)
    for key, value in simple.items():
        lk = key.lower()
        if lk in ("age", "gender", "chief complaint", "department") or any(w in lk for w in ("duration", "area", "location")):
            continue  # repeated from details, or mapped above
        entry.unmapped_field(f"simple_info.{key}", value)

    gold_name = match_gold(disease, gold)
    features = []
    if gold_name is None:
        entry.notes.append(f"no guideline rows for {disease!r} in the gold table; the case has no guideline features")
    else:
        for feature, weight in gold[gold_name]:
            item = {"feature": feature, "weight": weight}
            if ids := link_facts(feature, facts.facts):
                item["fact_ids"] = ids
            features.append(item)

    vitals_raw = {k: f"{v} {'cm' if k == 'Height' else 'kg'}" for k, v in basic.items() if k in ("Height", "Weight") and v}
    vitals = parse_vitals(vitals_raw, age, unit)
    entry.defaults += vitals.notes
    choices, synthetic = choices_for(entry.id, dx_name, pool)
    if synthetic:
        entry.defaults.append("diagnosis.choices: other diseases from the profiles and gold table")
    setting = flatten_text(profile.get("setting")) or DEFAULT_SETTING
    if not flatten_text(profile.get("setting")):
        entry.defaults.append(f"doorway.setting: {DEFAULT_SETTING!r} (empty in source)")
    entry.defaults += ["doorway.patient_name: placeholder (the source has no names)", "persona.affect: neutral default"]
    typicality = flatten_text(profile.get("typicality"))
    specialty = flatten_text(simple.get("Department")).lower() or "general"
    vignette = " ".join(
        [f"A {age}-{unit[:-1]}-old {sex if sex != 'unspecified' else 'patient'} presents with {cc[:1].lower() + cc[1:]}."]
        + [ensure_period(f["answer"]) for f in facts.facts[1:]]
    )
    data = {
        "title": f"{cc} — {age} {unit} old {sex}",
        "specialty": specialty,
        "tags": [IMPORT_TAG, SOURCE] + ([f"typicality-{slug(typicality, 24)}"] if typicality else []) + (["choices-synthetic"] if synthetic else []),
        "source": SOURCE,
        "doorway": {
            "patient_name": placeholder_name("EPAG", index),
            "age": age,
            "age_unit": unit,
            "sex": sex,
            "setting": setting,
            "chief_complaint": cc,
            "vitals": vitals.values,
            "tasks": ["Take a pre-consultation history: ask one question at a time, offering answer options."] + DEFAULT_TASKS[:1],
        },
        "persona": {
            "speaker": speaker_for(age, unit),
            "affect": DEFAULT_AFFECT,
            "notes": f"Imported from EPAG ({entry.source}). Answer only from the profile; volunteer nothing else.",
            "opening_statement": facts.facts[0]["answer"],
        },
        "history": facts.facts,
        "differential": [{"diagnosis": dx_name, "synonyms": dx_synonyms, "history_findings": [cc]}],
        "diagnosis": {"name": dx_name, "synonyms": dx_synonyms, "vignette": vignette, "choices": choices},
        "guideline_features": features,
    }
    return entry, finish_case(data, entry)
