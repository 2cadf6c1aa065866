"""Closure judge: impressions 20, management 30, challenging question 30, language 10, compassion 10."""

from __future__ import annotations

import pytest

from osce_tui.judges import closure

from .judge_support import SessionBuilder, make_case, section

SECTION = section(
    "closure", ("impressions", 20), ("management", 30), ("challenging_question", 30), ("language", 10), ("compassion", 10)
)


def _get(score, criterion):
    (item,) = [i for i in score.items if i.criterion_id == criterion]
    return item


def _closure_session(doctor_lines, challenge_reply=None, flagged=True):
    case = make_case()
    b = SessionBuilder(case)
    b.ask("What brings you in today?", "Cough and fever.", ["chief_complaint"])
    b.phase("closure")
    ids = [b.doctor(line) for line in doctor_lines]
    if challenge_reply is not None:
        meta = {"challenging_index": 0, "intent": "challenging_question"} if flagged else {}
        b.patient("Do I really need antibiotics?", [] if flagged else None, **meta)
        b.doctor(challenge_reply)
    return case, b.build(), ids


def test_good_closure_scores_full_marks():
    case, session, _ = _closure_session(
        [
            "Ms Lima, I can see you're worried. I think you have a chest infection called pneumonia, which means an "
            "infection in the lower part of your right lung.",
            "We'll do a chest X-ray, which is a picture of your lungs, start antibiotics by mouth, and see you again "
            "for follow up in 48 hours. I understand this is a lot to take in.",
        ],
        "Yes, the crackles and the fever point to a bacterial chest infection, and antibiotics treat it. Because "
        "of your penicillin allergy we will choose a different antibiotic.",
    )
    score = closure.score_offline(SECTION, case, session)
    assert _get(score, "impressions").points == pytest.approx(20)
    assert _get(score, "management").points == pytest.approx(30)
    assert _get(score, "challenging_question").points == pytest.approx(30)
    assert _get(score, "language").points == pytest.approx(10)
    assert _get(score, "compassion").points == pytest.approx(10)
    assert score.score_100 == pytest.approx(100)


def test_partial_closure_hand_scored():
    case, session, ids = _closure_session(
        ["You have pneumonia. We will give you antibiotics by mouth and do a CT."],
        "Okay.",
    )
    score = closure.score_offline(SECTION, case, session)
    imp = _get(score, "impressions")
    assert 10 < imp.points < 20  # named the diagnosis, covered only some key terms
    assert _get(score, "management").points == pytest.approx(10)  # 1 of 3 plan items
    assert _get(score, "challenging_question").points == 0  # "Okay." does not engage
    lang = _get(score, "language")
    assert lang.points == pytest.approx(5)  # 'pneumonia' and 'ct' unexplained: -2.5 each
    assert "pneumonia" in lang.explanation and ids[0] in lang.evidence
    assert _get(score, "compassion").points == 0


def test_substantive_but_off_key_reply_gets_half():
    case, session, _ = _closure_session(
        ["I think this is pneumonia."],
        "That is a really good question and I am glad you asked it, let us talk about it in a moment together.",
    )
    item = _get(closure.score_offline(SECTION, case, session), "challenging_question")
    assert item.points == pytest.approx(15)


def test_unflagged_challenge_found_lexically():
    case, session, _ = _closure_session(["I think this is pneumonia."], "No reply that matters.", flagged=False)
    item = _get(closure.score_offline(SECTION, case, session), "challenging_question")
    assert item.status == "scored" and len(item.evidence) == 2


def test_no_challenge_asked_is_excluded_and_no_closure_is_zero():
    case, session, _ = _closure_session([])
    score = closure.score_offline(SECTION, case, session)
    assert _get(score, "challenging_question").status == "excluded"
    for cid in ("impressions", "management", "language"):
        item = _get(score, cid)
        assert item.status == "scored" and item.points == 0 and "No closure" in item.explanation


def test_unexplained_jargon_helper():
    assert set(closure.unexplained_jargon("We need an ECG. Then an echo.")) == {"ecg", "echo"}
    assert closure.unexplained_jargon("We need an ECG, which is a tracing of your heart.") == {}
    # Explained once is enough.
    assert closure.unexplained_jargon("An ECG is a heart tracing, basically. The ECG is normal.") == {}


def test_each_challenging_question_asked_is_an_item():
    case = make_case()
    case.challenging_questions.append(
        case.challenging_questions[0].model_copy(update={"question": "Can I go back to work tomorrow?"})
    )
    b = SessionBuilder(case)
    b.phase("closure")
    b.doctor("I think this is pneumonia.")
    b.patient("Do I really need antibiotics?", [], challenging_index=0, intent="challenging_question")
    b.doctor(
        "Yes: the fever and crackles point to a bacterial chest infection, pneumonia, and antibiotics treat it; "
        "with your penicillin allergy we will choose a different antibiotic."
    )
    b.patient("Can I go back to work tomorrow?", [], challenging_index=1, intent="challenging_question")
    items = [i for i in closure.score_offline(SECTION, case, b.build()).items if i.criterion_id == "challenging_question"]
    assert [i.item_id for i in items] == ["q1", "q2"]
    assert [i.max_points for i in items] == [15, 15]
    assert [i.points for i in items] == [15, 0]  # the second was never answered
    assert items[1].evidence == ["t0004"]
