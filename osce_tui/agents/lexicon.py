"""Clinical-history lexicon: tokenising, stemming and concept expansion.

The offline patient retrieves answers by lexical matching, so two phrasings of
one question must land on shared tokens. Three layers do that:

1. ``normalise`` lower-cases, expands contractions and rewrites multi-word
   phrases ("go anywhere", "throw up") into single concept tokens;
2. ``stem`` is a deliberately small suffix stripper (the same function runs on
   the case text and on the question, so it only has to be consistent);
3. ``CONCEPTS`` maps surface words to concept tokens (``@tobacco``), which are
   added beside the word so "cigarettes" and "smoke" meet on ``@tobacco``.

Nothing here knows about a particular case.
"""

from __future__ import annotations

import re
from functools import lru_cache

# -- contractions -------------------------------------------------------------

_CONTRACTIONS = [
    (r"\bwon't\b", "will not"),
    (r"\bcan't\b", "can not"),
    (r"\bcannot\b", "can not"),
    (r"n't\b", " not"),
    (r"'re\b", " are"),
    (r"'ve\b", " have"),
    (r"'ll\b", " will"),
    (r"'d\b", " would"),
    (r"'m\b", " am"),
    (r"\b(it|that|what|where|there|how|who|when|he|she)'s\b", r"\1 is"),
    (r"'s\b", ""),  # possessive: "father's" -> "father"
]
_CONTRACTION_RES = [(re.compile(p), r) for p, r in _CONTRACTIONS]

# -- concepts ---------------------------------------------------------------
# concept -> surface forms (single words are stemmed; phrases are matched on the
# normalised text before tokenising). Forms are written as people say them.

CONCEPTS: dict[str, list[str]] = {
    "onset": [
        "start", "started", "begin", "began", "begun", "onset", "first noticed", "first notice",
        "how long", "since when", "came on", "come on", "kick in", "kicked in", "when did",
        "sudden", "suddenly", "gradual", "gradually", "all at once", "first happen", "first happened",
        "how many days", "how many hours", "how many weeks", "when was the first", "first",
    ],
    "location": [
        "where", "whereabouts", "location", "located", "point", "show me", "spot", "which part",
        "what part", "which side", "site", "area",
    ],
    "radiation": [
        "spread", "spreads", "radiate", "radiates", "radiation", "go anywhere", "goes anywhere",
        "move anywhere", "moves anywhere", "travel anywhere", "travels anywhere", "shoot", "shoots",
        "anywhere else", "elsewhere", "move to", "moves to", "go to your", "go into", "goes into",
        "extend", "extends", "radiating", "spreading", "other parts of your body", "go down your",
        "go up", "move around", "travel to", "travel down", "travel up", "anywhere",
    ],
    "quality": [
        "describe", "description", "feel like", "feels like", "what kind", "what type", "what sort",
        "what is the pain like", "what does it feel like",
        "sharp", "dull", "burning", "crushing", "squeezing", "stabbing", "aching", "throbbing",
        "cramping", "character", "sensation", "what is it like", "tight", "tightness", "heavy",
        "pressure", "nature",
    ],
    "severity": [
        "scale", "out of 10", "out of ten", "1 to 10", "one to ten", "0 to 10", "zero to ten",
        "how bad", "severe", "severity", "intense", "intensity", "rate", "rating", "worst",
        "how much does it hurt", "how painful", "mild", "strong", "how strong", "number", "score",
        "ten", "10",
    ],
    "timing": [
        "constant", "come and go", "comes and goes", "continuous", "intermittent", "episode",
        "episodes", "how often", "frequency", "frequent",
        "duration", "all the time", "pattern", "on and off", "off and on", "steady", "persistent",
        "how long does it last", "how long do they last",
        "time of day", "every day", "daily",
    ],
    "aggravate": [
        "worse", "worsen", "worsens", "aggravate", "aggravates", "trigger", "triggers", "bring on",
        "brings on", "bring it on", "brings it on", "set off", "sets off", "provoke", "provokes",
        "exacerbate", "intensify", "make it worse", "flare",
    ],
    "relieve": [
        "better", "relieve", "relieves", "relief", "ease", "eases", "help", "helps", "helped",
        "improve", "improves", "soothe", "alleviate", "go away", "settle", "settles", "tried",
        "taken anything for", "take anything for",
    ],
    "previous": [
        "before", "previously", "ever had", "prior", "happened before", "first time", "similar",
        "in the past", "recurrent", "again",
    ],
    "nausea": [
        "nausea", "nauseous", "nauseated", "sick to your stomach", "queasy", "queasiness", "vomit",
        "vomiting", "vomited", "throw up", "threw up", "thrown up", "throwing up", "puke", "puking",
    ],
    "breath": [
        "breath", "breathe", "breathing", "breathless", "short of breath", "shortness of breath",
        "dyspnea", "dyspnoea", "winded", "puffed", "catch your breath", "wheeze", "wheezing",
        "out of breath",
    ],
    "sweat": ["sweat", "sweats", "sweaty", "sweating", "diaphoresis", "diaphoretic", "clammy", "perspire"],
    "palpitation": [
        "palpitation", "palpitations", "racing", "pounding", "flutter", "fluttering", "skipping",
        "skip a beat", "irregular heartbeat", "heart beat fast", "heartbeat",
    ],
    "dizzy": [
        "dizzy", "dizziness", "lightheaded", "light headed", "light-headed", "faint", "fainted",
        "fainting", "pass out", "passed out", "black out", "blacked out", "blackout", "syncope",
        "woozy", "vertigo", "spinning", "lose consciousness", "lost consciousness",
    ],
    "fever": [
        "fever", "feverish", "temperature", "chills", "shiver", "shivers", "shivering", "febrile",
        "rigors", "hot and cold", "high temperature",
    ],
    "cough": ["cough", "coughing", "phlegm", "sputum", "mucus", "coughing up"],
    "infection": ["cold", "flu", "infection", "virus", "viral", "bug", "unwell", "ill lately", "been ill"],
    "weight": ["weight", "lost weight", "gained weight", "kilos", "pounds", "thinner", "heavier", "clothes looser"],
    "appetite": ["appetite", "hungry", "hunger", "off your food", "eating less"],
    "bowel": [
        "bowel", "bowels", "stool", "stools", "poo", "poop", "diarrhea", "diarrhoea", "constipation",
        "constipated", "bowel movement", "bowel movements", "loose", "motions", "toilet", "loo",
    ],
    "urine": [
        "urine", "urinate", "urinating", "urination", "pee", "peeing", "bladder", "waterworks",
        "passing water", "wee", "toilet", "loo",
    ],
    "sleep": ["sleep", "sleeping", "insomnia", "asleep", "wake up at night", "night sweats"],
    "fatigue": ["fatigue", "tired", "tiredness", "energy", "exhausted", "exhaustion", "worn out", "lethargic"],
    "swelling": ["swelling", "swollen", "edema", "oedema", "puffy", "puffiness"],
    "bleeding": ["blood", "bleeding", "bleed", "bled"],
    "skin": ["rash", "rashes", "skin", "spots", "itch", "itchy", "itching", "lesion", "lesions", "hives"],
    "vision": ["vision", "sight", "blurry", "blurred", "eyesight", "see clearly", "double vision"],
    "digestion": [
        "heartburn", "reflux", "indigestion", "acid", "swallow", "swallowing", "meal", "meals",
        "after eating", "related to eating", "dyspepsia",
    ],
    "pmh": [
        "medical conditions", "medical condition", "health problems", "health problem",
        "medical history", "medical problems", "illnesses", "illness", "diagnosed", "chronic",
        "conditions", "past medical", "health issues", "other problems", "see a doctor for",
        "seeing a doctor for", "any diseases", "healthy", "in good health", "general health", "health",
    ],
    "hypertension": ["blood pressure", "hypertension", "bp", "high pressure"],
    "diabetes": ["diabetes", "diabetic", "sugar", "blood sugar", "glucose"],
    "cholesterol": ["cholesterol", "lipids", "lipid"],
    "medication": [
        "medication", "medications", "medicine", "medicines", "meds", "tablets", "tablet", "pills",
        "pill", "prescription", "prescriptions", "prescribed", "over the counter", "supplements",
        "vitamins", "remedies", "inhaler", "drug allergies", "take anything regularly",
        "taking anything", "take regularly", "on anything", "dose",
        "blood thinners", "blood thinner", "thinners", "anticoagulant", "anticoagulants", "painkillers",
        "painkiller", "ibuprofen", "paracetamol", "acetaminophen", "aspirin", "antibiotics", "drops",
    ],
    "allergy": ["allergy", "allergies", "allergic", "reaction", "reactions", "react badly", "intolerance"],
    "surgery": [
        "surgery", "surgeries", "operation", "operations", "operated", "procedure", "procedures",
        "under the knife", "surgical",
    ],
    "hospital": ["hospital", "hospitalized", "hospitalised", "admitted", "admission", "stayed in hospital"],
    "family": [
        "family", "relatives", "relative", "parents", "parent", "mother", "father", "mom", "dad",
        "mum", "siblings", "sibling", "brother", "brothers", "sister", "sisters", "runs in the family",
        "run in your family", "hereditary", "inherited", "genetic", "blood relatives", "grandparents",
    ],
    "tobacco": [
        "smoke", "smoker", "smoking", "smoked", "tobacco", "cigarettes", "cigarette", "cigs", "vape",
        "vaping", "pack", "packs", "cigar", "cigars", "nicotine", "chew",
    ],
    "alcohol": [
        "alcohol", "alcoholic", "drink", "drinks", "drinking", "drinker", "booze", "beer", "beers",
        "wine", "liquor", "spirits", "pint", "pints", "units", "glass of",
    ],
    "recreational": [
        "recreational", "street drugs", "illicit", "illegal", "cocaine", "coke", "marijuana",
        "cannabis", "weed", "pot", "heroin", "amphetamine", "amphetamines", "meth", "ecstasy",
        "inject", "injecting", "drugs", "drug use", "use drugs", "substances", "substance",
    ],
    "occupation": [
        "work", "job", "occupation", "for a living", "a living", "employed", "employment", "career",
        "profession", "retired", "retire", "working",
    ],
    "sexual": [
        "sexual", "sexually", "sex", "intercourse", "condom", "condoms", "partners", "sexually active",
        "std", "sti", "stis", "stds", "protection",
    ],
    "diet": ["diet", "eat", "eating", "food", "foods", "meals", "nutrition", "salt", "takeaway"],
    "exercise": ["exercise", "exercising", "active", "physical activity", "sport", "sports", "gym", "workout", "fitness"],
    "travel": [
        "travel", "travelled", "traveled", "travelling", "traveling", "trip", "trips", "abroad",
        "overseas", "been away", "vacation", "holiday", "flight", "flights", "journey", "journeys",
    ],
    "living": ["live with", "living", "live", "home", "house", "alone", "at home", "housing", "household"],
    "stress": ["stress", "stressed", "mood", "depressed", "low mood", "anxiety", "nervous"],
    "concern": [
        "worried", "worry", "worries", "concern", "concerned", "concerns", "afraid", "fear", "scared",
        "on your mind", "what do you think", "think it is", "think this is", "causing this",
        "expecting", "hoping",
    ],
    "menstrual": [
        "period", "periods", "menstrual", "menses", "lmp", "last period", "cycle", "menstruation",
    ],
    "pregnancy": ["pregnant", "pregnancy", "pregnancies", "expecting a baby", "chance you could be pregnant"],
    "contraception": ["contraception", "contraceptive", "birth control", "the pill", "coil", "iud"],
    "development": ["milestones", "development", "developing", "growth", "growing", "school", "nursery", "daycare"],
    "immunization": [
        "vaccine", "vaccines", "vaccinated", "vaccinations", "vaccination", "shots", "jabs",
        "immunizations", "immunisations", "immunised", "immunized", "up to date",
    ],
    "trauma": [
        "injury", "injured", "fall", "fell", "hurt yourself", "accident", "trauma", "hit your head",
        "bang your head", "banged your head", "knock to the head", "blow to the head",
    ],
    "chest": ["chest", "breastbone", "sternum"],
    "heart": ["heart", "cardiac", "heart disease", "heart attack", "heart problems"],
    "abdomen": ["abdomen", "belly", "stomach", "tummy", "abdominal", "gut"],
    "head": ["head", "headache", "headaches", "migraine", "migraines"],
    "pain": ["pain", "painful", "hurt", "hurts", "hurting", "ache", "aches", "sore", "discomfort", "tender"],
}

# Body parts: each is its own clinical concept, so a question about a part the
# case never mentions ("any hair loss?", "joint pains?") is recognised as
# uncovered instead of being matched on its generic words ("loss", "pain").
ANATOMY = (
    "hair nail nails skin eye eyes ear ears nose throat mouth tongue teeth tooth lip lips jaw neck "
    "shoulder shoulders arm arms elbow wrist hand hands finger fingers hip hips knee knees ankle ankles "
    "foot feet toe toes leg legs calf calves thigh joint joints muscle muscles bone bones spine "
    "testicle testicles scrotum penis breast breasts nipple vagina womb kidney kidneys liver bladder "
    "bowel lung lungs"
).split()
# Adjectives name the same part ("vaginal bleeding" answers "bleeding from the vagina").
ANATOMY_ADJECTIVES = {
    "vaginal": "vagina", "renal": "kidney", "hepatic": "liver", "pulmonary": "lung", "ocular": "eye",
    "nasal": "nose", "oral": "mouth", "dental": "tooth", "testicular": "testicle", "muscular": "muscle",
    "spinal": "spine", "cutaneous": "skin", "dermal": "skin", "mammary": "breast", "uterine": "womb",
    "uterus": "womb", "articular": "joint", "aural": "ear",
}
for _part in ANATOMY:
    _base = _part[:-1] if _part.endswith("s") and _part[:-1] in ANATOMY else _part
    CONCEPTS.setdefault("anat_" + _base, []).append(_part)
for _adj, _part in ANATOMY_ADJECTIVES.items():
    CONCEPTS.setdefault("anat_" + _part, []).append(_adj)

# Concepts that only qualify a question (whose body part, which disease, what
# pain); on their own they do not make a second question in one clause.
QUALIFIER_CONCEPTS = frozenset(
    {"hypertension", "diabetes", "cholesterol", "heart", "chest", "abdomen", "head", "pain", "bleeding", "previous"}
)

# Which history categories a concept signals (used to seed each fact's
# document with its category's vocabulary, and to report the intent).
CATEGORY_CONCEPTS: dict[str, list[str]] = {
    "chief_complaint": [],
    "onset": ["onset"],
    "location": ["location"],
    "radiation": ["radiation"],
    "quality": ["quality"],
    "severity": ["severity"],
    "timing": ["timing"],
    "modifiers": ["aggravate", "relieve"],
    "associated": [],
    "pmh": ["pmh"],
    "medications": ["medication"],
    "allergies": ["allergy"],
    "surgery": ["surgery"],
    "hospitalizations": ["hospital"],
    "family": ["family"],
    "social_tobacco": ["tobacco"],
    "social_alcohol": ["alcohol"],
    "social_drugs": ["recreational"],
    "social_occupation": ["occupation"],
    "social_sexual": ["sexual"],
    "social_diet": ["diet"],
    "social_exercise": ["exercise"],
    "social_travel": ["travel"],
    "social_living": ["living"],
    "ros": [],
    "obgyn": ["menstrual"],
    "development": ["development"],
    "immunizations": ["immunization"],
    "ideas_concerns": ["concern"],
    "other": [],
}

# Function words and question frames that carry no topic. Kept short on
# purpose: words like "before", "where" or "worse" are signal, not noise.
STOPWORDS = frozenset(
    """
    a an the and or but if so of to in on at by for with from as is are was were be been being am
    do does did done doing have has had having i you your yours yourself me my mine we our us he she
    him her his they them their it its this that these those there here what which who whom whose
    can could would should will shall may might must just any anything some something ever also too
    very really quite bit little about please tell let know okay ok right now well yes no not
    get got getting go going gone make made like feel feeling felt think thought say said
    much many more most other else one thing things kind sort lot lots all
    sir madam mr mrs ms miss doctor dr today currently recently lately
    time find found notice noticed seem seems experience experienced experiencing use used using
    up down out over into onto off again further then once how when why whether
    """.split()
)
# Words in STOPWORDS that still matter inside concept phrases are handled
# because phrases are rewritten before stop-word removal.

# Filler phrases removed before anything else ("at any point" is not a location).
_FILLER_PHRASES = [
    "at any point", "at the moment", "at all", "so far", "these days", "right now", "for me",
    "in general", "by any chance", "at this point", "in the past few days", "i was wondering",
    "can you tell me", "could you tell me", "would you say", "do you know", "i need to ask",
]
_FILLER_RES = [re.compile(r"\b" + re.escape(p) + r"\b") for p in _FILLER_PHRASES]

_WORD_RE = re.compile(r"[a-z0-9]+(?:[-/][a-z0-9]+)*")


def stem(word: str) -> str:
    """A small, consistent suffix stripper (not linguistics: only needs to agree with itself)."""
    w = word
    if len(w) <= 3 or w.isdigit():
        return w
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ingly", "edly", "ing", "ed", "ly"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if len(w) >= 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]  # running -> run, stopped -> stop
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]  # smoke/smoking -> smok
    return w


def _concept_tables() -> tuple[dict[str, set[str]], list[tuple[re.Pattern[str], str]]]:
    word_map: dict[str, set[str]] = {}
    phrases: list[tuple[str, str]] = []
    for concept, forms in CONCEPTS.items():
        for form in forms:
            f = form.lower().strip()
            if " " in f or "-" in f:
                phrases.append((f, concept))
            else:
                word_map.setdefault(stem(f), set()).add(concept)
    # Longest phrases first so "short of breath" wins over "breath".
    phrases.sort(key=lambda p: -len(p[0]))
    compiled = [(re.compile(r"\b" + re.escape(p) + r"\b"), c) for p, c in phrases]
    return word_map, compiled


_WORD_CONCEPTS, _PHRASES = _concept_tables()


def expand_contractions(text: str) -> str:
    t = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    for pattern, repl in _CONTRACTION_RES:
        t = pattern.sub(repl, t)
    return t


Unit = tuple[str, frozenset[str]]
"""One meaningful piece of a query: its surface key and the index terms it may match."""


@lru_cache(maxsize=4096)
def analyse(text: str) -> tuple[Unit, ...]:
    """Text -> units. Each unit is a word or phrase with its stem and concept tokens.

    Phrases become units whose terms are only their concept tokens; words keep
    their stem and gain concept tokens. Stop-words vanish unless a phrase
    claimed them first.
    """
    t = expand_contractions(text)
    for pattern in _FILLER_RES:
        t = pattern.sub(" ", t)
    units: list[Unit] = []
    for pattern, concept in _PHRASES:
        if pattern.search(t):
            units.append((f"~{concept}", frozenset({"@" + concept})))
            t = pattern.sub(" ", t)
    for raw in _WORD_RE.findall(t):
        for word in raw.replace("/", " ").split():
            if word in STOPWORDS:
                continue
            s = stem(word)
            if s in STOPWORDS:
                continue
            terms = {s}
            terms |= {"@" + c for c in _WORD_CONCEPTS.get(s, ())}
            units.append((s, frozenset(terms)))
    return tuple(_merge_units(units))


def _merge_units(units: list[Unit]) -> list[Unit]:
    """Drop repeats: a concept already present as a phrase unit absorbs same-concept words."""
    seen: set[str] = set()
    out: list[Unit] = []
    for key, terms in units:
        if key in seen:
            continue
        seen.add(key)
        out.append((key, terms))
    return out


def terms_of(text: str) -> list[str]:
    """All index terms of a text (for building documents)."""
    out: list[str] = []
    for _key, terms in analyse(text):
        out.extend(sorted(terms))
    return out


def category_terms(category: str) -> list[str]:
    """Words that describe a history category, added to every fact of that category."""
    words = category.replace("_", " ").replace("social ", "")
    terms = terms_of(words)
    terms += ["@" + c for c in CATEGORY_CONCEPTS.get(category, [])]
    return terms
