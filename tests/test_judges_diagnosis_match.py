"""The offline diagnosis matcher and answer extraction."""

from __future__ import annotations

import pytest

from osce_tui.judges.diagnosis_match import DiagnosisMatcher, alternatives, extract_diagnoses, split_diagnoses


@pytest.mark.parametrize(
    ("correct", "answer", "how"),
    [
        ("Non-ST-elevation myocardial infarction", "NSTEMI", "synonym"),  # built-in abbreviation
        ("Henoch-Schönlein purpura", "IgA vasculitis", "synonym"),  # accents folded, table synonym
        ("Pyogenic granuloma", "lobular capillary hemangioma", "synonym"),
        ("Hodgkin lymphoma", "lymphoma", "broader"),  # broader answer counts
        ("Cutaneous leishmaniasis", "chronic cutaneous leishmaniasis", "exact"),  # qualifier ignored
        ("Nevus sebaceous", "nevus sebaceus", "exact"),  # spelling variant
        ("Epidermoid cyst", "epidermoid cysts.", "exact"),
        ("Perniosis", "chilblains (pernio)", "synonym"),  # parenthesised alternative
    ],
)
def test_matches(correct, answer, how):
    m = DiagnosisMatcher([correct]).match(answer)
    assert m.matched, m
    assert m.how == how


@pytest.mark.parametrize(
    ("correct", "answer"),
    [
        ("Tinea", "tinea pedis"),  # narrower answer is wrong
        ("Leishmaniasis", "cutaneous leishmaniasis"),
        ("Melanonychia", "benign longitudinal melanonychia"),
        ("Pityriasis lichenoides et varioliformis acuta", "pityriasis lichenoides chronica"),
        ("Aortic dissection", "pulmonary embolism"),
        ("Contact dermatitis", "rash"),  # a symptom alone is not a diagnosis
        ("Secondary syphilis", "primary syphilis"),
    ],
)
def test_non_matches(correct, answer):
    assert not DiagnosisMatcher([correct]).match(answer).matched


def test_builtin_table_can_be_switched_off():
    assert DiagnosisMatcher(["Myocardial infarction"]).match("heart attack").matched
    assert not DiagnosisMatcher(["Myocardial infarction"], builtin=False).match("heart attack").matched


def test_matcher_needs_a_name():
    with pytest.raises(ValueError):
        DiagnosisMatcher(["", "  "])


def test_split_keeps_parentheses_and_names_with_and():
    assert split_diagnoses("morphea (localized scleroderma), lichen sclerosus") == [
        "morphea (localized scleroderma)",
        "lichen sclerosus",
    ]
    assert split_diagnoses("confluent and reticulated papillomatosis") == ["confluent and reticulated papillomatosis"]
    assert split_diagnoses("1. GERD\n2. Esophageal spasm or angina") == ["GERD", "Esophageal spasm", "angina"]
    assert alternatives("Acquired digital fibrokeratoma (ADFK)") == ["Acquired digital fibrokeratoma", "ADFK"]


@pytest.mark.parametrize(
    ("answer", "kind", "names"),
    [
        ("**Final diagnosis:** Community-acquired pneumonia.", "single", ["Community-acquired pneumonia"]),
        ("Pneumonia", "single", ["Pneumonia"]),
        ("The most likely diagnosis is influenza or acute bronchitis.", "multiple", ["influenza", "acute bronchitis"]),
        ("I'm not sure, I would need more information before deciding.", "none", []),
        ("", "none", []),
        (
            "Based on everything you've told me and the exam, these findings are consistent with pneumonia of the right lower lobe.",
            "single",
            ["pneumonia of the right lower lobe"],
        ),
    ],
)
def test_extraction(answer, kind, names):
    assert extract_diagnoses(answer) == (kind, names)


def test_extraction_falls_back_to_known_names():
    text = (
        "Thank you for your patience today. From what we have gone over together, I believe your symptoms "
        "point towards shingles, and we will start treatment today to help with the pain."
    )
    kind, names = extract_diagnoses(text, ["Herpes zoster"])
    assert kind == "single"
    assert DiagnosisMatcher(["Herpes zoster"]).match(names[0]).matched
