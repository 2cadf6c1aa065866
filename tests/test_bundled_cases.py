"""Every bundled case loads, validates strictly and carries every protocol's sections."""

from __future__ import annotations

import pytest

from osce_tui.library import Library, bundled_cases_dir, validate_paths

LIB = Library()
CASES = sorted(LIB.cases().values(), key=lambda c: c.id)


def test_no_bundled_case_fails_to_load():
    assert LIB.case_issues() == []


def test_at_least_twelve_cases_across_the_required_spread():
    assert len(CASES) >= 12
    specialties = {c.specialty.lower() for c in CASES}
    assert len(specialties) >= 10, specialties
    assert any(c.persona.speaker == "parent" for c in CASES), "a paediatric case told by a parent"
    assert any(c.doorway.age >= 75 for c in CASES), "an older adult"


def test_strict_validation_passes():
    assert validate_paths([bundled_cases_dir()], strict=True) == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_case_is_complete_for_every_protocol(case):
    assert case.protocol_gaps() == []
    assert len(case.history) >= 25
    for fact in case.history:
        assert len(fact.paraphrases) >= 2 and fact.answer and fact.question
    assert {e.system for e in case.exam if e.target}, "target exam findings"
    assert len(case.differential) == 3
    for dx in case.differential:
        assert dx.history_findings
    assert case.diagnosis.vignette and len(case.diagnosis.choices) >= 4
    correct = {case.diagnosis.name.lower(), *(s.lower() for s in case.diagnosis.synonyms)}
    assert correct & {c.lower() for c in case.diagnosis.choices[:4]}, "correct answer among the 4-choice options"
    assert {f.weight for f in case.guideline_features} >= {"high"}
    assert case.lcp and case.lcp.clinician_rounds > 0
    categories = {f.category for f in case.history}
    assert {"onset", "pmh", "medications", "allergies", "family"} <= categories, categories
    assert any(c.startswith("social_") for c in categories)
