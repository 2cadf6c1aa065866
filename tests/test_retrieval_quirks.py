"""Regression tests for misfires of the offline patient reported by the case writers.

Each test pins a general rule (lexicon sense, name stripping, category gating,
conversational patterns), checked on the bundled cases, which are final, or on
the hand-written fixture case.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from osce_tui.agents import utterance as U
from osce_tui.agents.lexicon import analyse, stem
from osce_tui.agents.offline_patient import OfflinePatient
from osce_tui.agents.retrieval import case_names, index_for
from osce_tui.library import load_case

from .offline_fixture_case import case_data, make_case

CASES_DIR = Path(__file__).resolve().parents[1] / "cases"
BUNDLED = sorted(CASES_DIR.glob("*.toml")) if CASES_DIR.is_dir() else []
needs_cases = pytest.mark.skipif(not BUNDLED, reason="no bundled cases")

_CASES: dict[str, object] = {}


def bundled(case_id: str):
    if case_id not in _CASES:
        _CASES[case_id] = load_case(CASES_DIR / f"{case_id}.toml")
    return _CASES[case_id]


def facts_for(case, text: str) -> list[str]:
    return OfflinePatient().answer(case, None, text).meta["fact_ids"]


def concepts(text: str) -> set[str]:
    return {t for _key, terms in analyse(text) for t in terms if t.startswith("@")}


# 1. "How are you sleeping?" is a sleep question, not small talk ---------------


@needs_cases
@pytest.mark.parametrize(
    ("case_id", "fact"),
    [("low-mood-29f", "sleep_early_waking"), ("palpitations-weight-loss-32f", "mood_sleep_anxiety")],
)
def test_how_are_you_sleeping_retrieves_the_sleep_fact(case_id, fact):
    reply = OfflinePatient().answer(bundled(case_id), None, "How are you sleeping?")
    assert reply.meta["fact_ids"] == [fact]
    assert "small_talk" not in reply.meta["intents"]


def test_only_bare_how_are_you_is_small_talk():
    assert U.asks_how_are_you("How are you?")
    assert U.asks_how_are_you("How are you doing today?")
    for text in ("How are you sleeping?", "How are you eating and sleeping?", "How are you getting on with the tablets?"):
        assert not U.asks_how_are_you(text), text


# 2. Names in the question are not unknown words --------------------------------


@needs_cases
@pytest.mark.parametrize(
    ("case_id", "question", "fact"),
    [
        ("fever-cough-3y", "Has Leo had any antibiotics?", "medications_no_antibiotics"),
        ("fever-cough-3y", "Funmi, has Leo had his jabs?", "immunizations_up_to_date"),
        ("chest-pain-46m", "Mr Ortiz, do you smoke?", "smoking"),
        ("chest-pain-46m", "Daniel, where exactly is the pain?", "location"),
        ("confusion-84f", "Janet, has Dorothy had a fever?", "fever_rigors"),
        ("confusion-84f", "Has Mrs Pembroke ever smoked?", "social_tobacco"),
    ],
)
def test_patient_and_speaker_names_are_ignored(case_id, question, fact):
    assert facts_for(bundled(case_id), question) == [fact]


@needs_cases
def test_a_name_does_not_change_the_match():
    case = bundled("fever-cough-3y")
    index = index_for(case)
    with_name = index.retrieve("Has Leo been eating?")
    without = index.retrieve("Has he been eating?")
    assert [m.fact_id for m in with_name] == [m.fact_id for m in without]
    assert with_name[0].coverage == pytest.approx(without[0].coverage)


def test_case_names_cover_patient_and_proxy_without_the_relation():
    parent = make_case("parent")  # Sam Rivera, spoken for by "Ada Rivera (mother)"
    assert case_names(parent) == {stem("sam"), stem("rivera"), stem("ada")}
    assert facts_for(parent, "Ada, has Sam had any nausea?") == ["nausea"]
    assert facts_for(make_case(), "Alex, do you smoke?") == ["smoking"]


def test_a_name_that_is_also_a_clinical_word_is_kept():
    data = case_data()
    data["doorway"]["patient_name"] = "Alex Smoker"
    case = make_case(doorway=data["doorway"])
    # "smoker" carries a concept, so it still asks about smoking.
    assert facts_for(case, "Are you a smoker?") == ["smoking"]


# 3. Lexicon senses ---------------------------------------------------------------


@needs_cases
def test_sun_protection_is_not_sexual_history():
    assert "@sexual" not in concepts("Do you use sun protection?")
    assert facts_for(bundled("changing-mole-61m"), "Do you use sun protection?") == ["sunscreen_sunbeds"]
    assert facts_for(bundled("chest-pain-46m"), "Do you use sun protection?") == []
    assert "@sexual" in concepts("Do you use protection when you have sex?")


@needs_cases
def test_spotting_is_bleeding_not_a_place():
    assert stem("spotting") != stem("spot")
    assert "@location" not in concepts("Any spotting?")
    assert facts_for(bundled("pelvic-pain-27f"), "Any spotting?") == ["vaginal_bleeding_spotting"]
    assert facts_for(bundled("pelvic-pain-27f"), "Can you show me the spot where it hurts?") == ["location_right_lower"]


@needs_cases
def test_night_sweats_are_not_a_sleep_question():
    assert "@sleep" not in concepts("Any night sweats?")
    assert facts_for(bundled("low-back-pain-58m"), "Any night sweats?") == ["fever_weight_loss"]
    assert facts_for(bundled("cough-fever-34f"), "Any night sweats?") == ["weight_loss_night_sweats"]
    # The low-mood case has a sleep fact but no night sweats.
    assert facts_for(bundled("low-mood-29f"), "Any night sweats?") == []


@needs_cases
def test_on_anything_is_only_medication_when_asked_as_such():
    assert "@medication" not in concepts("Did he choke on anything?")
    assert facts_for(bundled("fever-cough-3y"), "Did he choke on anything?") == ["choking_episode_negative"]
    assert "@medication" in concepts("Are you on anything regular?")


@needs_cases
def test_trip_and_fall_is_a_fall_not_travel():
    assert "@travel" not in concepts("Did she trip and fall?")
    assert "@trauma" in concepts("Did she trip over?")
    assert "@travel" in concepts("Have you been on a trip abroad?")
    assert facts_for(bundled("confusion-84f"), "Did she trip and fall?") == ["fall_this_morning"]


@needs_cases
def test_other_moles_are_not_the_mole():
    case = bundled("changing-mole-61m")
    assert facts_for(case, "Have any other moles changed?") == ["other_moles"]
    assert facts_for(case, "Has the mole changed?") == ["change_overview"]
    # "other" stays harmless where no fact speaks of "other ...".
    assert facts_for(bundled("chest-pain-46m"), "Any other medical conditions?") == ["pmh"]


# 4. Drug allergies are allergies -------------------------------------------------


@needs_cases
@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
@pytest.mark.parametrize("question", ["Any drug allergies?", "Are you allergic to any medications?"])
def test_drug_allergies_reach_the_allergy_fact_in_every_case(path, question):
    case = load_case(path)
    allergy = [f.id for f in case.history if f.category == "allergies"]
    assert facts_for(case, question) == allergy


def test_medications_and_allergies_asked_together_get_both():
    assert facts_for(make_case(), "Do you take any medications, and any allergies?") == ["medications", "allergies"]


# 5. Open questions give the opening statement -------------------------------------


@pytest.mark.parametrize(
    "text",
    ["How can I help you today?", "Tell me what's been going on.", "So, what's been happening?",
     "Talk me through what happened.", "What seems to be the trouble?"],
)
def test_open_questions_give_the_opening_statement(text):
    case = make_case()
    reply = OfflinePatient().answer(case, None, text)
    assert reply.meta["intent"] == "open_question"
    assert reply.text == case.persona.opening_statement
    assert reply.meta["fact_ids"] == ["chief_complaint"]


def test_narrowed_what_happened_questions_are_not_open():
    for text in ("What's been going on with your bowels?", "What happened to your back?", "What happened when you fell?"):
        assert not U.is_open_question(text), text


# 6. "Do you have a cough?" is not "coughing makes it worse" --------------------------


@needs_cases
@pytest.mark.parametrize(
    ("case_id", "expected"),
    [("pelvic-pain-27f", []), ("abdominal-pain-22m", []), ("chest-pain-46m", ["ros_fever"])],
)
def test_a_symptom_question_does_not_pull_a_modifiers_fact(case_id, expected):
    assert facts_for(bundled(case_id), "Do you have a cough?") == expected


@needs_cases
def test_modifier_questions_still_reach_modifiers_facts():
    assert facts_for(bundled("cough-fever-34f"), "Does it hurt when you cough?") == ["chest_pain_modifiers"]
    assert facts_for(bundled("pelvic-pain-27f"), "Does coughing make it worse?") == ["modifiers_movement"]
    assert facts_for(bundled("flank-pain-41m"), "Can you get comfortable in any position?") == ["modifiers"]
    assert facts_for(make_case(), "Does anything make it worse?") == ["aggravating"]


# Not-covered detection and clinical vocabulary ----------------------------------------


@needs_cases
@pytest.mark.parametrize(
    ("case_id", "question"),
    [
        ("chest-pain-46m", "Any hearing problems?"),
        ("changing-mole-61m", "Any fits or seizures?"),
        ("changing-mole-61m", "Any trouble swallowing?"),
        ("low-mood-29f", "Have you had any falls?"),
        ("palpitations-weight-loss-32f", "Any hearing problems?"),
    ],
)
def test_symptoms_the_case_does_not_hold_get_the_default_answer(case_id, question):
    case = bundled(case_id)
    reply = OfflinePatient().answer(case, None, question)
    assert reply.meta["fact_ids"] == [] and reply.text == case.persona.default_answer


@needs_cases
@pytest.mark.parametrize(
    ("case_id", "question", "fact"),
    [
        ("flank-pain-41m", "Any haematuria?", "hematuria"),
        ("cough-fever-34f", "Any haemoptysis?", "hemoptysis"),
        ("abdominal-pain-22m", "Any melaena?", "blood_in_stool"),
        ("abdominal-pain-22m", "Any dysuria?", "urinary"),
        ("low-back-pain-58m", "Any faecal incontinence?", "bowel"),
        ("fever-cough-3y", "Has he had all his immunizations?", "immunizations_up_to_date"),
        ("abdominal-pain-22m", "Have you been sick?", "nausea_vomiting"),
        ("cough-fever-34f", "Has anyone around you been sick?", "sick_contacts"),
    ],
)
def test_jargon_spelling_and_british_usage(case_id, question, fact):
    assert facts_for(bundled(case_id), question) == [fact]


def test_spelling_variants_share_a_stem():
    for uk, us in (("haemoptysis", "hemoptysis"), ("immunisations", "immunizations"), ("colour", "color"),
                   ("oedema", "edema"), ("diarrhoea", "diarrhea"), ("anaemia", "anemia")):
        assert stem(uk) == stem(us), (uk, us)
    assert stem("faeces") != stem("face")
    assert stem("crusty") == stem("crust") and stem("worried") == stem("worry")
    assert stem("eaten") == stem("eat")


# -- suicide-risk questions (a wrong "No" here is a safety error) -------------------

RISK_QUESTIONS = [
    ("Have you had any thoughts of harming yourself?", "passive_suicidal_ideation"),
    ("Any thoughts of self-harm?", "passive_suicidal_ideation"),
    ("Do you ever think about killing yourself?", "passive_suicidal_ideation"),
    ("Have you had any thoughts of hurting yourself?", "passive_suicidal_ideation"),
    ("Have you ever harmed yourself?", "self_harm_history_negative"),
    ("Have you ever tried to hurt yourself?", "self_harm_history_negative"),
    ("Have you thought about how you would do it?", "suicide_plan_intent_negative"),
]


@pytest.mark.parametrize("question,fact_id", RISK_QUESTIONS)
def test_suicide_risk_questions_reach_the_right_fact(question, fact_id):
    from osce_tui.agents.retrieval import index_for
    from osce_tui.library import Library

    case = Library().case("low-mood-29f")
    matches = index_for(case).retrieve(question)
    assert matches and matches[0].fact_id == fact_id


# -- identity, age and permission (conversation, not the question bank) ------------

@pytest.mark.parametrize(
    "case_id,question,intent,expected",
    [
        ("chest-pain-46m", "Are you Daniel Ortiz?", "identity", "Daniel Ortiz"),
        ("chest-pain-46m", "Can you confirm your name and date of birth?", "identity", "I'm 46"),
        ("chest-pain-46m", "How old are you?", "age", "46"),
        ("chest-pain-46m", "Are you okay to talk?", "consent", "fine"),
        ("fever-cough-3y", "Are you Leo's mum?", "identity", "Leo's mum"),
        ("fever-cough-3y", "How old is he?", "age", "3 years"),
    ],
)
def test_identity_age_and_permission_are_answered_in_character(case_id, question, intent, expected):
    from osce_tui.domain.session import Session
    from osce_tui.library import Library

    case = Library().case(case_id)
    reply = OfflinePatient().answer(case, Session(case_id=case_id, phase="history"), question)
    assert reply.meta["intent"].startswith(intent) or intent in reply.meta["intent"]
    assert expected in reply.text
    assert case.persona.default_answer not in reply.text


def test_addressing_the_patient_by_name_is_not_an_identity_check():
    from osce_tui.domain.session import Session
    from osce_tui.library import Library

    case = Library().case("changing-mole-61m")
    reply = OfflinePatient().answer(case, Session(case_id=case.id, phase="history"), "Graham, whereabouts is it?")
    assert reply.meta["fact_ids"], reply.text
