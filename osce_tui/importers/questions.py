"""History categories for dataset sentences, with question templates per category.

Datasets give history as prose ("Non-smoker, drinks wine occasionally."); a
case needs categorised facts, each with a canonical question and at least two
paraphrases. ``classify`` picks categories by keywords; ``QUESTIONS`` holds
our own wording of the questions an examinee would ask for each category.
"""

from __future__ import annotations

import re

# category -> (canonical question, paraphrases). Own wording; >= 2 paraphrases each.
QUESTIONS: dict[str, tuple[str, list[str]]] = {
    "chief_complaint": ("What brings you in today?", ["What seems to be the problem?", "How can I help you today?"]),
    "onset": ("When did this start?", ["How long has this been going on?", "When did you first notice it?"]),
    "location": ("Where exactly do you feel it?", ["Can you show me where it is?", "Which part of your body is affected?"]),
    "radiation": ("Does it spread anywhere else?", ["Does it move or travel anywhere?", "Do you feel it in any other place?"]),
    "quality": ("How would you describe it?", ["What does it feel like?", "Is it sharp, dull, burning or something else?"]),
    "severity": ("How bad is it?", ["On a scale of 0 to 10, how severe is it?", "How much does it bother you?"]),
    "timing": ("Is it there all the time or does it come and go?", ["How often does it happen?", "Is it constant or on and off?"]),
    "modifiers": ("Does anything make it better or worse?", ["What makes it worse?", "Have you found anything that helps?"]),
    "associated": ("Have you noticed any other symptoms?", ["Is anything else bothering you?", "Any other problems along with this?"]),
    "pmh": ("Do you have any medical conditions?", ["Have you had any illnesses in the past?", "Any past medical history I should know about?"]),
    "medications": ("Are you taking any medications?", ["What medicines do you take?", "Do you use any prescription or over-the-counter drugs?"]),
    "allergies": ("Do you have any allergies?", ["Are you allergic to any medicines?", "Any allergies to drugs or foods?"]),
    "surgery": ("Have you ever had surgery?", ["Any operations in the past?", "Have you had any procedures done?"]),
    "hospitalizations": ("Have you ever been in hospital?", ["Any previous hospital admissions?", "Have you been admitted before?"]),
    "family": ("Does anything run in your family?", ["Any illnesses in your family?", "Are your parents and siblings healthy?"]),
    "social_tobacco": ("Do you smoke?", ["Do you use tobacco in any form?", "Have you ever smoked?"]),
    "social_alcohol": ("Do you drink alcohol?", ["How much alcohol do you drink?", "Do you drink beer, wine or spirits?"]),
    "social_drugs": ("Do you use any recreational drugs?", ["Have you used any street drugs?", "Any drug use I should know about?"]),
    "social_occupation": ("What do you do for work?", ["What is your job?", "How do you spend your days?"]),
    "social_sexual": ("Are you sexually active?", ["Can I ask about your sexual history?", "Do you have a sexual partner?"]),
    "social_diet": ("What is your diet like?", ["What do you usually eat?", "Any recent change in your eating?"]),
    "social_exercise": ("Do you exercise?", ["How physically active are you?", "Do you do any sports?"]),
    "social_travel": ("Have you travelled recently?", ["Any recent trips?", "Have you been anywhere outside the area lately?"]),
    "social_living": ("Who do you live with?", ["What is your home situation like?", "Tell me about your living arrangements."]),
    "ros": ("Any other symptoms anywhere else in your body?", ["Have you had fever, weight change or other problems?", "Anything else going on with your health?"]),
    "obgyn": ("Can I ask about your periods and any pregnancies?", ["When was your last menstrual period?", "Have you been pregnant before?"]),
    "development": ("How has development been going?", ["Any concerns about growth or milestones?", "Is development on track?"]),
    "immunizations": ("Are the vaccinations up to date?", ["Have all the immunizations been given?", "Any missed vaccines?"]),
    "ideas_concerns": ("What worries you most about this?", ["What do you think might be going on?", "Is there anything you are concerned about?"]),
    "other": ("Can you tell me more about what has been happening?", ["What else has been going on?", "Is there anything else you can tell me?"]),
}

# Checked in order; the first match is the category of a history-of-present-illness sentence.
_RULES: list[tuple[str, re.Pattern[str]]] = [
    (c, re.compile(p, re.IGNORECASE))
    for c, p in [
        ("allergies", r"\ballerg"),
        ("medications", r"\b(?:medications?|medicines?|taking|takes|prescribed|\d+\s?mg\b|tablets?|pills?|inhaler|"
         r"insulin|been on \w+|started on|treated with|treatment with|therapy|over-the-counter)\b"),
        ("surgery", r"\b(?:surgery|surgical|operation|\w+ectomy|underwent|repair(?:ed)?|transplant)\b"),
        ("hospitalizations", r"\b(?:hospitali[sz]ed|admitted|admission)\b"),
        ("family", r"\b(?:family history|(?:mother|father|sister|brother|sibling|grand\w+|aunt|uncle)\s+(?:has|had|was|with|died|is)|"
         r"runs? in the family|in the family)\b"),
        ("social_tobacco", r"\b(?:smok\w*|tobacco|cigar\w*|vap(?:e|ing)|pack-?years?)\b"),
        ("social_alcohol", r"\b(?:alcohol\w*|drinks?|drinking|beer|wine|liquor|spirits)\b"),
        ("social_drugs", r"\b(?:drug use|illicit|marijuana|cannabis|cocaine|heroin|opioid use|substance|recreational|inject\w*)\b"),
        ("social_sexual", r"\b(?:sexual\w*|sex|partners?|condoms?|intercourse|contracepti\w*)\b"),
        ("social_travel", r"\b(?:travel\w*|trip|visited|returned from|camping|hiking|vacation|immigrated)\b"),
        ("social_occupation", r"\b(?:works?|working|job|employ\w*|occupation|student|retired|teacher|farmer|worker|"
         r"designer|nurse|engineer|athlete|bodybuilder|office)\b"),
        ("social_exercise", r"\b(?:exercis\w*|gym|running|sports?|training|physically active)\b"),
        ("social_diet", r"\b(?:diet|eats|eating habits|food|meals?)\b"),
        ("social_living", r"\b(?:lives|living|married|divorced|widowed|resides|child to|household)\b"),
        ("obgyn", r"\b(?:pregnan\w*|gestation\w*|menstru\w*|periods?|gravida|para \d|lmp|menarche|menopaus\w*|contraception)\b"),
        ("immunizations", r"\b(?:vaccin\w*|immuni[sz]\w*)\b"),
        ("development", r"\b(?:milestones?|developmental\w*)\b"),
        ("pmh", r"\b(?:diagnosed|past medical|known (?:history|case)|history of (?!(?:experiencing|\d|a |an |several|few|"
         r"recurrent|intermittent|progressive|worsening|new))\w+)"),
        ("radiation", r"\b(?:radiat\w*|spreads?|travels? to)\b"),
        ("quality", r"\b(?:sharp|dull|burning|stabbing|throbbing|cramp\w*|pressure-like|aching|colicky|tingling|pins and needles)\b"),
        ("severity", r"\b(?:severe|mild|moderate|/10|out of 10|worst|excruciating|unbearable)\b"),
        ("modifiers", r"\b(?:worse\w*|better|improv\w*|reliev\w*|aggravat\w*|exacerbat\w*|trigger\w*|resolv\w*)\b"),
        ("timing", r"\b(?:intermittent\w*|constant\w*|episod\w*|comes and goes|at night|in the morning|daily|recurrent|"
         r"times a (?:day|week)|persistent)\b"),
        ("onset", r"\b(?:ago|since|started|began|begun|onset|for the (?:past|last)|over the (?:past|last)|"
         r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|a few|several)[- ](?:hours?|days?|weeks?|months?|years?)|yesterday|last (?:week|month|night)|sudden\w*|gradual\w*)\b"),
        ("location", r"\b(?:located|locali[sz]ed|in the (?:left|right|upper|lower)|on (?:his|her|the) \w+)\b"),
        ("associated", r"\b(?:also|accompanied|associated|along with|as well as)\b"),
    ]
]

_SOCIAL = {c for c, _ in _RULES if c.startswith("social_")} | {"family"}

# Strip "His mother reports that" before classifying, so a parent as reporter is not a family history.
_REPORTER = re.compile(
    r"^(?:(?:his|her|the)\s+(?:mother|father|parents?|wife|husband|partner|caregiver)\s+|"
    r"(?:the\s+)?patient\s+|she\s+|he\s+)(?:also\s+)?(?:reports?|notes?|states?|says|mentions?|describes?)\s+(?:that\s+)?",
    re.IGNORECASE,
)


def classify(sentence: str) -> str:
    """Best single category for a history sentence ('other' when nothing fits)."""
    text = _REPORTER.sub("", sentence.strip())
    for category, pattern in _RULES:
        if pattern.search(text):
            return category
    return "other"


def classify_social(sentence: str) -> list[str]:
    """All social/family categories a social-history sentence speaks to (may be several)."""
    text = _REPORTER.sub("", sentence.strip())
    found = [c for c, p in _RULES if c in _SOCIAL and p.search(text)]
    return found


def question_for(category: str) -> tuple[str, list[str]]:
    q, paraphrases = QUESTIONS.get(category, QUESTIONS["other"])
    return q, list(paraphrases)


def symptom_question(symptom: str) -> tuple[str, list[str]]:
    """Questions about one named symptom, e.g. 'Have you had any weakness in upper limbs?'."""
    s = symptom.strip().rstrip(".")
    s = s[:1].lower() + s[1:] if not s[:2].isupper() else s
    return f"Have you had any {s}?", [f"Have you noticed {s}?", f"Any {s}?"]


def paraphrases_for(question: str, category: str) -> list[str]:
    """At least two other ways to ask ``question``: the category's templates minus duplicates."""
    canonical, extra = question_for(category)
    seen = {question.strip().lower()}
    out: list[str] = []
    for p in [canonical, *extra]:
        if p.lower() not in seen:
            seen.add(p.lower())
            out.append(p)
    # Only when the category's own templates run short (the question was one of them).
    for p in QUESTIONS["other"][1]:
        if len(out) >= 2:
            break
        if p.lower() not in seen:
            seen.add(p.lower())
            out.append(p)
    return out
