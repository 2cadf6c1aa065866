"""Unit tests for the importers' text helpers: voice rewriting, vitals, categories, body systems."""

from __future__ import annotations

import pytest

from osce_tui.domain.case import Case
from osce_tui.importers.casebuild import choices_for, parse_demographics, split_diagnosis_name
from osce_tui.importers.lay import first_person, proxy_voice
from osce_tui.importers.questions import QUESTIONS, classify, classify_social
from osce_tui.importers.structure import investigations, system_for
from osce_tui.importers.text import looks_abnormal, sentences, slug
from osce_tui.importers.vitals import parse_vitals


@pytest.mark.parametrize(
    "source, expected",
    [
        ("She has been on natalizumab for the past year.", "I have been on natalizumab for the past year."),
        ("The patient reports that the pain started two days ago.", "The pain started two days ago."),
        ("He denies any chest pain or palpitations.", "I haven't had any chest pain or palpitations."),
        ("She notes that walking makes her pain worse.", "Walking makes my pain worse."),
        ("Works as a chef.", "I work as a chef."),
        ("He went hiking but denies tick bites.", "I went hiking but I haven't had any tick bites."),
        ("The patient presents with a rash on her arm.", "I've come in with a rash on my arm."),
    ],
)
def test_first_person_rewrites_simple_sentences(source, expected):
    assert first_person(source) == (expected, True)


@pytest.mark.parametrize(
    "source",
    [
        "Non-smoker, drinks wine occasionally.",  # no subject: already neutral
        "He was playing football when he ran into another player.",  # verb form not in the table
        "A 22-year-old man presented with lesions on his penis.",  # noun subject: would mix voices
        "His wife says he snores loudly.",  # "snores" is not in the verb table
        "Her mother reports her daughter has been withdrawn.",  # the patient is named as "daughter"
        "Has asthma and is using an inhaler.",  # second verb left in the third person
    ],
)
def test_first_person_keeps_unreliable_sentences_verbatim(source):
    assert first_person(source) == (source, False)


def test_proxy_voice_for_parent():
    text, changed = proxy_voice("His mother reports that the patient has been feeding poorly.", "son")
    assert changed and text == "My son has been feeding poorly."


def test_vitals_parsing_and_placeholders():
    v = parse_vitals({"Temperature": "102°F", "Blood_Pressure": "120/80 mm Hg", "Pulse": "98/min", "Respirations": "18/min", "SO2": "80%"}, 50, "years")
    assert v.values["temperature_c"] == 38.9 and v.values["blood_pressure"] == "120/80"
    assert v.values["heart_rate"] == 98 and v.values["respiratory_rate"] == 18 and v.values["spo2"] == 80
    assert v.notes == []
    v = parse_vitals({"Temperature": "Normothermic", "Heart_Rate": "Elevated", "Blood_Pressure": "Within normal limits"}, 3, "years")
    assert v.values["temperature_c"] == 37.0 and v.values["heart_rate"] > 110  # child band, raised
    assert v.values["blood_pressure"] == "Within normal limits"  # free text: the wording is kept, not invented
    assert "placeholder" in v.values["other"]["heart_rate_source"]
    assert len(v.notes) == 4  # temperature, BP, HR and the missing RR are all reported
    assert parse_vitals({"Temperature": "37.2 °C (99.0 °F)"}, 30, "years").values["temperature_c"] == 37.2
    assert parse_vitals({"Weight": "45 kg (99 lbs)", "BMI": "15.6 kg/m2"}, 16, "years").values["other"]["bmi"] == "15.6 kg/m2"


def test_classify_history_sentences():
    assert classify("She notes that these symptoms worsen after activity.") == "modifiers"
    assert classify("He has a history of Crohn disease diagnosed 2 years ago.") == "pmh"
    assert classify("The pain started three days ago.") == "onset"
    assert classify("She takes metformin daily.") == "medications"
    assert classify_social("Non-smoker, drinks wine occasionally. Works as a designer.") == [
        "social_tobacco", "social_alcohol", "social_occupation",
    ]
    assert all(len(p) >= 2 for _, p in QUESTIONS.values())
    assert set(QUESTIONS) == set(Case.model_fields["history"].annotation.__args__[0].model_fields["category"].annotation.__args__)


@pytest.mark.parametrize(
    "section, path, system",
    [
        ("Neurological_Examination", ["Cranial_Nerves"], "neurological"),
        ("Cardiopulmonary_Examination", ["Heart_Sounds"], "cardiovascular"),
        ("Cardiopulmonary_Examination", ["Lung_Auscultation"], "respiratory"),
        ("General_Examination", ["Skin"], "skin"),
        ("ENT_Examination", ["Otoscopy"], "heent"),
        ("Mental_Status_Examination", ["Appearance"], "mental_status"),
        ("Pelvic_Examination", ["Speculum"], "pelvic"),
        ("Remainder_of_the_Examination", ["Findings"], "general"),
    ],
)
def test_system_mapping(section, path, system):
    assert system_for(section, path)[0] == system


def test_investigations_flatten_panels_and_containers():
    tests = investigations({
        "Complete_Blood_Count": {"Hemoglobin": "9.1 g/dL", "WBC": "7,000/mm3"},
        "Imaging": {"Chest_X-ray": {"Findings": "Normal"}},
        "ECG": "Sinus tachycardia",
        "Empty": {},
    })
    by_name = {t["name"]: t for t in tests}
    assert set(by_name) == {"Complete blood count", "Chest x-ray", "ECG"}
    assert by_name["Complete blood count"]["aliases"] == ["Hemoglobin", "WBC"]
    assert by_name["Chest x-ray"]["result"] == "Normal" and not by_name["Chest x-ray"]["abnormal"]
    assert by_name["ECG"]["abnormal"]


def test_small_helpers():
    assert slug("Progressive multifocal encephalopathy (PML)") == "progressive-multifocal-encephalopathy-pml"
    assert sentences("Temp 37.5 today. Dr. Lee saw her. Fine.") == ["Temp 37.5 today.", "Dr. Lee saw her.", "Fine."]
    assert split_diagnosis_name("Progressive multifocal encephalopathy (PML)")[1] == ["Progressive multifocal encephalopathy", "PML"]
    assert looks_abnormal("Diminished strength, normal tone") and not looks_abnormal("No murmurs, rubs or gallops.")
    assert parse_demographics("Newborn, female")[:3] == (0, "days", "female")
    assert parse_demographics("3-year-old child", "He has a cough.")[2] == "male"
    a, synthetic = choices_for("k1", "Gout", ["Gout", "Psoriasis", "Lupus", "Sarcoidosis", "Gout flare"])
    assert a[0] == "Gout" and len(a) == 4 and synthetic and "Gout flare" not in a
    assert choices_for("k1", "Gout", ["Sarcoidosis", "Gout flare", "Lupus", "Psoriasis", "Gout"]) == (a, True)  # stable
    padded, _ = choices_for("k1", "Gout", [])
    assert padded[0] == "Gout" and len(padded) == 4
    given, synthetic = choices_for("k1", "Gout", [], ["Pseudogout", "Septic arthritis", "Cellulitis"])
    assert given == ["Gout", "Pseudogout", "Septic arthritis", "Cellulitis"] and not synthetic
