"""Communication checklist (hand-scored sessions)."""

from __future__ import annotations

from osce_tui.judges import communication

from .judge_support import SessionBuilder, make_case, section

SECTION = section(
    "communication",
    ("introduced_self", 15),
    ("used_patient_name", 10),
    ("open_ended_first", 20),
    ("patient_concerns", 15),
    ("summarised", 20),
    ("recognised_emotion", 20),
)


def _points(score):
    return {i.criterion_id: i.points for i in score.items}


def test_good_communication():
    case = make_case()
    b = SessionBuilder(case)
    b.ask("Hello Ms Lima, my name is Dr Rivera, I'm one of the doctors here. What brings you in today?", "Cough.")
    b.ask("You seem quite worried about this.", "I am, I have two kids at home.")
    b.ask("Is there anything else you wanted to mention?", "No.")
    b.doctor("Let me summarize what you've told me: three days of cough with green phlegm and fever.")
    assert _points(communication.score_offline(SECTION, case, b.build())) == {
        "introduced_self": 15,
        "used_patient_name": 10,
        "open_ended_first": 20,
        "patient_concerns": 15,
        "summarised": 20,
        "recognised_emotion": 20,
    }


def test_poor_communication():
    case = make_case()
    b = SessionBuilder(case)
    b.ask("Do you have a cough?", "Yes.")
    b.ask("You said fever?", "Yes.")
    score = communication.score_offline(SECTION, case, b.build())
    pts = _points(score)
    assert pts == {
        "introduced_self": 0,
        "used_patient_name": 0,
        "open_ended_first": 0,
        "patient_concerns": 0,
        "summarised": 10,  # an echo, not a summary: half
        "recognised_emotion": 0,
    }
    first = [i for i in score.items if i.criterion_id == "open_ended_first"][0]
    assert first.evidence == ["t0001"] and "closed" in first.explanation


def test_name_and_role_each_count_half_and_pleasantries_skip_to_first_real_question():
    case = make_case()
    b = SessionBuilder(case)
    b.ask("Hi, I'm the doctor on call. How are you? Tell me what happened.", "I got sick.")
    pts = _points(communication.score_offline(SECTION, case, b.build()))
    assert pts["introduced_self"] == 7.5  # a role, but no name
    assert pts["open_ended_first"] == 20
    b2 = SessionBuilder(case)
    b2.ask("Good morning, I'm Sam. Any cough?", "Yes.")
    pts2 = _points(communication.score_offline(SECTION, case, b2.build()))
    assert pts2["introduced_self"] == 7.5  # a name, but no role
    assert pts2["open_ended_first"] == 0
    b4 = SessionBuilder(case)
    b4.ask("Hello Ms. Lima, I\u2019m Dr. Silva, one of the doctors here.", "Hi.")
    assert _points(communication.score_offline(SECTION, case, b4.build()))["introduced_self"] == 15
    b3 = SessionBuilder(case)
    b3.ask("I'm sorry you're unwell. Any cough?", "Yes.")
    assert _points(communication.score_offline(SECTION, case, b3.build()))["introduced_self"] == 0


def test_sympathy_for_pain_counts_but_asking_about_pain_does_not():
    case = make_case()
    asked = SessionBuilder(case)
    asked.ask("Do you feel any pain when you cough?", "A bit.")
    asked.ask("Are you in pain right now?", "Yes.")
    pts = _points(communication.score_offline(SECTION, case, asked.build()))
    assert pts["recognised_emotion"] == 0

    kind = SessionBuilder(case)
    kind.ask("Do you feel any pain when you cough?", "A bit, it's awful.")
    kind.ask("I'm sorry you're in so much pain. When did it start?", "Three days ago.")
    score = communication.score_offline(SECTION, case, kind.build())
    item = [i for i in score.items if i.criterion_id == "recognised_emotion"][0]
    assert item.points == 20 and item.evidence == ["t0003"]
