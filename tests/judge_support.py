"""A small hand-written case and a session builder for the judge tests.

The case is deliberately tiny (eight facts, five target exams) so every
expected score in the tests can be worked out by hand.
"""

from __future__ import annotations

from osce_tui.domain.case import Case
from osce_tui.domain.rubric import Criterion, RubricSection
from osce_tui.domain.session import ExamRecord, NoteDiagnosis, PatientNote, Session

CASE_DATA = {
    "title": "Cough and fever in a 34-year-old woman",
    "specialty": "respiratory",
    "doorway": {
        "patient_name": "Ana Lima",
        "age": 34,
        "sex": "female",
        "setting": "Urgent care",
        "chief_complaint": "Cough and fever",
        "vitals": {"blood_pressure": "118/76", "heart_rate": 104, "respiratory_rate": 22, "temperature_c": 38.9},
        "tasks": ["Take a focused history.", "Examine the patient.", "Explain your impressions."],
    },
    "persona": {
        "affect": "tired and worried",
        "opening_statement": "I've had a bad cough and a fever for three days.",
    },
    "history": [
        {
            "id": "chief_complaint",
            "category": "chief_complaint",
            "question": "What brings you in today?",
            "paraphrases": ["How can I help you today?", "What seems to be the problem?"],
            "answer": "I've had a bad cough and a fever for three days.",
            "volunteer": True,
        },
        {
            "id": "onset",
            "category": "onset",
            "question": "When did the cough start?",
            "paraphrases": ["How long have you had the cough?", "Did the cough come on suddenly?"],
            "answer": "Three days ago, quite suddenly after a cold.",
        },
        {
            "id": "sputum",
            "category": "quality",
            "question": "Are you coughing anything up?",
            "paraphrases": ["Is the cough dry or productive?", "What colour is the phlegm?"],
            "answer": "Yes, thick green phlegm, sometimes rusty.",
        },
        {
            "id": "fever",
            "category": "associated",
            "question": "Have you had a fever or chills?",
            "paraphrases": ["Have you measured your temperature?", "Any shivering or sweats?"],
            "answer": "Yes, 39 degrees last night with shaking chills.",
        },
        {
            "id": "smoking",
            "category": "social_tobacco",
            "question": "Do you smoke?",
            "paraphrases": ["Do you use tobacco?", "Have you ever smoked cigarettes?"],
            "answer": "Ten cigarettes a day.",
        },
        {
            "id": "medications",
            "category": "medications",
            "question": "What medications do you take?",
            "paraphrases": ["Are you on any medicines?", "Do you take any pills regularly?"],
            "answer": "Only paracetamol for the fever.",
        },
        {
            "id": "allergies",
            "category": "allergies",
            "question": "Do you have any allergies?",
            "paraphrases": ["Are you allergic to any medicines?", "Any drug allergies?"],
            "answer": "Penicillin gives me a rash.",
        },
        {
            "id": "travel",
            "category": "social_travel",
            "question": "Have you travelled recently?",
            "paraphrases": ["Any recent trips abroad?", "Been on any long flights lately?"],
            "answer": "No, I haven't been anywhere.",
            "required": False,
        },
    ],
    "exam": [
        {"system": "general", "component": "General appearance", "finding": "Flushed, tired, speaking in full sentences."},
        {
            "system": "respiratory",
            "component": "Lung auscultation",
            "maneuvers": ["auscultate lungs", "percuss chest"],
            "finding": "Crackles and bronchial breathing at the right base.",
            "abnormal": True,
        },
        {"system": "cardiovascular", "component": "Heart auscultation", "finding": "Tachycardic, regular, no murmurs."},
        {"system": "heent", "component": "Throat examination", "finding": "Mild pharyngeal redness."},
        {"system": "lymph", "component": "Neck lymph nodes", "finding": "No lymphadenopathy."},
        {"system": "abdominal", "component": "Abdominal examination", "finding": "Soft, non-tender.", "target": False},
    ],
    "tests": [
        {"name": "Chest X-ray", "aliases": ["CXR"], "result": "Right lower lobe consolidation.", "abnormal": True},
        {"name": "Complete blood count", "aliases": ["CBC"], "result": "WBC 15.2.", "abnormal": True},
    ],
    "challenging_questions": [
        {
            "question": "Do I really need antibiotics?",
            "sample_answer": "Yes. The crackles and fever point to a bacterial chest infection, pneumonia, and antibiotics "
            "treat it; because of your penicillin allergy we will choose a different antibiotic.",
        }
    ],
    "closure": {
        "impressions": "I think you have a chest infection called pneumonia in the lower part of your right lung.",
        "management": ["Chest X-ray", "Antibiotics by mouth", "Follow up in 48 hours"],
    },
    "note": {"hpi": "3 days of productive cough and fever.", "pe": "Right basal crackles."},
    "differential": [
        {
            "diagnosis": "Community-acquired pneumonia",
            "synonyms": ["CAP"],
            "history_findings": ["Productive cough with green sputum", "Fever with rigors", "Smoker"],
            "exam_findings": ["Crackles at the right base", "Tachycardia", "Fever 38.9"],
        },
        {
            "diagnosis": "Acute bronchitis",
            "history_findings": ["Cough after a cold"],
            "exam_findings": ["Mild pharyngeal redness"],
        },
        {
            "diagnosis": "Influenza",
            "synonyms": ["flu"],
            "history_findings": ["Sudden fever"],
            "exam_findings": ["Fever"],
        },
    ],
    "additional_diagnoses": ["Pulmonary embolism", "Lung cancer"],
    "diagnosis": {
        "name": "Community-acquired pneumonia",
        "synonyms": ["CAP", "pneumonia", "lobar pneumonia"],
        "vignette": "A 34-year-old woman has three days of productive cough and fever.",
        "choices": ["Community-acquired pneumonia", "Acute bronchitis", "Influenza", "Pulmonary embolism"],
    },
    "workup": ["Chest X-ray", "CBC"],
    "guideline_features": [
        {"feature": "Fever", "weight": "high", "fact_ids": ["fever"]},
        {"feature": "Productive cough", "weight": "high", "fact_ids": ["sputum"]},
        {"feature": "Smoking", "weight": "medium", "fact_ids": ["smoking"]},
        {"feature": "Recent travel abroad", "weight": "medium"},
    ],
    "lcp": {
        "expected_order": ["chief_complaint", "onset", "sputum", "fever", "smoking", "medications"],
        "clinician_rounds": 8,
        "expected_exams": ["Lung auscultation", "General appearance"],
        "expected_tests": ["Chest X-ray"],
        "treatment": ["Oral antibiotics", "Fluids and rest"],
    },
}


def make_case() -> Case:
    case = Case.model_validate(CASE_DATA)
    case.id = "fixture-pneumonia"
    return case


def section(judge: str, *criteria: tuple[str, float] | tuple[str, float, bool], sid: str | None = None) -> RubricSection:
    """A rubric section for ``judge`` with (id, points[, needs_model]) criteria."""
    crits = [Criterion(id=c[0], text=c[0].replace("_", " "), points=c[1], needs_model=(c[2] if len(c) > 2 else False)) for c in criteria]
    return RubricSection(id=sid or judge, title=judge, judge=judge, criteria=crits)


class SessionBuilder:
    """Builds sessions turn by turn the way the engine records them."""

    def __init__(self, case: Case):
        self.session = Session(case_id=case.id, phase="history")

    def phase(self, phase: str) -> "SessionBuilder":
        self.session.phase = phase
        return self

    def doctor(self, text: str) -> str:
        return self.session.add_turn("doctor", text).id

    def patient(self, text: str, fact_ids: list[str] | None = None, **meta) -> str:
        if fact_ids is not None:
            meta = {"fact_ids": fact_ids, "scores": [1.0] * len(fact_ids), **meta}
        return self.session.add_turn("patient", text, meta=meta).id

    def ask(self, question: str, answer: str, fact_ids: list[str] | None = None) -> "SessionBuilder":
        self.doctor(question)
        self.patient(answer, fact_ids)
        return self

    def exam(self, request: str, system: str | None, result: str = "Normal.") -> "SessionBuilder":
        req = self.session.add_turn("doctor", request, kind="exam_request", phase="exam")
        res = self.session.add_turn("examiner", result, kind="exam_result", phase="exam")
        self.session.exams.append(
            ExamRecord(request_turn=req.id, result_turn=res.id, kind="exam", request=request, system=system, result=result)
        )
        return self

    def test(self, request: str, name: str | None, result: str = "Normal.") -> "SessionBuilder":
        req = self.session.add_turn("doctor", request, kind="test_order", phase="exam")
        res = self.session.add_turn("examiner", result, kind="test_result", phase="exam")
        self.session.exams.append(
            ExamRecord(request_turn=req.id, result_turn=res.id, kind="test", request=request, system=name, result=result)
        )
        return self

    def note(self, *diagnoses: NoteDiagnosis, workup: list[str] | None = None) -> "SessionBuilder":
        self.session.note = PatientNote(hpi="", pe="", diagnoses=list(diagnoses), workup=workup or [])
        self.session.add_turn("doctor", "(note submitted)", kind="note", phase="note")
        return self

    def build(self) -> Session:
        return self.session
