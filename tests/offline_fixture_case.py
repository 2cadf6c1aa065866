"""A small hand-written case for the offline engine's unit tests.

Independent of the bundled cases (which are still being written), so the
tests pin the offline patient, oracle and doctor to known content.
"""

from __future__ import annotations

from typing import Any

from osce_tui.domain.case import Case


def _fact(fid: str, category: str, question: str, paraphrases: list[str], answer: str, keywords: list[str] | None = None) -> dict:
    return {"id": fid, "category": category, "question": question, "paraphrases": paraphrases, "answer": answer, "keywords": keywords or []}


def case_data(speaker: str = "patient") -> dict[str, Any]:
    parent = speaker == "parent"
    return {
        "id": "fixture-epigastric-pain",
        "title": "Epigastric pain (test fixture)",
        "specialty": "gastroenterology",
        "doorway": {
            "patient_name": "Sam Rivera" if parent else "Alex Turner",
            "age": 6 if parent else 45,
            "sex": "male",
            "setting": "Clinic",
            "chief_complaint": "Abdominal pain",
            "vitals": {"blood_pressure": "128/82", "heart_rate": 88, "respiratory_rate": 16, "temperature_c": 37.1, "spo2": 98},
            "tasks": ["Take a focused history.", "Perform a focused exam."],
        },
        "persona": {
            "speaker": speaker,
            "speaker_name": "Ada Rivera (mother)" if parent else None,
            "affect": "Worried and uncomfortable.",
            "opening_statement": "He's had a burning tummy ache for a week." if parent else "I've had a burning pain in my upper stomach for about a week.",
            "default_answer": "No, I don't think so.",
        },
        "history": [
            _fact("chief_complaint", "chief_complaint", "What brings you in today?", ["What's the problem?", "How can I help?"],
                  "A burning pain in my upper stomach for a week."),
            _fact("onset", "onset", "When did the pain start?", ["How long have you had it?", "When did it begin?"],
                  "About a week ago, after a big dinner."),
            _fact("location", "location", "Where is the pain?", ["Can you point to it?", "Whereabouts is it?"],
                  "Right here, just under my breastbone, in the upper stomach."),
            _fact("radiation", "radiation", "Does the pain spread anywhere?", ["Does it go to your back?", "Does it move anywhere?"],
                  "Sometimes it goes through to my back."),
            _fact("quality", "quality", "What does the pain feel like?", ["How would you describe it?", "Is it sharp or dull?"],
                  "It's a gnawing, burning feeling."),
            _fact("aggravating", "modifiers", "Does anything make it worse?", ["What brings it on?", "Is it worse after food?"],
                  "It's worse when my stomach is empty and at night.", ["worse", "aggravate"]),
            _fact("relieving", "modifiers", "Does anything make it better?", ["Have you tried anything for it?", "Does eating help?"],
                  "Eating something or an antacid takes the edge off."),
            _fact("nausea", "associated", "Have you had any nausea or vomiting?", ["Have you been sick?", "Do you feel queasy?"],
                  "A bit queasy, but I haven't vomited."),
            _fact("black_stools", "ros", "Have your stools been black or bloody?", ["Any blood when you open your bowels?", "Any dark poo?"],
                  "No, they look normal."),
            _fact("medications", "medications", "What medications do you take?", ["Are you on any tablets?", "Any over-the-counter medicines?"],
                  "Ibuprofen most days for my knee."),
            _fact("allergies", "allergies", "Do you have any allergies?", ["Any drug allergies?", "Any bad reactions to medicines?"],
                  "No allergies."),
            _fact("family_history", "family", "Does anything run in your family?", ["Any illnesses in your parents?", "Family history of stomach problems?"],
                  "My father had a stomach ulcer."),
            _fact("smoking", "social_tobacco", "Do you smoke?", ["Any cigarettes?", "Have you ever smoked?"],
                  "Yes, ten a day."),
            _fact("alcohol", "social_alcohol", "How much alcohol do you drink?", ["Do you drink?", "Any beer or wine?"],
                  "A couple of beers most nights."),
            _fact("occupation", "social_occupation", "What do you do for work?", ["What's your job?", "Are you working?"],
                  "I drive a delivery van."),
        ],
        "exam": [
            {"system": "general", "component": "General appearance", "finding": "Uncomfortable but not in distress.", "abnormal": False},
            {"system": "abdominal", "component": "Abdominal palpation", "maneuvers": ["palpate abdomen", "palpate epigastrium"],
             "finding": "Epigastric tenderness without guarding or rebound.", "abnormal": True},
            {"system": "abdominal", "component": "Bowel sounds", "maneuvers": ["auscultate bowel sounds"], "finding": "Bowel sounds normal.", "abnormal": False},
            {"system": "cardiovascular", "component": "Cardiac auscultation", "maneuvers": ["auscultate heart"],
             "finding": "Soft systolic murmur at the left sternal edge.", "abnormal": True},
            {"system": "cardiovascular", "component": "Peripheral pulses", "maneuvers": ["palpate radial pulses", "palpate pedal pulses"],
             "finding": "Pulses equal and full in all four limbs.", "abnormal": False},
            {"system": "musculoskeletal", "component": "Chest wall palpation", "maneuvers": ["palpate chest wall"],
             "finding": "Chest wall non-tender.", "abnormal": False},
        ],
        "tests": [
            {"name": "Complete blood count", "aliases": ["FBC"], "result": "Hb 13.9 g/dL.", "abnormal": False},
            {"name": "Electrocardiogram", "aliases": [], "result": "Sinus rhythm, no ischaemic changes.", "abnormal": False},
            {"name": "Helicobacter pylori stool antigen", "aliases": ["H. pylori test"], "result": "Positive.", "abnormal": True},
        ],
        "challenging_questions": [
            {"question": "Is this cancer?", "sample_answer": "It's unlikely, but we will check."},
            {"question": "Do I have to stop the ibuprofen?", "sample_answer": "Yes, it can cause ulcers."},
        ],
        "diagnosis": {
            "name": "Peptic ulcer disease",
            "synonyms": ["PUD"],
            "vignette": "A 45-year-old with epigastric burning pain relieved by food.",
            "choices": ["Peptic ulcer disease", "Pancreatitis", "Cholecystitis", "GERD"],
        },
    }


def make_case(speaker: str = "patient", **changes: Any) -> Case:
    data = case_data(speaker)
    data.update(changes)
    return Case.model_validate(data)
