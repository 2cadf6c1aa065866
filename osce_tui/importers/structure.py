"""Nested dataset sections -> exam findings per body system, and tests.

Datasets nest examinations by free-form names ('Cardiopulmonary_Examination'
-> 'Heart_Sounds'). ``system_for`` maps a name path onto the case schema's
body systems; ``exam_findings`` and ``investigations`` walk the nesting.
"""

from __future__ import annotations

import re
from typing import Iterator

from .text import flatten_text, humanize_key, is_empty_value, looks_abnormal

# Checked in order; first match wins. Word-start anchored so 'ent' does not match 'patient'.
_SYSTEM_RULES: list[tuple[str, re.Pattern[str]]] = [
    (s, re.compile(p, re.IGNORECASE))
    for s, p in [
        ("vitals", r"\bvital"),
        ("mental_status", r"\b(?:mental|psychiatric|cognitive|mood|affect)"),
        ("neurological", r"\b(?:neuro|cranial|reflex|gait|coordination|cerebell|sensation|sensory|motor|romberg|"
         r"positional|dix|babinski|tone)"),
        ("breast", r"\bbreast"),
        ("pelvic", r"\b(?:pelvic|rectovaginal|obstetric|gyn|vagin|cervi|uter|adnex|speculum|bimanual|fundal)"),
        ("rectal", r"\b(?:rectal|anal|anus|prostat|digital rectal)"),
        ("genitourinary", r"\b(?:genit|testic|scrot|penil|penis|urolog|inguinal|hernia|kidney|renal|costovertebral|cva)"),
        ("cardiovascular", r"\b(?:cardio(?!pulmonary)|cardiac|heart|murmur|pulses?\b|jvp|jugular|capillary|peripheral pulse)"),
        ("respiratory", r"\b(?:respir|lung|pulmon|chest|breath|thorax|thoracic|auscultation of the lungs)"),
        ("abdominal", r"\b(?:abdom|liver|hepat|spleen|splen|bowel|epigastr|murphy|mcburney|rovsing|psoas)"),
        ("skin", r"\b(?:skin|derma|rash|lesion|integument|nail|hair|wound|mucos)"),
        ("lymph", r"\blymph"),
        ("neck", r"\b(?:neck|thyroid|cervical lymph|trache)"),
        ("heent", r"\b(?:head|heent|ent\b|ear|eye|ocular|ophthalm|oral|mouth|throat|nose|nasal|audio|hearing|fundus|"
         r"fundoscop|pupil|tympan|oropharyn|pharyn|sinus|dental|teeth|tongue|visual|vision|conjunctiv|otoscop)"),
        ("back", r"\b(?:back|spine|spinal|lumbar)"),
        ("musculoskeletal", r"\b(?:musculoskeletal|msk|joint|knee|shoulder|hip|elbow|wrist|ankle|muscle|range of motion|"
         r"bone|fracture)"),
        ("extremities", r"\b(?:extremit|leg|arm|hand|foot|feet|limb|edema|oedema|finger|toe|calf)"),
        ("general", r"\b(?:general|appearance|growth|habitus|overall|examination|remainder|exam)"),
    ]
]

# Section names that say little; their components decide the system instead.
_GENERIC_NAMES = {"", "general", "remainder of the", "remainder", "cardiopulmonary", "head and neck", "physical", "other"}
_EXAM_WORDS = re.compile(r"\b(?:examination|exam|findings?|system)\b", re.IGNORECASE)


def _is_generic(section: str) -> bool:
    words = " ".join(_EXAM_WORDS.sub(" ", section.replace("_", " ")).lower().split())
    return words in _GENERIC_NAMES


def system_for(section: str, component_path: list[str]) -> tuple[str, bool]:
    """Body system for an exam entry. Returns (system, matched?) — unmatched falls back to 'general'."""
    sec = section.replace("_", " ")
    comp = " ".join(component_path).replace("_", " ")
    order = [comp, sec] if _is_generic(section) else [sec, comp]
    for text in order:
        for system, pattern in _SYSTEM_RULES:
            if system != "general" and text and pattern.search(text):
                return system, True
    general = _SYSTEM_RULES[-1][1]
    return "general", bool(general.search(sec) or general.search(comp))


def walk_leaves(node: object, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    """Yield (key path, text) for every non-empty leaf; lists of scalars become one leaf."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk_leaves(value, path + (str(key),))
    elif isinstance(node, list) and any(isinstance(v, (dict, list)) for v in node):
        for i, value in enumerate(node):
            yield from walk_leaves(value, path + (str(i + 1),))
    elif not is_empty_value(node):
        yield path, flatten_text(node)


def exam_findings(pe: dict[str, object], skip: set[str]) -> tuple[list[dict], list[str]]:
    """ExamFinding dicts from a nested physical-exam dict; second item lists unmatched names."""
    findings: list[dict] = []
    unmatched: list[str] = []
    for section, body in pe.items():
        if section in skip:
            continue
        for path, text in walk_leaves(body, ()):
            system, ok = system_for(section, list(path))
            if not ok:
                unmatched.append(".".join((section, *path)))
            label_parts = [humanize_key(p) for p in path] or [humanize_key(section)]
            component = " — ".join(label_parts)
            if path and not _is_generic(section):
                component = f"{humanize_key(_EXAM_WORDS.sub('', section.replace('_', ' ')).strip())}: {component}"
            findings.append(
                {
                    "system": system,
                    "component": component,
                    "finding": text,
                    "abnormal": looks_abnormal(text),
                }
            )
    return findings, unmatched


_LABEL_ONLY = {"findings", "finding", "result", "results", "value", "report", "impression"}


def investigations(tree: dict[str, object]) -> list[dict]:
    """Investigation dicts from a nested test-results dict.

    A dict whose values are all plain values is one investigation (a panel:
    'Complete blood count' with 'Hemoglobin: ...; WBC: ...'), and its
    component names become aliases so ordering 'hemoglobin' finds it. Dicts
    holding further dicts ('Imaging' -> 'Chest CT' -> ...) are containers.
    """
    tests: list[dict] = []

    def visit(name_path: tuple[str, ...], node: object) -> None:
        if isinstance(node, dict) and any(isinstance(v, dict) for v in node.values()):
            for key, value in node.items():
                visit(name_path + (str(key),), value)
            return
        if is_empty_value(node):
            return
        name = humanize_key(name_path[-1])
        aliases = []
        if len(name_path) > 1:
            aliases.append(" ".join(humanize_key(p) for p in name_path))
        if isinstance(node, dict):
            parts = [(k, flatten_text(v)) for k, v in node.items() if not is_empty_value(v)]
            if len(parts) == 1 and parts[0][0].lower() in _LABEL_ONLY:
                result = parts[0][1]
            else:
                result = "; ".join(f"{humanize_key(k)}: {v}" for k, v in parts)
                aliases += [humanize_key(k) for k, _ in parts if k.lower() not in _LABEL_ONLY]
        else:
            result = flatten_text(node)
        tests.append({"name": name, "aliases": _dedupe(aliases, exclude=name), "result": result, "abnormal": looks_abnormal(result)})

    for key, value in tree.items():
        visit((str(key),), value)
    return tests


def _dedupe(items: list[str], exclude: str) -> list[str]:
    seen = {exclude.lower()}
    out = []
    for item in items:
        if item.lower() not in seen:
            seen.add(item.lower())
            out.append(item)
    return out
