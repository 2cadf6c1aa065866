"""EPAG judge: weighted and unweighted guideline coverage, top-1/top-k."""

from __future__ import annotations

import pytest

from osce_tui.domain.session import NoteDiagnosis
from osce_tui.judges import epag

from .judge_support import SessionBuilder, make_case, section

GUIDE = section("epag", ("guideline_unweighted", 50), ("guideline_weighted", 50), sid="guideline")
RANK = section("epag", ("diagnosis_top1", 1), ("diagnosis_topk", 1), sid="diagnostician")


def test_weighted_and_unweighted_hand_scored():
    case = make_case()
    b = SessionBuilder(case)
    b.ask("Any fever?", "Yes, 39 degrees with chills.", ["fever"])  # high (2)
    b.ask("Do you smoke?", "Ten a day.", ["smoking"])  # medium (1)
    # The travel feature has no fact ids: matched on the Q/A text.
    b.ask("Have you travelled abroad recently?", "Yes, I came back from Brazil last week.", [])
    score = epag.score_offline(GUIDE, case, b.build())
    assert score.extra["unweighted"] == pytest.approx(3 / 4)
    assert score.extra["weighted"] == pytest.approx(4 / 6, abs=1e-4)
    unw = [i.points for i in score.items if i.criterion_id == "guideline_unweighted"]
    w = [i.points for i in score.items if i.criterion_id == "guideline_weighted"]
    assert unw == pytest.approx([12.5, 0, 12.5, 12.5])
    assert w == pytest.approx([50 * 2 / 6, 0, 50 / 6, 50 / 6])
    assert score.points == pytest.approx(37.5 + 50 * 4 / 6)
    assert score.extra["covered"] == ["Fever", "Smoking", "Recent travel abroad"]


def test_rank_excluded_without_list_then_top1_topk():
    case = make_case()
    b = SessionBuilder(case)
    b.ask("Any fever?", "Yes.", ["fever"])
    none = epag.score_offline(RANK, case, b.build())
    assert all(i.status == "excluded" for i in none.items)
    assert none.extra == {"top1": None, "topk": None}
    b.note(NoteDiagnosis(name="Influenza"), NoteDiagnosis(name="Pneumonia"))
    ranked = epag.score_offline(RANK, case, b.build())
    assert ranked.extra == {"top1": False, "topk": True}
    assert [i.points for i in ranked.items] == [0, 1]


def test_ranked_list_from_final_answer():
    case = make_case()
    session = SessionBuilder(case).build()
    session.final_diagnosis = "1. CAP\n2. Influenza"
    assert epag.score_offline(RANK, case, session).extra == {"top1": True, "topk": True}
