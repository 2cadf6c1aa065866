"""LCP / RAE standardized-patient capabilities, each normalisable to 0-100.

- ``information_completeness``: share of the clinician's expected facts
  (``case.lcp.expected_order``, else the required facts) elicited;
- ``behaviour_standardization``: how closely the order of inquiry follows the
  clinician's: longest common subsequence of the elicited expected facts and
  the expected order, divided by the number elicited (Kendall's tau between the
  two rankings goes in ``extra``). Excluded with fewer than two facts elicited;
- ``guidance_rationality``: F1 of the exams and tests requested against the
  clinician's expected exams/tests (case.lcp, else target exams and workup);
- ``diagnostic_logicality``: 60% for ranking the correct diagnosis first (30%
  if listed lower), 40% for the share of high-weight guideline features (or
  required facts) elicited — a diagnosis grounded in evidence;
- ``treatment_logicality``: share of the key treatment steps (case.lcp.treatment,
  else the closure management) the doctor stated in closure talk or note workup;
- ``clinical_applicability``: min(rounds, clinician rounds) / max(...), where
  rounds are doctor utterances in history — too few or too many both cost.
"""

from __future__ import annotations

from typing import Any

from ..domain.case import Case
from ..domain.rubric import Criterion, RubricSection
from ..domain.scores import ItemScore, SectionScore
from ..domain.session import ExamRecord, Session
from .common import doctor_utterances, excluded, fmt_list, run_section, scored
from .diagnosis_match import DiagnosisMatcher
from .dialogue import analyse
from .epag import ranked_diagnoses
from .physical_exam import covered_findings
from .text import TokenPool, similarity


def _expected_facts(case: Case) -> list[str]:
    if case.lcp:
        return list(case.lcp.expected_order)
    return [f.id for f in case.history if f.required]


def lcs_length(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def kendall_tau(ranks: list[int]) -> float:
    """Kendall's tau-a between the asking order and the expected ranks (no ties: ranks are distinct).

    Written out rather than scipy.stats.kendalltau because importing scipy.stats
    costs about a second on the first live score; n is at most a few dozen.
    """
    n = len(ranks)
    if n < 2:
        return 0.0
    s = 0
    for i in range(n):
        for j in range(i + 1, n):
            s += 1 if ranks[j] > ranks[i] else -1
    return s / (n * (n - 1) / 2)


def score_completeness(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    expected = _expected_facts(case)
    if not expected:
        return [excluded(criterion, "The case lists no expected facts.")]
    a = analyse(case, session)
    got = [f for f in expected if f in a.first_hit]
    missing = [f for f in expected if f not in a.first_hit]
    extra["information_completeness"] = round(len(got) / len(expected), 4)
    ev = [t for f in got for t in a.evidence(f)]
    return [
        scored(
            criterion,
            len(got) / len(expected),
            f"Elicited {len(got)} of {len(expected)} expected facts; missing: {fmt_list(missing)}.",
            ev,
        )
    ]


def score_order(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    expected = _expected_facts(case)
    a = analyse(case, session)
    asked = [f for f in a.elicited_in_order if f in expected]
    if len(asked) < 2:
        return [excluded(criterion, "Fewer than two expected facts elicited: inquiry order cannot be judged yet.")]
    lcs = lcs_length(asked, [f for f in expected if f in asked])
    rank = {f: i for i, f in enumerate(expected)}
    tau = kendall_tau([rank[f] for f in asked])
    extra["order_lcs"] = lcs
    extra["order_kendall_tau"] = round(tau, 4)
    return [
        scored(
            criterion,
            lcs / len(asked),
            f"{lcs} of {len(asked)} elicited expected facts were asked in the clinician's order "
            f"(Kendall tau {extra['order_kendall_tau']}).",
        )
    ]


def _expected_guidance(case: Case) -> tuple[list[str], list[str]]:
    if case.lcp and (case.lcp.expected_exams or case.lcp.expected_tests):
        return list(case.lcp.expected_exams), list(case.lcp.expected_tests)
    return [e.component for e in case.exam if e.target], list(case.workup)


def _exam_hits(case: Case, session: Session, expected: list[str]) -> dict[int, list[str]]:
    """Expected exam (component or system name) index → evidence turns.

    Each expected name is resolved to the case's exam findings it denotes, so
    the same request matching as the physical-exam judge decides coverage.
    """
    out: dict[int, list[str]] = {}
    for i, name in enumerate(expected):
        findings = [f for f in case.exam if f.system == name.lower() or similarity(f.component, name) >= 85]
        if findings:
            ev = [t for ids in covered_findings(case, session, findings).values() for t in ids]
        else:  # the case has no finding of that name: judge the request wording alone
            ev = [r.request_turn for r in session.exams if r.kind == "exam" and TokenPool(r.request).contains(name, 0.6)]
        if ev:
            out[i] = ev
    return out


def _test_names(case: Case, expected: str) -> list[str]:
    """An expected test and the names/aliases of the case investigation it denotes."""
    names = [expected]
    for inv in case.tests:
        if any(similarity(expected, n) >= 85 for n in (inv.name, *inv.aliases)):
            names += [inv.name, *inv.aliases]
    return names


def _test_matches(names: list[str], record: ExamRecord) -> bool:
    for n in names:
        if record.system and (record.system.lower() == n.lower() or similarity(record.system, n) >= 85):
            return True
        if TokenPool(record.request).contains(n, 0.75) or similarity(record.request, n) >= 85:
            return True
    return False


def score_guidance(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    exams, tests = _expected_guidance(case)
    if not exams and not tests:
        return [excluded(criterion, "The case lists no expected exams or tests.")]
    exam_records = [r for r in session.exams if r.kind == "exam"]
    test_records = [r for r in session.exams if r.kind == "test"]
    if not session.exams:
        return [scored(criterion, 0.0, "No exams or tests requested.")]
    exam_hits = _exam_hits(case, session, exams)
    useful_turns = {t for ids in exam_hits.values() for t in ids}
    test_names = [_test_names(case, t) for t in tests]
    test_hit = [any(_test_matches(names, r) for r in test_records) for names in test_names]
    useful_tests = [r for r in test_records if any(_test_matches(names, r) for names in test_names)]
    useful = sum(1 for r in exam_records if r.request_turn in useful_turns) + len(useful_tests)
    hits = len(exam_hits) + sum(test_hit)
    expected_n = len(exams) + len(tests)
    recall = hits / expected_n
    precision = useful / len(session.exams)
    f1 = 0.0 if recall + precision == 0 else 2 * recall * precision / (recall + precision)
    extra["guidance_precision"] = round(precision, 4)
    extra["guidance_recall"] = round(recall, 4)
    missing = [e for i, e in enumerate(exams) if i not in exam_hits] + [t for t, h in zip(tests, test_hit) if not h]
    return [
        scored(
            criterion,
            f1,
            f"Requested {len(session.exams)} exams/tests; {useful} expected (precision {precision:.0%}), "
            f"covering {hits} of {expected_n} expected (recall {recall:.0%}); missing: {fmt_list(missing)}.",
            [r.request_turn for r in session.exams],
        )
    ]


def score_diagnostic(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    ranked = ranked_diagnoses(case, session)
    matcher = DiagnosisMatcher([case.diagnosis.name, *case.diagnosis.synonyms])
    pos = next((i for i, n in enumerate(ranked) if matcher.match(n).matched), None)
    dx_part = 0.6 if pos == 0 else 0.3 if pos is not None else 0.0
    a = analyse(case, session)
    key_facts = [fid for f in case.guideline_features if f.weight == "high" for fid in f.fact_ids]
    key_facts = list(dict.fromkeys(key_facts)) or [f.id for f in case.history if f.required]
    grounded = sum(1 for f in key_facts if f in a.first_hit) / len(key_facts) if key_facts else 0.0
    where = "not given" if not ranked else f"ranked #{pos + 1}" if pos is not None else "not listed"
    return [
        scored(
            criterion,
            dx_part + 0.4 * grounded,
            f"Correct diagnosis {where}; {grounded:.0%} of the key evidence was elicited.",
        )
    ]


def score_treatment(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    steps = (case.lcp.treatment if case.lcp and case.lcp.treatment else None) or (
        case.closure.management if case.closure else []
    )
    if not steps:
        return [excluded(criterion, "The case lists no treatment steps.")]
    turns = doctor_utterances(session, {"closure", "note"})
    text = "\n".join(t.text for t in turns)
    if session.note:
        text += "\n" + "\n".join(session.note.workup)
    pool = TokenPool(text)
    got = [s for s in steps if pool.contains(s, 0.5)]
    return [
        scored(
            criterion,
            len(got) / len(steps),
            f"Stated {len(got)} of {len(steps)} key treatment steps: {fmt_list(got, 4)}.",
            [t.id for t in turns],
        )
    ]


def score_applicability(criterion: Criterion, case: Case, session: Session, extra: dict[str, Any]) -> list[ItemScore]:
    if not case.lcp:
        return [excluded(criterion, "The case has no clinician round count.")]
    rounds = len(doctor_utterances(session, {"history", "doorway"}))
    c = case.lcp.clinician_rounds
    extra["rounds"] = rounds
    extra["clinician_rounds"] = c
    frac = min(rounds, c) / max(rounds, c) if rounds else 0.0
    return [scored(criterion, frac, f"{rounds} history rounds vs {c} for a clinician.")]


SCORERS = {
    "information_completeness": score_completeness,
    "behaviour_standardization": score_order,
    "guidance_rationality": score_guidance,
    "diagnostic_logicality": score_diagnostic,
    "treatment_logicality": score_treatment,
    "clinical_applicability": score_applicability,
}


def score_offline(section: RubricSection, case: Case, session: Session) -> SectionScore:
    return run_section(section, case, session, SCORERS, "lcp")
