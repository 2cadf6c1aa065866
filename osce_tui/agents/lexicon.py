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
        "when it hit", "it hit you", "when it struck",
    ],
    "location": [
        "where", "whereabouts", "location", "located", "point", "show me", "spot", "which part",
        "what part", "which side", "site", "area", "side",
    ],
    "radiation": [
        "spread", "spreads", "radiate", "radiates", "radiation", "go anywhere", "goes anywhere",
        "move anywhere", "moves anywhere", "travel anywhere", "travels anywhere", "shoot", "shoots",
        "anywhere else", "elsewhere", "move to", "moves to", "go to your", "go into", "goes into",
        "extend", "extends", "radiating", "spreading", "other parts of your body", "go down your",
        "go up", "move around", "travel to", "travel down", "travel up", "go down", "goes down",
        "going down", "shoot down", "shoots down", "round to the front", "round to your",
        "moved", "shifted", "down the leg", "down your leg", "down his leg", "down her leg",
        "down the back of", "down the arm", "down your arm",
    ],
    "quality": [
        "describe", "description", "feel like", "feels like", "what kind", "what type", "what sort",
        "what is the pain like", "what does it feel like",
        "sharp", "dull", "burning", "crushing", "squeezing", "stabbing", "aching", "throbbing",
        "cramping", "crampy", "cramp", "cramps", "colicky", "character", "sensation", "what is it like", "tight", "tightness", "heavy",
        "pressure", "nature", "like a weight", "weight on your chest", "weight on my chest",
        "weight sitting",
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
        "exacerbate", "intensify", "make it worse", "flare", "bringing on", "brought on", "set it off",
        "sets it off",
    ],
    "relieve": [
        "better", "relieve", "relieves", "relief", "ease", "eases", "help", "helps", "helped",
        "improve", "improves", "soothe", "alleviate", "go away", "settle", "settles", "tried",
        "taken anything for", "take anything for", "given him anything", "given her anything",
        "given them anything", "given anything", "give him anything", "give her anything",
        "comfortable", "comfy", "get comfortable", "lift your mood", "lifts your mood", "cheer you up",
        "cheers you up", "pick you up", "picks you up", "perk you up",
    ],
    "previous": [
        "before", "previously", "ever had", "prior", "happened before", "first time", "similar",
        "in the past", "recurrent", "again", "ever been", "come back", "came back", "comes back",
        "coming back", "keeps coming back",
    ],
    "nausea": [
        "nausea", "nauseous", "nauseated", "sick to your stomach", "queasy", "queasiness", "vomit",
        "vomiting", "vomited", "throw up", "threw up", "thrown up", "throwing up", "puke", "puking",
        # British "been sick" is vomiting; "has anyone been sick" (contacts) is not matched here.
        "have you been sick", "has he been sick", "has she been sick", "been physically sick", "been sick",
        "being sick", "feel sick", "feeling sick", "felt sick",
    ],
    "breath": [
        "breath", "breathe", "breathing", "breathless", "short of breath", "shortness of breath",
        "dyspnea", "dyspnoea", "winded", "puffed", "catch your breath", "wheeze", "wheezing",
        "out of breath",
    ],
    "night": ["night", "nights", "evening", "evenings", "nighttime", "night-time", "overnight"],
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
    "infection": [
        "cold", "flu", "infection", "virus", "viral", "bug", "unwell", "ill lately", "been ill",
        "anyone around", "anyone else", "poorly",
    ],
    "weight": ["weight", "lost weight", "gained weight", "kilos", "pounds", "thinner", "heavier", "clothes looser"],
    "appetite": [
        "appetite", "hungry", "hunger", "off your food", "off his food", "off her food", "eating less",
        "eating more", "eat more", "eating a lot", "eating much", "eating properly", "eating well",
        "eating okay", "eating ok", "eating normally", "starving", "ravenous",
    ],
    # Weight-loss products are a medication question, not a question about weight.
    "slimming": [
        "slimming", "diet pills", "diet pill", "to lose weight", "weight loss pills", "weight loss tablets",
        "appetite suppressants", "help you lose weight",
    ],
    # Suicide risk: a plan or method is a different question from the thoughts.
    "plan": [
        "plan", "plans", "planned", "planning", "thought about how", "how you would", "how you might",
        "how would you", "method", "means to",
    ],
    "self_harm": [
        "self harm", "self-harm", "self harmed", "self-harmed", "harm yourself", "harmed yourself",
        "harming yourself", "hurt yourself on purpose", "hurt yourself deliberately", "cut yourself",
        "cutting yourself", "overdose", "overdosed", "hurt yourself", "hurting yourself",
    ],
    # Suicidal ideation is asked in many ways; a patient who has such thoughts
    # must not get the default "No" because the wording was unfamiliar.
    "suicidal": [
        "suicide", "suicidal", "kill yourself", "killing yourself", "end your life", "ending your life",
        "end it all", "take your own life", "taking your own life", "not wake up", "better off dead",
        "want to die", "wanted to die", "wish you were dead", "not worth living", "isn't worth living",
        "life is not worth", "thoughts of death", "thoughts about death", "no way out",
    ],
    # Thoughts (ideation) versus acts: "thoughts of harming yourself" is not
    # "have you ever harmed yourself". Phrases only: "think"/"thought" are stop
    # words, and phrases are matched before stop words are dropped. Not "these
    # thoughts"/"thoughts like": "acted on thoughts like these" asks about acts.
    "ideation": [
        "thoughts of", "thoughts about", "thoughts that", "any thoughts",
        "thought of", "thought about", "thinking about", "thinking of", "think about", "urges to", "urge to",
        "dark thoughts",
    ],
    "bowel": [
        "bowel", "bowels", "stool", "stools", "poo", "poop", "diarrhea", "diarrhoea", "constipation",
        "constipated", "bowel movement", "bowel movements", "loose", "motions", "toilet", "loo",
    ],
    "urine": [
        "urine", "urinate", "urinating", "urination", "pee", "peeing", "bladder", "waterworks",
        "passing water", "wee", "toilet", "loo",
    ],
    "sleep": ["sleep", "sleeping", "insomnia", "asleep", "wake up at night"],
    # Night sweats are a symptom of their own (infection, malignancy), not a
    # sleep problem and not the sweating of an acute event.
    "night_sweats": [
        "night sweats", "night sweat", "sweating at night", "sweat at night", "sweats at night",
        "sweaty at night", "drenched at night", "soaked at night",
    ],
    "fatigue": [
        "fatigue", "tired", "tiredness", "energy", "exhausted", "exhaustion", "worn out", "lethargic",
        "drowsy", "drowsier", "drowsiness", "sleepy", "sleepier", "floppy",
    ],
    "swelling": ["swelling", "swollen", "edema", "oedema", "puffy", "puffiness"],
    "bleeding": [
        "blood", "bleeding", "bleed", "bled", "spotting", "between periods", "between your periods",
        "after sex",
    ],
    "skin": ["rash", "rashes", "skin", "spots", "itch", "itchy", "itching", "lesion", "lesions", "hives"],
    "vision": ["vision", "sight", "blurry", "blurred", "eyesight", "see clearly", "double vision"],
    "digestion": [
        "heartburn", "reflux", "indigestion", "acid", "meal", "meals",
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
        "vitamins", "remedies", "inhaler", "take anything regularly",
        "taking anything", "take regularly", "are you on anything", "is he on anything",
        "is she on anything", "you on anything", "on anything regular", "on anything for", "dose",
        "blood thinners", "blood thinner", "thinners", "anticoagulant", "anticoagulants", "painkillers",
        "painkiller", "ibuprofen", "paracetamol", "acetaminophen", "aspirin", "antibiotics", "drops",
        "side effects", "side effect", "cream", "creams", "ointment", "ointments", "lotion",
        "immunosuppressant", "immunosuppressants", "immunosuppressive", "steroid", "steroids",
        "calpol", "nurofen", "tylenol", "advil", "motrin", "co-codamol", "codeine",
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
        "std", "sti", "stis", "stds", "use protection", "using protection", "unprotected", "safe sex",
        "safer sex", "protected sex",
    ],
    "sun_protection": [
        "sunscreen", "sun cream", "suncream", "sunblock", "sun block", "spf", "sun protection",
        "protect yourself from the sun", "protect your skin", "sun lotion", "factor 50", "factor 30",
    ],
    "diet": ["diet", "eat", "eating", "food", "foods", "meals", "nutrition", "salt", "takeaway"],
    "exercise": [
        "exercise", "exercising", "active", "physical activity", "sport", "sports", "gym", "workout", "fitness",
        "lifting weights", "lift weights", "weight training", "weights",
    ],
    "travel": [
        "travel", "travelled", "traveled", "travelling", "traveling", "trip", "trips", "abroad",
        "overseas", "been away", "vacation", "holiday", "holidays", "flight", "flights", "journey", "journeys",
        "a trip", "any trips", "any trip", "trip abroad", "trips abroad", "plane trip", "long trip",
        "road trip", "recent trip", "business trip", "plane", "flown", "fly anywhere",
    ],
    "living": ["live with", "living", "live", "home", "house", "alone", "at home", "housing", "household"],
    "stress": [
        "stress", "stressed", "mood", "depressed", "depression", "low mood", "anxiety", "nervous", "feeling low",
        "felt low", "feel low", "feeling down", "feel down", "sad", "fed up", "miserable", "flat",
    ],
    "concern": [
        "worried", "worry", "worries", "concern", "concerned", "concerns", "afraid", "fear", "scared",
        "on your mind", "what do you think", "think it is", "think this is", "causing this",
        "expecting", "hoping",
    ],
    "menstrual": [
        "period", "periods", "menstrual", "menses", "lmp", "last period", "cycle", "menstruation",
    ],
    "pregnancy": [
        "pregnant", "pregnancy", "pregnancies", "expecting a baby", "chance you could be pregnant",
        "any kids", "any children", "have kids", "have children", "given birth",
    ],
    "contraception": ["contraception", "contraceptive", "birth control", "the pill", "coil", "iud"],
    "development": ["milestones", "development", "developing", "growth", "growing", "school", "nursery", "daycare"],
    "immunization": [
        "vaccine", "vaccines", "vaccinated", "vaccinations", "vaccination", "shots", "jabs",
        "immunizations", "immunisations", "immunised", "immunized", "up to date",
    ],
    "trauma": [
        "injury", "injured", "fall", "fell", "hurt yourself", "accident", "trauma", "hit your head",
        "bang your head", "banged your head", "knock to the head", "blow to the head",
        "trip", "tripped", "trip and fall", "trip over", "tripped over", "slipped over", "slip over",
        "slipped and fell",
    ],
    "chest": ["chest", "breastbone", "sternum"],
    "heart": ["heart", "cardiac", "heart disease", "heart attack", "heart problems"],
    "abdomen": ["abdomen", "belly", "stomach", "tummy", "abdominal", "gut"],
    "head": ["head", "headache", "headaches", "migraine", "migraines"],
    "pain": ["pain", "painful", "hurt", "hurts", "hurting", "ache", "aches", "sore", "discomfort", "tender"],
}

# Symptoms that are each their own question. Listing them matters most when a
# case does NOT mention them: an unknown clinical concept weighs the most in
# coverage, so "Any hearing problems?" is recognised as uncovered instead of
# being matched on "problems"; an unknown plain word would count as filler.
SYMPTOM_CONCEPTS: dict[str, list[str]] = {
    "seizure": ["fits", "had a fit", "have a fit", "any fit", "seizure", "seizures", "convulsion", "convulsions", "epilepsy", "epileptic"],
    "hearing": ["hearing", "hear", "deaf", "deafness", "tinnitus", "ringing in your ears", "hearing aid"],
    "lump": ["lump", "lumps", "lumpy"],
    "bruising": ["bruise", "bruises", "bruising", "bruised", "bruise easily"],
    "nosebleed": ["nosebleed", "nosebleeds", "nose bleed", "nose bleeds", "bleeding from your nose"],
    "dysphagia": ["swallow", "swallowing", "dysphagia", "food sticking", "food gets stuck"],
    "numbness": ["numb", "numbness", "tingling", "tingle", "tingly", "pins and needles"],
    "weakness": ["weak", "weakness", "weaker"],
    "tremor": ["tremor", "tremors", "shaking", "shaky", "shake", "shakes", "trembling", "tremble", "jittery"],
    "speech": ["speech", "slurred", "slurring", "speaking", "talking", "words"],
    "memory": ["memory", "forgetful", "forgetting", "confusion", "confused", "muddled", "disorientated"],
    "jaundice": ["jaundice", "jaundiced", "yellow skin", "yellow eyes", "going yellow"],
    "thirst": ["thirst", "thirsty"],
    "discharge": ["discharge", "discharges"],
    "stiffness": ["stiff", "stiffness"],
    "snoring": ["snore", "snoring"],
    "voice": ["hoarse", "hoarseness", "croaky", "lost your voice", "losing your voice"],
    "control": ["control", "incontinence", "incontinent", "leaking", "leak", "accidents"],
    "bloating": ["bloated", "bloating", "distended", "wind"],
    "ulcer": ["ulcer", "ulcers", "blister", "blisters", "blistering"],
    "fracture": ["fracture", "fractures", "fractured", "broken", "broke"],
    "hair_loss": ["hair loss", "losing hair", "hair falling out", "hair thinning", "bald", "balding"],
}
SYMPTOM_CONCEPTS["hallucination"] = [
    "hallucination", "hallucinations", "hallucinating", "seeing things", "hearing voices", "hearing things",
    "hear voices", "heard voices", "hear things", "heard things", "voices",
]
SYMPTOM_CONCEPTS["photophobia"] = [
    "photophobia", "light", "bright light", "bright lights", "sensitive to light", "light sensitivity",
]
for _concept, _forms in SYMPTOM_CONCEPTS.items():
    CONCEPTS.setdefault(_concept, []).extend(_forms)

# Clinical shorthand and Latinate terms students use, spelled out in the lay
# words the cases are written in ("haematuria" -> "blood in urine"), so each
# part is matched and weighed on its own. Applied to case text and questions.
JARGON: dict[str, str] = {
    "haematuria": "blood in urine", "hematuria": "blood in urine",
    "haemoptysis": "coughing up blood", "hemoptysis": "coughing up blood",
    "haematemesis": "vomiting blood", "hematemesis": "vomiting blood",
    "melaena": "black stool blood", "melena": "black stool blood",
    "pr bleeding": "blood in stool", "rectal bleeding": "blood in stool",
    "pv bleeding": "vaginal bleeding", "dysuria": "pain passing urine",
    "urinary frequency": "passing urine often", "nocturia": "passing urine at night",
    "urinary retention": "can not pass urine", "luts": "urine problems",
    "pleuritic": "hurts to breathe in", "orthopnoea": "breathless lying flat", "orthopnea": "breathless lying flat",
    "presyncope": "light headed", "loss of consciousness": "pass out", "loc": "pass out",
    "pyrexia": "fever", "pyrexial": "fever", "coryza": "cold", "coryzal": "cold",
    "paraesthesia": "pins and needles", "paraesthesiae": "pins and needles", "paresthesia": "pins and needles",
    "diplopia": "double vision", "odynophagia": "painful swallowing",
    "iliac fossa": "side", "rif": "right side", "lif": "left side", "epigastric": "upper abdomen",
    "ivdu": "inject drugs", "iv drug": "inject drugs", "nkda": "no allergies",
    "get-up-and-go": "energy", "get up and go": "energy",
    "faecal incontinence": "bowel control", "fecal incontinence": "bowel control",
    "urinary incontinence": "bladder control",
}
_JARGON_RE = re.compile(r"\b(" + "|".join(re.escape(k) for k in sorted(JARGON, key=len, reverse=True)) + r")\b")

# Body parts: each is its own clinical concept, so a question about a part the
# case never mentions ("any hair loss?", "joint pains?") is recognised as
# uncovered instead of being matched on its generic words ("loss", "pain").
ANATOMY = (
    "hair nail nails skin eye eyes ear ears nose throat mouth tongue teeth tooth lip lips jaw neck "
    "shoulder shoulders arm arms elbow wrist hand hands finger fingers hip hips knee knees ankle ankles "
    "foot feet toe toes leg legs calf calves thigh joint joints muscle muscles bone bones spine "
    "testicle testicles penis breast breasts nipple vagina womb kidney kidneys liver bladder "
    "bowel lung lungs back"
).split()
# Adjectives name the same part ("vaginal bleeding" answers "bleeding from the vagina").
ANATOMY_ADJECTIVES = {
    "vaginal": "vagina", "renal": "kidney", "scrotal": "testicle", "scrotum": "testicle", "hepatic": "liver", "pulmonary": "lung", "ocular": "eye",
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
    {"hypertension", "diabetes", "cholesterol", "heart", "chest", "abdomen", "head", "pain", "bleeding", "previous",
     "night", "control"}
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
    much many more most other another else one thing things kind sort lot lots all
    sir madam mr mrs ms miss doctor dr today currently recently lately
    time find found notice noticed seem seems experience experienced experiencing use used using
    take taken takes took than usual usually nobody around recent problem problems issue issues trouble troubles
    up down out over into onto off again further then once how when why whether
    """.split()
)
# Words in STOPWORDS that still matter inside concept phrases are handled
# because phrases are rewritten before stop-word removal.

# Filler phrases removed before anything else ("at any point" is not a location).
_FILLER_PHRASES = [
    "at any point", "at the moment", "at all", "so far", "these days", "right now", "for me",
    "in general", "by any chance", "than normal", "than usual", "as normal", "as usual", "at this point", "in the past few days", "i was wondering",
    "can you tell me", "could you tell me", "would you say", "do you know", "i need to ask",
    # time anchors say when, not what ("have you vomited since it started?")
    "since it started", "since it began", "since this started", "since this began", "since then",
    "last night", "this morning", "this afternoon", "this evening", "yesterday", "last week", "this week",
    "at the time", "at that time", "straight away", "right away",
]
_FILLER_RES = [re.compile(r"\b" + re.escape(p) + r"\b") for p in _FILLER_PHRASES]

_WORD_RE = re.compile(r"[a-z0-9]+(?:[-/][a-z0-9]+)*")

# Rewrites that settle what a word means from its neighbours, applied after
# contractions and before phrases. A substance named as the object of an
# allergy ("drug allergies", "allergic to any medicines") is not a question
# about medication or drug use; "brings the racing on" is a trigger.
_SUBSTANCE = r"(?:drugs?|medications?|medicines?|meds|tablets?|pills?|antibiotics?|painkillers?)"
_REWRITES = [
    (re.compile(r"\b(?:any\s+)?" + _SUBSTANCE + r"\s+(allerg\w*)"), r"\1"),
    (re.compile(r"\b(allerg(?:ic|ies|y))\s+to\s+(?:any\s+|some\s+|certain\s+)?" + _SUBSTANCE + r"\b"), r"\1"),
    (
        re.compile(
            r"\b(bring|brings|bringing|brought)\s+"
            r"(?:it|them|this|that|these|those|the\s+\w+|your\s+\w+|his\s+\w+|her\s+\w+)\s+on\b"
        ),
        r"\1 on",
    ),
    # Any knock to the head is the same question.
    (re.compile(r"\b(?:hit|bang|banged|bump|bumped|knock|knocked|hurt|injure|injured)\s+(?:your|his|her|their|the)\s+head\b"),
     "hit your head"),
    # "Has anyone around you been sick?" asks about sick contacts, not vomiting.
    (re.compile(r"\b(anyone|anybody|someone|somebody|everyone|people)\b([^?.,;]*?)\bbeen (?:sick|poorly|ill)\b"),
     r"\1\2 been unwell"),
]

# Words whose suffix is not an inflection: "spotting" (light bleeding) is not
# "spot" (a place), and "fits" (seizures) is not "fit" (fitness).
_STEM_EXCEPTIONS = {
    "spotting": "spotting", "fits": "fits", "early": "early", "moved": "moved", "sleepy": "sleepy",
    "sleepier": "sleepy",
    # irregular verbs meet their base form
    "eaten": "eat", "ate": "eat", "drank": "drink", "drunk": "drink", "fell": "fall", "fallen": "fall",
    "broke": "break", "broken": "break", "woke": "wake", "woken": "wake", "slept": "sleep",
    "given": "give", "gave": "give", "bled": "bleed", "began": "begin", "begun": "begin",
    "thrown": "throw", "threw": "throw", "lost": "lose", "losing": "lose", "spread": "spread",
}


# British and American spellings meet on one form ("haemoglobin"/"hemoglobin",
# "immunisation"/"immunization", "colour"/"color", "oedema"/"edema").
_SPELLING = [
    (re.compile(r"^(h|an|f|p|gyn|leuk|septic|isch|hyperglyc|hypoglyc|glyc|ur|orthop)ae"), r"\1e"),
    (re.compile(r"^oe(?=[a-z]{3})"), "e"),
    (re.compile(r"(?<=[a-z]{2})oea"), "ea"),
    (re.compile(r"(?<=[a-z]{3})is(ation|ations|e|ed|es|ing)$"), r"iz\1"),
    (re.compile(r"(?<=[a-z]{2}[^aeiou])our$"), "or"),
]


def _spelling(word: str) -> str:
    """Only consistency matters (the same function runs on case text and
    questions), so "bruise" becoming "bruize" is harmless."""
    if len(word) < 5:
        return word
    for pattern, repl in _SPELLING:
        word = pattern.sub(repl, word)
    return word


def stem(word: str) -> str:
    """A small, consistent suffix stripper (not linguistics: only needs to agree with itself)."""
    w = _spelling(word)
    if w in _STEM_EXCEPTIONS:
        return _STEM_EXCEPTIONS[w]
    if len(w) <= 3 or w.isdigit():
        return w
    if w.endswith("ness") and len(w) >= 8:
        w = w[:-4]  # tiredness -> tired, dizziness -> dizzi -> dizzy
        if w.endswith("i"):
            w = w[:-1] + "y"
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("ied") and len(w) > 4:
        w = w[:-3] + "y"  # worried -> worry
    elif w.endswith("sses"):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    for suffix in ("ingly", "edly", "ing", "ed", "ly"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if len(w) >= 3 and w[-1] == w[-2] and w[-1] not in "lszaeiou":
                w = w[:-1]  # running -> run, stopped -> stop
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]  # smoke/smoking -> smok
    elif w.endswith("y") and len(w) > 4 and w[-2] not in "aeiouy":
        w = w[:-1]  # crusty -> crust, itchy -> itch, worry -> worr
    # Noun and verb forms meet: concentration/concentrate -> concentr,
    # infection/infected -> infect, urination/urinate/urine -> urin.
    if w.endswith("ation") and len(w) >= 9:
        w = w[:-5]
    elif w.endswith("ion") and len(w) >= 8 and not w.endswith("sion"):
        w = w[:-3]
    elif w.endswith("sion") and len(w) >= 9:
        w = w[:-3]  # depression -> depress (but vision, lesion stay)
    if w.endswith("at") and len(w) >= 6:
        w = w[:-2]
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


# "other moles", "another attack": the word after "other" gains a marked term
# ("other_mole"), so a fact about the *other* moles outranks one about the
# mole, while both still match the word itself.
_OTHER_RE = re.compile(r"\b(?:other|another)\s+([a-z]+)")

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
    t = _JARGON_RE.sub(lambda m: JARGON[m.group(1)], t)
    for pattern, repl in _REWRITES:
        t = pattern.sub(repl, t)
    for pattern in _FILLER_RES:
        t = pattern.sub(" ", t)
    others = {stem(w) for w in _OTHER_RE.findall(t)}
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
            if s in others:
                terms.add("other_" + s)
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
