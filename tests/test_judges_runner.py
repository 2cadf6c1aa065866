"""The scoring runner: live offline scores, final offline scores, model-judge dispatch."""

from __future__ import annotations

import pytest

from osce_tui.domain.rubric import Rubric
from osce_tui.domain.scores import ItemScore, SectionScore
from osce_tui.judges import llm, runner
from osce_tui.providers.base import (
    BadResponseError,
    MissingKeyError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
)
from osce_tui.providers.scripted import ScriptedProvider

from .judge_support import SessionBuilder, make_case, section


def _rubric() -> Rubric:
    history = section("history", ("fact_coverage", 70), ("question_consistency", 30))
    exam = section("physical_exam", ("exam_coverage", 60), ("reason_relevance", 40, True))
    exam.weight = 3.0
    return Rubric(id="mini", title="mini", protocol="custom", sections=[history, exam])


def _session():
    case = make_case()
    b = SessionBuilder(case)
    b.ask("When did the cough start?", "Three days ago.", ["onset"])
    b.exam("listen to the lungs", "respiratory")
    return case, b.build()


def test_score_live_is_offline_and_not_final():
    case, session = _session()
    scores = runner.score_live(case, session, _rubric())
    assert scores.final is False
    assert scores.judge == "offline" and scores.prompt_hash == "offline"
    assert scores.section_weights == {"history": 1.0, "physical_exam": 3.0}
    hist, exam = scores.sections
    assert hist.points == pytest.approx(70 / 7 + 30)  # 1 of 7 facts, 1 of 1 question in the bank
    assert exam.points == pytest.approx(12) and exam.max_points == pytest.approx(60)
    assert scores.total == pytest.approx((1 * hist.score_100 + 3 * exam.score_100) / 4, abs=0.01)


async def test_score_session_offline_is_final():
    case, session = _session()
    scores = await runner.score_session(case, session, _rubric(), "offline")
    assert scores.final is True and scores.judge == "offline"


def test_a_crashing_judge_becomes_unscored_items(monkeypatch):
    case, session = _session()

    def boom(section, case, session):
        raise RuntimeError("kaput")

    monkeypatch.setattr(runner.judge_module("history"), "score_offline", boom)
    hist = runner.score_live(case, session, _rubric()).sections[0]
    assert [i.status for i in hist.items] == ["unscored", "unscored"]
    assert "kaput" in hist.items[0].explanation


async def test_model_judge_called_per_section_with_passed_provider(monkeypatch):
    case, session = _session()
    calls = []

    async def fake(section, case_, session_, provider, settings):
        calls.append((section.id, provider, settings.temperature))
        if section.id == "physical_exam":
            raise BadResponseError("garbled reply")
        item = ItemScore(criterion_id=section.criteria[0].id, label="x", points=1, max_points=2)
        return SectionScore(section_id=section.id, title=section.title, judge=str(provider.spec), items=[item])

    monkeypatch.setattr(llm, "score_section_llm", fake)
    provider = ScriptedProvider(["unused"])
    scores = await runner.score_session(case, session, _rubric(), "scripted/default", provider=provider)
    assert [c[0] for c in calls] == ["history", "physical_exam"]
    assert calls[0][1] is provider and calls[0][2] == 0.0  # judge settings from the default config
    assert scores.final is True
    assert scores.judge == str(provider.spec)
    assert scores.prompt_hash == llm.prompt_hash(["history", "physical_exam"])
    assert scores.sections[0].points == 1
    assert all(i.status == "unscored" and "garbled reply" in i.explanation for i in scores.sections[1].items)


@pytest.mark.parametrize("error", [RateLimitError, ProviderConnectionError, ProviderTimeoutError])
async def test_an_unavailable_judge_propagates_instead_of_writing_unscored_sections(monkeypatch, error):
    """A judge that is down must not look like a finished job with N unscored sections."""
    case, session = _session()

    async def fake(*args):
        raise error("judge unreachable")

    monkeypatch.setattr(llm, "score_section_llm", fake)
    with pytest.raises(error):
        await runner.score_session(case, session, _rubric(), "scripted/default", provider=ScriptedProvider(["x"]))


async def test_missing_key_propagates(monkeypatch):
    case, session = _session()

    async def fake(*args):
        raise MissingKeyError("no OPENAI_API_KEY")

    monkeypatch.setattr(llm, "score_section_llm", fake)
    with pytest.raises(MissingKeyError):
        await runner.score_session(case, session, _rubric(), "scripted/default", provider=ScriptedProvider(["x"]))
