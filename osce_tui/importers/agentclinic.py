"""AgentClinic (MedQA OSCE JSONL) -> cases.

Each line is ``{"OSCE_Examination": {...}}`` with ``Objective_for_Doctor``,
``Patient_Actor`` (Demographics, History, Symptoms{Primary_Symptom,
Secondary_Symptoms}, Past_Medical_History, Social_History,
Review_of_Systems, sometimes medications), ``Physical_Examination_Findings``
(nested, incl. ``Vital_Signs``), ``Test_Results`` (nested) and
``Correct_Diagnosis``.

Mapping: demographics -> doorway; the history paragraph is split into
sentences grouped by history category; primary symptom -> chief complaint,
each secondary symptom -> an associated-symptom fact; past history,
medications, social history (one fact per social category a sentence
touches) and review of systems -> facts; vital signs -> doorway vitals;
other exam sections -> findings per body system; tests -> investigations
(and the workup list); the diagnosis -> ``diagnosis`` and the first
differential entry. The source has no MCQ options, so the four choices are
the correct diagnosis plus three other diagnoses from the same file.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..domain.case import Case
from .casebuild import (
    DEFAULT_AFFECT,
    DEFAULT_SETTING,
    IMPORT_TAG,
    FactBuilder,
    child_word,
    choices_for,
    finish_case,
    parse_demographics,
    placeholder_name,
    speaker_for,
    split_diagnosis_name,
    symptom_phrase,
    vignette_from,
)
from .questions import classify, classify_social, symptom_question
from .report import CaseEntry, ImportInputError, read_text_file
from .structure import exam_findings, investigations
from .text import flatten_text, humanize_key, is_empty_value, sentences, slug
from .vitals import parse_vitals

SOURCE = "agentclinic"
_KNOWN_TOP = {"Objective_for_Doctor", "Patient_Actor", "Physical_Examination_Findings", "Test_Results", "Correct_Diagnosis"}
_MED_KEYS = ("Current_Medications", "Medications", "Drug_History")
_KNOWN_PATIENT = {
    "Demographics", "History", "Symptoms", "Past_Medical_History", "Social_History", "Review_of_Systems", *_MED_KEYS,
}
_VITALS_KEYS = ("Vital_Signs", "Vitals")


def read_records(path: Path) -> list[tuple[int, dict]]:
    """(line number, OSCE_Examination dict) per non-blank line; malformed lines raise ImportInputError."""
    text = read_text_file(path)
    records = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ImportInputError(path, f"not valid JSON ({exc.msg} at column {exc.colno})", lineno) from None
        osce = obj.get("OSCE_Examination") if isinstance(obj, dict) else None
        if not isinstance(osce, dict):
            raise ImportInputError(path, "expected an object with an 'OSCE_Examination' object", lineno)
        for key in ("Patient_Actor", "Correct_Diagnosis"):
            if key not in osce:
                raise ImportInputError(path, f"OSCE_Examination has no {key!r}", lineno)
        if not isinstance(osce["Patient_Actor"], dict):
            raise ImportInputError(path, "'Patient_Actor' must be an object", lineno)
        records.append((lineno, osce))
    if not records:
        raise ImportInputError(path, "no records (empty file)")
    return records


def import_file(path: Path) -> list[tuple[CaseEntry, Case]]:
    records = read_records(path)
    pool = [split_diagnosis_name(str(osce["Correct_Diagnosis"]))[0] for _, osce in records]
    out = []
    for index, (lineno, osce) in enumerate(records, start=1):
        out.append(convert(osce, index=index, lineno=lineno, source_name=Path(path).name, dx_pool=pool))
    return out


def case_id_for(index: int, diagnosis: str) -> str:
    return f"{SOURCE}-{index:03d}-{slug(diagnosis, 40)}"


def convert(osce: dict, *, index: int, lineno: int, source_name: str, dx_pool: list[str]) -> tuple[CaseEntry, Case]:
    dx_name, dx_synonyms = split_diagnosis_name(str(osce["Correct_Diagnosis"]))
    entry = CaseEntry(id=case_id_for(index, dx_name), source=f"{source_name} line {lineno}")
    for key, value in osce.items():
        if key not in _KNOWN_TOP:
            entry.unmapped_field(key, value)

    pa: dict = osce["Patient_Actor"]
    for key, value in pa.items():
        if key not in _KNOWN_PATIENT:
            entry.unmapped_field(f"Patient_Actor.{key}", value)

    demographics = flatten_text(pa.get("Demographics", ""))
    age, unit, sex, demo_notes = parse_demographics(demographics, json.dumps(pa))
    entry.defaults += demo_notes
    speaker = speaker_for(age, unit)
    child = child_word(age, unit, sex)
    facts = FactBuilder(speaker, child)

    symptoms = pa.get("Symptoms") or {}
    if not isinstance(symptoms, dict):
        symptoms = {"Primary_Symptom": flatten_text(symptoms)}
    primary = flatten_text(symptoms.get("Primary_Symptom", "")) or "Not stated"
    for key, value in symptoms.items():
        if key not in ("Primary_Symptom", "Secondary_Symptoms"):
            entry.unmapped_field(f"Patient_Actor.Symptoms.{key}", value)

    cc_answer = f"The main problem is {symptom_phrase(primary)}."
    facts.add("chief_complaint", cc_answer, volunteer=True, keywords=["problem", "reason", "today"])

    # History of present illness: sentences grouped by category, one fact per category.
    hpi = flatten_text(pa.get("History", ""))
    grouped: dict[str, list[str]] = {}
    for sentence in sentences(hpi):
        grouped.setdefault(classify(sentence), []).append(sentence)
    for category, group in grouped.items():
        facts.add(category, facts.answer(group), base_id=f"hpi_{category}")

    secondary = symptoms.get("Secondary_Symptoms") or []
    if isinstance(secondary, str):
        secondary = [s.strip() for s in secondary.split(",")]
    for symptom in secondary:
        symptom = flatten_text(symptom)
        if is_empty_value(symptom):
            continue
        q, paraphrases = symptom_question(symptom)
        facts.add(
            "associated",
            f"Yes: {symptom_phrase(symptom)}.",
            base_id=f"assoc_{symptom}",
            question=q,
            paraphrases=paraphrases,
        )

    _text_fact(facts, entry, pa, "Past_Medical_History", "pmh")
    for key in _MED_KEYS:
        _text_fact(facts, entry, pa, key, "medications")
    _social_facts(facts, entry, pa.get("Social_History"))
    _ros_facts(facts, entry, pa.get("Review_of_Systems"))
    if facts.kept_wording:
        entry.notes.append(
            f"{facts.kept_wording} answer sentence(s) kept in the source's wording (rewriting to first person was not reliable); "
            f"{facts.rewritten} rewritten"
        )

    # Physical examination: vitals to the doorway, the rest to findings.
    pe = osce.get("Physical_Examination_Findings") or {}
    if not isinstance(pe, dict):
        entry.unmapped_field("Physical_Examination_Findings", pe, "expected an object of exam sections")
        pe = {}
    vitals_key = next((k for k in _VITALS_KEYS if k in pe), None)
    vitals_raw = pe.get(vitals_key) if vitals_key else None
    if vitals_raw is not None and not isinstance(vitals_raw, dict):
        vitals_raw = {"Vital_Signs": flatten_text(vitals_raw)}
    parsed = parse_vitals(vitals_raw, age, unit)
    if vitals_key is None:
        entry.defaults.append("doorway.vitals: the source has no vital signs; placeholders used")
    entry.defaults += parsed.notes
    findings, unmatched = exam_findings(pe, skip={vitals_key} if vitals_key else set())
    for name in unmatched:
        entry.notes.append(f"exam entry {name!r} matched no body system; filed under 'general'")

    tests_raw = osce.get("Test_Results") or {}
    if not isinstance(tests_raw, dict):
        tests_raw = {"Test results": tests_raw}
    tests = investigations(tests_raw)

    objective = flatten_text(osce.get("Objective_for_Doctor", ""))
    history_findings = [primary, *[flatten_text(s) for s in secondary if not is_empty_value(s)]][:3]
    exam_abnormal = [f"{f['component']}: {f['finding']}" for f in findings if f["abnormal"]][:3]
    choices, synthetic = choices_for(entry.id, dx_name, dx_pool)
    if synthetic:
        entry.defaults.append("diagnosis.choices: the source has no answer options; distractors are other diagnoses from the same file")

    entry.defaults += [
        "doorway.patient_name: placeholder (the source has no names)",
        f"doorway.setting: {DEFAULT_SETTING!r} (not in source)",
        "persona.affect: neutral default (not in source)",
    ]
    if not objective:
        entry.defaults.append("doorway.tasks: standard tasks (no Objective_for_Doctor)")

    vignette = vignette_from(
        [
            f"A {demographics} presents with {symptom_phrase(primary)}" if demographics else f"Presenting with {symptom_phrase(primary)}",
            hpi,
            _labelled("Past medical history", pa.get("Past_Medical_History")),
            _labelled("Social history", pa.get("Social_History")),
            _labelled("Review of systems", pa.get("Review_of_Systems")),
            _labelled("Examination", "; ".join(exam_abnormal)),
        ]
    )
    opening = (
        f"I'm here because of {symptom_phrase(primary)}."
        if speaker == "patient"
        else f"We came in because of my {child}: {symptom_phrase(primary)}."
    )
    data = {
        "title": f"{primary.rstrip('.')} — {demographics or 'adult'}",
        "specialty": "general",
        "tags": [IMPORT_TAG, SOURCE] + (["choices-synthetic"] if synthetic else []),
        "source": SOURCE,
        "doorway": {
            "patient_name": placeholder_name("AgentClinic", index),
            "age": age,
            "age_unit": unit,
            "sex": sex,
            "setting": DEFAULT_SETTING,
            "chief_complaint": primary,
            "vitals": parsed.values,
            "tasks": [objective] if objective else ["Take a focused history.", "Reach a diagnosis."],
        },
        "persona": {
            "speaker": speaker,
            "affect": DEFAULT_AFFECT,
            "notes": (
                f"Imported from AgentClinic ({entry.source}). Demographics as given: {demographics!r}. "
                "Answer only from the facts listed; anything else gets the default answer."
            ),
            "opening_statement": opening,
        },
        "history": facts.facts,
        "exam": findings,
        "tests": tests,
        "differential": [
            {
                "diagnosis": dx_name,
                "synonyms": dx_synonyms,
                "history_findings": history_findings,
                "exam_findings": exam_abnormal,
            }
        ],
        "diagnosis": {
            "name": dx_name,
            "synonyms": dx_synonyms,
            "vignette": vignette,
            "choices": choices,
        },
        "workup": [t["name"] for t in tests][:8],
    }
    return entry, finish_case(data, entry)


def _labelled(label: str, value: object) -> str:
    text = flatten_text(value)
    return "" if is_empty_value(text) else f"{label}: {text}"


def _text_fact(facts: FactBuilder, entry: CaseEntry, pa: dict, key: str, category: str) -> None:
    value = pa.get(key)
    if not _says_something(entry, key, value):
        return
    if isinstance(value, list):
        items = [flatten_text(v) for v in value if not is_empty_value(v)]
        answer = ", ".join(items[:-1]) + (" and " if len(items) > 1 else "") + items[-1]
        prefix = "I take " if category == "medications" else "I have "
        if facts.speaker != "patient":
            prefix = "They take " if category == "medications" else "They have "
        facts.add(category, f"{prefix}{answer}.", base_id=f"{category}_{key}" if key in _MED_KEYS[1:] else category, keywords=items)
        return
    facts.add(category, facts.answer(sentences(flatten_text(value))), base_id=category)


def _says_something(entry: CaseEntry, key: str, value: object) -> bool:
    """False for an absent or empty Patient_Actor field (noting the empty ones in the report)."""
    if value is None:
        return False
    if is_empty_value(value):
        entry.notes.append(f"Patient_Actor.{key} says nothing ({flatten_text(value)!r}); the default answer covers it")
        return False
    return True


def _social_facts(facts: FactBuilder, entry: CaseEntry, value: object) -> None:
    if not _says_something(entry, "Social_History", value):
        return
    if isinstance(value, dict):
        items = [flatten_text(v) for v in value.values() if not is_empty_value(v)]
    else:
        items = [flatten_text(value)]
    by_category: dict[str, list[str]] = {}
    for item in items:
        for sentence in sentences(item):
            for category in classify_social(sentence) or ["social_living" if "child" in sentence.lower() else "other"]:
                by_category.setdefault(category, []).append(sentence)
    for category, group in by_category.items():
        facts.add(category, facts.answer(group), base_id=category if category != "other" else "social_other")


def _ros_facts(facts: FactBuilder, entry: CaseEntry, value: object) -> None:
    if not _says_something(entry, "Review_of_Systems", value):
        return
    if isinstance(value, dict):
        for key, text in value.items():
            if is_empty_value(text):
                continue
            system = humanize_key(key)
            facts.add(
                "ros",
                facts.answer(sentences(flatten_text(text))),
                base_id=f"ros_{key}",
                question=f"Any problems with your {system.lower()} system?" if key.lower() != "other" else None,
                keywords=[system.lower()],
            )
        return
    facts.add("ros", facts.answer(sentences(flatten_text(value))), base_id="ros")
