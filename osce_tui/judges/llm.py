"""Model-judged scoring for every rubric section (HealthBench-style items).

``score_section_llm(section, case, session, provider, settings)`` expands the
section's criteria into items (one per criterion, or one per history fact,
target exam, differential diagnosis, guideline feature or challenging question
when the criterion says ``per=...``), shows the judge model the case key, the
transcript with turn ids and the numbered items, and asks for one judgement
per item: points, an explanation and evidence turn ids.

Output problems never crash and never become silent zeros: a malformed reply
(the provider already made one corrective attempt for JSON/schema errors) or
judgements that are missing, duplicated or out of range are sent back once
with the list of problems; whatever is still wrong after that is recorded as
``status="unscored"`` with ``explanation="unscored: <reason>"``. Transport
failures (missing key, rejected key, rate limit, timeout) propagate as
ProviderError so the runner can report them as such.

Protocols with more than one step run them as a chain:
- CRAFT-MD: extract the doctor's final diagnosis (single / multiple / none) and
  match it against the case diagnosis and its synonyms, then judge the items;
- EPAG: organizer (dialogue -> atomic facts) -> comparer (facts vs weighted
  guideline features, one item per feature) -> diagnostician (top-k from the
  facts) -> evaluator (top-1/top-k match, then the remaining items).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Literal, TypeVar

from pydantic import BaseModel, Field

from ..domain.case import Case
from ..domain.rubric import Criterion, RubricSection
from ..domain.scores import ItemScore, SectionScore
from ..domain.session import GenerationSettings, Session, Turn, Usage
from ..prompts import combined_hash, prompt_hashes as _hashes, render
from ..providers.base import BadResponseError, ChatMessage, ChatProvider, StructuredOutputError
from .text import normalise, questions

T = TypeVar("T", bound=BaseModel)

# Prompts each judge module uses; ``judge_common`` is appended to every item prompt.
PROMPTS_BY_MODULE: dict[str, list[str]] = {
    "history": ["judge_history", "judge_common"],
    "physical_exam": ["judge_physical_exam", "judge_common"],
    "closure": ["judge_closure", "judge_common"],
    "differential": ["judge_differential", "judge_common"],
    "craftmd": ["judge_craftmd", "judge_craftmd_items", "judge_common"],
    "epag": [
        "judge_epag_organizer",
        "judge_epag_comparer",
        "judge_epag_diagnostician",
        "judge_epag_match",
        "judge_epag_evaluator",
        "judge_common",
    ],
    "lcp": ["judge_lcp", "judge_common"],
    "communication": ["judge_communication", "judge_common"],
}

EPAG_TOP_K = 5


def prompt_hashes(modules: list[str] | None = None) -> dict[str, str]:
    """Judge prompt name -> short sha256 (all modules, or the ones named)."""
    names = sorted({n for m in (modules or PROMPTS_BY_MODULE) for n in PROMPTS_BY_MODULE[m]})
    return _hashes(names)


def prompt_hash(modules: list[str] | None = None) -> str:
    """One hash over the judge prompts of the given modules (for ScoreSet.prompt_hash)."""
    names = [n for m in (modules or PROMPTS_BY_MODULE) for n in PROMPTS_BY_MODULE[m]]
    return "llm:" + combined_hash(names)


# -- output schemas ---------------------------------------------------------------


class Judgement(BaseModel):
    criterion_id: str
    item_id: str | None = None
    points: float
    explanation: str = Field(min_length=1)
    evidence: list[str] = Field(default_factory=list)


class JudgeReply(BaseModel):
    judgements: list[Judgement]


class CraftExtraction(BaseModel):
    diagnoses: list[str] = Field(default_factory=list, description="The diagnosis or diagnoses the doctor committed to.")
    kind: Literal["single", "multiple", "none"]
    correct: bool = Field(description="The single extracted diagnosis names the correct condition.")
    explanation: str = Field(min_length=1)


class OrganizedFact(BaseModel):
    fact: str = Field(min_length=1)
    turns: list[str] = Field(default_factory=list)


class OrganizedFacts(BaseModel):
    facts: list[OrganizedFact]


class RankedDiagnoses(BaseModel):
    diagnoses: list[str] = Field(min_length=1)


class RankMatch(BaseModel):
    rank: int | None = Field(description="1-based rank of the first entry naming the correct diagnosis, or null.")
    explanation: str = Field(min_length=1)


# -- items --------------------------------------------------------------------------


@dataclass
class ItemSpec:
    """One judgement to make: a criterion, or one expansion of it."""

    criterion: Criterion
    item_id: str | None
    label: str
    max_points: float
    detail: str

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.criterion.id, self.item_id)


def _slug(text: str) -> str:
    return normalise(text).replace(" ", "_") or "item"


def _spread(total: float, weights: list[float]) -> list[float]:
    s = sum(weights)
    return [total * w / s for w in weights] if s else [0.0 for _ in weights]


# The note has this many diagnosis slots (USMLE Step 2 CS); matches the offline judge.
NOTE_DX_SLOTS = 3
HISTORY_PHASES = ("doorway", "history")


def history_questions(session: Session) -> list[Turn]:
    """Doctor utterances in the history phase that ask something."""
    return [
        t
        for t in session.utterances("doctor")
        if t.phase in HISTORY_PHASES and questions(t.text)
    ]


def expand_items(criterion: Criterion, case: Case, session: Session | None = None, module: str = "") -> list[ItemSpec]:
    """The items a criterion stands for in this case and session (empty when there are none).

    Item ids follow the offline judges so the two can be compared item by item:
    fact id, ``system:component`` for exams, ``dx1..dx3`` for note slots,
    ``f1..`` for guideline features, the turn id for a doctor question.
    """
    c = criterion
    if c.per == "once":
        return [ItemSpec(c, None, c.text, c.points, c.text)]
    if c.per == "fact":
        facts = [f for f in case.history if f.required]
        pts = _spread(c.points, [1.0] * len(facts))
        return [
            ItemSpec(c, f.id, f"{f.category}: {f.question}", p, f"{c.text} Bank question: {f.question!r} (patient's answer: {f.answer!r}).")
            for f, p in zip(facts, pts)
        ]
    if c.per == "exam":
        exams = [e for e in case.exam if e.target]
        pts = _spread(c.points, [1.0] * len(exams))
        return [
            ItemSpec(
                c,
                f"{e.system}:{_slug(e.component)}",
                e.component,
                p,
                f"{c.text} Expected exam: {e.component} ({e.system})"
                + (f"; maneuvers: {', '.join(e.maneuvers)}" if e.maneuvers else "")
                + (f"; why: {e.reason}" if e.reason else "")
                + ".",
            )
            for e, p in zip(exams, pts)
        ]
    if c.per == "diagnosis":
        return _note_slot_items(c, session) if module == "differential" else _key_dx_items(c, case)
    if c.per == "feature":
        feats = case.guideline_features
        weighted = "unweighted" not in c.tags
        pts = _spread(c.points, [float(f.points) if weighted else 1.0 for f in feats])
        return [
            ItemSpec(c, f"f{i + 1}", f.feature, p, f"{c.text} Guideline feature ({f.weight} importance): {f.feature}.")
            for i, (f, p) in enumerate(zip(feats, pts))
        ]
    if c.per == "question":
        if module == "history":
            # MedQA-CS judges each history question the doctor asked.
            asked = history_questions(session) if session is not None else []
            pts = _spread(c.points, [1.0] * len(asked))
            return [
                ItemSpec(c, t.id, t.text[:80], p, f"{c.text} The doctor's question [{t.id}]: {t.text!r}.")
                for t, p in zip(asked, pts)
            ]
        qs = case.challenging_questions
        pts = _spread(c.points, [1.0] * len(qs))
        return [
            ItemSpec(c, f"q{i + 1}", q.question, p, f"{c.text} Patient's question: {q.question!r}; substance of a good answer: {q.sample_answer!r}.")
            for i, (q, p) in enumerate(zip(qs, pts))
        ]
    raise ValueError(f"unknown criterion expansion per={c.per!r}")  # pragma: no cover - Literal-checked


def _key_dx_items(c: Criterion, case: Case) -> list[ItemSpec]:
    dxs = case.differential
    pts = _spread(c.points, [1.0] * len(dxs))
    return [
        ItemSpec(
            c,
            _slug(d.diagnosis),
            d.diagnosis,
            p,
            f"{c.text} Key diagnosis: {d.diagnosis}"
            + (f" (synonyms: {', '.join(d.synonyms)})" if d.synonyms else "")
            + f"; history findings: {'; '.join(d.history_findings)}"
            + (f"; exam findings: {'; '.join(d.exam_findings)}" if d.exam_findings else "")
            + ".",
        )
        for d, p in zip(dxs, pts)
    ]


def _note_slot_items(c: Criterion, session: Session | None) -> list[ItemSpec]:
    """One item per diagnosis slot of the patient note (empty slots score zero)."""
    listed = session.note.diagnoses if session is not None and session.note is not None else []
    suffix = "_history" if "history" in c.id else "_exam" if "exam" in c.id else ""
    each = c.points / NOTE_DX_SLOTS
    items = []
    for slot in range(NOTE_DX_SLOTS):
        nd = listed[slot] if slot < len(listed) else None
        if nd is None:
            what = "(empty slot: no diagnosis listed here)"
        else:
            what = (
                f"{nd.name!r}; listed history findings: {'; '.join(nd.history_findings) or 'none'}; "
                f"listed exam findings: {'; '.join(nd.exam_findings) or 'none'}"
            )
        label = f"Dx {slot + 1}: {nd.name if nd else '(empty)'}"
        items.append(ItemSpec(c, f"dx{slot + 1}{suffix}", label, each, f"{c.text} Note diagnosis {slot + 1}: {what}."))
    return items


def _excluded_empty(criterion: Criterion, module: str) -> ItemScore:
    what = {"fact": "required history facts", "exam": "target exams", "diagnosis": "differential diagnoses",
            "feature": "guideline features", "question": "challenging questions"}.get(criterion.per, "items")
    if criterion.per == "question" and module == "history":
        # Asking nothing is a result, not a gap in the case: it scores zero.
        return ItemScore(
            criterion_id=criterion.id,
            label=criterion.text,
            max_points=criterion.points,
            status="scored",
            explanation="The doctor asked no history questions.",
        )
    return ItemScore(
        criterion_id=criterion.id,
        label=criterion.text,
        max_points=criterion.points,
        status="excluded",
        explanation=f"The case lists no {what}, so this criterion is left out of the total.",
    )


def _unscored(spec: ItemSpec, reason: str) -> ItemScore:
    return ItemScore(
        criterion_id=spec.criterion.id,
        item_id=spec.item_id,
        label=spec.label,
        max_points=spec.max_points,
        status="unscored",
        explanation=f"unscored: {reason}",
    )


# -- what the judge reads ------------------------------------------------------------


def transcript_with_ids(session: Session) -> str:
    """Every turn with its id, phase and speaker, plus the note and final diagnosis."""
    lines = []
    for t in session.turns:
        who = {"doctor": "Doctor", "patient": "Patient", "examiner": "Examiner", "system": "System"}[t.role]
        kind = "" if t.kind == "utterance" else f" [{t.kind}]"
        lines.append(f"[{t.id}] ({t.phase}) {who}{kind}: {t.text}")
    if session.note is not None:
        lines.append("\nPATIENT NOTE SUBMITTED BY THE DOCTOR:\n" + note_text(session))
    if session.final_diagnosis:
        lines.append(f"\nDOCTOR'S FINAL DIAGNOSIS: {session.final_diagnosis}")
    return "\n".join(lines) or "(the encounter has no turns)"


def note_text(session: Session) -> str:
    note = session.note
    if note is None:
        return "(no patient note was submitted)"
    parts = [f"HPI: {note.hpi or '(empty)'}", f"PE: {note.pe or '(empty)'}"]
    for i, d in enumerate(note.diagnoses, 1):
        parts.append(
            f"Diagnosis {i}: {d.name}; history: {'; '.join(d.history_findings) or 'none'}; "
            f"exam: {'; '.join(d.exam_findings) or 'none'}"
        )
    parts.append(f"Workup: {'; '.join(note.workup) or 'none'}")
    return "\n".join(parts)


def _dx_line(case: Case) -> str:
    syn = f" (synonyms: {', '.join(case.diagnosis.synonyms)})" if case.diagnosis.synonyms else ""
    return f"Correct diagnosis: {case.diagnosis.name}{syn}"


def case_key(module: str, case: Case, session: Session) -> str:
    """The part of the case the judge of ``module`` needs (the examinee never saw it)."""
    d = case.doorway
    head = f"Case: {case.title}. Patient {d.patient_name}, {d.age} {d.age_unit}, {d.sex}; chief complaint: {d.chief_complaint}."
    lines = [head]
    if module in ("history", "lcp", "communication"):
        lines.append("Question bank (fact id, question -> patient's answer):")
        lines += [f"- [{f.id}] {f.question} -> {f.answer}" for f in case.history]
    if module in ("physical_exam", "lcp"):
        lines.append("Expected exams:")
        lines += [f"- {e.component} ({e.system}): {e.finding}" + (f" [why: {e.reason}]" if e.reason else "") for e in case.exam if e.target]
        others = [e.component for e in case.exam if not e.target]
        if others:
            lines.append("Other documented exams (not expected): " + ", ".join(others))
        if session.exams:
            lines.append("Exams and tests the doctor requested:")
            lines += [f"- {r.kind} {r.request!r} -> {r.system or 'unmatched'} ({r.source}), turn {r.request_turn}" for r in session.exams]
    if module in ("closure", "lcp") and case.closure:
        lines.append(f"Expected impressions: {case.closure.impressions}")
        lines.append("Expected management: " + "; ".join(case.closure.management))
        if case.closure.counselling:
            lines.append("Counselling points: " + "; ".join(case.closure.counselling))
    if module == "closure":
        for q in case.challenging_questions:
            lines.append(f"Challenging question: {q.question} | substance of a good answer: {q.sample_answer}")
    if module in ("differential", "closure", "craftmd", "epag", "lcp"):
        lines.append(_dx_line(case))
    if module == "differential":
        lines.append("Key differential:")
        for item in case.differential:
            lines.append(
                f"- {item.diagnosis}" + (f" (synonyms: {', '.join(item.synonyms)})" if item.synonyms else "")
                + f"; history: {'; '.join(item.history_findings)}; exam: {'; '.join(item.exam_findings) or 'none'}"
            )
        if case.additional_diagnoses:
            lines.append("Additional (less likely) diagnoses: " + ", ".join(case.additional_diagnoses))
        lines.append("The doctor's patient note:\n" + note_text(session))
    if module == "epag":
        lines.append("Guideline features (weight):")
        lines += [f"- {f.feature} ({f.weight})" for f in case.guideline_features]
    if module == "lcp" and case.lcp:
        order = []
        for fid in case.lcp.expected_order:
            try:
                order.append(case.fact(fid).question)
            except KeyError:  # validated at load time; keep going if a case was edited
                order.append(fid)
        lines.append("Expected inquiry order: " + " | ".join(order))
        lines.append(f"Clinician's number of rounds: {case.lcp.clinician_rounds}; this doctor's rounds: {len(session.utterances('doctor'))}")
        if case.lcp.expected_exams:
            lines.append("Expected exams: " + ", ".join(case.lcp.expected_exams))
        if case.lcp.expected_tests:
            lines.append("Expected tests: " + ", ".join(case.lcp.expected_tests))
        if case.lcp.treatment:
            lines.append("Key treatment steps: " + "; ".join(case.lcp.treatment))
    if module == "communication":
        lines.append(f"Patient's affect: {case.persona.affect}. Notes: {case.persona.notes or 'none'}")
    return "\n".join(lines)


def _shown(points: float) -> str:
    """Item maximum as shown to the judge (spread points like 6.666... get 3 decimals)."""
    return f"{round(points, 3):g}"


def items_text(specs: list[ItemSpec]) -> str:
    rows = []
    for i, s in enumerate(specs, 1):
        item = "null" if s.item_id is None else json.dumps(s.item_id)
        rows.append(f"{i}. criterion_id={json.dumps(s.criterion.id)} item_id={item} max_points={_shown(s.max_points)}\n   check: {s.detail}")
    return "\n".join(rows)


# -- the judging call -------------------------------------------------------------------


class _Judged:
    """What came back for each item, across the first reply and the correction."""

    def __init__(self, specs: list[ItemSpec], turn_ids: set[str]):
        self.specs = {s.key: s for s in specs}
        self.turn_ids = turn_ids
        self.accepted: dict[tuple[str, str | None], Judgement] = {}
        self.problems: dict[tuple[str, str | None], str] = {}

    def take(self, reply: JudgeReply) -> list[str]:
        """Accept the valid judgements of a reply; return the problems found in it."""
        problems: list[str] = []
        seen: set[tuple[str, str | None]] = set()
        for j in reply.judgements:
            key = (j.criterion_id, j.item_id)
            spec = self.specs.get(key)
            if spec is None:
                problems.append(f"unknown item criterion_id={j.criterion_id!r} item_id={j.item_id!r}")
                continue
            if key in seen:
                problems.append(f"item {key} was judged twice")
                continue
            seen.add(key)
            # The judge saw the maximum rounded; echoing it back is full marks.
            ceiling = max(spec.max_points, float(_shown(spec.max_points)))
            if not (0 <= j.points <= ceiling + 1e-9):
                reason = f"points {j.points:g} outside 0..{_shown(spec.max_points)}"
                problems.append(f"item criterion_id={key[0]!r} item_id={key[1]!r}: {reason}")
                self.problems.setdefault(key, reason)
                continue
            unknown = [e for e in j.evidence if e not in self.turn_ids]
            if unknown:
                problems.append(f"item {key}: evidence cites turn ids that do not exist: {unknown}")
                j = j.model_copy(update={"evidence": [e for e in j.evidence if e in self.turn_ids]})
            self.accepted[key] = j
            self.problems.pop(key, None)
        for key in self.specs:
            if key not in seen and key not in self.accepted:
                self.problems.setdefault(key, "the judge returned no judgement for this item")
                problems.append(f"missing judgement for criterion_id={key[0]!r} item_id={key[1]!r}")
        return problems

    def scores(self, fallback_reason: str | None = None) -> list[ItemScore]:
        out = []
        for key, spec in self.specs.items():
            j = self.accepted.get(key)
            if j is None:
                out.append(_unscored(spec, fallback_reason or self.problems.get(key, "no valid judgement")))
                continue
            out.append(
                ItemScore(
                    criterion_id=spec.criterion.id,
                    item_id=spec.item_id,
                    label=spec.label,
                    # Maxima stay unrounded so a section's items add up to its points
                    # exactly (35 items of 100/35 rounded to 4 places sum to 99.9999).
                    points=_awarded(j.points, spec.max_points),
                    max_points=spec.max_points,
                    status="scored",
                    explanation=j.explanation.strip(),
                    evidence=list(dict.fromkeys(j.evidence)),
                )
            )
        return out


def _awarded(points: float, max_points: float) -> float:
    """The judge's points; the rounded maximum it was shown counts as the exact maximum."""
    if points >= float(_shown(max_points)) - 1e-9:
        return max_points
    return min(round(points, 4), max_points)


def _correction(problems: list[str]) -> ChatMessage:
    listed = "\n".join(f"- {p}" for p in problems[:20])
    return ChatMessage(
        role="user",
        content=(
            "Some of your judgements could not be used:\n" + listed + "\n"
            "Reply again with the complete list of judgements, one per item, each with points "
            "within the item's range and evidence citing only turn ids from the transcript."
        ),
    )


async def judge_items(
    provider: ChatProvider,
    settings: GenerationSettings,
    prompt_name: str,
    key_text: str,
    session: Session,
    specs: list[ItemSpec],
    *,
    context: str = "",
) -> tuple[list[ItemScore], Usage]:
    """One judging conversation for ``specs``; never raises for bad judge output."""
    if not specs:
        return [], Usage()
    system = render(prompt_name) + "\n\n" + render("judge_common")
    user = (
        f"CASE KEY\n{key_text}\n\n"
        + (f"{context}\n\n" if context else "")
        + f"TRANSCRIPT\n{transcript_with_ids(session)}\n\n"
        f"ITEMS TO JUDGE ({len(specs)})\n{items_text(specs)}"
    )
    messages = [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]
    judged = _Judged(specs, {t.id for t in session.turns})
    usage = Usage()
    for attempt in range(2):
        try:
            reply, used = await provider.structured(messages, JudgeReply, settings)
        except StructuredOutputError as exc:
            return judged.scores(f"malformed judge output: {exc}" if not judged.accepted else None), usage
        except BadResponseError as exc:
            return judged.scores(f"judge call failed: {exc}"), usage
        usage = usage + used
        problems = judged.take(reply)
        if not problems or attempt == 1:
            break
        messages = messages + [
            ChatMessage(role="assistant", content=reply.model_dump_json()),
            _correction(problems),
        ]
    return judged.scores(), usage


async def _checked(
    provider: ChatProvider,
    settings: GenerationSettings,
    messages: list[ChatMessage],
    schema: type[T],
    check: Callable[[T], str | None],
) -> tuple[T, Usage]:
    """A structured call whose content is checked too, with one corrective retry."""
    usage = Usage()
    for attempt in range(2):
        result, used = await provider.structured(messages, schema, settings)
        usage = usage + used
        problem = check(result)
        if problem is None:
            return result, usage
        if attempt == 0:
            messages = messages + [
                ChatMessage(role="assistant", content=result.model_dump_json()),
                ChatMessage(role="user", content=f"That answer is inconsistent: {problem}. Reply again with the corrected JSON."),
            ]
    raise StructuredOutputError(f"inconsistent {schema.__name__} after a corrective retry: {problem}", spec=str(provider.spec))


def _step_messages(prompt: str, body: str, **values: Any) -> list[ChatMessage]:
    return [ChatMessage(role="system", content=render(prompt, **values)), ChatMessage(role="user", content=body)]


# -- protocol chains --------------------------------------------------------------------------


def _check_extraction(x: CraftExtraction) -> str | None:
    n = len([d for d in x.diagnoses if d.strip()])
    if x.kind == "none" and n:
        return "kind is 'none' but diagnoses were listed"
    if x.kind == "single" and n != 1:
        return f"kind is 'single' but {n} diagnoses were listed"
    if x.kind == "multiple" and n < 2:
        return "kind is 'multiple' but fewer than 2 diagnoses were listed"
    if x.correct and x.kind != "single":
        return "only a single extracted diagnosis can be correct"
    return None


async def _craftmd_context(case, session, provider, settings, extra) -> tuple[str, Usage]:
    body = (
        f"{_dx_line(case)}\n\n"
        f"DOCTOR'S RECORDED FINAL ANSWER: {session.final_diagnosis or '(none recorded)'}\n\n"
        f"TRANSCRIPT\n{transcript_with_ids(session)}"
    )
    x, usage = await _checked(provider, settings, _step_messages("judge_craftmd", body), CraftExtraction, _check_extraction)
    extra.update(
        extraction=x.kind,
        extracted_diagnoses=x.diagnoses,
        extracted_diagnosis=x.diagnoses[0] if x.kind == "single" else None,
        correct=bool(x.correct),
        match_explanation=x.explanation,
    )
    ctx = (
        "EXTRACTION AND MATCH\n"
        f"kind: {x.kind}; extracted: {', '.join(x.diagnoses) or 'none'}; correct: {'yes' if x.correct else 'no'}\n"
        f"why: {x.explanation}"
    )
    return ctx, usage


async def _epag_facts(session, provider, settings) -> tuple[OrganizedFacts, Usage]:
    ids = {t.id for t in session.turns}

    def check(f: OrganizedFacts) -> str | None:
        bad = sorted({t for fact in f.facts for t in fact.turns if t not in ids})
        return f"turn ids {bad} are not in the transcript" if bad else None

    body = f"TRANSCRIPT\n{transcript_with_ids(session)}"
    return await _checked(provider, settings, _step_messages("judge_epag_organizer", body), OrganizedFacts, check)


async def _epag_rank(case, facts_text, provider, settings) -> tuple[RankedDiagnoses, RankMatch, Usage]:
    ranked, u1 = await _checked(
        provider,
        settings,
        _step_messages("judge_epag_diagnostician", f"GATHERED FACTS\n{facts_text}", k=EPAG_TOP_K),
        RankedDiagnoses,
        lambda r: None if len(r.diagnoses) <= EPAG_TOP_K else f"list has {len(r.diagnoses)} entries, at most {EPAG_TOP_K} allowed",
    )
    listing = "\n".join(f"{i}. {d}" for i, d in enumerate(ranked.diagnoses, 1))
    match, u2 = await _checked(
        provider,
        settings,
        _step_messages("judge_epag_match", f"{_dx_line(case)}\n\nRANKED LIST\n{listing}"),
        RankMatch,
        lambda m: None if m.rank is None or 1 <= m.rank <= len(ranked.diagnoses) else f"rank {m.rank} is not a position in the list",
    )
    return ranked, match, u1 + u2


async def _score_epag(section, case, session, provider, settings, specs, extra) -> tuple[list[ItemScore], Usage]:
    facts, usage = await _epag_facts(session, provider, settings)
    facts_text = "\n".join(f"- {f.fact} (turns: {', '.join(f.turns) or 'n/a'})" for f in facts.facts) or "(no facts gathered)"
    extra["facts"] = [f.fact for f in facts.facts]
    key = case_key("epag", case, session)
    feature_specs = [s for s in specs if s.criterion.per == "feature"]
    other_specs = [s for s in specs if s.criterion.per != "feature"]
    items, used = await judge_items(
        provider, settings, "judge_epag_comparer", key, session, feature_specs, context=f"ORGANISED FACTS\n{facts_text}"
    )
    usage = usage + used
    _epag_guideline_scores(case, items, extra)
    if not other_specs:
        return items, usage  # a guideline-only section needs no diagnostician
    ranked, match, used = await _epag_rank(case, facts_text, provider, settings)
    usage = usage + used
    extra.update(
        ranked_diagnoses=ranked.diagnoses,
        top1=match.rank == 1,
        topk=match.rank is not None,
        k=EPAG_TOP_K,
        match_rank=match.rank,
        match_explanation=match.explanation,
    )
    listing = "\n".join(f"{i}. {d}" for i, d in enumerate(ranked.diagnoses, 1))
    ctx = (
        f"ORGANISED FACTS\n{facts_text}\n\nDIAGNOSTICIAN'S RANKED LIST\n{listing}\n"
        f"top-1 correct: {'yes' if extra['top1'] else 'no'}; top-{EPAG_TOP_K} correct: {'yes' if extra['topk'] else 'no'} "
        f"({match.explanation})"
    )
    more, used = await judge_items(provider, settings, "judge_epag_evaluator", key, session, other_specs, context=ctx)
    return items + more, usage + used


def _epag_guideline_scores(case: Case, items: list[ItemScore], extra: dict[str, Any]) -> None:
    """Unweighted and weighted (high=2, medium=1) share of guideline features obtained."""
    weights = {f"f{i + 1}": f.points for i, f in enumerate(case.guideline_features)}
    covered: dict[str, bool] = {}
    for it in items:
        if it.status == "scored" and it.item_id in weights:
            covered[it.item_id] = covered.get(it.item_id, False) or it.points >= it.max_points / 2
    if not covered:
        return
    # Same keys as the offline EPAG judge, so reports read either.
    extra["unweighted"] = round(sum(covered.values()) / len(covered), 4)
    total_w = sum(weights[k] for k in covered)
    extra["weighted"] = round(sum(weights[k] for k, ok in covered.items() if ok) / total_w, 4) if total_w else None
    extra["covered"] = [case.guideline_features[int(k[1:]) - 1].feature for k, ok in covered.items() if ok]


# -- entry point ----------------------------------------------------------------------------


async def score_section_llm(
    section: RubricSection,
    case: Case,
    session: Session,
    provider: ChatProvider,
    settings: GenerationSettings,
) -> SectionScore:
    """Score one rubric section with a model judge (see the module docstring)."""
    module = section.judge
    extra: dict[str, Any] = {"prompt_hash": prompt_hash([module])}
    specs: list[ItemSpec] = []
    empty: list[ItemScore] = []
    for criterion in section.criteria:
        expanded = expand_items(criterion, case, session, module)
        if expanded:
            specs += expanded
        else:
            empty.append(_excluded_empty(criterion, module))

    usage = Usage()
    try:
        if module == "epag":
            items, usage = await _score_epag(section, case, session, provider, settings, specs, extra)
        else:
            context = ""
            if module == "craftmd" and specs:
                context, usage = await _craftmd_context(case, session, provider, settings, extra)
            prompt = "judge_craftmd_items" if module == "craftmd" else f"judge_{module}"
            items, used = await judge_items(provider, settings, prompt, case_key(module, case, session), session, specs, context=context)
            usage = usage + used
    except (StructuredOutputError, BadResponseError) as exc:
        # A pre-step of a chain failed: nothing downstream can be judged fairly.
        items = [_unscored(s, f"judge chain step failed: {exc}") for s in specs]
    extra["usage"] = usage.model_dump()
    order = {c.id: i for i, c in enumerate(section.criteria)}
    all_items = sorted(items + empty, key=lambda it: order.get(it.criterion_id, 0))
    return SectionScore(section_id=section.id, title=section.title, judge=str(provider.spec), items=all_items, extra=extra)


LlmJudge = Callable[[RubricSection, Case, Session, ChatProvider, GenerationSettings], Awaitable[SectionScore]]
