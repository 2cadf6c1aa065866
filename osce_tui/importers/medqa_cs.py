"""MedQA-CS release JSON -> cases (one per ``case_id``).

The release (``med-student.json``) is a JSON list of rows
``{unique_id, section, case_id, conversation_turn_id, input, ground_truth_output,
prompt, output}`` with ``section`` one of ``qa``, ``physical_exam``,
``closure``, ``diagnosis``. We had no copy of the data, so the layout of the
*text inside* the rows is an assumption, documented here and exercised by
``tests/fixtures/importers/medqa_cs_sample.json``:

* ``input.opening`` is the doorway text: "<Name>, a <age>-year-old <sex>,
  comes to the <setting> complaining of <complaint>." then a "Vital Signs:"
  block (``BP:``, ``Temp:``, ``RR:``, ``HR:``, optional ``SpO2:``) and an
  "Examinee Tasks:" numbered list.
* ``input.chat_history`` is the gold transcript so far, one line per
  utterance prefixed ``Doctor:`` / ``Patient:`` (``Student:``, ``Examinee:``,
  ``SP:`` are accepted too), or ``N/A``. The longest history of a case is its
  question bank; its order is the expected inquiry order (LCP).
* ``physical_exam`` ground truth: one "<component>: <finding>" per line; an
  optional following "reason: ..." line is the indication.
* ``closure`` ground truth: the closure text, optionally followed by
  "Question: ..." and "Answer: ..." lines (the challenging question).
* ``diagnosis`` ground truth: a patient note with optional "History:" and
  "Physical Examination:" paragraphs, then "Diagnosis #N: <name>" blocks each
  with "Historical Finding(s):" and "Physical Exam Finding(s):" lists, and an
  optional "Diagnostic Workup:" list. A JSON object in the utils format
  (``{"diagnosis 1": {"diagnosis", "Historical Findings", "Physical exam data"}}``)
  is accepted as well.

``prompt``, ``output`` and ``unique_id`` are model-run artefacts, not case
content, and are ignored on purpose (listed once in the report notes).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..domain.case import Case
from .casebuild import (
    DEFAULT_AFFECT,
    DEFAULT_TASKS,
    IMPORT_TAG,
    FactBuilder,
    child_word,
    choices_for,
    finish_case,
    parse_demographics,
    speaker_for,
    split_diagnosis_name,
)
from .questions import classify, paraphrases_for
from .report import CaseEntry, ImportInputError, read_json_file
from .structure import system_for
from .text import looks_abnormal, sentences, slug
from .vitals import parse_vitals

SOURCE = "medqa-cs"
SECTIONS = ("qa", "physical_exam", "closure", "diagnosis")
_ROW_KNOWN = {"unique_id", "section", "case_id", "conversation_turn_id", "input", "ground_truth_output", "prompt", "output"}
_INPUT_KNOWN = {"opening", "chat_history", "physical_exam", "closure", "challenging_question", "prev_conversation"}

# Question wording first (a question names its topic more plainly than the answer).
_QUESTION_RULES = [
    ("chief_complaint", r"\b(?:brings? you|how can i help|what seems to be|reason for (?:your|the|today)|what's going on)\b"),
    ("onset", r"\b(?:when did|how long|since when|start|began|begin)\b"),
    ("location", r"\bwhere\b"),
    ("radiation", r"\b(?:spread|radiat|move anywhere|travel)\w*"),
    ("severity", r"\b(?:scale|how bad|how severe|rate (?:the|your))\b"),
    ("quality", r"\b(?:describe|what does it feel|what kind of)\b"),
    ("timing", r"\b(?:how often|constant|come and go|comes and goes|time of day)\b"),
    ("family", r"\bfamily\b|\b(?:parents|mother|father|siblings)\b"),
    ("pmh", r"\b(?:medical (?:problems|conditions|history)|illness(?:es)?|been diagnosed|health problems)\b"),
    ("ideas_concerns", r"\b(?:worried|concern|what do you think)\w*"),
]
_QUESTION_RULES_RE = [(c, re.compile(p, re.IGNORECASE)) for c, p in _QUESTION_RULES]
_SPEAKER = re.compile(r"^\s*(doctor|student|examinee|physician|patient|sp|standardized patient)\s*:\s*(.*)$", re.IGNORECASE)


def read_rows(path: Path) -> list[dict]:
    data = read_json_file(path)
    if isinstance(data, dict):  # tolerate {"data": [...]} wrappers
        data = next((v for v in data.values() if isinstance(v, list)), None)
    if not isinstance(data, list) or not data:
        raise ImportInputError(path, "expected a non-empty JSON list of rows")
    for i, row in enumerate(data):
        if not isinstance(row, dict) or "case_id" not in row or "section" not in row:
            raise ImportInputError(path, f"row {i} needs 'case_id' and 'section'")
        if not isinstance(row.get("input", {}), dict):
            raise ImportInputError(path, f"row {i} (case {row.get('case_id')}): 'input' must be an object")
    return data


def import_file(path: Path) -> list[tuple[CaseEntry, Case]]:
    rows = read_rows(path)
    by_case: dict[str, list[dict]] = {}
    for row in rows:
        by_case.setdefault(str(row["case_id"]), []).append(row)
    dx_pool = []
    for group in by_case.values():
        dx = next((r for r in group if r["section"] == "diagnosis"), None)
        dx_pool += [d["name"] for d in (parse_note(_text(dx.get("ground_truth_output")))["diagnoses"] if dx else [])[:1]]
    return [
        convert(key, group, source_name=Path(path).name, dx_pool=dx_pool)
        for key, group in sorted(by_case.items(), key=lambda kv: _num(kv[0]))
    ]


def _num(key: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", key)
    return (int(digits) if digits else 0, key)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    return json.dumps(value)


# ------------------------------------------------------------------ parsing


def parse_opening(text: str) -> dict:
    """Doorway fields from the opening scenario text."""
    text = re.sub(r"^\s*opening scenario:\s*", "", text, flags=re.IGNORECASE)
    parts = re.split(r"\n\s*(?=vital signs:|examinee tasks:)", text, flags=re.IGNORECASE)
    scenario = parts[0].strip()
    vitals: dict[str, str] = {}
    tasks: list[str] = []
    for part in parts[1:]:
        lines = [ln.strip() for ln in part.splitlines()[1:] if ln.strip()]
        if part.lower().lstrip().startswith("vital"):
            for ln in lines:
                if ":" in ln:
                    k, v = ln.split(":", 1)
                    vitals[k.strip()] = v.strip()
        else:
            tasks = [re.sub(r"^\d+[.)]\s*", "", ln) for ln in lines]
    name = re.match(r"^([A-Z][\w.'-]+(?: [A-Z][\w.'-]+)+),", scenario)
    setting = re.search(r"\b(?:comes|presents|is brought|came) (?:in )?to (?:the |an |a )?([\w\s-]+?)(?: complaining| with| for| because|[.,])", scenario)
    cc = re.search(r"\b(?:complaining of|complains of|with|because of|for)\s+(?:a |an )?([^.]+)", scenario[scenario.find(",", scenario.find("old")) :] if "old" in scenario else scenario)
    return {
        "scenario": scenario,
        "name": name.group(1) if name else None,
        "setting": setting.group(1).strip() if setting else None,
        "chief_complaint": cc.group(1).strip() if cc else None,
        "vitals": {_VITAL_NAMES.get(k.lower(), k): v for k, v in vitals.items()},
        "tasks": tasks,
    }


_VITAL_NAMES = {"bp": "Blood pressure", "temp": "Temperature", "t": "Temperature", "rr": "Respiratory rate", "hr": "Heart rate",
                "pulse": "Heart rate", "spo2": "Oxygen saturation", "o2 sat": "Oxygen saturation"}


def parse_chat(text: str) -> list[tuple[str, str]]:
    """Doctor/patient pairs from 'Doctor: ...\\nPatient: ...' text (continuation lines are joined)."""
    if not text or text.strip().upper() in ("N/A", "NA", "NONE"):
        return []
    turns: list[list[str]] = []
    for line in text.splitlines():
        m = _SPEAKER.match(line)
        if m:
            role = "patient" if m.group(1).lower() in ("patient", "sp", "standardized patient") else "doctor"
            turns.append([role, m.group(2).strip()])
        elif turns and line.strip():
            turns[-1][1] += " " + line.strip()
    pairs: list[tuple[str, str]] = []
    question = None
    for role, utterance in turns:
        if role == "doctor":
            question = utterance.strip().strip('"')
        elif question is not None:
            pairs.append((question, utterance.strip().strip('"')))
            question = None
    return pairs


def parse_exam(text: str) -> list[dict]:
    findings: list[dict] = []
    for line in text.splitlines():
        line = line.strip().lstrip("-•* ").strip()
        if not line:
            continue
        if line.lower().startswith("reason:") and findings:
            findings[-1]["reason"] = line.split(":", 1)[1].strip()
            continue
        component, finding = (line.split(":", 1) + [""])[:2] if ":" in line else ("General", line)
        component, finding = component.strip(), finding.strip() or line
        system, _ = system_for(component, [finding] if component == "General" else [])
        findings.append({"system": system, "component": component, "finding": finding, "abnormal": looks_abnormal(finding)})
    return findings


def parse_closure(text: str) -> dict:
    q = re.search(r"^\s*(?:challenging )?question:\s*(.+)$", text, re.IGNORECASE | re.MULTILINE)
    a = re.search(r"^\s*answer:\s*(.+(?:\n(?!\s*\w+:).+)*)", text, re.IGNORECASE | re.MULTILINE)
    body = text[: q.start()] if q else text
    body = re.sub(r"^\s*closure:\s*", "", body, flags=re.IGNORECASE).strip()
    plan = [s for s in sentences(body) if re.search(r"\b(?:test|tests|plan|order|blood|scan|x-ray|ecg|ekg|check|start|refer|follow)\w*", s, re.IGNORECASE)]
    return {
        "impressions": body,
        "management": plan or ([body] if body else []),
        "question": q.group(1).strip() if q else None,
        "answer": " ".join(a.group(1).split()) if a else None,
    }


_NOTE_HEADS = {
    "history": r"(?:history|hpi|history of present illness)",
    "pe": r"(?:physical exam(?:ination)?|pe)",
    "workup": r"(?:diagnostic (?:workup|work-up|studies|study|plan)|workup|work-up)",
}


def parse_note(text: str) -> dict:
    """Patient-note parts: {'hpi', 'pe', 'diagnoses': [{name, history, exam}], 'workup'}."""
    result = {"hpi": "", "pe": "", "diagnoses": [], "workup": []}
    if not text:
        return result
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError:
            obj = None
        if isinstance(obj, dict):
            for value in obj.values():
                if isinstance(value, dict) and value.get("diagnosis"):
                    result["diagnoses"].append(
                        {
                            "name": str(value["diagnosis"]).strip(),
                            "history": _as_list(value.get("Historical Findings")),
                            "exam": _as_list(value.get("Physical exam data")),
                        }
                    )
            return result
    current: dict | None = None
    mode = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if m := re.match(r"^diagnosis\s*#?\s*\d*\s*:\s*(.+)$", line, re.IGNORECASE):
            current = {"name": m.group(1).strip(), "history": [], "exam": []}
            result["diagnoses"].append(current)
            mode = None
        elif re.match(r"^histor\w* finding", line, re.IGNORECASE) and current is not None:
            mode = "history"
        elif re.match(r"^physical exam\w* finding", line, re.IGNORECASE) and current is not None:
            mode = "exam"
        elif re.match(rf"^{_NOTE_HEADS['workup']}\s*:", line, re.IGNORECASE):
            mode, current = "workup", None
            rest = line.split(":", 1)[1].strip()
            if rest:
                result["workup"].append(rest)
        elif re.match(rf"^{_NOTE_HEADS['history']}\s*:", line, re.IGNORECASE) and current is None:
            mode = "hpi"
            result["hpi"] = line.split(":", 1)[1].strip()
        elif re.match(rf"^{_NOTE_HEADS['pe']}\s*:", line, re.IGNORECASE) and current is None:
            mode = "pe"
            result["pe"] = line.split(":", 1)[1].strip()
        elif re.match(r"^\w[\w\s]*reasons?\s*:", line, re.IGNORECASE):
            mode = "ignore"
        else:
            item = line.lstrip("-•*0123456789.) ").strip()
            if item.upper() in ("N/A", "NONE"):
                continue
            if mode in ("history", "exam") and current is not None:
                current[mode].append(item)
            elif mode == "workup":
                result["workup"].append(item)
            elif mode in ("hpi", "pe"):
                key = "hpi" if mode == "hpi" else "pe"
                result[key] = (result[key] + " " + line).strip()
    return result


def _as_list(value: object) -> list[str]:
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    if isinstance(value, str) and value.strip() and value.strip().upper() != "N/A":
        return [value.strip()]
    return []


def _category(question: str, answer: str) -> str:
    for category, pattern in _QUESTION_RULES_RE:
        if pattern.search(question):
            return category
    category = classify(question)
    return category if category != "other" else classify(answer)


# ------------------------------------------------------------------ convert


def convert(key: str, rows: list[dict], *, source_name: str, dx_pool: list[str]) -> tuple[CaseEntry, Case]:
    by_section: dict[str, list[dict]] = {}
    for row in rows:
        by_section.setdefault(str(row["section"]), []).append(row)
    note = parse_note(_text(by_section.get("diagnosis", [{}])[0].get("ground_truth_output")))
    dx_name = note["diagnoses"][0]["name"] if note["diagnoses"] else f"Unknown diagnosis (case {key})"
    name, synonyms = split_diagnosis_name(dx_name)
    entry = CaseEntry(id=f"{SOURCE}-{slug(key, 8)}-{slug(name, 40)}", source=f"{source_name} case_id {key}")
    if not note["diagnoses"]:
        entry.defaults.append("diagnosis.name: no diagnosis row for this case; placeholder name")
    for section in by_section:
        if section not in SECTIONS:
            entry.unmapped_field(f"section {section!r}", [r.get("ground_truth_output") for r in by_section[section]])
    for row in rows:
        for k, v in row.items():
            if k not in _ROW_KNOWN:
                entry.unmapped_field(f"{row['section']}.{k}", v)
        for k, v in (row.get("input") or {}).items():
            if k not in _INPUT_KNOWN:
                entry.unmapped_field(f"{row['section']}.input.{k}", v)
    entry.notes.append("prompt/output/unique_id columns are model-run artefacts and were not imported")

    opening_text = next((_text(r.get("input", {}).get("opening")) for r in rows if r.get("input", {}).get("opening")), "")
    opening = parse_opening(opening_text)
    age, unit, sex, demo_notes = parse_demographics(opening["scenario"], opening["scenario"])
    entry.defaults += demo_notes
    speaker = speaker_for(age, unit)
    facts = FactBuilder(speaker, child_word(age, unit, sex))

    qa_rows = sorted(by_section.get("qa", []), key=lambda r: int(r.get("conversation_turn_id") or 0))
    histories = [parse_chat(_text(r.get("input", {}).get("chat_history"))) for r in qa_rows]
    pairs = max(histories, key=len, default=[])
    answered = {q.lower() for q, _ in pairs}
    for r in qa_rows:
        gold = _text(r.get("ground_truth_output")).strip('"')
        if gold and gold.lower() not in answered and r is qa_rows[-1]:
            entry.notes.append(f"last gold question has no patient answer in any chat_history: {gold!r} (not a fact)")
    order: list[str] = []
    for i, (question, answer) in enumerate(pairs, start=1):
        category = "chief_complaint" if i == 1 and _category(question, answer) in ("other", "ideas_concerns") else _category(question, answer)
        fid = facts.add(category, answer, base_id=f"q{i:02d}_{category}", question=question, paraphrases=paraphrases_for(question, category), volunteer=i == 1)
        order.append(fid)
    if not pairs:
        cc = opening["chief_complaint"] or "a health problem"
        facts.add("chief_complaint", f"I'm here because of {cc}.", volunteer=True)
        entry.defaults.append("history: no chat_history in the qa rows; only a chief-complaint fact from the opening")

    exam = parse_exam(_text(by_section.get("physical_exam", [{}])[0].get("ground_truth_output")))
    closure = parse_closure(_text(by_section.get("closure", [{}])[0].get("ground_truth_output")))

    parsed_vitals = parse_vitals(opening["vitals"], age, unit)
    entry.defaults += parsed_vitals.notes
    cc = opening["chief_complaint"] or (pairs[0][1] if pairs else "Not stated")
    differential = [
        {"diagnosis": d["name"], "history_findings": (d["history"] or [cc])[:3], "exam_findings": d["exam"][:3]}
        for d in note["diagnoses"][:5]
    ] or [{"diagnosis": name, "history_findings": [cc]}]
    for d in note["diagnoses"][5:]:
        entry.unmapped_field("diagnosis (beyond 5)", d["name"], "the case keeps at most 5 differential diagnoses")
    choices, synthetic = choices_for(entry.id, name, dx_pool, [d["name"] for d in note["diagnoses"][1:]] or None)
    if synthetic:
        entry.defaults.append("diagnosis.choices: padded with diagnoses from other cases in the file")
    if not opening["name"]:
        entry.defaults.append("doorway.patient_name: placeholder (not found in the opening)")
    if not opening["setting"]:
        entry.defaults.append("doorway.setting: 'Clinic' (not found in the opening)")
    if not opening["tasks"]:
        entry.defaults.append("doorway.tasks: standard tasks (no 'Examinee Tasks' in the opening)")
    entry.defaults.append("persona.affect: neutral default (not in source)")

    data: dict = {
        "title": f"{cc[:1].upper() + cc[1:]} — {age} {unit} old {sex}",
        "specialty": "general",
        "tags": [IMPORT_TAG, SOURCE] + (["choices-synthetic"] if synthetic else []),
        "source": SOURCE,
        "doorway": {
            "patient_name": opening["name"] or f"MedQA-CS patient {key}",
            "age": age,
            "age_unit": unit,
            "sex": sex,
            "setting": (opening["setting"] or "Clinic")[:1].upper() + (opening["setting"] or "Clinic")[1:],
            "chief_complaint": cc[:1].upper() + cc[1:],
            "vitals": parsed_vitals.values,
            "tasks": opening["tasks"] or DEFAULT_TASKS,
        },
        "persona": {
            "speaker": speaker,
            "affect": DEFAULT_AFFECT,
            "notes": f"Imported from MedQA-CS ({entry.source}). Answers are the standardized patient's own words from the gold transcript.",
            "opening_statement": pairs[0][1] if pairs else facts.facts[0]["answer"],
        },
        "history": facts.facts,
        "exam": exam,
        "differential": differential,
        "diagnosis": {
            "name": name,
            "synonyms": synonyms,
            "vignette": " ".join(filter(None, [opening["scenario"], note["hpi"], note["pe"]])) or opening_text or name,
            "choices": choices,
        },
        "workup": note["workup"][:8],
    }
    for item in note["workup"][8:]:
        entry.unmapped_field("workup (beyond 8)", item, "the case keeps at most 8 workup items")
    if note["hpi"] and note["pe"]:
        data["note"] = {"hpi": note["hpi"], "pe": note["pe"]}
    if closure["impressions"] and closure["management"]:
        data["closure"] = {"impressions": closure["impressions"], "management": closure["management"]}
    if closure["question"] and closure["answer"]:
        data["challenging_questions"] = [{"question": closure["question"], "sample_answer": closure["answer"]}]
    elif closure["question"]:
        entry.unmapped_field("closure.question", closure["question"], "challenging question without a sample answer")
    if len(order) >= 3:
        data["lcp"] = {
            "expected_order": order,
            "clinician_rounds": len(order),
            "expected_exams": [e["component"] for e in exam],
            "expected_tests": note["workup"][:8],
        }
    return entry, finish_case(data, entry)
