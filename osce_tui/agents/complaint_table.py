"""Chief-complaint table for the offline doctor.

Each profile says, for one presenting complaint, which associated symptoms a
careful examinee asks about, which exams and tests they request, and the
differential they keep in mind (with words that, found in the patient's
answers or the exam results, support each diagnosis). The offline doctor sees
only the doorway, so the table is keyed on the doorway's chief complaint.

This is general clinical reasoning written for the tool, not derived from any
case file: the doctor must not know the case's answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Dx:
    name: str
    lay: str  # how the doctor says it to the patient
    history_words: tuple[str, ...]
    exam_words: tuple[str, ...] = ()


@dataclass(frozen=True)
class Profile:
    key: str
    triggers: tuple[str, ...]  # regexes matched against the chief complaint
    pain: bool  # ask location / radiation / quality / severity
    associated: tuple[tuple[str, str], ...]  # (step id, question)
    exams: tuple[str, ...]
    tests: tuple[str, ...]
    differential: tuple[Dx, ...]
    workup: tuple[str, ...] = ()
    sexual_history: bool = False
    sexes: tuple[str, ...] = ()  # empty: any sex


PROFILES: tuple[Profile, ...] = (
    Profile(
        key="chest_pain",
        triggers=(r"chest (pain|tightness|pressure|discomfort)", r"\bangina\b"),
        pain=True,
        associated=(
            ("assoc_breath", "Have you been short of breath?"),
            ("assoc_sweat", "Have you had any sweating or felt clammy?"),
            ("assoc_nausea", "Any nausea or vomiting?"),
            ("assoc_palpitations", "Have you noticed your heart racing or beating irregularly?"),
            ("assoc_dizzy", "Have you felt light-headed or fainted?"),
            ("assoc_legs", "Any swelling or pain in your legs?"),
            ("assoc_fever_cough", "Any fever or cough recently?"),
            ("assoc_heartburn", "Do you get heartburn or pain related to meals?"),
            ("assoc_travel", "Have you travelled recently or been immobile for a long time?"),
        ),
        exams=(
            "general appearance", "vital signs", "inspect JVP and auscultate carotids", "auscultate the heart",
            "palpate peripheral pulses and compare blood pressure in both arms", "auscultate and percuss the lungs",
            "palpate the chest wall", "palpate the abdomen", "inspect legs for edema and palpate calves",
        ),
        tests=("ECG", "troponin", "chest X-ray", "CBC", "basic metabolic panel", "lipid panel"),
        workup=("D-dimer if PE is suspected", "echocardiogram"),
        differential=(
            Dx("Acute coronary syndrome", "a problem with the blood supply to your heart, such as a heart attack",
               ("pressure", "squeez", "heavy", "tight", "arm", "jaw", "sweat", "clammy", "exert", "stairs", "smok",
                "cholesterol", "blood pressure", "father", "dad", "heart attack", "walk"),
               ("s4", "diaphoretic", "distress", "gallop")),
            Dx("Aortic dissection", "a tear in the main blood vessel from the heart",
               ("tearing", "ripping", "back", "sudden", "blood pressure"), ("unequal", "asymmetr", "blood pressure")),
            Dx("Pulmonary embolism", "a blood clot in the lungs",
               ("breath", "leg", "calf", "travel", "flight", "swelling", "cough"), ("tachy", "heart rate", "calf")),
            Dx("Gastroesophageal reflux disease", "acid reflux from the stomach",
               ("heartburn", "acid", "meal", "eating", "burning"), ("epigastr",)),
            Dx("Acute pericarditis", "inflammation of the lining around the heart",
               ("sharp", "lean", "lying", "fever", "cold", "flu"), ("rub",)),
        ),
    ),
    Profile(
        key="pelvic_pain",
        triggers=(r"lower abdominal|pelvic|vaginal|period|menstrual",),
        sexes=("female",),
        pain=True,
        associated=(
            ("obgyn_lmp", "When was your last menstrual period?"),
            ("obgyn_pregnant", "Is there any chance you could be pregnant?"),
            ("assoc_bleeding", "Have you had any vaginal bleeding or discharge?"),
            ("assoc_dizzy", "Have you felt dizzy or faint?"),
            ("assoc_shoulder", "Any pain in your shoulder tip?"),
            ("assoc_nausea", "Any nausea or vomiting?"),
            ("assoc_fever", "Any fever or chills?"),
            ("assoc_urine", "Any pain or burning when you pass urine?"),
            ("assoc_bowel", "Any change in your bowels?"),
            ("obgyn_contraception", "What do you use for contraception?"),
        ),
        exams=(
            "general appearance", "vital signs", "auscultate the heart", "auscultate the lungs",
            "palpate the abdomen for tenderness, rebound and guarding", "CVA tenderness", "pelvic examination",
        ),
        tests=("urine pregnancy test", "serum beta-hCG", "CBC", "blood type and screen", "urinalysis", "pelvic ultrasound"),
        workup=("transvaginal ultrasound", "gonorrhoea and chlamydia testing"),
        sexual_history=True,
        differential=(
            Dx("Ectopic pregnancy", "a pregnancy growing outside the womb",
               ("late", "missed", "period", "pregnan", "spotting", "bleeding", "dizzy", "faint", "shoulder", "one side"),
               ("adnexal", "tender", "tachy", "pale")),
            Dx("Pelvic inflammatory disease", "an infection of the womb and tubes",
               ("discharge", "fever", "partner", "condom"), ("cervical motion",)),
            Dx("Ovarian torsion", "a twisted ovary", ("sudden", "one side", "vomit")),
            Dx("Ruptured ovarian cyst", "a burst cyst on the ovary", ("sudden", "sex", "exercise")),
            Dx("Acute appendicitis", "inflammation of the appendix", ("navel", "right", "appetite", "fever")),
        ),
    ),
    Profile(
        key="abdominal_pain",
        triggers=(r"abdominal|abdomen|belly|stomach|tummy|epigastr|flank|groin|pelvic pain",),
        pain=True,
        associated=(
            ("assoc_nausea", "Any nausea or vomiting?"),
            ("assoc_appetite", "How has your appetite been?"),
            ("assoc_fever", "Have you had a fever or chills?"),
            ("assoc_bowel", "Any change in your bowel movements, like diarrhoea or constipation?"),
            ("assoc_blood", "Have you seen any blood in your stool or vomit?"),
            ("assoc_urine", "Any burning or pain when you pass urine, or blood in it?"),
            ("assoc_food", "Does eating make it better or worse?"),
        ),
        exams=(
            "general appearance", "vital signs", "auscultate the heart", "auscultate the lungs",
            "inspect and auscultate the abdomen", "palpate the abdomen for tenderness, rebound and guarding",
            "McBurney's point, Rovsing, psoas and obturator signs", "Murphy's sign", "CVA tenderness",
        ),
        tests=("CBC", "comprehensive metabolic panel", "lipase", "urinalysis", "CT abdomen and pelvis"),
        workup=("abdominal ultrasound",),
        differential=(
            Dx("Acute appendicitis", "inflammation of the appendix",
               ("navel", "belly button", "right", "lower", "appetite", "vomit", "fever", "walking", "moving", "cough"),
               ("mcburney", "rebound", "guarding", "rovsing", "psoas")),
            Dx("Acute gastroenteritis", "a stomach bug", ("diarrh", "loose", "vomit", "food", "ate", "others")),
            Dx("Acute cholecystitis", "inflammation of the gallbladder",
               ("right upper", "fatty", "meal", "shoulder"), ("murphy",)),
            Dx("Nephrolithiasis", "a kidney stone", ("flank", "groin", "urine", "blood", "colicky", "waves"), ("cva",)),
            Dx("Acute pancreatitis", "inflammation of the pancreas", ("alcohol", "drink", "back", "epigastr")),
        ),
    ),
    Profile(
        key="headache",
        triggers=(r"headache|head pain|migraine",),
        pain=True,
        associated=(
            ("assoc_vision", "Any changes in your vision?"),
            ("assoc_nausea", "Any nausea or vomiting?"),
            ("assoc_light", "Does light or noise bother you?"),
            ("assoc_fever_neck", "Any fever or stiffness in your neck?"),
            ("assoc_weakness", "Any weakness, numbness or tingling anywhere?"),
            ("assoc_confusion", "Have you had any confusion, trouble speaking or blackouts?"),
            ("assoc_trauma", "Have you hit your head or had any injury recently?"),
            ("assoc_scalp", "Any tenderness of your scalp or pain in your jaw when chewing?"),
            ("assoc_sleep", "Does the headache wake you from sleep or get worse when you cough or strain?"),
        ),
        exams=(
            "general appearance", "vital signs", "fundoscopy and pupils", "neck stiffness and meningeal signs",
            "cranial nerves", "motor strength, tone and reflexes", "sensation", "coordination and gait",
            "palpate temporal arteries",
        ),
        tests=("CT head without contrast", "CBC", "ESR", "CRP", "basic metabolic panel"),
        workup=("lumbar puncture if CT is negative", "MRI brain"),
        differential=(
            Dx("Subarachnoid haemorrhage", "bleeding around the brain",
               ("sudden", "worst", "thunderclap", "seconds", "exert", "vomit", "neck", "collapse"),
               ("neck stiffness", "meningism", "kernig", "brudzinski")),
            Dx("Migraine", "a migraine", ("throbbing", "one side", "light", "aura", "zigzag", "before", "nausea")),
            Dx("Tension-type headache", "a tension headache", ("band", "stress", "both sides", "tight")),
            Dx("Meningitis", "an infection around the brain", ("fever", "neck", "rash", "light")),
            Dx("Giant cell arteritis", "inflammation of the blood vessels of the scalp", ("scalp", "jaw", "vision", "temple")),
        ),
    ),
    Profile(
        key="cough_fever",
        triggers=(r"cough|fever|shortness of breath|breathless|wheez|sputum",),
        pain=False,
        associated=(
            ("assoc_sputum", "Are you bringing up any phlegm? What colour is it?"),
            ("assoc_blood", "Have you coughed up any blood?"),
            ("assoc_breath", "Are you short of breath?"),
            ("assoc_chest_pain", "Any chest pain, especially when you breathe in?"),
            ("assoc_fever", "Have you had fevers, chills or night sweats?"),
            ("assoc_weight", "Have you lost any weight?"),
            ("assoc_uri", "Any sore throat, runny nose or earache?"),
            ("assoc_contacts", "Has anyone around you been ill?"),
            ("assoc_travel", "Have you travelled anywhere recently?"),
        ),
        exams=(
            "general appearance", "vital signs", "examine throat and ears", "palpate cervical lymph nodes",
            "inspect chest expansion and palpate tactile fremitus", "percuss the chest", "auscultate the lungs",
            "auscultate the heart", "inspect legs for edema",
        ),
        tests=("chest X-ray", "CBC", "basic metabolic panel", "CRP", "sputum culture", "blood cultures"),
        workup=("pulse oximetry", "respiratory viral panel"),
        differential=(
            Dx("Community-acquired pneumonia", "a chest infection (pneumonia)",
               ("phlegm", "green", "yellow", "rust", "fever", "chills", "breath", "breathe in", "shiver"),
               ("crackles", "bronchial", "dull", "fremitus", "egophony")),
            Dx("Acute bronchitis", "inflammation of the airways", ("cough", "cold", "phlegm")),
            Dx("Influenza", "the flu", ("aches", "fever", "contacts", "sore throat", "headache")),
            Dx("Pulmonary tuberculosis", "tuberculosis", ("night sweats", "weight", "travel", "blood", "weeks")),
            Dx("Pulmonary embolism", "a blood clot in the lungs", ("sudden", "leg", "pill", "flight")),
        ),
    ),
    Profile(
        key="palpitations",
        triggers=(r"palpitation|racing|heart (racing|pounding|fluttering)|weight loss|tremor|heat intolerance",),
        pain=False,
        associated=(
            ("assoc_heat", "Do you find hot weather hard to tolerate, or sweat more than usual?"),
            ("assoc_weight", "Have you lost weight without trying? How is your appetite?"),
            ("assoc_tremor", "Have you noticed any shaking or tremor in your hands?"),
            ("assoc_sleep", "How have you been sleeping?"),
            ("assoc_mood", "Have you been feeling anxious or irritable?"),
            ("assoc_bowel", "Any change in your bowel habits?"),
            ("assoc_eyes", "Any changes in your eyes, like grittiness, bulging or double vision?"),
            ("assoc_neck", "Any swelling in your neck?"),
            ("assoc_chest", "Any chest pain, shortness of breath or fainting?"),
            ("assoc_periods", "Have your periods changed at all?"),
            ("social_caffeine", "How much coffee, tea or energy drinks do you have?"),
        ),
        exams=(
            "general appearance", "vital signs", "inspect the eyes for exophthalmos and lid lag",
            "examine the thyroid", "auscultate the heart", "auscultate the lungs", "inspect hands for tremor",
            "reflexes", "skin",
        ),
        tests=("TSH", "free T4", "ECG", "CBC", "basic metabolic panel"),
        workup=("TSH receptor antibodies", "thyroid uptake scan"),
        differential=(
            Dx("Graves' disease (hyperthyroidism)", "an overactive thyroid gland",
               ("weight", "heat", "sweat", "tremor", "shak", "eye", "gritty", "neck", "loose", "appetite", "periods"),
               ("goitre", "goiter", "thyroid", "tremor", "exophthalmos", "lid lag", "bruit")),
            Dx("Generalized anxiety disorder / panic disorder", "anxiety", ("stress", "worry", "anxious", "panic")),
            Dx("Supraventricular tachycardia", "a heart rhythm problem", ("sudden", "racing", "episodes", "stops")),
            Dx("Pheochromocytoma", "a rare hormone-producing tumour", ("headache", "sweat", "episodes")),
            Dx("Stimulant or substance use", "the effect of stimulants", ("coffee", "energy drink", "cocaine", "pills")),
        ),
    ),
    Profile(
        key="back_pain",
        triggers=(r"back pain|backache|sciatica|back (ache|stiffness|injury)",),
        pain=True,
        associated=(
            ("assoc_leg", "Does the pain go down your leg? Any numbness or tingling?"),
            ("assoc_weakness", "Any weakness in your legs?"),
            ("assoc_bladder", "Any trouble controlling your bladder or bowels?"),
            ("assoc_saddle", "Any numbness around your groin or back passage?"),
            ("assoc_fever", "Any fever or night sweats?"),
            ("assoc_weight", "Any weight loss you can't explain?"),
            ("assoc_trauma", "Did you injure or strain your back?"),
            ("assoc_night", "Is the pain worse at night or when lying still?"),
        ),
        exams=(
            "general appearance", "vital signs", "inspect and palpate the spine", "back range of motion",
            "straight leg raise", "lower limb strength", "lower limb reflexes", "lower limb sensation", "gait",
        ),
        tests=("MRI lumbar spine", "CBC", "ESR", "CRP"),
        workup=("lumbar spine X-ray",),
        differential=(
            Dx("Lumbar disc herniation with radiculopathy", "a slipped disc pressing on a nerve",
               ("leg", "buttock", "tingling", "numb", "lift", "bend", "cough", "sneeze", "shoot"),
               ("straight leg", "reflex", "weakness", "sensation")),
            Dx("Lumbar strain", "a strained back muscle", ("lift", "strain", "muscle")),
            Dx("Spinal stenosis", "narrowing of the spinal canal", ("walking", "standing", "bend forward")),
            Dx("Cauda equina syndrome", "severe pressure on the nerves at the base of the spine", ("bladder", "bowel", "saddle")),
            Dx("Vertebral metastasis or infection", "a growth or infection in the spine", ("weight", "night", "fever", "cancer")),
        ),
    ),
    Profile(
        key="low_mood",
        triggers=(r"feeling low|low mood|mood|depress|\bsad\b|anxi|stress|sleep|tearful",),
        pain=False,
        associated=(
            ("assoc_interest", "Have you lost interest or enjoyment in things you used to like?"),
            ("assoc_sleep", "How are you sleeping?"),
            ("assoc_appetite", "How is your appetite? Any change in your weight?"),
            ("assoc_energy", "How is your energy?"),
            ("assoc_concentration", "How is your concentration?"),
            ("assoc_guilt", "Do you feel guilty or worthless?"),
            ("assoc_suicide", "Have you had any thoughts of harming yourself or ending your life?"),
            ("assoc_mania", "Have you ever had times when you felt very high, full of energy and needed little sleep?"),
            ("assoc_psychosis", "Have you heard or seen things other people don't?"),
            ("assoc_stressors", "Has anything stressful happened in your life recently?"),
            ("assoc_thyroid", "Have you felt cold, gained weight or been constipated?"),
            ("social_support", "Who do you have for support at home?"),
        ),
        exams=("general appearance", "vital signs", "mental status examination", "examine the thyroid", "neurological exam"),
        tests=("TSH", "CBC", "basic metabolic panel", "vitamin B12 and folate", "urine drug screen"),
        workup=("PHQ-9 questionnaire",),
        differential=(
            Dx("Major depressive disorder", "depression",
               ("low", "sad", "interest", "enjoy", "sleep", "appetite", "tired", "energy", "concentrat", "guilt", "weeks")),
            Dx("Adjustment disorder with depressed mood", "a reaction to a stressful event", ("stress", "job", "breakup", "loss")),
            Dx("Hypothyroidism", "an underactive thyroid", ("cold", "weight", "constipat", "tired")),
            Dx("Bipolar disorder", "bipolar disorder", ("high", "energy", "little sleep", "spending")),
            Dx("Substance-induced mood disorder", "the effect of alcohol or drugs", ("drink", "alcohol", "cannabis")),
        ),
    ),
    Profile(
        key="skin_lesion",
        triggers=(r"mole|lesion|rash|spot|skin|lump|itch",),
        pain=False,
        associated=(
            ("assoc_change", "How has it changed: size, shape or colour?"),
            ("assoc_symptoms", "Does it itch, bleed or crust?"),
            ("assoc_other_lesions", "Do you have any other spots or moles that worry you?"),
            ("assoc_sun", "How much sun exposure have you had over the years? Any bad sunburns or sunbeds?"),
            ("assoc_skin_history", "Have you had skin cancer or any skin lesions removed before?"),
            ("assoc_systemic", "Any weight loss, tiredness or lumps anywhere?"),
        ),
        exams=("general appearance", "inspect the lesion: size, border, colour", "full skin examination", "palpate lymph nodes"),
        tests=("dermoscopy", "excisional biopsy"),
        workup=("histopathology of the excised lesion",),
        differential=(
            Dx("Melanoma", "a type of skin cancer called melanoma",
               ("bigger", "grown", "changed", "colour", "color", "dark", "bleed", "itch", "sunburn", "sun", "irregular"),
               ("asymmetr", "irregular", "border", "variegat", "black")),
            Dx("Dysplastic (atypical) nevus", "an unusual but harmless mole", ("mole", "many moles")),
            Dx("Seborrheic keratosis", "a harmless warty skin growth", ("stuck", "warty", "crust")),
            Dx("Basal cell carcinoma", "a slow-growing skin cancer", ("pearly", "bleed", "sore", "heal")),
        ),
    ),
    Profile(
        key="confusion",
        triggers=(r"confus|delirium|disorient|drows|altered mental|not (?:herself|himself)|behaviour change",),
        pain=False,
        associated=(
            ("assoc_fluctuation", "Does the confusion come and go during the day?"),
            ("assoc_hallucinations", "Have you been seeing or hearing things that aren't there?"),
            ("assoc_fever", "Have you had a fever or shivers?"),
            ("assoc_urine", "Any burning or stinging when you pass urine, or going more often?"),
            ("assoc_cough", "Any cough or shortness of breath?"),
            ("assoc_pain", "Have you had pain anywhere?"),
            ("assoc_fall", "Have you had any falls or hit your head?"),
            ("assoc_focal", "Any weakness on one side, facial droop or slurred speech?"),
            ("assoc_intake", "How have you been eating and drinking, and are your bowels working?"),
            ("assoc_med_changes", "Have any of your medicines been started or changed recently?"),
            ("assoc_sugar", "Have you had any low blood sugars or sweaty, shaky spells?"),
            ("assoc_baseline", "What is your memory and day-to-day function normally like?"),
        ),
        exams=(
            "general appearance", "vital signs", "mental status examination", "neurological exam", "neck stiffness",
            "auscultate the heart", "auscultate the lungs", "palpate the abdomen", "CVA tenderness", "skin",
        ),
        tests=("urinalysis", "urine culture", "CBC", "basic metabolic panel", "blood glucose", "CRP", "chest X-ray", "ECG"),
        workup=("blood cultures", "CT head"),
        differential=(
            Dx("Delirium due to urinary tract infection", "a sudden confusion caused by a urine infection",
               ("stinging", "waterworks", "urine", "wee", "fever", "hot", "shiver", "sudden", "comes and goes"),
               ("suprapubic", "cva", "confus", "inattent")),
            Dx("Medication-induced delirium", "confusion from a side effect of medicines", ("tablets", "dose", "started", "switched", "codeine", "strong")),
            Dx("Hypoglycaemia", "a low blood sugar", ("sugar", "sweaty", "shaky", "gliclazide", "insulin")),
            Dx("Stroke", "a stroke", ("weakness", "droop", "slurred", "one side")),
            Dx("Subdural haematoma", "a bleed on the surface of the brain after a fall", ("fall", "fell", "head", "floor")),
            Dx("Dementia", "dementia", ("memory", "forgetful", "gradual", "months")),
        ),
    ),
)

GENERIC = Profile(
    key="generic",
    triggers=(),
    pain=False,
    associated=(
        ("assoc_fever", "Have you had any fever or chills?"),
        ("assoc_weight", "Any weight loss or change in appetite?"),
        ("assoc_fatigue", "How is your energy?"),
        ("assoc_sleep", "How are you sleeping?"),
        ("assoc_nausea", "Any nausea or vomiting?"),
        ("assoc_bowel_urine", "Any change in your bowel or bladder habits?"),
    ),
    exams=("general appearance", "vital signs", "HEENT", "neck", "auscultate the heart", "auscultate the lungs", "palpate the abdomen", "extremities", "neurological exam"),
    tests=("CBC", "comprehensive metabolic panel", "urinalysis"),
    differential=(
        Dx("Viral illness", "a viral infection", ("fever", "cold", "aches")),
        Dx("Anaemia", "a low blood count", ("tired", "pale", "breath")),
        Dx("Thyroid dysfunction", "a thyroid problem", ("weight", "heat", "cold", "tired")),
    ),
)


def profile_for(chief_complaint: str, sex: str = "unspecified") -> Profile:
    """First profile whose trigger matches the complaint (and sex); the generic one otherwise."""
    text = chief_complaint.lower()
    for profile in PROFILES:
        if profile.sexes and sex not in profile.sexes:
            continue
        if any(re.search(t, text) for t in profile.triggers):
            return profile
    return GENERIC
