"""LCP judge: the six capability scores on a hand-scored session."""

from __future__ import annotations

import pytest

from osce_tui.domain.session import NoteDiagnosis
from osce_tui.judges import lcp

from .judge_support import SessionBuilder, make_case, section

CAPS = [
    "information_completeness",
    "behaviour_standardization",
    "guidance_rationality",
    "diagnostic_logicality",
    "treatment_logicality",
    "clinical_applicability",
]


def _score(session, case, cap):
    return lcp.score_offline(section("lcp", (cap, 100), sid=cap), case, session)


def _session():
    case = make_case()
    b = SessionBuilder(case)
    # Expected order: chief_complaint, onset, sputum, fever, smoking, medications
    b.ask("What brings you in?", "Cough and fever.", ["chief_complaint"])
    b.ask("Any fever?", "Yes.", ["fever"])
    b.ask("When did it start?", "Three days ago.", ["onset"])
    b.ask("Coughing anything up?", "Green phlegm.", ["sputum"])
    b.exam("listen to the lungs", "respiratory", "Crackles and bronchial breathing at the right base.")
    b.exam("look in the ears", "heent")
    b.test("CXR", "Chest X-ray")
    b.phase("closure")
    b.doctor("We will start oral antibiotics; rest and drink plenty of fluids.")
    b.note(NoteDiagnosis(name="Community-acquired pneumonia"))
    return case, b.build()


def test_six_capabilities_hand_scored():
    case, session = _session()
    s = {cap: _score(session, case, cap) for cap in CAPS}
    assert s["information_completeness"].score_100 == pytest.approx(100 * 4 / 6, abs=0.01)
    # Asked order: cc, fever, onset, sputum -> LCS with cc, onset, sputum, fever = 3 of 4.
    assert s["behaviour_standardization"].score_100 == pytest.approx(75, abs=0.01)
    assert s["behaviour_standardization"].extra["order_kendall_tau"] == pytest.approx(2 / 6, abs=1e-4)
    # Expected: lung auscultation, general appearance, chest X-ray. Requested 3, 2 useful; 2 of 3 covered.
    assert s["guidance_rationality"].extra["guidance_precision"] == pytest.approx(2 / 3, abs=1e-4)
    assert s["guidance_rationality"].extra["guidance_recall"] == pytest.approx(2 / 3, abs=1e-4)
    assert s["guidance_rationality"].score_100 == pytest.approx(100 * 2 / 3, abs=0.01)
    # Correct dx first (60) + high-weight facts fever and sputum both elicited (40).
    assert s["diagnostic_logicality"].score_100 == pytest.approx(100, abs=0.01)
    assert s["treatment_logicality"].score_100 == pytest.approx(100, abs=0.01)
    # 4 history rounds vs 8 clinician rounds.
    assert s["clinical_applicability"].score_100 == pytest.approx(50, abs=0.01)


def test_order_needs_two_facts_and_empty_session_is_safe():
    case = make_case()
    session = SessionBuilder(case).build()
    order = _score(session, case, "behaviour_standardization")
    assert order.items[0].status == "excluded" and order.score_100 is None
    for cap in CAPS:
        sc = _score(session, case, cap)
        assert all(i.status in ("scored", "excluded") for i in sc.items), cap


def test_helpers():
    assert lcp.lcs_length(list("abcd"), list("acbd")) == 3
    assert lcp.kendall_tau([0, 1, 2]) == 1.0
    assert lcp.kendall_tau([2, 1, 0]) == -1.0
