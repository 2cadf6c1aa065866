"""Which body system an exam request names, and what a normal exam of it finds.

``SYSTEM_PHRASES`` maps the words examiners use ("listen to the heart",
"Murphy's sign", "straight leg raise") to the case schema's body systems.
``NORMAL_FINDINGS`` is what the oracle reports for a system the case lists no
finding for: always a normal exam, so the oracle can never invent pathology.
"""

from __future__ import annotations

import re

SYSTEM_PHRASES: dict[str, list[str]] = {
    "vitals": [
        "vital signs", "vitals", "blood pressure", "heart rate", "pulse rate", "respiratory rate",
        "temperature", "oxygen saturation", "o2 sat", "o2 sats", "spo2", "sats", "pulse oximetry",
        "orthostatic", "postural blood pressure",
    ],
    "general": [
        "general appearance", "general exam", "general inspection", "appearance", "distress",
        "look at the patient", "inspect the patient", "observe the patient", "overall", "general",
        "hydration status", "hydration",
    ],
    "heent": [
        "heent", "head", "eye", "eyes", "ear", "ears", "nose", "throat", "pharynx", "oropharynx",
        "tonsils", "tonsil", "mouth", "oral", "fundoscopy", "fundoscopic", "fundi", "ophthalmoscopy",
        "pupils", "pupil", "otoscopy", "otoscope", "tympanic", "eardrum", "eardrums", "sinus", "sinuses",
        "conjunctiva", "conjunctivae", "sclera", "sclerae", "visual acuity", "mucous membranes",
        "dentition", "teeth", "tongue",
    ],
    "neck": [
        "neck", "thyroid", "jvp", "jvd", "jugular", "jugular venous pressure", "jugular venous distension",
        "carotid", "carotids", "carotid bruit", "trachea", "tracheal",
    ],
    "cardiovascular": [
        "heart", "cardiac", "cardiovascular", "cv", "cvs", "precordium", "precordial", "murmur", "murmurs",
        "heart sounds", "pmi", "apex beat", "apical impulse", "s3", "s4", "gallop", "pericardial rub",
        "friction rub", "heaves", "thrills",
    ],
    "respiratory": [
        "lung", "lungs", "chest", "respiratory", "pulmonary", "resp", "breath sounds", "percuss chest",
        "percuss the chest", "percussion of the chest", "wheeze", "wheezes", "crackles", "rales",
        "air entry", "tactile fremitus", "fremitus", "egophony", "chest expansion", "respiratory effort",
    ],
    "abdominal": [
        "abdomen", "abdominal", "belly", "stomach", "tummy", "bowel sounds", "mcburney", "mcburney's",
        "murphy", "murphy's", "murphy sign", "rovsing", "psoas", "obturator", "rebound", "guarding",
        "liver", "spleen", "hepatomegaly", "splenomegaly", "epigastrium", "epigastric", "ascites",
        "shifting dullness", "right upper quadrant", "right lower quadrant", "ruq", "rlq", "llq", "luq",
    ],
    "back": [
        "back", "spine", "spinal", "straight leg raise", "straight leg raising", "slr", "lumbar",
        "vertebral", "vertebrae", "cva tenderness", "costovertebral", "costovertebral angle",
        "sacroiliac", "paraspinal", "cervical spine", "c-spine",
    ],
    "musculoskeletal": [
        "musculoskeletal", "msk", "joint", "joints", "knee", "knees", "shoulder", "shoulders", "hip",
        "hips", "elbow", "wrist", "hand", "hands", "chest wall", "range of motion", "muscle", "muscles",
        "costochondral", "synovitis",
    ],
    "extremities": [
        "extremities", "extremity", "limbs", "limb", "legs", "leg", "edema", "oedema", "pulses",
        "peripheral pulses", "pedal pulses", "calf", "calves", "ankle", "ankles", "feet", "foot",
        "capillary refill", "clubbing", "homan", "homans", "cyanosis",
    ],
    "neurological": [
        "neuro", "neurological", "neurologic", "nervous system", "reflex", "reflexes", "cranial nerve",
        "cranial nerves", "strength", "power", "sensation", "sensory", "gait", "romberg", "coordination",
        "cerebellar", "finger-nose", "finger to nose", "heel-shin", "babinski", "plantar", "plantars",
        "tone", "pronator drift", "motor", "kernig", "brudzinski", "meningeal signs", "neck stiffness",
        "visual fields", "dysdiadochokinesia",
    ],
    "mental_status": [
        "mental status", "mental state", "mse", "orientation", "oriented", "mood", "affect", "cognition",
        "cognitive", "mini-mental", "mmse", "memory", "thought process", "thought content", "insight",
        "judgement", "judgment", "suicidal",
    ],
    "skin": [
        "skin", "rash", "rashes", "lesion", "lesions", "integument", "dermatologic", "mole", "moles",
        "wound", "turgor", "jaundice", "pallor", "bruising", "petechiae",
    ],
    "lymph": ["lymph", "lymph node", "lymph nodes", "lymphadenopathy", "nodes", "glands", "axillary nodes"],
    "breast": ["breast", "breasts"],
    "pelvic": [
        "pelvic", "pelvis", "speculum", "bimanual", "vaginal", "cervix", "adnexa", "adnexal",
        "cervical motion tenderness", "uterus",
    ],
    "genitourinary": [
        "genital", "genitals", "genitalia", "genitourinary", "gu", "testes", "testicular", "testicle",
        "scrotum", "scrotal", "penis", "inguinal", "hernia",
    ],
    "rectal": ["rectal", "rectum", "dre", "prostate", "digital rectal"],
}

NORMAL_FINDINGS: dict[str, str] = {
    "general": "Alert, well-appearing, in no acute distress.",
    "heent": "Normocephalic and atraumatic. Pupils equal and reactive to light, conjunctivae pink, sclerae "
    "anicteric. Ear canals and tympanic membranes normal. Oropharynx clear, mucous membranes moist.",
    "neck": "Supple. No lymphadenopathy or thyromegaly. JVP not raised. No carotid bruits. Trachea midline.",
    "cardiovascular": "Regular rate and rhythm. Normal S1 and S2. No murmurs, rubs or gallops.",
    "respiratory": "Normal work of breathing. Clear to auscultation bilaterally, no wheezes or crackles. "
    "Resonant to percussion.",
    "abdominal": "Soft, non-tender, non-distended. Normal bowel sounds. No organomegaly or masses.",
    "genitourinary": "Normal external genitalia. No lesions, masses or hernias.",
    "rectal": "Normal sphincter tone. No masses or tenderness. No blood on the glove.",
    "pelvic": "Normal external genitalia. No cervical motion tenderness. No adnexal masses or tenderness.",
    "breast": "Symmetric. No masses, skin changes or nipple discharge.",
    "musculoskeletal": "Full range of motion. No joint swelling, deformity or tenderness.",
    "back": "No spinal or paraspinal tenderness. Full range of motion. No costovertebral angle tenderness. "
    "Straight leg raise negative.",
    "extremities": "Warm and well perfused. No edema, cyanosis or clubbing. Pulses 2+ and symmetric. "
    "Capillary refill under 2 seconds.",
    "neurological": "Alert and oriented. Cranial nerves II-XII intact. Normal tone, strength, sensation and "
    "reflexes. Normal coordination and gait.",
    "mental_status": "Alert and oriented to person, place and time. Appropriate mood and affect. Coherent, "
    "goal-directed thought process.",
    "skin": "Warm and dry. No rashes, lesions or jaundice.",
    "lymph": "No cervical, axillary or inguinal lymphadenopathy.",
}


# Words that only name a system (as opposed to a maneuver or a structure in it).
SYSTEM_NAMES: dict[str, str] = {
    "general": "general appearance",
    "heent": "heent head",
    "neck": "neck",
    "cardiovascular": "heart cardiac cardiovascular cv cvs precordium",
    "respiratory": "lung lungs chest respiratory pulmonary resp",
    "abdominal": "abdomen abdominal belly stomach tummy",
    "back": "back spine spinal",
    "musculoskeletal": "musculoskeletal msk",
    "extremities": "extremities extremity limbs limb legs leg",
    "neurological": "neuro neurological neurologic nervous system",
    "mental_status": "mental status state",
    "skin": "skin",
    "lymph": "lymph",
    "breast": "breast breasts",
    "pelvic": "pelvic pelvis",
    "genitourinary": "genital genitals genitalia genitourinary gu",
    "rectal": "rectal rectum",
    "vitals": "vital vitals signs",
}


def system_name_tokens(system: str) -> set[str]:
    from .lexicon import stem

    return {stem(w) for w in SYSTEM_NAMES.get(system, "").split()}


def _compile() -> list[tuple[re.Pattern[str], str]]:
    pairs = [(phrase, system) for system, phrases in SYSTEM_PHRASES.items() for phrase in phrases]
    pairs.sort(key=lambda p: -len(p[0]))  # "chest wall" before "chest", "heart rate" before "heart"
    return [(re.compile(r"(?<![a-z0-9])" + re.escape(p) + r"(?![a-z0-9])"), s) for p, s in pairs]


_PATTERNS = _compile()


def systems_in(request: str) -> list[str]:
    """Body systems named in a request, in the order they appear ("heart and lungs")."""
    text = request.lower().replace("\u2019", "'")
    hits: list[tuple[int, str]] = []
    for pattern, system in _PATTERNS:
        for m in pattern.finditer(text):
            hits.append((m.start(), system))
        text = pattern.sub(lambda m: " " * len(m.group(0)), text)  # longest phrase claims the words
    seen: list[str] = []
    for _pos, system in sorted(hits):
        if system not in seen:
            seen.append(system)
    return seen
