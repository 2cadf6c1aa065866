"""CRAFT-MD importer: case table -> cases, transcripts -> sessions (+ minimal cases)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osce_tui.cli import main
from osce_tui.importers import REPORT_NAME, import_cases, import_sessions
from osce_tui.importers.craftmd import extract_final
from osce_tui.library import Library, load_case, validate_paths
from osce_tui.store import list_sessions, load_session

FIXTURES = Path(__file__).parent / "fixtures" / "importers"
CSV = FIXTURES / "craftmd_cases_sample.csv"
RESULTS = FIXTURES / "craftmd_results"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
REAL = SHARED / "craftmd" / "transcripts_gpt4"


def test_case_table_columns(tmp_path):
    report = import_cases("craftmd", [CSV], tmp_path)
    assert report.counts() == {"created": 2}
    assert validate_paths([tmp_path]) == []
    tinea = load_case(tmp_path / "craftmd-case-0-tinea-corporis.toml")
    assert tinea.diagnosis.choices == ["Tinea corporis", "Granuloma annulare", "Nummular eczema", "Psoriasis"]
    assert "choices-synthetic" not in tinea.tags and "synthetic_set" in tinea.tags
    assert tinea.specialty == "dermatology"
    assert (tinea.doorway.age, tinea.doorway.sex) == (34, "female")
    assert tinea.doorway.chief_complaint.startswith("Itchy, ring-shaped rash")
    assert tinea.exam and tinea.exam[0].system == "skin" and tinea.exam[0].abnormal
    assert tinea.tests and tinea.tests[0].name == "KOH"
    assert tinea.diagnosis.vignette.startswith("A 34-year-old woman")
    impetigo = load_case(tmp_path / "craftmd-case-1-impetigo.toml")
    assert "choices-synthetic" in impetigo.tags and impetigo.diagnosis.choices[0] == "Impetigo"
    assert len(impetigo.diagnosis.choices) == 4 and impetigo.persona.speaker == "parent"
    data = json.loads((tmp_path / REPORT_NAME).read_text())
    assert data["unmapped_summary"] == {"reviewer": 1}  # the empty cell of row 2 is not a value


def test_case_table_missing_column_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("text,label\nsomething,else\n")
    assert main(["cases", "import", "craftmd", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "bad.csv:1:" in "".join(capsys.readouterr().err.split())


def test_case_table_row_without_answer_names_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text('case_vignette,answer\n"A 30-year-old man presents with a rash.",Psoriasis\n"A 40-year-old woman presents with hair loss.",\n')
    assert main(["cases", "import", "craftmd", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "bad.csv:3:rowhasnoanswer" in "".join(capsys.readouterr().err.split())


def test_synthetic_transcripts_to_sessions(tmp_path):
    report = import_sessions("craftmd", [RESULTS], tmp_path, choices_csv=CSV)
    assert report.counts() == {"created": 3}  # 1 case + 2 trials
    case = load_case(tmp_path / "cases" / "craftmd-case-0-tinea-corporis.toml")
    assert case.diagnosis.choices[:2] == ["tinea corporis", "Granuloma annulare"]  # from --choices
    s0 = load_session(tmp_path / "sessions" / "model-a" / "case-0_trial0.json")
    assert s0.case_id == case.id and s0.case_hash == case.content_hash()
    assert s0.run.mode == "imported" and s0.run.trial == 0 and s0.status == "finished"
    assert [t.role for t in s0.turns] == ["system", "doctor", "patient", "doctor", "patient", "doctor"]
    assert s0.turns[-1].kind == "diagnosis" and s0.final_diagnosis == "Tinea corporis"
    assert s0.run.extra["craftmd"]["evaluation_multiturn_frq"] == 1
    assert s0.roles["doctor"].spec == "imported:model-a"
    s1 = load_session(tmp_path / "sessions" / "model-a" / "case-0_trial1.json")
    # No "Final Diagnosis" in the conversation: fall back to the dataset's free-response answer.
    assert s1.final_diagnosis == "nummular eczema" and s1.run.extra["final_diagnosis_source"] == "multiturn_frq answer"
    assert s1.turns[-1].kind == "utterance"
    data = json.loads((tmp_path / REPORT_NAME).read_text())
    assert data["unmapped_summary"] == {"source_note": 1}
    # Idempotent, including the session JSON files.
    files = sorted(tmp_path.rglob("*.json"))
    before = {p: p.read_bytes() for p in files if p.name != REPORT_NAME}
    again = import_sessions("craftmd", [RESULTS], tmp_path, choices_csv=CSV)
    assert again.counts() == {"unchanged": 3}
    assert {p: p.read_bytes() for p in before} == before


def test_hand_edited_session_is_kept_unless_forced(tmp_path):
    import_sessions("craftmd", [RESULTS], tmp_path)
    path = tmp_path / "sessions" / "model-a" / "case-0_trial0.json"
    data = json.loads(path.read_text())
    data["final_diagnosis"] = "Edited by hand"
    path.write_text(json.dumps(data, indent=2))
    report = import_sessions("craftmd", [RESULTS], tmp_path)
    assert {s["file"]: s["status"] for s in report.sessions}["sessions/model-a/case-0_trial0.json"] == "skipped-hand-edited"
    assert load_session(path).final_diagnosis == "Edited by hand"
    report = import_sessions("craftmd", [RESULTS], tmp_path, force=True)
    assert {s["file"]: s["status"] for s in report.sessions}["sessions/model-a/case-0_trial0.json"] == "overwritten"
    assert load_session(path).final_diagnosis == "Tinea corporis"


def test_sessions_import_bad_inputs_exit_2(tmp_path, capsys):
    assert main(["sessions", "import", "craftmd", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["sessions", "import", "craftmd", str(empty), "--out", str(tmp_path / "o")]) == 2
    broken = tmp_path / "res" / "m"
    broken.mkdir(parents=True)
    (broken / "case_3.json").write_text('{"case_vignette": "x",\n "correct_ans": }')
    assert main(["sessions", "import", "craftmd", str(tmp_path / "res"), "--out", str(tmp_path / "o")]) == 2
    err = "".join(capsys.readouterr().err.split())
    assert "missing:nosuchfolder" in err and "nocase_*.jsonfiles" in err and "case_3.json:2:notvalidJSON" in err


@pytest.mark.parametrize(
    "text, expected",
    [
        ("**Final Diagnosis:** Lymphogranuloma venereum.", "Lymphogranuloma venereum"),
        ("Final Diagnosis: Genital herpes with concurrent lymphadenopathy", "Genital herpes with concurrent lymphadenopathy"),
        ("I think we should examine you further.", None),
    ],
)
def test_extract_final(text, expected):
    assert extract_final(text) == expected


@pytest.fixture(scope="module")
def real_sessions(tmp_path_factory):
    if not REAL.is_dir():
        pytest.skip("shared CRAFT-MD data not available")
    out = tmp_path_factory.mktemp("craftmd")
    return out, import_sessions("craftmd", [REAL], out)


def test_real_transcripts(real_sessions):
    out, report = real_sessions
    assert report.counts() == {"created": 60}  # 10 cases + 50 sessions
    assert validate_paths([out / "cases"]) == []
    lib = Library(case_dirs=[out / "cases"], include_bundled=False)
    assert len(lib.cases()) == 10
    summaries, errors = list_sessions(out / "sessions")
    assert len(summaries) == 50 and errors == []
    s = load_session(out / "sessions" / "transcripts-gpt4" / "case-0_trial0.json")
    assert s.final_diagnosis == "Genital herpes with concurrent lymphadenopathy"
    assert s.run.extra["craftmd"]["extracted_ans_multiturn_frq"] == "genital herpes, inguinal lymphadenopathy"
    assert s.run.extra["craftmd"]["evaluation_multiturn_frq"] == 0
    assert lib.case(s.case_id).diagnosis.name == "lymphogranuloma venereum"
    assert lib.case(s.case_id).specialty == "dermatology"
    for summary in summaries:
        session = load_session(summary.path)
        assert session.case_id in lib.cases() and session.final_diagnosis
        assert session.turns[0].role == "system" and session.turns[1].role == "doctor"
