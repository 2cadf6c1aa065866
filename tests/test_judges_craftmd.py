"""CRAFT-MD judge: extraction kind and synonym-aware accuracy."""

from __future__ import annotations

import pytest

from osce_tui.judges import craftmd

from .judge_support import SessionBuilder, make_case, section

SECTION = section("craftmd", ("diagnostic_accuracy", 1))


def _score(final=None, last_doctor=None):
    case = make_case()
    b = SessionBuilder(case)
    b.ask("What brings you in?", "Cough.")
    if last_doctor:
        b.doctor(last_doctor)
    session = b.build()
    if final is not None:
        session.final_diagnosis = final
        session.add_turn("doctor", final, kind="diagnosis")
    return craftmd.score_offline(SECTION, case, session)


@pytest.mark.parametrize(
    ("final", "kind", "correct"),
    [
        ("Final diagnosis: lobar pneumonia", "single", True),
        ("CAP", "single", True),
        ("Acute bronchitis", "single", False),
        ("Pneumonia or influenza", "multiple", False),  # not committed: incorrect
        ("I cannot determine the diagnosis without more information.", "none", False),
        ("A", "single", True),  # option letter -> first choice
        ("(c)", "single", False),
    ],
)
def test_final_answer(final, kind, correct):
    score = _score(final=final)
    assert score.extra["kind"] == kind
    assert score.extra["correct"] is correct
    assert score.points == (1 if correct else 0)
    assert score.items[0].evidence  # the diagnosis turn


def test_multiple_records_any_match_and_last_utterance_is_used_without_final():
    assert _score(final="Pneumonia or influenza").extra["any_match"] is True
    score = _score(last_doctor="Thanks for waiting. The diagnosis is community acquired pneumonia.")
    assert score.extra["extracted"] == ["community acquired pneumonia"]
    assert score.extra["correct"] is True and score.extra["answer_turn"] == "t0003"


def test_no_answer_at_all():
    case = make_case()
    score = craftmd.score_offline(SECTION, case, SessionBuilder(case).build())
    assert score.extra["kind"] == "none" and score.points == 0 and score.items[0].status == "scored"
