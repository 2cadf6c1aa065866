"""CRAFT-MD: case tables -> cases, and published transcripts -> sessions.

Case table (``cases import craftmd FILE.csv``). Accepted columns, matched
case-insensitively:

* vignette: ``case_vignette`` or ``vignette`` (required)
* correct answer: ``answer``, ``correct_ans`` or ``correct_answer`` (required)
* options: ``choice_1`` .. ``choice_N``, or one ``choices`` column holding a
  JSON list or items separated by ``;`` or ``|`` (optional; without them four
  options are drawn from the other answers in the file and the case is
  tagged ``choices-synthetic``)
* ``case_id`` (else the row number), ``category`` (-> specialty),
  ``dataset`` (-> a tag), ``question`` (kept in the persona notes)

This matches the CRAFT-MD release table (``,case_vignette,choice_1..choice_4,
answer,category,dataset,case_id``); an unnamed index column is ignored and
any other column is listed as unmapped.

Transcripts (``sessions import craftmd DIR``): ``DIR`` is either a results
folder with one sub-folder per model (``results/<model>/case_*.json``) or a
single model folder. Each ``case_*.json`` holds ``case_vignette``,
``correct_ans`` and ``trial_0..trial_N``, each with ``multiturn_conversation``
(system prompt, doctor = assistant, patient = user) plus the arms' answers and
the grader's extracted answers and evaluations. Every trial becomes one
Session (mode ``imported``); the dataset's own answers and grades are kept
in ``session.run.extra["craftmd"]`` for comparison with re-scoring. A minimal
case per CRAFT-MD case is written too, so ``batch score --rubric craft-md``
has the correct answer to score against.
"""

from __future__ import annotations

import csv
import json
import re
from datetime import datetime, timezone
from pathlib import Path

from ..domain.case import Case
from ..domain.session import RoleAssignment, RunMetadata, Session, Turn
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
from .questions import classify
from .report import CaseEntry, ImportInputError, ImportReport
from .structure import system_for
from .text import looks_abnormal, sentences, slug
from .vitals import parse_vitals
from .writer import write_json_file

SOURCE = "craftmd"
_VIGNETTE_COLS = ("case_vignette", "vignette")
_ANSWER_COLS = ("answer", "correct_ans", "correct_answer")
_KNOWN_COLS = {*_VIGNETTE_COLS, *_ANSWER_COLS, "choices", "case_id", "category", "dataset", "question", "", "unnamed: 0", "index"}


# --------------------------------------------------------------------- cases


def case_id_for(case_key: str, answer: str) -> str:
    return f"{SOURCE}-{slug(case_key, 24)}-{slug(answer, 40)}"


def import_csv(path: Path) -> list[tuple[CaseEntry, Case]]:
    rows = read_case_table(path)
    pool = [r["answer"] for r in rows]
    out = []
    for i, row in enumerate(rows, start=1):
        entry = CaseEntry(id=case_id_for(row["case_key"], row["answer"]), source=f"{Path(path).name} line {row['line']}")
        for name, value in row["unmapped"].items():
            entry.unmapped_field(name, value)
        case = case_from_vignette(
            entry,
            index=i,
            vignette=row["vignette"],
            answer=row["answer"],
            given_choices=row["choices"],
            pool=pool,
            specialty=row["category"],
            extra_tags=[row["dataset"]] if row["dataset"] else [],
            question=row["question"],
        )
        out.append((entry, case))
    return out


def read_case_table(path: Path) -> list[dict]:
    """Rows of a CRAFT-MD-style CSV, normalised; raises ImportInputError naming file and line."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            header = reader.fieldnames or []
            # line_num after reading a row is its last physical line (quoted vignettes may span lines).
            rows = [(reader.line_num, row) for row in reader]
    except FileNotFoundError:
        raise ImportInputError(path, "no such file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ImportInputError(path, f"cannot read CSV ({exc})") from None
    cols = {h.strip().lower(): h for h in header if h is not None}
    vcol = next((cols[c] for c in _VIGNETTE_COLS if c in cols), None)
    acol = next((cols[c] for c in _ANSWER_COLS if c in cols), None)
    if not vcol or not acol:
        raise ImportInputError(path, "header needs a vignette column (case_vignette|vignette) and an answer column (answer|correct_ans)", 1)
    choice_cols = sorted((h for k, h in cols.items() if re.fullmatch(r"choice_?\d+", k)), key=lambda h: int(re.sub(r"\D", "", h)))
    out = []
    for n, raw in rows:
        if None in raw:
            raise ImportInputError(path, "more fields than header columns", n)
        vignette = (raw.get(vcol) or "").strip()
        answer = (raw.get(acol) or "").strip()
        if not vignette and not answer:
            continue
        if not vignette or not answer:
            raise ImportInputError(path, f"row has no {'vignette' if not vignette else 'answer'}", n)
        choices = [raw[h].strip() for h in choice_cols if (raw.get(h) or "").strip()]
        if "choices" in cols and (raw.get(cols["choices"]) or "").strip():
            choices += _split_choices(raw[cols["choices"]])
        get = lambda key: (raw.get(cols[key]) or "").strip() if key in cols else ""  # noqa: E731
        unmapped = {
            h: v for h, v in raw.items() if h is not None and h.strip().lower() not in _KNOWN_COLS and h not in choice_cols and v
        }
        out.append(
            {
                "line": n,
                "case_key": get("case_id") or f"line-{n}",
                "vignette": vignette,
                "answer": answer,
                "choices": choices,
                "category": get("category"),
                "dataset": get("dataset"),
                "question": get("question"),
                "unmapped": unmapped,
            }
        )
    if not out:
        raise ImportInputError(path, "no data rows")
    return out


def _split_choices(text: str) -> list[str]:
    text = text.strip()
    if text.startswith("["):
        try:
            return [str(c).strip() for c in json.loads(text) if str(c).strip()]
        except json.JSONDecodeError:
            pass
    return [c.strip() for c in re.split(r"[;|]", text) if c.strip()]


_CC_VERB = r"\b(?:presents?|presented|presenting|comes|came|is brought|was brought|complains?|complaining|referred)\b[^.]{0,40}?"
_CC_WITH = re.compile(_CC_VERB + r"\b(?:with|of|because of)\s+([^.;]+)", re.IGNORECASE)
_CC_FOR = re.compile(_CC_VERB + r"\bfor\s+([^.;]+)", re.IGNORECASE)
_CC_LEAD = re.compile(
    r"^(?:(?:a|an|the)\s+)?(?:complaints? of\s+|concerns? (?:about|of)\s+|(?:\d+|one|two|three|several)[- ]\w+[- ]history of\s+|"
    r"history of\s+)?(?:(?:a|an)\s+)?",
    re.IGNORECASE,
)


_EXAM = re.compile(
    r"\b(?:on (?:physical )?exam\w*|examination|exam reveals|physical exam\w*|reveals?|revealed|"
    r"(?:are|is|was|were) (?:identified|noted|present|seen|found|visible|tender|swollen|enlarged|palpable)|"
    r"on inspection|palpation)\b",
    re.IGNORECASE,
)
_TEST = re.compile(
    r"\b(biopsy|biopsies|KOH|potassium hydroxide|culture|scraping|histolog\w*|serolog\w*|x-ray|ultrasound|CT|MRI|"
    r"smear|blood (?:test|count|work)|laboratory|labs?|swab|PCR|dermoscopy|patch test\w*)\b",
    re.IGNORECASE,
)


def chief_complaint(vignette: str) -> str | None:
    """The presenting problem from the first sentences ('presents with X'), or None."""
    first = sentences(vignette)[:2]
    for pattern in (_CC_WITH, _CC_FOR):
        for s in first:
            m = pattern.search(s)
            if m:
                cc = _CC_LEAD.sub("", m.group(1).strip().rstrip(","))
                if len(cc) > 90:
                    cc = cc[:90].rsplit(" ", 1)[0]
                return cc[:1].upper() + cc[1:] if cc else None
    return None


def case_from_vignette(
    entry: CaseEntry,
    *,
    index: int,
    vignette: str,
    answer: str,
    given_choices: list[str] | None,
    pool: list[str],
    specialty: str = "",
    extra_tags: list[str] | None = None,
    question: str = "",
) -> Case:
    """A minimal case built from a third-person vignette and the correct answer."""
    dx_name, dx_synonyms = split_diagnosis_name(answer)
    first = sentences(vignette)[0] if sentences(vignette) else vignette
    age, unit, sex, notes = parse_demographics(first, vignette)
    entry.defaults += notes
    speaker = speaker_for(age, unit)
    child = child_word(age, unit, sex)
    facts = FactBuilder(speaker, child)

    cc = chief_complaint(vignette)
    if cc is None:
        cc = "New problem (see vignette)"
        entry.defaults.append("doorway.chief_complaint: no 'presents with ...' phrase in the vignette; generic wording used")
    spoken = re.sub(r"\b(?:his|her)\b", "my", cc[:1].lower() + cc[1:]) if speaker == "patient" else cc[:1].lower() + cc[1:]
    facts.add("chief_complaint", f"I came in because of {spoken}.", volunteer=True)

    exam: list[dict] = []
    tests: list[dict] = []
    grouped: dict[str, list[str]] = {}
    derm = "derm" in specialty.lower()
    for s in sentences(vignette):
        test_match = _TEST.search(s)
        if test_match:
            tests.append({"name": test_match.group(1)[:1].upper() + test_match.group(1)[1:], "result": s, "abnormal": looks_abnormal(s)})
        elif _EXAM.search(s):
            system, ok = system_for("", [s])
            if not ok or system == "general":
                system = "skin" if derm else "general"
            exam.append({"system": system, "component": "Examination (from vignette)", "finding": s, "abnormal": looks_abnormal(s)})
        else:
            grouped.setdefault(classify(s), []).append(s)
    for category, group in grouped.items():
        facts.add(category, facts.answer(group), base_id=f"vignette_{category}")
    if facts.kept_wording:
        entry.notes.append(f"{facts.kept_wording} answer sentence(s) kept in the vignette's wording; {facts.rewritten} rewritten")

    choices, synthetic = choices_for(entry.id, dx_name, pool, given_choices)
    if synthetic:
        entry.defaults.append("diagnosis.choices: no answer options in the source; distractors are other answers from the same source")
    vitals = parse_vitals({}, age, unit)
    entry.defaults += ["doorway.vitals: not in source; age-typical placeholders"]
    entry.defaults += [
        "doorway.patient_name: placeholder (the source has no names)",
        f"doorway.setting: {DEFAULT_SETTING!r} (not in source)",
        "persona.affect: neutral default (not in source)",
        "doorway.tasks: standard tasks (not in source)",
    ]
    notes_text = f"Imported from CRAFT-MD ({entry.source}). Answer only from the vignette's facts."
    if question:
        notes_text += f" The source's question: {question}"
    data = {
        "title": f"{_short(cc)} — {age} {unit[:-1] if age == 1 else unit} old {sex if sex != 'unspecified' else 'patient'}",
        "specialty": specialty.lower() or "general",
        "tags": [IMPORT_TAG, SOURCE, *(extra_tags or [])] + (["choices-synthetic"] if synthetic else []),
        "source": SOURCE,
        "doorway": {
            "patient_name": placeholder_name("CRAFT-MD", index),
            "age": age,
            "age_unit": unit,
            "sex": sex,
            "setting": DEFAULT_SETTING,
            "chief_complaint": cc,
            "vitals": vitals.values,
            "tasks": DEFAULT_TASKS,
        },
        "persona": {
            "speaker": speaker,
            "affect": DEFAULT_AFFECT,
            "notes": notes_text,
            "opening_statement": facts.facts[0]["answer"],
        },
        "history": facts.facts,
        "exam": exam,
        "tests": tests,
        "differential": [{"diagnosis": dx_name, "synonyms": dx_synonyms, "history_findings": [cc]}],
        "diagnosis": {"name": dx_name, "synonyms": dx_synonyms, "vignette": vignette, "choices": choices},
    }
    return finish_case(data, entry)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"


# ------------------------------------------------------------------ sessions

_FINAL = re.compile(r"final diagnosis\W*?:\W*(.+)", re.IGNORECASE | re.DOTALL)
_TRIAL = re.compile(r"^trial_(\d+)$")


def model_dirs(src: Path) -> list[tuple[str, Path]]:
    src = Path(src)
    if not src.exists():
        raise ImportInputError(src, "no such folder")
    if not src.is_dir():
        raise ImportInputError(src, "expected a folder (results/<model>/case_*.json or one model folder)")
    if any(src.glob("case_*.json")):
        return [(src.name, src)]
    dirs = [(d.name, d) for d in sorted(src.iterdir()) if d.is_dir() and any(d.glob("case_*.json"))]
    if not dirs:
        raise ImportInputError(src, "no case_*.json files here or in sub-folders (expected results/<model>/case_*.json)")
    return dirs


def _case_sort_key(path: Path) -> tuple[int, str]:
    digits = re.sub(r"\D", "", path.stem)
    return (int(digits) if digits else 0, path.name)


def read_transcript(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportInputError(path, f"cannot read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise ImportInputError(path, f"not valid JSON ({exc.msg})", exc.lineno) from None
    if not isinstance(data, dict):
        raise ImportInputError(path, "expected a JSON object")
    for key in ("case_vignette", "correct_ans"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise ImportInputError(path, f"missing {key!r}")
    for key, trial in data.items():
        if not _TRIAL.match(key):
            continue
        convo = trial.get("multiturn_conversation") if isinstance(trial, dict) else None
        if not isinstance(convo, list):
            raise ImportInputError(path, f"{key}.multiturn_conversation must be a list of messages")
        for i, msg in enumerate(convo):
            if not (isinstance(msg, dict) and isinstance(msg.get("role"), str) and isinstance(msg.get("content"), str)):
                raise ImportInputError(path, f"{key}.multiturn_conversation[{i}] needs string 'role' and 'content'")
    return data


_SPECIALTY = re.compile(r"speciali[sz]ing in ([A-Za-z]+)", re.IGNORECASE)


def _specialty(data: dict) -> str:
    """The doctor's specialty named in the first trial's system prompt ('specializing in Dermatology')."""
    for key, trial in data.items():
        if _TRIAL.match(key):
            for msg in trial["multiturn_conversation"]:
                if msg["role"] == "system" and (m := _SPECIALTY.search(msg["content"])):
                    return m.group(1).lower()
            break
    return ""


def extract_final(text: str | None) -> str | None:
    """'**Final Diagnosis:** Genital herpes.' -> 'Genital herpes'."""
    if not text:
        return None
    m = _FINAL.search(text)
    if not m:
        return None
    answer = m.group(1).strip().strip("*").strip()
    answer = answer.splitlines()[0].strip().strip("*").strip().rstrip(".")
    return answer or None


def import_sessions(src: Path, *, out: Path, force: bool = False, choices_csv: Path | None = None) -> ImportReport:
    from . import write_cases  # late import: package __init__ imports this module's siblings lazily

    dirs = model_dirs(src)
    given: dict[str, list[str]] = {}
    if choices_csv:
        given = {row["case_key"]: row["choices"] for row in read_case_table(choices_csv) if row["choices"]}
    files = [(model, p) for model, d in dirs for p in sorted(d.glob("case_*.json"), key=_case_sort_key)]
    loaded = [(model, p, read_transcript(p)) for model, p in files]  # validate everything before writing
    pool = sorted({d["correct_ans"].strip() for _, _, d in loaded})

    report = ImportReport(format=SOURCE, source=Path(src).name, kind="sessions")
    cases: dict[str, tuple[CaseEntry, Case]] = {}
    for index, (model, path, data) in enumerate(loaded, start=1):
        case_key = str(data.get("case_id") or path.stem)
        if case_key in cases:
            continue
        entry = CaseEntry(id=case_id_for(case_key, data["correct_ans"]), source=f"{model}/{path.name}")
        choices = given.get(case_key)
        if choices_csv and not choices:
            entry.notes.append(f"{case_key!r} not found in {Path(choices_csv).name}; choices drawn from other cases")
        case = case_from_vignette(
            entry, index=len(cases) + 1, vignette=data["case_vignette"], answer=data["correct_ans"],
            given_choices=choices, pool=pool, specialty=_specialty(data),
            question=str(data.get("question") or ""),
        )
        for key, value in data.items():
            if key not in {"case_id", "case_vignette", "correct_ans", "question"} and not _TRIAL.match(key):
                entry.unmapped_field(key, value)
        cases[case_key] = (entry, case)
    write_cases(list(cases.values()), Path(out) / "cases", report, force=force)
    for entry in report.entries:
        entry.file = f"cases/{entry.file}"

    for model, path, data in loaded:
        case_key = str(data.get("case_id") or path.stem)
        _, case = cases[case_key]
        stamp = datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc).replace(microsecond=0)
        for key in sorted((k for k in data if _TRIAL.match(k)), key=lambda k: int(_TRIAL.match(k).group(1))):
            session = trial_session(model, case, case_key, int(_TRIAL.match(key).group(1)), data[key], stamp, path.name)
            rel = Path("sessions") / slug(model, 40) / f"{slug(case_key, 24)}_trial{session.run.trial}.json"
            status = write_json_file(Path(out) / rel, session.model_dump(mode="json"), force=force)
            report.sessions.append({"file": str(rel), "case_id": case.id, "status": status})
    return report


def trial_session(model: str, case: Case, case_key: str, trial: int, data: dict, stamp: datetime, source_file: str) -> Session:
    """One CRAFT-MD trial as a finished, unscored session."""
    convo = data["multiturn_conversation"]
    last_doctor = max((i for i, m in enumerate(convo) if m["role"] == "assistant"), default=None)
    final = extract_final(convo[last_doctor]["content"]) if last_doctor is not None else None
    final_source = "last doctor turn"
    if final is None:
        final = extract_final(data.get("multiturn_frq")) or (str(data["multiturn_frq"]).strip() if data.get("multiturn_frq") else None)
        final_source = "multiturn_frq answer" if final else "none"
    doctor_spec, patient_spec = f"imported:{model}", "imported:craftmd-patient"
    turns: list[Turn] = []
    for i, msg in enumerate(convo):
        role = {"assistant": "doctor", "user": "patient", "system": "system"}.get(msg["role"], "system")
        is_dx = i == last_doctor and extract_final(msg["content"]) is not None
        turns.append(
            Turn(
                id=f"t{len(turns) + 1:04d}",
                role=role,
                text=msg["content"],
                phase="history",
                kind="diagnosis" if is_dx else ("system" if role == "system" else "utterance"),
                spec={"doctor": doctor_spec, "patient": patient_spec}.get(role),
                started_at=stamp,
                finished_at=stamp,
                meta={"source_role": msg["role"]} if role == "system" else {},
            )
        )
    extra = {
        "source": f"craftmd {model}/{source_file}",
        "case_key": case_key,
        "final_diagnosis_source": final_source,
        # The dataset's own answers per arm, the grader's extracted answers and its 0/1 evaluations.
        "craftmd": {k: v for k, v in data.items() if k != "multiturn_conversation"},
    }
    return Session(
        id=f"{slug(model, 24)}-{slug(case_key, 16)}-t{trial}",
        created_at=stamp,
        updated_at=stamp,
        case_id=case.id,
        case_hash=case.content_hash(),
        rubric_id="craft-md",
        roles={"doctor": RoleAssignment(spec=doctor_spec), "patient": RoleAssignment(spec=patient_spec)},
        phase="history",
        status="finished",
        turns=turns,
        final_diagnosis=final,
        run=RunMetadata(mode="imported", arm="multiturn", answer_format="frq", trial=trial, extra=extra),
    )
