"""Every bundled rubric loads, names real judge modules, and scores a minimal session."""

from __future__ import annotations

import pytest

from osce_tui.domain.session import Session
from osce_tui.judges import runner
from osce_tui.library import Library, bundled_rubrics_dir

from .judge_support import SessionBuilder, make_case

EXPECTED = {"medqa-cs", "craft-md", "epag", "lcp", "osce-practice"}


@pytest.fixture(scope="module")
def library() -> Library:
    return Library()


def test_bundled_rubrics_load(library):
    assert EXPECTED <= set(library.rubrics())
    assert library.rubric_issues() == []
    assert {p.stem for p in bundled_rubrics_dir().glob("*.toml")} >= EXPECTED


@pytest.mark.parametrize("rubric_id", sorted(EXPECTED))
def test_every_criterion_has_an_offline_scorer(library, rubric_id):
    rubric = library.rubric(rubric_id)
    for sec in rubric.sections:
        module = runner.judge_module(sec.judge)
        for c in sec.criteria:
            assert c.needs_model or c.id in module.SCORERS, f"{rubric_id}/{sec.id}/{c.id}"


@pytest.mark.parametrize("rubric_id", sorted(EXPECTED))
def test_minimal_sessions_score_without_error(library, rubric_id):
    rubric = library.rubric(rubric_id)
    case = make_case()
    empty = Session(case_id=case.id)
    small = SessionBuilder(case).ask("What brings you in today?", "A cough.", ["chief_complaint"]).build()
    for session in (empty, small):
        scores = runner.score_live(case, session, rubric)
        assert [s.section_id for s in scores.sections] == [s.id for s in rubric.sections]
        for sec in scores.sections:
            for item in sec.items:
                assert item.status != "unscored", (sec.section_id, item.criterion_id, item.explanation)
                assert item.explanation


def test_bundled_cases_score_on_the_practice_rubric(library):
    cases = library.cases()
    if not cases:
        pytest.skip("no bundled cases yet")
    rubric = library.rubric("osce-practice")
    for case in cases.values():
        scores = runner.score_live(case, Session(case_id=case.id), rubric)
        assert all(i.status != "unscored" for s in scores.sections for i in s.items), case.id


def test_medqa_cs_points_follow_the_protocol(library):
    r = library.rubric("medqa-cs")
    pts = {(s.id, c.id): c.points for s in r.sections for c in s.criteria}
    assert pts[("physical_exam", "exam_coverage")] == 60
    assert pts[("physical_exam", "reason_relevance")] == 40
    assert r.section("physical_exam").criterion("reason_relevance").needs_model
    assert [pts[("closure", c)] for c in ("impressions", "management", "challenging_question", "language", "compassion")] == [
        20,
        30,
        30,
        10,
        10,
    ]
    assert pts[("differential", "dx_order")] == 10
    assert r.section("history").criterion("fact_coverage").per == "fact"
    practice = library.rubric("osce-practice")
    assert [s.id for s in practice.sections] == ["communication", "history", "physical_exam", "closure", "differential"]
