"""LLM judges: one judgement per item, validation + one retry, unscored on failure, chains."""

from __future__ import annotations

import json
import re

import httpx2
import pytest

from osce_tui.config import Config
from osce_tui.domain.rubric import Criterion, RubricSection
from osce_tui.domain.session import GenerationSettings, NoteDiagnosis, PatientNote, Session
from osce_tui.judges.llm import PROMPTS_BY_MODULE, expand_items, prompt_hash, prompt_hashes, score_section_llm
from osce_tui.library import Library
from osce_tui.prompts import prompt_names
from osce_tui.providers.base import AuthenticationError
from osce_tui.providers.factory import make_provider
from osce_tui.providers.scripted import ScriptedProvider

from .sse_server import anthropic_message, openai_completion

S = GenerationSettings(temperature=0)


@pytest.fixture(scope="module")
def case():
    return Library().case("chest-pain-46m")


@pytest.fixture
def session(case) -> Session:
    s = Session(case_id=case.id, phase="history")
    s.add_turn("doctor", "What brings you in today?")
    s.add_turn("patient", "Heavy pressure in my chest for two hours.")
    s.add_turn("doctor", "Do you smoke?")
    s.add_turn("patient", "A pack a day.")
    return s


def history_section() -> RubricSection:
    return RubricSection(
        id="history",
        title="History taking",
        judge="history",
        criteria=[
            Criterion(id="fact_coverage", text="Asked the bank question or an equivalent.", points=20, per="fact"),
            Criterion(id="question_originality", text="Asked relevant questions beyond the bank.", points=5),
        ],
    )


def specs_of(section, case, session=None):
    return [s for c in section.criteria for s in expand_items(c, case, session, section.judge)]


def judgements(specs, points=lambda s: s.max_points, evidence=("t0001",)):
    return {
        "judgements": [
            {"criterion_id": s.criterion.id, "item_id": s.item_id, "points": points(s), "explanation": f"judged {s.label}", "evidence": list(evidence)}
            for s in specs
        ]
    }


async def test_every_item_scored_with_explanation_and_evidence(case, session):
    section = history_section()
    specs = specs_of(section, case)
    provider = ScriptedProvider([json.dumps(judgements(specs, points=lambda s: s.max_points / 2))])
    score = await score_section_llm(section, case, session, provider, S)
    required = [f for f in case.history if f.required]
    assert len(score.items) == len(required) + 1
    assert all(i.status == "scored" and i.explanation.startswith("judged") and i.evidence == ["t0001"] for i in score.items)
    assert score.points == pytest.approx(12.5) and score.max_points == pytest.approx(25)
    assert score.judge == "scripted/default" and score.extra["usage"]["calls"] == 1
    assert score.items[0].item_id == required[0].id
    # the judge saw the transcript with turn ids and the numbered items
    user = provider.calls[0][1].content
    assert "[t0003] (history) Doctor: Do you smoke?" in user and "criterion_id=\"question_originality\" item_id=null" in user
    assert "Heavy pressure" in user and case.history[0].answer in user


async def test_out_of_range_is_retried_with_the_error_then_accepted(case, session):
    section = history_section()
    specs = specs_of(section, case)
    bad = judgements(specs)
    bad["judgements"][-1]["points"] = 50  # originality is worth 5
    good = judgements(specs)
    provider = ScriptedProvider([json.dumps(bad), json.dumps(good)])
    score = await score_section_llm(section, case, session, provider, S)
    assert all(i.status == "scored" for i in score.items) and score.points == pytest.approx(25)
    correction = provider.calls[1][-1].content
    assert "points 50 outside 0..5" in correction


async def test_still_invalid_after_retry_is_unscored_not_zero(case, session):
    section = history_section()
    specs = specs_of(section, case)
    bad = judgements(specs)
    bad["judgements"][-1]["points"] = -1
    bad["judgements"].pop(0)  # first fact missing
    provider = ScriptedProvider([json.dumps(bad), json.dumps(bad)])
    score = await score_section_llm(section, case, session, provider, S)
    by_id = {(i.criterion_id, i.item_id): i for i in score.items}
    orig = by_id[("question_originality", None)]
    assert orig.status == "unscored" and orig.explanation == "unscored: points -1 outside 0..5"
    first = by_id[("fact_coverage", specs[0].item_id)]
    assert first.status == "unscored" and first.explanation == "unscored: the judge returned no judgement for this item"
    assert sum(i.status == "scored" for i in score.items) == len(specs) - 2
    # unscored items do not count toward the section maximum
    assert score.max_points == pytest.approx(20 - specs[0].max_points)


async def test_unknown_evidence_ids_are_dropped(case, session):
    section = history_section()
    specs = specs_of(section, case)
    reply = json.dumps(judgements(specs, evidence=("t0001", "t0999")))
    provider = ScriptedProvider([reply, reply])
    score = await score_section_llm(section, case, session, provider, S)
    assert all(i.status == "scored" and i.evidence == ["t0001"] for i in score.items)
    assert "t0999" in provider.calls[1][-1].content


async def test_malformed_json_retried_then_unscored(case, session):
    provider = ScriptedProvider(["The examinee did well overall.", "{not json"])
    score = await score_section_llm(history_section(), case, session, provider, S)
    assert len(provider.calls) == 2
    assert all(i.status == "unscored" for i in score.items)
    assert score.items[0].explanation.startswith("unscored: malformed judge output")
    assert score.score_100 is None  # never a silent zero


async def test_malformed_judge_json_over_openai_sdk(case, session, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0000000000")
    calls = []

    def handler(request):
        calls.append(json.loads(request.content))
        return httpx2.Response(200, json=openai_completion('{"judgements": "all good"}'))

    provider = make_provider("openai/judge", Config(), http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
    score = await score_section_llm(history_section(), case, session, provider, S)
    assert len(calls) == 2 and "response_format" in calls[0]
    assert "judgements" in calls[1]["messages"][-1]["content"]  # the validation error went back
    assert all(i.status == "unscored" and "unscored: malformed judge output" in i.explanation for i in score.items)
    assert score.judge == "openai/judge"


async def test_malformed_judge_json_over_anthropic_sdk(case, session, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-000000")
    calls = []

    def handler(request):
        calls.append(json.loads(request.content))
        block = {"type": "tool_use", "id": f"toolu_{len(calls)}", "name": "record_judgereply", "input": {"judgements": [{"points": "many"}]}}
        return httpx2.Response(200, json=anthropic_message([block]))

    provider = make_provider("anthropic/judge", Config(), http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(handler)))
    score = await score_section_llm(history_section(), case, session, provider, S)
    assert len(calls) == 2 and calls[1]["messages"][-1]["content"][0]["is_error"] is True
    assert all(i.status == "unscored" for i in score.items)


async def test_transport_errors_propagate(case, session):
    def fail(_msgs):
        raise AuthenticationError("key rejected, check OPENAI_API_KEY")

    with pytest.raises(AuthenticationError):
        await score_section_llm(history_section(), case, session, ScriptedProvider(fail), S)


async def test_empty_expansion_is_excluded(case, session):
    section = RubricSection(
        id="closure",
        title="Closure",
        judge="closure",
        criteria=[
            Criterion(id="challenging_question", text="Answered the patient's question.", points=30, per="question"),
            Criterion(id="compassion", text="Showed compassion.", points=10),
        ],
    )
    bare = case.model_copy(update={"challenging_questions": []})
    specs = specs_of(section, bare)
    score = await score_section_llm(section, bare, session, ScriptedProvider([json.dumps(judgements(specs))]), S)
    assert [i.status for i in score.items] == ["excluded", "scored"]
    assert "no challenging questions" in score.items[0].explanation


async def test_physical_exam_items_are_target_exams(case, session):
    crit = Criterion(id="exam_coverage", text="Performed the exam.", points=60, per="exam")
    specs = expand_items(crit, case)
    targets = [e for e in case.exam if e.target]
    assert len(specs) == len(targets) and sum(s.max_points for s in specs) == pytest.approx(60)
    assert specs[0].item_id.startswith(targets[0].system + ":")


async def test_craftmd_extracts_matches_then_judges(case, session):
    session.final_diagnosis = "NSTEMI"
    section = RubricSection(
        id="craftmd", title="Diagnostic accuracy", judge="craftmd",
        criteria=[Criterion(id="accuracy", text="Final diagnosis matches the case diagnosis.", points=1)],
    )
    specs = specs_of(section, case)
    extraction_bad = {"diagnoses": ["NSTEMI", "unstable angina"], "kind": "single", "correct": True, "explanation": "x"}
    extraction = {"diagnoses": ["NSTEMI"], "kind": "single", "correct": True, "explanation": "NSTEMI is a listed synonym."}
    provider = ScriptedProvider([json.dumps(extraction_bad), json.dumps(extraction), json.dumps(judgements(specs))])
    score = await score_section_llm(section, case, session, provider, S)
    assert score.extra["extracted_diagnosis"] == "NSTEMI" and score.extra["correct"] is True
    assert score.items[0].status == "scored" and score.items[0].points == 1
    assert "kind is 'single' but 2 diagnoses" in provider.calls[1][-1].content
    assert "kind: single; extracted: NSTEMI; correct: yes" in provider.calls[2][1].content


async def test_craftmd_failed_extraction_leaves_items_unscored(case, session):
    section = RubricSection(id="craftmd", title="Acc", judge="craftmd", criteria=[Criterion(id="accuracy", text="Correct.", points=1)])
    provider = ScriptedProvider(["no idea", "still no idea"])
    score = await score_section_llm(section, case, session, provider, S)
    assert score.items[0].status == "unscored" and "judge chain step failed" in score.items[0].explanation


async def test_epag_chain_organizer_comparer_diagnostician_evaluator(case, session):
    section = RubricSection(
        id="epag", title="EPAG", judge="epag",
        criteria=[
            Criterion(id="guideline_weighted", text="Obtained the guideline feature.", points=10, per="feature"),
            Criterion(id="top1", text="Diagnostician's first choice is correct.", points=1),
        ],
    )
    specs = specs_of(section, case)
    features = [s for s in specs if s.criterion.per == "feature"]
    first = features[0]

    def reply(msgs):
        system = msgs[0].content
        if "organising a pre-consultation" in system:
            return json.dumps({"facts": [{"fact": "chest pressure for 2 hours", "turns": ["t0002"]}, {"fact": "smokes a pack a day", "turns": ["t0004"]}]})
        if "comparing facts" in system:
            return json.dumps(judgements(features, points=lambda s: s.max_points if s is first else 0))
        if "You are a diagnostician" in system:
            return json.dumps({"diagnoses": ["Acute coronary syndrome", "Pericarditis"]})
        if "checking a ranked list" in system:
            return json.dumps({"rank": 1, "explanation": "ACS is a synonym."})
        if "evaluating a diagnostician" in system:
            return json.dumps(judgements([s for s in specs if s.criterion.id == "top1"]))
        raise AssertionError("unexpected judge step: " + system[:60])

    provider = ScriptedProvider(reply)
    score = await score_section_llm(section, case, session, provider, S)
    assert len(provider.calls) == 5
    ex = score.extra
    assert ex["top1"] is True and ex["topk"] is True and ex["ranked_diagnoses"][0] == "Acute coronary syndrome"
    assert ex["facts"] == ["chest pressure for 2 hours", "smokes a pack a day"]
    weights = [f.points for f in case.guideline_features]
    assert ex["unweighted"] == pytest.approx(1 / len(weights), abs=1e-4)
    assert ex["weighted"] == pytest.approx(weights[0] / sum(weights), abs=1e-4)
    assert ex["covered"] == [case.guideline_features[0].feature]
    # weighted spread: a high-weight feature is worth twice a medium one
    assert first.max_points == pytest.approx(10 * weights[0] / sum(weights))
    assert "smokes a pack a day" in provider.calls[1][1].content  # comparer saw organised facts


def test_every_module_has_prompts_and_hashes():
    names = set(prompt_names())
    for module, prompts in PROMPTS_BY_MODULE.items():
        assert set(prompts) <= names, module
    hashes = prompt_hashes()
    assert "judge_common" in hashes and all(len(h) == 12 for h in hashes.values())
    assert prompt_hash(["history"]) != prompt_hash(["closure"]) and prompt_hash(["history"]).startswith("llm:")


_ITEM = re.compile(r'criterion_id=("[^"]*") item_id=(null|"[^"]*") max_points=([0-9.e+-]+)')


def echo_judge(msgs):
    """A judge that gives every item it is shown full points; answers chain steps plausibly."""
    system, user = msgs[0].content, msgs[1].content
    if "extract the doctor's final answer" in system:
        return json.dumps({"diagnoses": ["NSTEMI"], "kind": "single", "correct": True, "explanation": "synonym"})
    if "organising a pre-consultation" in system:
        return json.dumps({"facts": [{"fact": "chest pressure", "turns": ["t0002"]}]})
    if "You are a diagnostician" in system:
        return json.dumps({"diagnoses": ["NSTEMI"]})
    if "checking a ranked list" in system:
        return json.dumps({"rank": 1, "explanation": "same"})
    items = [
        {"criterion_id": json.loads(c), "item_id": json.loads(i), "points": float(p), "explanation": "met", "evidence": []}
        for c, i, p in _ITEM.findall(user)
    ]
    return json.dumps({"judgements": items})


@pytest.mark.parametrize("rubric_id", ["medqa-cs", "craft-md", "epag", "lcp", "osce-practice"])
async def test_bundled_rubrics_score_fully_with_a_cooperative_judge(rubric_id, case, session):
    session.add_turn("doctor", "Where is the pain?")
    session.add_turn("patient", "In the middle of my chest.")
    session.note = PatientNote(hpi="x", pe="y", diagnoses=[NoteDiagnosis(name="NSTEMI")], workup=["ECG"])
    session.final_diagnosis = "NSTEMI"
    rubric = Library().rubric(rubric_id)
    for section in rubric.sections:
        score = await score_section_llm(section, case, session, ScriptedProvider(echo_judge), S)
        statuses = {i.status for i in score.items}
        assert statuses <= {"scored", "excluded"}, (section.id, [i.explanation for i in score.items])
        assert score.score_100 == 100.0, section.id
        assert {i.criterion_id for i in score.items} == {c.id for c in section.criteria}


async def test_spread_item_maxima_add_up_to_the_criterion_points(case, session):
    # 10 points over three asked questions: each item max is 3.333...; the maxima
    # must still sum to 10 exactly, so a section reads "x/10", not "x/9.9999".
    session.add_turn("doctor", "Does the pain go anywhere?")
    section = RubricSection(
        id="history", title="History", judge="history",
        criteria=[Criterion(id="q", text="Each question is relevant.", points=10, per="question")],
    )
    specs = specs_of(section, case, session)
    assert len(specs) == 3
    full = ScriptedProvider([json.dumps(judgements(specs, points=lambda s: round(s.max_points, 3)))])
    score = await score_section_llm(section, case, session, full, S)
    assert f"{score.max_points:g}" == "10" and f"{score.points:g}" == "10"
    assert all(i.met for i in score.items)  # the rounded maximum the judge saw counts as full marks
