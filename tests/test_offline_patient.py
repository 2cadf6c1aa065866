"""The offline standardized patient: retrieval from the case, never invention."""

from __future__ import annotations

from pathlib import Path

import pytest
from .offline_fixture_case import make_case

from osce_tui.agents.lexicon import analyse, stem
from osce_tui.agents.offline_patient import OfflinePatient
from osce_tui.agents.retrieval import index_for
from osce_tui.agents.utterance import clauses
from osce_tui.domain.session import Session
from osce_tui.library import load_case

CASES_DIR = Path(__file__).resolve().parents[1] / "cases"


@pytest.fixture
def case():
    return make_case()


@pytest.fixture
def patient():
    return OfflinePatient()


def ask(patient, case, text, session=None):
    return patient.answer(case, session or Session(case_id=case.id), text)


@pytest.mark.parametrize(
    ("question", "fact"),
    [
        ("Do you use tobacco?", "smoking"),
        ("Are you a cigarette smoker?", "smoking"),
        ("Does it radiate?", "radiation"),
        ("Does it travel anywhere else?", "radiation"),
        ("Anything aggravate it?", "aggravating"),
        ("What eases it?", "relieving"),
        ("How about booze?", "alcohol"),
        ("Any pills or medicines?", "medications"),
        ("Any illnesses in your relatives?", "family_history"),
        ("How long has this been going on?", "onset"),
        ("Are you allergic to anything?", "allergies"),
        ("What line of work are you in?", "occupation"),
    ],
)
def test_paraphrases_and_synonyms_reach_the_fact(patient, case, question, fact):
    reply = ask(patient, case, question)
    assert reply.meta["fact_ids"] == [fact]
    assert reply.text == case.fact(fact).answer
    assert reply.meta["intent"].startswith("history:")


def test_several_questions_in_one_utterance_are_each_answered(patient, case):
    reply = ask(patient, case, "Where is it, and does it go anywhere?")
    assert reply.meta["fact_ids"] == ["location", "radiation"]
    assert case.fact("location").answer in reply.text
    assert "And sometimes it goes through to my back." in reply.text  # joined naturally
    assert len(reply.meta["scores"]) == 2 and all(s > 0 for s in reply.meta["scores"])


def test_coordinated_topics_in_one_clause_are_both_answered_in_order(patient, case):
    reply = ask(patient, case, "Do you smoke or drink?")
    assert reply.meta["fact_ids"] == ["smoking", "alcohol"]


def test_a_qualifier_does_not_pull_a_second_fact(patient, case):
    # "stomach" qualifies the family question; it must not also answer location.
    reply = ask(patient, case, "Does anyone in your family have stomach problems?")
    assert reply.meta["fact_ids"] == ["family_history"]


def test_greeting_and_open_question_give_the_opening_statement(patient, case):
    reply = ask(patient, case, "Hello Mr. Turner, I'm Dr. Kim, one of the doctors. What brings you in today?")
    assert reply.text.startswith("Hello, Dr. Kim.")
    assert case.persona.opening_statement in reply.text
    assert reply.meta["intent"] == "open_question"
    assert reply.meta["fact_ids"] == ["chief_complaint"]


def test_greeting_alone_is_greeted_back_without_facts(patient, case):
    reply = ask(patient, case, "Good morning, I'm one of the medical students.")
    assert reply.text == "Hi, doctor."
    assert reply.meta["fact_ids"] == [] and reply.meta["intent"] == "greeting"


def test_parent_greets_as_the_childs_parent():
    case = make_case("parent")
    reply = OfflinePatient().answer(case, None, "Hello, my name is Dr Lee.")
    assert reply.text == "Hello, Dr. Lee. I'm Ada Rivera, Sam's mum."
    opening = OfflinePatient().answer(case, None, "What brings you in?")
    assert opening.text == case.persona.opening_statement  # already in the parent's voice


def test_empathy_is_acknowledged_in_character(patient, case):
    reply = ask(patient, case, "That sounds really difficult, I'm sorry to hear that.")
    assert "worried" in reply.text.lower()  # affect says worried
    assert reply.meta["intent"] == "empathy" and reply.meta["fact_ids"] == []


def test_uncovered_question_gets_the_default_answer_and_no_fact(patient, case):
    for question in ("Have you noticed a rash?", "Any problems with your vision?", "Do you keep any pets?", "Any knee swelling?"):
        reply = ask(patient, case, question)
        assert reply.text == case.persona.default_answer, question
        assert reply.meta["fact_ids"] == [] and reply.meta["intent"] == "not_covered"


def test_statements_are_acknowledged_not_answered_with_no(patient, case):
    reply = ask(patient, case, "I'm going to examine you now.")
    assert reply.text == "Okay."
    assert reply.meta["intent"] == "statement"


def test_repeated_question_gets_the_same_answer_with_like_i_said(patient, case):
    session = Session(case_id=case.id)
    first = ask(patient, case, "Do you smoke?", session)
    session.add_turn("doctor", "Do you smoke?")
    session.add_turn("patient", first.text, meta=first.meta)
    again = ask(patient, case, "Sorry, remind me, any cigarettes?", session)
    assert again.meta["fact_ids"] == ["smoking"]
    assert again.text == "Like I said, yes, ten a day."


def test_point_request_returns_the_location(patient, case):
    reply = ask(patient, case, "Can you point to where it hurts?")
    assert reply.meta["fact_ids"] == ["location"]


async def test_challenging_questions_come_in_order_then_none(patient, case):
    session = Session(case_id=case.id, phase="closure")
    first = await patient.challenging_question(case, session)
    assert first is not None and first.text == "Is this cancer?"
    assert first.meta["intent"] == "challenging_question"
    session.add_turn("patient", first.text, meta=first.meta)
    second = await patient.challenging_question(case, session)
    assert second is not None and second.text == "Do I have to stop the ibuprofen?"
    session.add_turn("patient", second.text)  # even without meta, the text marks it asked
    assert await patient.challenging_question(case, session) is None
    assert await patient.challenging_question(make_case(challenging_questions=[]), Session(case_id="x")) is None


def test_invitation_to_ask_questions_returns_the_next_challenge(patient, case):
    reply = ask(patient, case, "Do you have any questions for me?")
    assert reply.text == "Is this cancer?" and reply.meta["challenging_index"] == 0


async def test_reply_streams_word_by_word(patient, case):
    pieces: list[str] = []
    reply = await patient.reply(case, Session(case_id=case.id), "What does the pain feel like?", pieces.append)
    assert len(pieces) == len(reply.text.split(" ")) > 1
    assert "".join(pieces) == reply.text

    async def async_sink(text: str) -> None:
        pieces.append(text)

    pieces.clear()
    await patient.reply(case, Session(case_id=case.id), "Do you smoke?", async_sink)
    assert "".join(pieces) == "Yes, ten a day."


def test_empty_utterance(patient, case):
    assert ask(patient, case, "   ").meta["intent"] == "empty"


def test_index_is_cached_per_case_content(case):
    assert index_for(case) is index_for(case)
    edited = make_case()
    edited.history[0].answer = "Something else."
    assert index_for(edited) is not index_for(case)


def test_lexicon_basics():
    assert stem("smoking") == stem("smoke") == stem("smoked")
    assert stem("cigarettes") == stem("cigarette")
    terms = {t for _k, ts in analyse("Does it spread to your arm?") for t in ts}
    assert "@radiation" in terms and "@anat_arm" in terms
    assert clauses("Where is it? And does it go anywhere, and what makes it worse?") == [
        "Where is it?",
        "And does it go anywhere",
        "what makes it worse?",
    ]


def _bundled_cases():
    return sorted(CASES_DIR.glob("*.toml")) if CASES_DIR.is_dir() else []


@pytest.mark.skipif(not _bundled_cases(), reason="no bundled cases")
def test_bundled_cases_answer_their_own_canonical_questions():
    """Self-consistency on every bundled case: each canonical question finds its fact."""
    patient = OfflinePatient()
    total = hits = 0
    for path in _bundled_cases():
        case = load_case(path)
        for fact in case.history:
            if fact.category == "chief_complaint":
                continue
            total += 1
            hits += fact.id in patient.answer(case, None, fact.question).meta["fact_ids"]
    assert total and hits / total >= 0.9, f"{hits}/{total}"


def test_consent_and_check_ins_are_agreed_to_not_answered_with_the_default(patient, case):
    consent = ask(patient, case, "Is it okay if I examine your tummy now?")
    assert consent.text == "Yes, that's fine." and consent.meta["fact_ids"] == []
    check = ask(patient, case, "We'll do some blood tests. Does that make sense?")
    assert check.text == "Yes, that makes sense."
    assert case.persona.default_answer not in check.text


def test_how_are_you_small_talk(patient, case):
    assert ask(patient, case, "How are you feeling today?").text == "Not great, to be honest."
    assert "worried" in OfflinePatient().answer(make_case("parent"), None, "How are you doing?").text
