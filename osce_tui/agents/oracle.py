"""The exam oracle: physical-exam findings and test results from the case only.

Rules, in the order they are applied to an exam request:

1. Find the body systems the request names (``exam_systems.systems_in``).
2. For each system, prefer the case finding whose component or maneuvers
   match the request ("palpate the chest wall"; "auscultate the heart" picks
   the auscultation finding: maneuver verbs are folded, so "listen" equals
   "auscultation"), first within that system, then in any system when the
   shared words explain at least half the request (cases file peripheral
   pulses under cardiovascular, the doctor may ask for "pulses"). Words that
   only name a system ("examine the abdomen") select no component.
3. Otherwise return all of the case's findings for that system.
4. If the case lists none for that system, return the built-in normal exam
   (``source="normal"``). The oracle therefore never reports an abnormal
   finding the case does not list.

Tests: a request matches a case investigation by name or alias (exact after
normalising, through a table of common synonyms, by containment, then fuzzy
with rapidfuzz at a high cut-off). A test the case does not list is answered
"not available for this case" with ``source="unknown"``. We deliberately do not
report "within normal limits" for it: a normal result is also information the
case author never vouched for (a troponin the author forgot must not come back
normal in an MI case), so the conservative answer is no result at all.
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from ..domain.case import Case, ExamFinding, Investigation
from .base import ExamOracle, OracleAnswer
from .exam_systems import NORMAL_FINDINGS, system_name_tokens, systems_in
from .lexicon import stem

# Filler: says nothing about which maneuver is meant.
_FILLER = frozenset(
    {stem(w) for w in (
        "examine examination exam check assess perform do the a an of for and to on in at with your his her "
        "their both bilateral bilaterally please i would like want will now let me sign signs test"
    ).split()}
)
# Maneuver verbs, folded to one token each: "listen" and "auscultation" are the same act.
_VERBS = {
    "auscult": ("auscultate", "auscultation", "auscultated", "listen", "hear"),
    "palpat": ("palpate", "palpation", "palpated", "feel", "press"),
    "percuss": ("percuss", "percussion", "tap"),
    "inspect": ("inspect", "inspection", "look", "observe", "observation"),
}
_VERB_OF = {stem(w): "v:" + v for v, words in _VERBS.items() for w in words}
_WORD = re.compile(r"[a-z0-9]+")

NOT_AVAILABLE = "Result not available for this case."
UNKNOWN_EXAM = "No finding available for that request. Name a body system or maneuver (e.g. 'auscultate the heart')."

# Groups of names for the same investigation, used to bridge the doctor's word
# and the case's (the case may say "FBC" where the doctor says "CBC").
_TEST_SYNONYMS: list[set[str]] = [
    {"ecg", "ekg", "electrocardiogram", "12 lead ecg", "12-lead ecg", "12 lead ekg"},
    {"cbc", "fbc", "full blood count", "complete blood count", "blood count", "hemogram"},
    {"bmp", "u&e", "u and e", "electrolytes", "basic metabolic panel", "chem 7", "renal panel", "kidney function"},
    {"cmp", "comprehensive metabolic panel", "chem 14"},
    {"lft", "lfts", "liver function tests", "liver function", "liver panel", "hepatic panel"},
    {"cxr", "chest x-ray", "chest xray", "chest x ray", "chest radiograph", "chest film"},
    {"ua", "urinalysis", "urine dipstick", "urine dip", "urine test"},
    {"tsh", "thyroid function", "thyroid function tests", "tfts", "thyroid panel"},
    {"crp", "c-reactive protein", "c reactive protein"},
    {"esr", "sed rate", "erythrocyte sedimentation rate"},
    {"abg", "arterial blood gas", "blood gas"},
    {"hcg", "pregnancy test", "beta hcg", "urine hcg", "serum hcg", "b-hcg"},
    {"ct head", "head ct", "ct brain", "ct scan of the head", "ct of the head"},
    {"lp", "lumbar puncture", "spinal tap", "csf analysis"},
    {"troponin", "trop", "cardiac enzymes", "cardiac markers", "hs troponin", "high-sensitivity troponin"},
    {"d-dimer", "d dimer", "ddimer"},
    {"glucose", "blood glucose", "blood sugar", "fingerstick glucose", "bm", "capillary glucose"},
    {"echo", "echocardiogram", "tte", "transthoracic echocardiogram", "cardiac ultrasound"},
    {"lipase", "serum lipase"},
    {"blood cultures", "blood culture"},
]


def _normalise(text: str) -> str:
    return " ".join(_WORD.findall(text.lower().replace("&", " and ")))


def _tokens(text: str) -> set[str]:
    """Stems of the words that can tell maneuvers apart; verbs as ``v:<verb>``."""
    out: set[str] = set()
    for w in _WORD.findall(text.lower()):
        s = stem(w)
        if s in _FILLER or len(s) < 2:
            continue
        out.add(_VERB_OF.get(s, s))
    return out


def _finding_tokens(f: ExamFinding) -> set[str]:
    tokens = _tokens(f.component)
    for m in f.maneuvers:
        tokens |= _tokens(m)
    return tokens


def _label(f: ExamFinding) -> str:
    return f"{f.component}: {f.finding}"


class CaseOracle(ExamOracle):
    """Answers exam requests and test orders strictly from the case (see module doc)."""

    def examine(self, case: Case, request: str) -> list[OracleAnswer]:
        request = request.strip()
        if not request:
            raise ValueError("empty exam request")
        tokens = _tokens(request)
        systems = systems_in(request)
        # Words that merely name a requested system ("heart", "abdomen") do not
        # pick a component: "examine the abdomen" means all abdominal findings.
        naming = set().union(*(system_name_tokens(s) for s in systems)) if systems else set()
        answers: list[OracleAnswer] = []
        used: set[int] = set()
        for system in systems:
            answer = self._one_system(case, request, system, tokens - naming, used)
            if answer is not None:
                answers.append(answer)
        if not answers:
            # No system named ("Homan's test"?): a direct maneuver match, else unknown.
            best = _best_component(case.exam, tokens, used, cross=True)
            if best:
                used.update(id(f) for f in best)
                answers.append(OracleAnswer(request, best[0].system, " ".join(_label(f) for f in best), "case"))
            else:
                answers.append(OracleAnswer(request, None, UNKNOWN_EXAM, "unknown"))
        return answers

    def _one_system(
        self, case: Case, request: str, system: str, tokens: set[str], used: set[int]
    ) -> OracleAnswer | None:
        if system == "vitals":
            return OracleAnswer(request, "vitals", format_vitals(case), "case")
        own = [f for f in case.exam if f.system == system]
        best = _best_component(own, tokens, used) or _best_component(case.exam, tokens, used, cross=True)
        if best:
            if all(id(f) in used for f in best):
                return None
            used.update(id(f) for f in best)
            return OracleAnswer(request, best[0].system, " ".join(_label(f) for f in best), "case")
        if own:
            fresh = [f for f in own if id(f) not in used]
            if not fresh:
                return None
            used.update(id(f) for f in fresh)
            return OracleAnswer(request, system, " ".join(_label(f) for f in fresh), "case")
        return OracleAnswer(request, system, NORMAL_FINDINGS.get(system, "Normal examination."), "normal")

    def order(self, case: Case, test: str) -> OracleAnswer:
        test = test.strip()
        if not test:
            raise ValueError("empty test order")
        found = match_test(case.tests, test)
        if found is None:
            return OracleAnswer(test, None, NOT_AVAILABLE, "unknown")
        return OracleAnswer(test, found.name, f"{found.name}: {found.result}", "case")


def _best_component(findings: list[ExamFinding], tokens: set[str], used: set[int], cross: bool = False) -> list[ExamFinding]:
    """Findings whose component/maneuvers best match the request's tokens.

    Within a system any shared token counts (a verb alone picks "Cardiac
    auscultation" over "Peripheral pulses" for "auscultate the heart").
    Across systems (``cross``) verbs do not count and the shared words must
    explain at least half of the request's words ("check pulses" finds pulses
    filed under cardiovascular; "straight leg raise" does not find the legs).
    Ties break on how often the shared tokens occur, then all are returned.
    """
    wanted = {t for t in tokens if not t.startswith("v:")} if cross else tokens
    if not wanted:
        return []
    scored: list[tuple[int, int, int, ExamFinding]] = []
    for f in findings:
        shared = wanted & _finding_tokens(f)
        if not shared:
            continue
        nouns = {t for t in shared if not t.startswith("v:")}
        if cross and len(nouns) / len(wanted) < 0.5:
            continue
        mentions = sum(len(shared & _tokens(text)) for text in (f.component, *f.maneuvers))
        scored.append((len(nouns), len(shared), mentions, f))
    if not scored:
        return []
    top = max((a, b, c) for a, b, c, _ in scored)
    return [f for a, b, c, f in scored if (a, b, c) == top]


def format_vitals(case: Case) -> str:
    parts = case.doorway.vitals.parts()
    return "Vital signs: " + ", ".join(parts) + "."


def _names(t: Investigation) -> list[str]:
    return [_normalise(n) for n in (t.name, *t.aliases) if _normalise(n)]


def _synonyms_of(query: str) -> set[str]:
    out = {query}
    for group in _TEST_SYNONYMS:
        normal = {_normalise(g) for g in group}
        if query in normal:
            out |= normal
    return out


def match_test(tests: list[Investigation], request: str) -> Investigation | None:
    """The case investigation a request names, or None. Conservative by design."""
    query = _normalise(request)
    if not query:
        return None
    queries = _synonyms_of(query)
    # 1. exact name/alias, directly or via the synonym table
    for t in tests:
        if queries & set(_names(t)):
            return t
    # 2. containment on whole words ("troponin level" contains "troponin")
    best: tuple[int, Investigation] | None = None
    for t in tests:
        for name in _names(t):
            if len(name) < 3:
                continue
            for q in queries:
                if re.search(r"\b" + re.escape(name) + r"\b", q) or (len(q) >= 4 and re.search(r"\b" + re.escape(q) + r"\b", name)):
                    if best is None or len(name) > best[0]:
                        best = (len(name), t)
    if best:
        return best[1]
    # 3. fuzzy, for typos ("tropnin", "electrocardiagram")
    scored: list[tuple[float, Investigation]] = []
    for t in tests:
        for name in _names(t):
            if len(name) >= 4 and len(query) >= 4:
                scored.append((fuzz.ratio(query, name), t))
    scored.sort(key=lambda p: -p[0])
    if scored and scored[0][0] >= 85:
        return scored[0][1]
    return None
