"""The exam oracle: case findings only, normal findings otherwise, never invented pathology."""

from __future__ import annotations

import pytest

from osce_tui.agents.exam_systems import NORMAL_FINDINGS, systems_in
from osce_tui.agents.oracle import NOT_AVAILABLE, CaseOracle, match_test

from .offline_fixture_case import make_case


@pytest.fixture
def case():
    return make_case()


@pytest.fixture
def oracle():
    return CaseOracle()


@pytest.mark.parametrize(
    ("request_text", "system"),
    [
        ("auscultate the heart", "cardiovascular"),
        ("listen for a murmur", "cardiovascular"),
        ("percuss the chest", "respiratory"),
        ("breath sounds", "respiratory"),
        ("palpate abdomen", "abdominal"),
        ("McBurney's point tenderness", "abdominal"),
        ("Murphy's sign", "abdominal"),
        ("check reflexes", "neurological"),
        ("cranial nerves", "neurological"),
        ("assess gait", "neurological"),
        ("fundoscopy", "heent"),
        ("look in the ears and throat", "heent"),
        ("examine the thyroid", "neck"),
        ("JVP", "neck"),
        ("pedal edema", "extremities"),
        ("inspect the rash", "skin"),
        ("straight leg raise", "back"),
        ("speculum exam", "pelvic"),
        ("mental status examination", "mental_status"),
        ("palpate lymph nodes", "lymph"),
        ("general appearance", "general"),
        ("vital signs", "vitals"),
        ("palpate the chest wall", "musculoskeletal"),
    ],
)
def test_requests_map_to_body_systems(request_text, system):
    assert systems_in(request_text)[0] == system


def test_several_systems_in_one_request_in_order():
    assert systems_in("listen to heart and lungs") == ["cardiovascular", "respiratory"]
    assert systems_in("heart rate and blood pressure") == ["vitals"]  # not the heart


def test_heart_and_lungs_one_answer_each(oracle, case):
    answers = oracle.examine(case, "listen to heart and lungs")
    assert [a.system for a in answers] == ["cardiovascular", "respiratory"]
    heart, lungs = answers
    assert heart.source == "case" and "Soft systolic murmur" in heart.text
    assert lungs.source == "normal" and lungs.text == NORMAL_FINDINGS["respiratory"]


def test_component_match_is_preferred_within_a_system(oracle, case):
    (answer,) = oracle.examine(case, "auscultate bowel sounds")
    assert answer.text == "Bowel sounds: Bowel sounds normal."
    (answer,) = oracle.examine(case, "palpate the epigastrium")
    assert "Epigastric tenderness" in answer.text and "Bowel sounds" not in answer.text


def test_system_without_component_match_returns_all_its_findings(oracle, case):
    (answer,) = oracle.examine(case, "examine the abdomen")
    assert "Epigastric tenderness" in answer.text and "Bowel sounds normal" in answer.text


def test_findings_filed_under_another_system_are_found(oracle, case):
    # The case keeps pulses under cardiovascular; "pulses" maps to extremities.
    (answer,) = oracle.examine(case, "check the pulses")
    assert answer.source == "case" and answer.system == "cardiovascular"
    assert "Pulses equal" in answer.text


def test_one_stray_shared_word_does_not_cross_systems(oracle, case):
    (answer,) = oracle.examine(case, "straight leg raise")
    assert answer.source == "normal" and answer.system == "back"


def test_vitals_come_from_the_doorway(oracle, case):
    (answer,) = oracle.examine(case, "vital signs")
    assert answer.source == "case" and "BP 128/82" in answer.text and "SpO2 98%" in answer.text


def test_unknown_request(oracle, case):
    (answer,) = oracle.examine(case, "do the thing")
    assert answer.source == "unknown" and answer.system is None
    with pytest.raises(ValueError):
        oracle.examine(case, "  ")


REQUESTS = [
    "auscultate heart", "auscultate lungs", "neuro exam", "fundoscopy", "examine the skin", "thyroid",
    "lymph nodes", "pelvic exam", "rectal exam", "breast exam", "back exam", "straight leg raise",
    "mental status", "ears nose and throat", "calves for DVT", "Murphy's sign", "palpate abdomen",
    "general appearance", "genital exam", "joints", "cranial nerves and reflexes", "percuss the chest",
]


@pytest.mark.parametrize("request_text", REQUESTS)
def test_never_invents_an_abnormal_finding(oracle, case, request_text):
    """Every answer is either the case's own finding text or the normal table."""
    case_texts = {f.finding for f in case.exam}
    for answer in oracle.examine(case, request_text):
        if answer.source == "case":
            if answer.system == "vitals":
                continue
            pieces = [p for p in case_texts if p in answer.text]
            assert pieces, answer
            leftover = answer.text
            for f in case.exam:
                leftover = leftover.replace(f"{f.component}: {f.finding}", "")
            assert not leftover.strip(), f"text not from the case: {leftover!r}"
        elif answer.source == "normal":
            assert answer.text == NORMAL_FINDINGS[answer.system]
        else:
            assert answer.source == "unknown"


def test_normal_table_is_normal():
    for system, text in NORMAL_FINDINGS.items():
        low = text.lower()
        assert "tender" not in low.replace("non-tender", "").replace("no spinal or paraspinal tenderness", "").replace(
            "no costovertebral angle tenderness", ""
        ).replace("no cervical motion tenderness", "").replace("masses or tenderness", "").replace("no joint swelling, deformity or tenderness", ""), system


# -- tests ------------------------------------------------------------------------


def test_order_matches_name_alias_synonym_containment_and_typos(oracle, case):
    assert oracle.order(case, "Complete blood count").system == "Complete blood count"
    assert oracle.order(case, "FBC").system == "Complete blood count"  # alias
    assert oracle.order(case, "CBC").system == "Complete blood count"  # synonym table
    assert oracle.order(case, "EKG").system == "Electrocardiogram"  # synonym table
    assert oracle.order(case, "H. pylori test please").system == "Helicobacter pylori stool antigen"  # containment
    assert oracle.order(case, "electrocardiagram").system == "Electrocardiogram"  # typo
    answer = oracle.order(case, "FBC")
    assert answer.source == "case" and answer.text == "Complete blood count: Hb 13.9 g/dL."


def test_unlisted_test_is_not_available_never_a_result(oracle, case):
    for test in ("CT abdomen", "lipase", "troponin", "urinalysis", "D-dimer"):
        answer = oracle.order(case, test)
        assert answer.source == "unknown" and answer.system is None
        assert answer.text == NOT_AVAILABLE
    with pytest.raises(ValueError):
        oracle.order(case, "")


def test_short_names_do_not_fuzzy_match(case):
    assert match_test(case.tests, "CT") is None
    assert match_test(case.tests, "ECHO") is None
