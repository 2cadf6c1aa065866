"""MedQA-CS and EPAG importers on synthetic files in the assumed release layouts."""

from __future__ import annotations

import json
from pathlib import Path

from osce_tui.cli import main
from osce_tui.importers import REPORT_NAME, import_cases
from osce_tui.importers.medqa_cs import parse_chat, parse_note
from osce_tui.library import Library, load_case, validate_paths

FIXTURES = Path(__file__).parent / "fixtures" / "importers"
MEDQA = FIXTURES / "medqa_cs_sample.json"
PROFILES = FIXTURES / "epag_profiles_sample.json"
GOLD = FIXTURES / "epag_gold_sample.csv"


def _squash(text: str) -> str:
    return "".join(text.split())


def test_medqa_cs_groups_rows_per_case(tmp_path):
    report = import_cases("medqa-cs", [MEDQA], tmp_path)
    assert report.counts() == {"created": 2}
    assert validate_paths([tmp_path]) == []
    assert len(Library(case_dirs=[tmp_path], include_bundled=False).cases()) == 2
    case = load_case(tmp_path / "medqa-cs-1-uncontrolled-hypertension-hypertensive.toml")
    d = case.doorway
    assert (d.patient_name, d.age, d.sex, d.setting, d.chief_complaint) == ("Marta Lindqvist", 58, "female", "Clinic", "Headaches")
    assert (d.vitals.blood_pressure, d.vitals.heart_rate, d.vitals.respiratory_rate, d.vitals.temperature_c) == ("162/96", 78, 14, 36.9)
    assert len(d.tasks) == 4
    # The gold transcript is the question bank, in order, with the SP's own words.
    assert [f.category for f in case.history] == [
        "chief_complaint", "onset", "location", "severity", "modifiers", "medications", "social_tobacco", "family",
    ]
    assert case.history[5].answer.startswith("Just ibuprofen")
    assert all(len(f.paraphrases) >= 2 for f in case.history)
    assert case.lcp and case.lcp.expected_order == [f.id for f in case.history] and case.lcp.clinician_rounds == 8
    heent = next(e for e in case.exam if e.system == "heent")
    assert "nicking" in heent.finding and heent.reason.startswith("look for end-organ")
    assert case.closure and "blood pressure" in case.closure.impressions
    assert case.challenging_questions[0].question == "Could this be a brain tumour?"
    assert [x.diagnosis for x in case.differential] == [
        "Uncontrolled hypertension (hypertensive headache)", "Tension-type headache", "Medication-overuse headache",
    ]
    assert case.differential[0].exam_findings == ["BP 162/96", "AV nicking"]
    assert case.workup == ["Basic metabolic panel", "Urinalysis", "ECG", "Lipid panel"]
    assert case.note and case.note.hpi.startswith("58-year-old woman")
    assert "hypertensive headache" in case.diagnosis.synonyms
    gaps = case.protocol_gaps()
    keys = ("closure", "challenging", "patient-note", "differential", "workup", "lcp")
    assert not [g for g in gaps if any(k in g for k in keys)], gaps


def test_medqa_cs_sparse_case_and_report(tmp_path):
    import_cases("medqa-cs", [MEDQA], tmp_path)
    case = load_case(tmp_path / "medqa-cs-2-community-acquired-pneumonia.toml")
    assert case.diagnosis.name == "Community-acquired pneumonia"  # from the JSON ground-truth form
    assert case.doorway.vitals.spo2 == 94 and case.doorway.vitals.temperature_c == 38.8
    assert case.doorway.setting == "Emergency department"
    assert [f.question for f in case.history] == ["What brings you in?", "Are you bringing anything up when you cough?"]
    assert case.lcp is None  # fewer than 3 questions
    data = json.loads((tmp_path / REPORT_NAME).read_text())
    assert data["unmapped_summary"] == {"qa.input.extra_field": 1}
    first = data["cases"][0]
    assert any("last gold question has no patient answer" in n for n in first["notes"])


def test_medqa_cs_parsers():
    pairs = parse_chat("Doctor: Hi, what brings you in?\nPatient: My stomach hurts.\nIt started yesterday.\nDoctor: Where?")
    assert pairs == [("Hi, what brings you in?", "My stomach hurts. It started yesterday.")]
    assert parse_chat("N/A") == []
    note = parse_note("Diagnosis #1: Appendicitis\nHistorical Finding(s):\n- RLQ pain\nPhysical Exam Finding(s):\nN/A\nDiagnostic Workup:\n- CBC")
    assert note["diagnoses"] == [{"name": "Appendicitis", "history": ["RLQ pain"], "exam": []}] and note["workup"] == ["CBC"]


def test_medqa_cs_malformed(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('[\n {"section": "qa", "case_id": 1},\n oops\n]')
    assert main(["cases", "import", "medqa-cs", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "bad.json:3:notvalidJSON" in _squash(capsys.readouterr().err)
    bad.write_text('[{"section": "qa"}]')
    assert main(["cases", "import", "medqa-cs", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "row0needs'case_id'and'section'" in _squash(capsys.readouterr().err)


def test_epag_profiles_and_weighted_features(tmp_path):
    report = import_cases("epag", [PROFILES, GOLD], tmp_path)
    assert report.counts() == {"created": 3}
    assert validate_paths([tmp_path]) == []
    af = load_case(tmp_path / "epag-p-1001-atrial-fibrillation.toml")
    assert (af.doorway.age, af.doorway.sex, af.specialty) == (67, "female", "cardiology")
    assert af.doorway.vitals.weight_kg == 71 and af.doorway.vitals.height_cm == 160
    weights = {g.feature: g.weight for g in af.guideline_features}
    assert weights == {
        "Palpitations or irregular heartbeat": "high", "Shortness of breath": "high", "Fatigue on exertion": "medium",
        "High blood pressure history": "high", "Heavy alcohol use": "medium",
    }
    assert sum(g.points for g in af.guideline_features) == 8
    linked = {g.feature: g.fact_ids for g in af.guideline_features}
    assert "hpi_quality" in linked["Palpitations or irregular heartbeat"]
    assert "past_history" in linked["High blood pressure history"]
    cats = {f.category for f in af.history}
    assert {"chief_complaint", "location", "quality", "severity", "onset", "timing", "modifiers", "associated", "pmh",
            "social_occupation", "social_alcohol", "social_tobacco"} <= cats
    assert "typicality-typical" in af.tags
    gerd = load_case(tmp_path / "epag-p-1002-gerd.toml")
    assert len(gerd.guideline_features) == 4  # "GERD" matched "Gastroesophageal Reflux Disease, GERD"
    assert gerd.doorway.setting == "Outpatient gastroenterology clinic"
    gout = load_case(tmp_path / "epag-p-1003-gout.toml")
    assert gout.guideline_features == [] and any("epag" in g for g in gout.protocol_gaps())
    data = json.loads((tmp_path / REPORT_NAME).read_text())
    assert data["unmapped_summary"] == {"simple_info.Referral source": 1, "details.family_notes": 1}
    assert any("no guideline rows for 'Gout'" in n for n in data["cases"][2]["notes"])


def test_epag_needs_two_sources_and_valid_gold(tmp_path, capsys):
    assert main(["cases", "import", "epag", str(PROFILES), "--out", str(tmp_path / "o")]) == 2
    assert "takes2sourcepath(s)" in _squash(capsys.readouterr().err)
    gold = tmp_path / "gold.csv"
    gold.write_text("disease,weight,symptom\nAsthma,h,Wheeze\nAsthma,x,Cough\n")
    assert main(["cases", "import", "epag", str(PROFILES), str(gold), "--out", str(tmp_path / "o")]) == 2
    assert "gold.csv:3:" in _squash(capsys.readouterr().err)
