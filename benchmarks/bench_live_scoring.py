"""Latency of live scoring: ``score_live`` after every turn of a long encounter.

Replays a scripted doctor (about 30 history questions, 8 exams, 4 tests,
closure and a note) against the offline patient on a bundled case and times
``score_live`` after each added turn, as the engine does. Prints the first call
(imports, caches), then mean / p95 / max of the rest, for each bundled rubric.

Usage: python benchmarks/bench_live_scoring.py [CASE_ID] [RUBRIC_ID ...]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time

from osce_tui.agents.offline_patient import OfflinePatient
from osce_tui.agents.oracle import CaseOracle
from osce_tui.domain.session import ExamRecord, NoteDiagnosis, PatientNote, Session
from osce_tui.judges.runner import score_live
from osce_tui.library import Library

QUESTIONS = [
    "Hello, I'm Dr Patel, one of the doctors here. What brings you in today?",
    "When did this start and what were you doing?",
    "Where exactly is it?",
    "Does it spread anywhere?",
    "How would you describe it?",
    "How bad is it on a scale of 0 to 10?",
    "Is it constant or does it come and go?",
    "Have you had this before?",
    "Does anything make it worse?",
    "Does anything make it better?",
    "Any sweating, nausea or vomiting?",
    "Are you short of breath?",
    "Any palpitations?",
    "Have you fainted or felt dizzy?",
    "Any fever, cough or weight loss?",
    "Any swelling in your legs?",
    "Any problems with your bowels or passing urine?",
    "Do you have any medical conditions?",
    "What medications do you take?",
    "Any allergies?",
    "Have you had any operations?",
    "Does anything run in your family?",
    "Do you smoke?",
    "How much alcohol do you drink?",
    "Do you use any recreational drugs?",
    "What do you do for work?",
    "Have you travelled recently?",
    "You seem worried. What are you most worried this might be?",
    "Is there anything else you'd like to tell me?",
    "Let me summarize what you've told me so far.",
]
EXAMS = ["general appearance", "neck veins", "auscultate the heart", "peripheral pulses", "listen to the lungs",
         "palpate the chest wall", "palpate the abdomen", "check the legs for swelling"]
TESTS = ["ECG", "troponin", "chest x-ray", "CBC"]


async def build_and_time(case, rubric) -> list[float]:
    patient, oracle = OfflinePatient(), CaseOracle()
    session = Session(case_id=case.id, phase="history")
    times: list[float] = []

    def tick() -> None:
        t0 = time.perf_counter()
        score_live(case, session, rubric)
        times.append((time.perf_counter() - t0) * 1000)

    for q in QUESTIONS:
        session.add_turn("doctor", q)
        tick()
        reply = await patient.reply(case, session, q)
        session.add_turn("patient", reply.text, meta=reply.meta)
        tick()
    session.phase = "exam"
    for req in EXAMS:
        t = session.add_turn("doctor", req, kind="exam_request")
        for a in oracle.examine(case, req):
            r = session.add_turn("examiner", a.text, kind="exam_result")
            session.exams.append(ExamRecord(request_turn=t.id, result_turn=r.id, kind="exam", request=req,
                                            system=a.system, result=a.text, source=a.source))
        tick()
    for test in TESTS:
        t = session.add_turn("doctor", test, kind="test_order")
        a = oracle.order(case, test)
        r = session.add_turn("examiner", a.text, kind="test_result")
        session.exams.append(ExamRecord(request_turn=t.id, result_turn=r.id, kind="test", request=test,
                                        system=a.system, result=a.text, source=a.source))
        tick()
    session.phase = "closure"
    session.add_turn("doctor", "I'm worried about your heart. We will do a heart tracing and blood tests and "
                               "the cardiology team will see you. I understand this is frightening.")
    tick()
    challenge = await patient.challenging_question(case, session)
    if challenge:
        session.add_turn("patient", challenge.text, meta=challenge.meta)
        tick()
        session.add_turn("doctor", "That's a fair question. We are taking this seriously and will monitor you closely.")
        tick()
    session.note = PatientNote(diagnoses=[NoteDiagnosis(name=case.diagnosis.name)], workup=list(case.workup[:3]))
    session.add_turn("doctor", "(note)", kind="note", phase="note")
    tick()
    return times


def main(argv: list[str]) -> int:
    lib = Library()
    case_id = argv[1] if len(argv) > 1 else "chest-pain-46m"
    rubric_ids = argv[2:] or sorted(lib.rubrics())
    case = lib.case(case_id)
    for rid in rubric_ids:
        times = asyncio.run(build_and_time(case, lib.rubric(rid)))
        first, rest = times[0], sorted(times[1:])
        p95 = rest[int(0.95 * (len(rest) - 1))]
        print(f"{rid:14s} case {case_id}: {len(times)} live scorings; first {first:.1f} ms; "
              f"then mean {statistics.mean(rest):.1f} ms, p95 {p95:.1f} ms, max {rest[-1]:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
