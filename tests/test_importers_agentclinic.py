"""AgentClinic importer: real fixture counts, field mapping, report, idempotence, --force."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osce_tui.cli import main
from osce_tui.importers import REPORT_NAME, import_cases
from osce_tui.library import Library, load_case, validate_paths

FIXTURES = Path(__file__).parent / "fixtures" / "importers"
SAMPLE = FIXTURES / "agentclinic_sample.jsonl"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
REAL = SHARED / "agentclinic" / "agentclinic_medqa.jsonl"


@pytest.fixture(scope="module")
def real_import(tmp_path_factory):
    if not REAL.is_file():
        pytest.skip("shared AgentClinic data not available")
    out = tmp_path_factory.mktemp("agentclinic")
    report = import_cases("agentclinic", [REAL], out)
    return out, report


def test_all_107_real_cases_import_validate_and_load(real_import):
    out, report = real_import
    files = sorted(out.glob("*.toml"))
    assert len(files) == 107
    assert report.counts() == {"created": 107}
    assert validate_paths([out]) == []
    lib = Library(case_dirs=[out], include_bundled=False)
    assert len(lib.cases()) == 107 and lib.case_issues() == []
    assert all(c.source == "agentclinic" and "imported" in c.tags for c in lib.cases().values())


def test_real_case_spot_checks(real_import):
    out, _ = real_import
    case = load_case(out / "agentclinic-001-myasthenia-gravis.toml")
    d = case.doorway
    assert (d.age, d.age_unit, d.sex) == (35, "years", "female")
    assert (d.vitals.blood_pressure, d.vitals.heart_rate, d.vitals.respiratory_rate, d.vitals.temperature_c) == ("125/80", 72, 16, 36.6)
    assert d.chief_complaint == "Double vision"
    assert case.diagnosis.name == "Myasthenia gravis" and case.differential[0].diagnosis == "Myasthenia gravis"
    assert case.diagnosis.choices[0] == "Myasthenia gravis" and len(case.diagnosis.choices) == 4
    ptosis = [e for e in case.exam if "ptosis" in e.finding]
    assert ptosis and ptosis[0].system == "neurological" and ptosis[0].abnormal
    assert {"Electromyography", "Chest CT"} <= {t.name for t in case.tests}
    cats = {f.category for f in case.history}
    assert {"chief_complaint", "onset", "modifiers", "associated", "pmh", "social_tobacco", "social_alcohol", "social_occupation", "ros"} <= cats
    # A parenthesised abbreviation becomes a synonym (PML case).
    pml = load_case(next(out.glob("agentclinic-002-*.toml")))
    assert "PML" in pml.diagnosis.synonyms
    # An infant is spoken for by a parent.
    infant = load_case(next(out.glob("agentclinic-003-*.toml")))
    assert (infant.doorway.age, infant.doorway.age_unit, infant.persona.speaker) == (8, "months", "parent")


def test_real_report_lists_defaults_and_placeholders(real_import):
    out, _ = real_import
    report = json.loads((out / REPORT_NAME).read_text())
    assert report["counts"] == {"created": 107}
    assert len(report["cases"]) == 107
    # "Within normal limits" style vitals are recorded as placeholders, never silently.
    placeholders = [d for c in report["cases"] for d in c["defaults"] if "placeholder" in d and "vitals" in d]
    assert placeholders
    assert all(c["protocol_gaps"] for c in report["cases"])  # imported cases are partial, and say so


def test_sample_mapping(tmp_path):
    report = import_cases("agentclinic", [SAMPLE], tmp_path)
    assert report.counts() == {"created": 3}
    gout = load_case(tmp_path / "agentclinic-001-acute-gouty-arthritis-gout.toml")
    v = gout.doorway.vitals
    assert v.temperature_c == 38.3  # 100.9 °F converted
    assert v.heart_rate == 76 and "placeholder" in v.other["heart_rate_source"]
    assert v.spo2 == 98
    systems = {e.component: e.system for e in gout.exam}
    assert systems["Heart sounds"] == "cardiovascular" and systems["Lung auscultation"] == "respiratory"
    assert systems["Knee: Inspection"] == "musculoskeletal"
    tests = {t.name: t for t in gout.tests}
    assert "Crystals" in tests["Synovial fluid analysis"].aliases
    assert tests["Serum uric acid"].abnormal
    assert gout.workup == ["Synovial fluid analysis", "Gram stain", "Serum uric acid"]
    meds = [f for f in gout.history if f.category == "medications"]
    assert meds and "Hydrochlorothiazide" in meds[0].answer
    onset = next(f for f in gout.history if f.category == "onset")
    assert onset.answer.startswith("I've had two days") and len(onset.paraphrases) >= 2
    ros = [f for f in gout.history if f.category == "ros"]
    assert len(ros) == 2  # one fact per ROS system in a dict
    infant = load_case(tmp_path / "agentclinic-002-bronchiolitis.toml")
    assert infant.persona.speaker == "parent" and infant.doorway.vitals.blood_pressure == "Not applicable for age"
    assert infant.doorway.vitals.respiratory_rate > 35  # "Elevated" -> above the infant's typical rate, marked
    assert "placeholder" in infant.doorway.vitals.other["respiratory_rate_source"]
    assert any(f.answer.startswith("My baby has had a runny nose") for f in infant.history)
    cystitis = load_case(tmp_path / "agentclinic-003-uncomplicated-cystitis.toml")
    assert cystitis.exam == [] and cystitis.doorway.tasks  # empty objective -> standard tasks
    data = json.loads((tmp_path / REPORT_NAME).read_text())
    assert data["unmapped_summary"] == {"Case_Notes": 1}
    gout_entry = data["cases"][0]
    assert gout_entry["unmapped"][0]["value"] == "written by the synthetic fixture author"
    assert any("Social_History says nothing" in n for n in data["cases"][1]["notes"])


def test_idempotent_reimport_writes_nothing(tmp_path):
    import_cases("agentclinic", [SAMPLE], tmp_path)
    cases = sorted(tmp_path.glob("*.toml"))
    before = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in cases}
    report = import_cases("agentclinic", [SAMPLE], tmp_path)
    assert report.counts() == {"unchanged": 3}
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in cases} == before
    # The report describes the latest run, so it changes once (created -> unchanged) and then stays put.
    report_path = tmp_path / REPORT_NAME
    stamp = (report_path.stat().st_mtime_ns, report_path.read_bytes())
    import_cases("agentclinic", [SAMPLE], tmp_path)
    assert (report_path.stat().st_mtime_ns, report_path.read_bytes()) == stamp
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in cases} == before


def test_hand_edits_are_kept_unless_forced(tmp_path):
    import_cases("agentclinic", [SAMPLE], tmp_path)
    path = tmp_path / "agentclinic-002-bronchiolitis.toml"
    fresh = path.read_text()
    edited = fresh.replace('setting = "Outpatient clinic"', 'setting = "Paediatric emergency department"')
    assert edited != fresh
    path.write_text(edited)
    report = import_cases("agentclinic", [SAMPLE], tmp_path)
    statuses = {e.id: e.status for e in report.entries}
    assert statuses["agentclinic-002-bronchiolitis"] == "skipped-hand-edited"
    assert path.read_text() == edited
    report = import_cases("agentclinic", [SAMPLE], tmp_path, force=True)
    assert {e.id: e.status for e in report.entries}["agentclinic-002-bronchiolitis"] == "overwritten"
    assert path.read_text() == fresh


def test_file_without_import_header_is_not_ours(tmp_path):
    import_cases("agentclinic", [SAMPLE], tmp_path)
    path = tmp_path / "agentclinic-003-uncomplicated-cystitis.toml"
    mine = "\n".join(line for line in path.read_text().splitlines() if not line.startswith("# import-hash"))
    path.write_text(mine)
    report = import_cases("agentclinic", [SAMPLE], tmp_path)
    assert {e.id: e.status for e in report.entries}["agentclinic-003-uncomplicated-cystitis"] == "skipped-not-ours"


def test_changed_input_updates_unedited_file(tmp_path):
    src = tmp_path / "in.jsonl"
    lines = SAMPLE.read_text().splitlines()
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    import_cases("agentclinic", [src], out)
    src.write_text("\n".join(lines).replace("Works as a chef.", "Works as a baker.") + "\n")
    report = import_cases("agentclinic", [src], out)
    statuses = {e.id: e.status for e in report.entries}
    assert statuses["agentclinic-001-acute-gouty-arthritis-gout"] == "updated"
    assert "baker" in (out / "agentclinic-001-acute-gouty-arthritis-gout.toml").read_text()


def test_cli_import_validate_and_list(tmp_path, capsys):
    out = tmp_path / "cases"
    assert main(["cases", "import", "agentclinic", str(SAMPLE), "--out", str(out)]) == 0
    printed = _squash(capsys.readouterr().out)  # rich wraps long paths
    assert "created" in printed and "Case_Notes" in printed and REPORT_NAME in printed
    assert main(["cases", "validate", str(out)]) == 0
    assert main(["cases", "show", "agentclinic-002-bronchiolitis", "--cases-dir", str(out)]) == 0


@pytest.mark.parametrize(
    "content, expected",
    [
        ('{"OSCE_Examination": {"Patient_Actor": {}, "Correct_Diagnosis": "x"}}\n{not json\n', "bad.jsonl:2: not valid JSON"),
        ('{"something": 1}\n', "bad.jsonl:1: expected an object with an 'OSCE_Examination'"),
        ('{"OSCE_Examination": {"Patient_Actor": {}}}\n', "bad.jsonl:1: OSCE_Examination has no 'Correct_Diagnosis'"),
        ("\n\n", "bad.jsonl: no records"),
    ],
)
def test_malformed_input_exits_2_naming_file_and_line(tmp_path, capsys, content, expected):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    out = tmp_path / "out"
    assert main(["cases", "import", "agentclinic", str(bad), "--out", str(out)]) == 2
    assert _squash(expected) in _squash(capsys.readouterr().err)
    assert not out.exists() or not list(out.glob("*.toml"))  # nothing half-written


def test_missing_input_exits_2(tmp_path, capsys):
    assert main(["cases", "import", "agentclinic", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o")]) == 2
    assert _squash("nope.jsonl: no such file") in _squash(capsys.readouterr().err)


def _squash(text: str) -> str:
    return "".join(text.split())


def test_out_must_be_a_folder(tmp_path, capsys):
    target = tmp_path / "file.txt"
    target.write_text("x")
    assert main(["cases", "import", "agentclinic", str(SAMPLE), "--out", str(target)]) == 2
    assert "--outmustbeafolder" in _squash(capsys.readouterr().err)
