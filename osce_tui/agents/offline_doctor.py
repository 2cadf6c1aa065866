"""The offline doctor: a fixed-checklist interviewer, the classic baseline.

It knows only the doorway and the session so far (never other case fields).
History: introduce yourself, ask an open question, then work through a
checklist adapted to the chief complaint (``complaint_table``): the pain
questions, the complaint's associated symptoms, past history, medications,
allergies, surgery, family and social history, concerns. One question per
turn. Exam: ask permission, request the complaint's exams, order its tests.
Closure: summary, impressions and plan in plain words, answer the patient's
question. Note: an HPI from the patient's answers, PE from the oracle's
results, a three-item differential ranked by the evidence in the transcript,
and the workup. Then End.

Progress is read from the session (each doctor turn carries its checklist
step in ``meta['step']``, and wordings are recognised as a fallback), so the
doctor can resume a saved session or take over from a human.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ..domain.case import Doorway
from ..domain.session import NoteDiagnosis, PatientNote, Session, Turn
from .base import ChangePhase, DoctorAgent, DoctorTurn, End, Examine, OnDelta, Order, Say, SubmitNote
from .complaint_table import Dx, Profile, profile_for
from .offline_patient import stream_words

DOCTOR_NAMES = ("Morgan", "Patel", "Chen", "Okafor", "Silva", "Novak")
MAX_CLOSURE_TURNS = 4


@dataclass(frozen=True)
class Step:
    id: str
    label: str  # heading in the HPI
    wordings: tuple[str, ...]
    child: tuple[str, ...] = ()  # wordings for a parent speaking about a child ({name})


PAIN_STEPS = (
    Step("onset", "Onset", ("When did this start, and what were you doing at the time?", "When did it first come on, and was it sudden or gradual?")),
    Step("location", "Location", ("Where exactly do you feel the pain?", "Can you point to where it hurts the most?")),
    Step("radiation", "Radiation", ("Does the pain spread anywhere else?", "Does the pain move or travel anywhere?")),
    Step("quality", "Quality", ("How would you describe the pain?", "What does the pain feel like: sharp, dull, burning or pressure?")),
    Step("severity", "Severity", ("On a scale of 0 to 10, how bad is the pain?", "How severe is the pain out of 10, with 10 the worst?")),
    Step("timing", "Timing", ("Is it there all the time, or does it come and go?", "Has it been constant since it started, or on and off?")),
    Step("aggravating", "Aggravating factors", ("Does anything make it worse?", "Is there anything that makes the pain worse?")),
    Step("relieving", "Relieving factors", ("Does anything make it better?", "Have you found anything that eases it?")),
    Step("previous", "Previous episodes", ("Have you had anything like this before?", "Is this the first time this has happened?")),
)
NON_PAIN_STEPS = (
    Step("onset", "Onset", ("When did this start?", "When did you first notice this?"),
         ("When did this start for {name}?",)),
    Step("timing", "Course", ("Has it been getting better, worse or staying the same?", "Is it there all the time, or does it come and go?"),
         ("Has {name} been getting better, worse or staying the same?",)),
    Step("aggravating", "Aggravating factors", ("Does anything make it worse?", "Have you noticed anything that makes it worse?")),
    Step("relieving", "Relieving factors", ("Does anything make it better?", "Have you tried anything that helps?"),
         ("Have you tried anything for it, and did it help?",)),
    Step("previous", "Previous episodes", ("Have you had anything like this before?", "Is this the first time this has happened?"),
         ("Has {name} had anything like this before?",)),
)
BACKGROUND_STEPS = (
    Step("ros_other", "Other symptoms", ("Have you noticed any other symptoms I haven't asked about?",),
         ("Have you noticed anything else different about {name}?",)),
    Step("pmh", "PMH", ("Do you have any medical conditions?", "Have you been diagnosed with any illnesses in the past?"),
         ("Has {name} had any medical problems before?",)),
    Step("medications", "Medications", ("What medications do you take, including over-the-counter ones?", "Are you on any tablets or medicines?"),
         ("Does {name} take any medicines regularly?",)),
    Step("allergies", "Allergies", ("Do you have any allergies to medications?", "Are you allergic to anything?"),
         ("Is {name} allergic to anything?",)),
    Step("surgery", "Surgery/hospitalisations", ("Have you had any operations or hospital stays?", "Any previous surgeries?"),
         ("Has {name} had any operations or hospital stays?",)),
    Step("birth", "Birth/development", (), ("Were there any problems in the pregnancy or birth, and has {name} been developing normally?",)),
    Step("immunizations", "Immunizations", (), ("Are {name}'s vaccinations up to date?",)),
    Step("family", "Family history", ("Does anyone in your family have medical problems, like heart disease, diabetes or cancer?", "Do any illnesses run in your family?"),
         ("Does anything run in the family?",)),
    Step("tobacco", "Tobacco", ("Do you smoke?", "Do you use any tobacco or vape?"), ("Does anyone smoke at home?",)),
    Step("alcohol", "Alcohol", ("How much alcohol do you drink?", "Do you drink alcohol?")),
    Step("drugs", "Recreational drugs", ("Do you use any recreational drugs?", "Have you ever used street drugs?")),
    Step("occupation", "Occupation", ("What do you do for work?", "What's your job?"),
         ("Does {name} go to nursery or school? Has anyone there been ill?",)),
    Step("living", "Living situation", ("Who do you live with at home?",), ("Who lives at home with {name}?",)),
    Step("sexual", "Sexual history", ("Are you sexually active? Do you use protection?",)),
    Step("exercise", "Diet/exercise", ("Tell me about your diet and exercise.", "How active are you day to day?")),
    Step("concerns", "Concerns", ("What are you most worried this might be?", "Do you have any thoughts about what's causing this?"),
         ("What are you most worried about?",)),
    Step("anything_else", "Other", ("Is there anything else you think I should know?",)),
)
OBGYN_STEP = Step("obgyn_lmp", "Menstrual history", ("When was your last menstrual period?",))


class OfflineDoctor(DoctorAgent):
    """Checklist interviewer (spec ``offline``). Deterministic given ``seed``."""

    spec = "offline"

    def __init__(self, seed: int | None = None):
        self.seed = seed
        self._note_sent = False

    # -- public ---------------------------------------------------------------

    async def act(self, doorway: Doorway, session: Session, on_delta: OnDelta | None = None) -> DoctorTurn:
        turn = self.decide(doorway, session)
        for action in turn.actions:
            if isinstance(action, Say):
                await stream_words(on_delta, action.text)
        return turn

    def decide(self, doorway: Doorway, session: Session) -> DoctorTurn:
        phase = session.phase
        profile = profile_for(doorway.chief_complaint, doorway.sex)
        if phase in ("doorway", "history"):
            return self._history(doorway, session, profile)
        if phase == "exam":
            return self._exam(doorway, session, profile)
        if phase == "closure":
            return self._closure(doorway, session, profile)
        if phase == "note":
            if session.note is None and not self._note_sent:
                self._note_sent = True
                return DoctorTurn([SubmitNote(note=build_note(doorway, session, profile))], meta={"step": "note"})
            return DoctorTurn([End()], meta={"step": "end"})
        return DoctorTurn([End()], meta={"step": "end"})

    # -- history --------------------------------------------------------------

    def checklist(self, doorway: Doorway, profile: Profile) -> list[Step]:
        """The questions for this doorway, already worded for who answers them."""
        child = is_child(doorway)
        proxy = informant(doorway)
        name = first_name(doorway)
        steps = list(PAIN_STEPS if profile.pain else NON_PAIN_STEPS)
        steps += [Step(sid, "Associated symptoms", (q,)) for sid, q in profile.associated]
        for step in BACKGROUND_STEPS:
            if child and not step.child:
                continue  # no alcohol/occupation/sexual history for a young child
            if not child and not step.wordings:
                continue  # birth and vaccination steps are for children
            if step.id == "sexual" and (not profile.sexual_history or proxy):
                continue
            steps.append(step)
            if step.id == "surgery" and _menstruating_age(doorway) and not proxy and not any(s.id == "obgyn_lmp" for s in steps):
                steps.append(OBGYN_STEP)
        if not proxy:
            return steps
        worded: list[Step] = []
        for step in steps:
            if child and step.child:
                texts = tuple(w.replace("{name}", name) for w in step.child)
            elif step.id in INFORMANT_STEPS:
                texts = step.wordings  # asked of the informant themself
            else:
                texts = tuple(about_patient(w, doorway) for w in step.wordings)
            worded.append(Step(step.id, step.label, texts))
        return worded

    def _history(self, doorway: Doorway, session: Session, profile: Profile) -> DoctorTurn:
        asked = steps_asked(session)
        if "intro" not in asked and not session.utterances("doctor"):
            return self._say(self._intro(doorway), "intro")
        for step in self.checklist(doorway, profile):
            if step.id in asked:
                continue
            wording = self._pick(step.wordings, step.id)
            if _wording_used(session, wording):
                continue  # a human asked it verbatim before the takeover
            if _last_step(session) == "concerns":
                # The patient just told us what frightens them: acknowledge it first.
                wording = "I can understand why that would worry you, and we'll look into it carefully. " + wording
            return self._say(wording, step.id)
        return DoctorTurn([ChangePhase(phase="exam")], meta={"step": "to_exam"})

    def _intro(self, doorway: Doorway) -> str:
        name = self._pick(DOCTOR_NAMES, "doctor_name")
        if is_child(doorway):
            first = first_name(doorway)
            return f"Hello, I'm Dr. {name}, one of the doctors here. You must be here with {first}. What brings you in today?"
        if informant(doorway):
            _he, his = _pronouns(doorway)
            obj = {"his": "him", "her": "her"}.get(his, "them")
            return (f"Hello, I'm Dr. {name}, one of the doctors here. You must be here with {formal_name(doorway)}. "
                    f"What has brought {obj} in today?")
        return f"Hello {formal_name(doorway)}, I'm Dr. {name}, one of the doctors here. What brings you in today?"

    # -- exam -----------------------------------------------------------------

    def _exam(self, doorway: Doorway, session: Session, profile: Profile) -> DoctorTurn:
        asked = steps_asked(session)
        if "exam_consent" not in asked and not any(t.phase == "exam" for t in session.utterances("doctor")):
            text = "Thank you for answering my questions. I'd like to examine you now, if that's all right."
            if informant(doorway):
                text = f"Thank you, that's very helpful. I'd like to examine {first_name(doorway)} now, if that's all right."
            return self._say(text, "exam_consent")
        if not any(e.kind == "exam" for e in session.exams):
            return DoctorTurn([Examine(requests=list(profile.exams))], meta={"step": "examine"})
        if not any(e.kind == "test" for e in session.exams):
            return DoctorTurn([Order(tests=list(profile.tests))], meta={"step": "order"})
        return DoctorTurn([ChangePhase(phase="closure")], meta={"step": "to_closure"})

    # -- closure --------------------------------------------------------------

    def _closure(self, doorway: Doorway, session: Session, profile: Profile) -> DoctorTurn:
        mine = [t for t in session.utterances("doctor") if t.phase == "closure"]
        if not mine:
            return self._say(closure_talk(doorway, session, profile), "closure_summary")
        last = session.utterances()[-1] if session.utterances() else None
        if len(mine) < MAX_CLOSURE_TURNS and last is not None and last.role == "patient" and "?" in last.text:
            return self._say(answer_patient_question(last.text, profile, session, doorway), "closure_answer")
        return DoctorTurn([ChangePhase(phase="note")], meta={"step": "to_note"})

    # -- helpers --------------------------------------------------------------

    def _say(self, text: str, step: str) -> DoctorTurn:
        return DoctorTurn([Say(text=text)], meta={"step": step})

    def _pick(self, options: tuple[str, ...], key: str) -> str:
        if not options:
            raise ValueError(f"no wording for {key}")
        if self.seed is None:
            return options[0]
        return random.Random(f"{self.seed}:{key}").choice(options)


# -- reading the session --------------------------------------------------------


def steps_asked(session: Session) -> set[str]:
    """Checklist steps already done, from doctor turn meta and known wordings."""
    done: set[str] = set()
    by_text = _wording_index()
    for t in session.turns:
        if t.role != "doctor":
            continue
        if t.kind == "utterance":
            done.add("intro")  # whoever spoke first opened the conversation
        step = (t.meta or {}).get("step")
        if isinstance(step, str):
            done.add(step)
        elif t.text.strip() in by_text:
            done.add(by_text[t.text.strip()])
    return done


def _wording_index() -> dict[str, str]:
    out: dict[str, str] = {}
    for step in (*PAIN_STEPS, *NON_PAIN_STEPS, *BACKGROUND_STEPS, OBGYN_STEP):
        for w in step.wordings:
            out[w] = step.id
    return out


def _last_step(session: Session) -> str | None:
    spoken = session.utterances("doctor")
    return (spoken[-1].meta or {}).get("step") if spoken else None


def _wording_used(session: Session, wording: str) -> bool:
    return any(t.text.strip() == wording for t in session.utterances("doctor"))


def answers_by_step(session: Session) -> list[tuple[str, str]]:
    """(step id, the patient's reply) for each checklist question, in order."""
    out: list[tuple[str, str]] = []
    turns = session.turns
    for i, t in enumerate(turns):
        if t.role != "doctor" or t.kind != "utterance":
            continue
        step = (t.meta or {}).get("step") or _wording_index().get(t.text.strip())
        if not step:
            continue
        reply = _reply_to(turns, i)
        if reply is not None:
            out.append((step, reply.text))
    return out


def _reply_to(turns: list[Turn], i: int) -> Turn | None:
    for t in turns[i + 1 :]:
        if t.role == "doctor" and t.kind == "utterance":
            return None
        if t.role == "patient" and t.kind == "utterance":
            return t
    return None


# -- the doorway ------------------------------------------------------------------


def is_child(doorway: Doorway) -> bool:
    return doorway.age_unit != "years" or doorway.age < 14


def _menstruating_age(doorway: Doorway) -> bool:
    return doorway.sex == "female" and doorway.age_unit == "years" and 12 <= doorway.age <= 55


def first_name(doorway: Doorway) -> str:
    return doorway.patient_name.split()[0]


def formal_name(doorway: Doorway) -> str:
    parts = doorway.patient_name.split()
    title = {"male": "Mr.", "female": "Ms."}.get(doorway.sex)
    return f"{title} {parts[-1]}" if title and len(parts) > 1 else doorway.patient_name


def _pronouns(doorway: Doorway) -> tuple[str, str]:
    return {"male": ("he", "his"), "female": ("she", "her")}.get(doorway.sex, ("they", "their"))


_INFORMANT = re.compile(
    r"\b(daughter|son|mother|father|mum|mom|dad|parent|parents|wife|husband|partner|carer|caregiver|guardian|"
    r"informant|collateral|brought in by)\b",
    re.IGNORECASE,
)
# Steps asked of the informant about themself, not about the patient.
INFORMANT_STEPS = frozenset({"concerns", "anything_else"})


def informant(doorway: Doorway) -> bool:
    """Someone else answers: a child's parent, or the doorway says who brought the patient."""
    if is_child(doorway):
        return True
    text = " ".join([doorway.chief_complaint, doorway.setting, *doorway.tasks])
    return bool(_INFORMANT.search(text))


def about_patient(question: str, doorway: Doorway) -> str:
    """Rephrase a question to the patient as one to the informant about the patient."""
    name = first_name(doorway)
    _he, his = _pronouns(doorway)
    him = {"his": "him", "her": "her"}.get(his, "them")
    q = question
    for pattern, repl in (
        (r"^Have you\b", f"Has {name}"),
        (r"^Are you\b", f"Is {name}"),
        (r"^Do you\b", f"Does {name}"),
        (r"^Did you\b", f"Did {name}"),
        (r"^How are you\b", f"How is {name}"),
        (r"^How is your\b", f"How is {name}'s"),
        (r"^How has your\b", f"How has {name}'s"),
        (r"\bdo you\b", f"does {name}"),
        (r"\bare you\b", f"is {name}"),
        (r"\bhave you\b", f"has {name}"),
        (r"\bdid you\b", f"did {name}"),
        (r"\byou've\b", f"{name} has"),
        (r"\byou're\b", f"{name} is"),
        (r"\byour\b", his),
    ):
        q = re.sub(pattern, repl, q)
    # "when you pass urine" -> "when she passes urine"; otherwise "you" is an object.
    q = re.sub(r"\byou (\w+)\b", lambda m: _subject_or_object(m.group(1), _he, him), q)
    return re.sub(r"\byou\b", him, q)


def _subject_or_object(word: str, he: str, him: str) -> str:
    verb = word.lower()
    if verb in _THIRD_PERSON_VERBS or verb in ("pass", "wash", "dress", "fall", "forget", "remember"):
        return f"{he} {_conjugate(verb)}"
    return f"{him} {word}"


def _conjugate(verb: str) -> str:
    if verb in _THIRD_PERSON_VERBS:
        return _THIRD_PERSON_VERBS[verb]
    if verb.endswith(("ss", "sh", "ch", "x", "o")):
        return verb + "es"
    return verb + "s"




# -- closure ------------------------------------------------------------------------


_NEGATION = re.compile(r"\b(no|not|never|none|nothing|denies|without)\b|n't\b", re.IGNORECASE)


def _positive_sentences(texts: list[str]) -> list[str]:
    """Sentences that assert something: "No fever, no cough" supports nothing."""
    return [s for t in texts for s in _sentences(t) if not _NEGATION.search(s)]


def _ranked_dx(session: Session, profile: Profile) -> list[tuple[int, Dx]]:
    history = " ".join(_positive_sentences([t.text for t in session.utterances("patient")])).lower()
    exam = " ".join(_positive_sentences([e.result for e in session.exams])).lower()
    scored = []
    for i, dx in enumerate(profile.differential):
        hits = sum(1 for w in dx.history_words if w in history) + sum(2 for w in dx.exam_words if w in exam)
        scored.append((hits, -i, dx))
    scored.sort(key=lambda s: (-s[0], -s[1]))
    return [(hits, dx) for hits, _i, dx in scored]


def closure_talk(doorway: Doorway, session: Session, profile: Profile) -> str:
    ranked = [dx for _h, dx in _ranked_dx(session, profile)][:3]
    answers = dict(answers_by_step(session))
    you = first_name(doorway) if informant(doorway) else "you"
    parts = [f"Thank you. Let me summarise: {you} came in today with {doorway.chief_complaint.lower()}."]
    onset = answers.get("onset")
    if onset:
        parts.append(f"You told me it started like this: \"{_first_sentence(onset)}\"")
    if ranked:
        lay = [dx.lay for dx in ranked]
        options = lay[0] if len(lay) == 1 else ", ".join(lay[:-1]) + " or " + lay[-1]
        parts.append(
            f"From what you've told me and what I found on examination, the possibilities I'm thinking about include {options}."
            f" I'm most concerned about {lay[0]}, so I want to check for that first."
        )
    tests = _lay_tests(profile.tests)
    parts.append(f"To find out, I'd like to do some tests: {tests}. Once we have the results, I'll explain them and we'll agree on treatment together.")
    if _reports_smoking(answers.get("tobacco", "")):
        parts.append("I'd also like to help you stop smoking when you're ready, because it matters a lot for your health.")
    parts.append("Do you have any questions for me?")
    return " ".join(parts)


def answer_patient_question(question: str, profile: Profile, session: Session, doorway: Doorway) -> str:
    """A plain, honest answer to the patient's question without knowing the case's answer."""
    q = question.lower()
    ranked = [dx for _h, dx in _ranked_dx(session, profile)]
    top = ranked[0].lay if ranked else "the cause"
    if re.search(r"\b(die|dying|serious|dangerous|cancer|heart attack|stroke|tumou?r)\b", q):
        body = (
            "I can see how worrying this is, and it's a fair question. I can't tell you for certain yet what it is, "
            f"but {top} is one of the things I'm checking for, and I'm taking it seriously. "
            "The tests will give us answers quickly, and whatever they show, we'll start the right treatment and look after you."
        )
    elif re.search(r"\b(go home|leave|work|drive|travel|holiday|school)\b", q):
        body = (
            "I understand you want to get back to normal, and I'll do what I can to make that happen. "
            "Right now I'd recommend we finish the tests first, because the safest decision depends on the results. "
            "As soon as I know more, I'll tell you what's safe."
        )
    elif re.search(r"\b(surgery|operation|medication|medicine|tablets|treatment|cure|fix)\b", q):
        body = (
            "That depends on what the tests show. Once we know the cause, I'll go through the treatment options with you, "
            "including their benefits and side effects, and we'll decide together."
        )
    elif re.search(r"\b(why|what caused|my fault|because of)\b", q):
        body = (
            "There can be several reasons, and it's not something you should blame yourself for. "
            "The tests will help us understand the cause, and then we can talk about what you can do to help."
        )
    else:
        body = (
            "That's a good question. I don't have a definite answer yet, but I'll explain everything as soon as the results are back, "
            "and we'll make a plan together."
        )
    return body + " Is there anything else you'd like to ask?"


# -- the note ---------------------------------------------------------------------------


def build_note(doorway: Doorway, session: Session, profile: Profile) -> PatientNote:
    answers = answers_by_step(session)
    ranked = _ranked_dx(session, profile)[:3]
    diagnoses = [_note_dx(dx, session, doorway) for _h, dx in ranked]
    workup = list(dict.fromkeys([*profile.tests, *profile.workup]))[:8]
    return PatientNote(hpi=build_hpi(doorway, answers), pe=build_pe(doorway, session), diagnoses=diagnoses, workup=workup)


def build_hpi(doorway: Doorway, answers: list[tuple[str, str]]) -> str:
    age = f"{doorway.age}-{doorway.age_unit[:-1]}-old"
    lines = [f"{age} {doorway.sex} presents with {doorway.chief_complaint.lower()}."]
    labels = {s.id: s.label for s in (*PAIN_STEPS, *NON_PAIN_STEPS, *BACKGROUND_STEPS, OBGYN_STEP)}
    associated: list[str] = []
    for step, reply in answers:
        if step in ("intro", "closure_summary", "closure_answer", "exam_consent"):
            continue
        text = reported(reply, doorway)
        if step.startswith(("assoc_", "social_", "obgyn_")) and step not in labels:
            associated.append(text)
        elif step in labels:
            lines.append(f"{labels[step]}: {text}")
    if associated:
        lines.insert(1, "Associated symptoms / ROS: " + " ".join(associated))
    return "\n".join(lines)


def build_pe(doorway: Doorway, session: Session) -> str:
    v = doorway.vitals
    lines = [f"Vitals: BP {v.blood_pressure}, HR {v.heart_rate}, RR {v.respiratory_rate}, T {v.temperature_c:.1f} C"
             + (f", SpO2 {v.spo2}%" if v.spo2 is not None else "") + "."]
    seen: set[str] = set()
    for e in session.exams:
        if e.kind != "exam" or e.result in seen or e.source == "unknown" or e.system == "vitals":
            continue
        seen.add(e.result)
        if e.source == "normal":  # case findings already start with their component name
            label = (e.system or e.request).replace("_", " ")
            lines.append(f"{label.capitalize()}: {e.result}")
        else:
            lines.append(e.result)
    return "\n".join(lines)


def _note_dx(dx: Dx, session: Session, doorway: Doorway) -> NoteDiagnosis:
    history: list[str] = []
    for t in session.utterances("patient"):
        for sentence in _positive_sentences([t.text]):
            low = sentence.lower()
            if any(w in low for w in dx.history_words) and len(history) < 3:
                item = reported(sentence, doorway)
                if item not in history:
                    history.append(_clip(item))
    if not history:
        history.append(doorway.chief_complaint)
    exam: list[str] = []
    for e in session.exams:
        if e.kind != "exam":
            continue
        for sentence in _sentences(e.result):
            low = sentence.lower()
            if dx.exam_words and any(w in low for w in dx.exam_words) and len(exam) < 3 and sentence not in exam:
                exam.append(_clip(sentence))
    return NoteDiagnosis(name=dx.name, history_findings=history[:3], exam_findings=exam[:3])


_SWAPS = (
    (r"\bI'm\b", "{he} is"), (r"\bI am\b", "{he} is"), (r"\bI've\b", "{he} has"), (r"\bI'd\b", "{he} would"),
    (r"\bI'll\b", "{he} will"), (r"\bI was\b", "{he} was"), (r"\bI\b", "{he}"), (r"\bmy\b", "{his}"),
    (r"\bMy\b", "{His}"), (r"\bme\b", "{him}"), (r"\bmyself\b", "{him}self"),
)


# Verbs a patient commonly uses after "I": conjugated for he/she in the note.
_THIRD_PERSON_VERBS = {
    "have": "has", "haven't": "hasn't", "do": "does", "don't": "doesn't", "go": "goes", "am": "is",
    "feel": "feels", "get": "gets", "know": "knows", "think": "thinks", "walk": "walks", "eat": "eats",
    "sit": "sits", "lie": "lies", "take": "takes", "smoke": "smokes", "drink": "drinks", "work": "works",
    "live": "lives", "need": "needs", "want": "wants", "use": "uses", "see": "sees", "wake": "wakes",
    "try": "tries", "sleep": "sleeps", "keep": "keeps", "notice": "notices", "can't": "can't",
    "wear": "wears", "play": "plays", "run": "runs", "cough": "coughs", "worry": "worries", "guess": "guesses",
    "suppose": "supposes", "hope": "hopes", "like": "likes", "mean": "means", "reckon": "reckons",
}


def reported(text: str, doorway: Doorway) -> str:
    """A reply as the note reports it: an informant already speaks in the third person."""
    if informant(doorway):
        return text.strip()
    return third_person(text, doorway)


def third_person(text: str, doorway: Doorway) -> str:
    """First-person patient speech -> third person for the note (pronouns and common verbs)."""
    he, his = _pronouns(doorway)
    him = {"he": "him", "she": "her"}.get(he, "them")
    out = text.replace("\u2019", "'")
    for pattern, repl in _SWAPS:
        out = re.sub(pattern, repl.format(he=he, his=his, His=his.capitalize(), him=him), out)
    if he != "they":
        out = re.sub(
            rf"\b({he}) (\w+'?\w*)\b",
            lambda m: f"{m.group(1)} {_THIRD_PERSON_VERBS.get(m.group(2).lower(), m.group(2))}",
            out,
            flags=re.IGNORECASE,
        )
    out = re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), out)
    return out.strip()


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def _first_sentence(text: str) -> str:
    s = _sentences(text)
    return s[0] if s else text


def _clip(text: str, limit: int = 140) -> str:
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _reports_smoking(answer: str) -> bool:
    a = answer.strip().lower()
    return bool(a) and not re.match(r"^(no|never|nope|i don't|i do not|not)\b", a) and bool(
        re.search(r"\b(yes|smoke|pack|cigarette|a day|vape)\b", a)
    )


_LAY_TESTS = {
    "ecg": "a heart tracing (ECG)", "troponin": "a blood test for heart strain", "chest x-ray": "a chest X-ray",
    "cbc": "a blood count", "tsh": "thyroid blood tests", "free t4": "", "ct head without contrast": "a scan of your head",
    "urinalysis": "a urine test", "lipase": "a blood test for the pancreas", "basic metabolic panel": "kidney and salt levels",
    "comprehensive metabolic panel": "kidney and liver blood tests",
}


def _lay_tests(tests: tuple[str, ...]) -> str:
    words = [_LAY_TESTS.get(t.lower(), t) for t in tests]
    words = [w for w in dict.fromkeys(words) if w]
    if len(words) <= 1:
        return words[0] if words else "some tests"
    return ", ".join(words[:-1]) + " and " + words[-1]
