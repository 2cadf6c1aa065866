"""Physical exam judge: MedQA-CS coverage arithmetic, excluded reason relevance, extra-exam penalty."""

from __future__ import annotations

import pytest

from osce_tui.judges import physical_exam

from .judge_support import SessionBuilder, make_case, section

SECTION = section(
    "physical_exam", ("exam_coverage", 60), ("reason_relevance", 40, True), ("extra_exam_penalty", 10)
)


def _by(score, criterion):
    return [i for i in score.items if i.criterion_id == criterion]


def test_three_of_five_targets_is_36_of_60_and_reason_excluded():
    case = make_case()
    b = SessionBuilder(case)
    b.exam("general inspection", "general")
    b.exam("listen to the lungs", "respiratory", "Crackles and bronchial breathing at the right base.")
    b.exam("auscultate the heart", "cardiovascular")
    b.exam("check vitals", "vitals")  # free: never an extra exam
    score = physical_exam.score_offline(SECTION, case, b.build())

    cov = _by(score, "exam_coverage")
    assert len(cov) == 5
    assert sum(i.points for i in cov) == pytest.approx(36.0)
    (reason,) = _by(score, "reason_relevance")
    assert reason.status == "excluded" and "model judge" in reason.explanation
    (pen,) = _by(score, "extra_exam_penalty")
    assert pen.points == 0 and pen.max_points == 0
    # Excluded reason relevance leaves the denominator: 36 / 60.
    assert score.points == pytest.approx(36.0)
    assert score.max_points == pytest.approx(60.0)
    assert score.score_100 == pytest.approx(60.0)


def test_extra_systems_cost_two_points_each():
    case = make_case()
    b = SessionBuilder(case)
    b.exam("general inspection", "general")
    b.exam("listen to the lungs", "respiratory")
    b.exam("auscultate the heart", "cardiovascular")
    b.exam("palpate the abdomen", "abdominal")  # in the case but not a target
    b.exam("neuro exam", "neurological")
    b.exam("check reflexes", "neurological")  # same system again: counted once
    score = physical_exam.score_offline(SECTION, case, b.build())
    (pen,) = _by(score, "extra_exam_penalty")
    assert pen.points == pytest.approx(-4.0)
    assert score.points == pytest.approx(32.0)
    assert "abdominal" in pen.explanation and "neurological" in pen.explanation


def test_penalty_is_capped_at_criterion_points_and_at_coverage_earned():
    case = make_case()
    b = SessionBuilder(case)
    for s in ("general", "respiratory", "cardiovascular", "heent", "lymph"):
        b.exam(f"examine {s}", s)  # full coverage: 60
    for s in ("abdominal", "neurological", "skin", "back", "musculoskeletal", "breast"):
        b.exam(f"examine {s}", s)
    score = physical_exam.score_offline(SECTION, case, b.build())
    assert _by(score, "extra_exam_penalty")[0].points == pytest.approx(-10.0)

    b2 = SessionBuilder(case)
    b2.exam("neuro exam", "neurological")
    only_extra = physical_exam.score_offline(SECTION, case, b2.build())
    assert only_extra.points == 0  # never below zero


def test_component_wording_disambiguates_same_system_and_unmapped_requests():
    case = make_case()
    b = SessionBuilder(case)
    b.exam("percuss chest", None)  # the oracle could not map it, but it names a maneuver
    score = physical_exam.score_offline(SECTION, case, b.build())
    covered = [i.item_id for i in _by(score, "exam_coverage") if i.points > 0]
    assert covered == ["respiratory:lung_auscultation"]
    assert "not mapped" in _by(score, "extra_exam_penalty")[0].explanation
