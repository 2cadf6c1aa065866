"""Differential judge on the patient note: names 10/5, findings, order 10 (hand-scored)."""

from __future__ import annotations

import pytest

from osce_tui.domain.session import NoteDiagnosis
from osce_tui.judges import differential

from .judge_support import SessionBuilder, make_case, section

SECTION = section(
    "differential", ("dx_name", 30), ("dx_history_findings", 30), ("dx_exam_findings", 30), ("dx_order", 10)
)


def _sum(score, criterion):
    return sum(i.points for i in score.items if i.criterion_id == criterion)


def _item(score, item_id):
    (i,) = [i for i in score.items if i.item_id == item_id]
    return i


def test_hand_scored_note():
    case = make_case()
    b = SessionBuilder(case)
    b.note(
        NoteDiagnosis(
            name="Lobar pneumonia",  # a case synonym of the final diagnosis
            history_findings=["productive cough, green sputum", "fever and rigors", "smokes 10 cigarettes a day"],
            exam_findings=["crackles right lung base", "HR 104", "clear throat"],
        ),
        NoteDiagnosis(name="PE", history_findings=["cough"], exam_findings=["tachycardia"]),  # additional dx via table
        NoteDiagnosis(name="Asthma", history_findings=["cough"]),
    )
    score = differential.score_offline(SECTION, case, b.build())
    assert [i.points for i in score.items if i.criterion_id == "dx_name"] == [10, 5, 0]
    assert _item(score, "dx1_history").points == pytest.approx(10)  # 3 of 3
    # "crackles right lung base" matches; "HR 104" and "clear throat" do not match the case's wording
    assert _item(score, "dx1_exam").points == pytest.approx(10 / 3)
    assert _item(score, "dx2_history").points == 0  # additional dx: no reference findings
    assert _sum(score, "dx_order") == 10
    assert score.points == pytest.approx(15 + 10 + 10 / 3 + 10)
    assert score.max_points == 100
    assert _item(score, "dx1").evidence  # the note turn


def test_order_points_need_final_dx_first_and_duplicates_score_nothing():
    case = make_case()
    b = SessionBuilder(case)
    b.note(
        NoteDiagnosis(name="Influenza", history_findings=["sudden fever"], exam_findings=["fever"]),
        NoteDiagnosis(name="CAP"),
        NoteDiagnosis(name="pneumonia"),  # same diagnosis again
    )
    score = differential.score_offline(SECTION, case, b.build())
    assert [i.points for i in score.items if i.criterion_id == "dx_name"] == [10, 10, 0]
    assert _item(score, "dx3").explanation.startswith("Repeats")
    assert _sum(score, "dx_order") == 0
    assert _item(score, "dx1_history").points == pytest.approx(10 / 3)
    assert _item(score, "dx1_exam").points == pytest.approx(10 / 3)


def test_no_note_scores_zero():
    case = make_case()
    score = differential.score_offline(SECTION, case, SessionBuilder(case).build())
    assert score.points == 0 and score.max_points == 100
    assert "No patient note" in _item(score, "dx1").explanation


def test_verbose_lay_findings_still_support():
    case = make_case()
    b = SessionBuilder(case)
    b.note(
        NoteDiagnosis(
            name="Pneumonia",
            history_findings=["She has been coughing up thick green sputum for days", "Her brother is well"],
            exam_findings=["On listening there were crackles at the right lung base"],
        )
    )
    score = differential.score_offline(SECTION, case, b.build())
    assert _item(score, "dx1_history").points == pytest.approx(10 / 3)
    assert _item(score, "dx1_exam").points == pytest.approx(10 / 3)


def test_final_diagnosis_missing_from_case_differential_still_named():
    case = make_case()
    case.differential = [d for d in case.differential if d.diagnosis != "Community-acquired pneumonia"]
    b = SessionBuilder(case)
    b.note(NoteDiagnosis(name="CAP", history_findings=["fever"]))
    score = differential.score_offline(SECTION, case, b.build())
    assert _item(score, "dx1").points == 10
    assert _item(score, "dx1_history").points == 0  # nothing to support
    assert sum(i.points for i in score.items if i.criterion_id == "dx_order") == 10
