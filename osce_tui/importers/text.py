"""Small text helpers every importer shares: slugs, sentences, labels, flags.

Dataset text is clinical shorthand written in the third person. These helpers
only reshape it (split, label, lower-case); they never add content.
"""

from __future__ import annotations

import re
import unicodedata

_SLUG_DROP = re.compile(r"[^a-z0-9]+")


def slug(text: str, max_len: int = 48) -> str:
    """'Progressive multifocal encephalopathy (PML)' -> 'progressive-multifocal-encephalopathy-pml'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    s = _SLUG_DROP.sub("-", ascii_text.lower()).strip("-")
    if len(s) > max_len:
        s = s[:max_len].rsplit("-", 1)[0] or s[:max_len]
    return s or "case"


def fact_id(text: str, max_len: int = 40) -> str:
    """Identifier safe for ``HistoryFact.id`` (``^[a-z0-9_]+$``)."""
    return slug(text, max_len).replace("-", "_") or "fact"


def humanize_key(key: str) -> str:
    """'Right_Upper_Limb_Strength' -> 'Right upper limb strength'; keeps acronyms like 'CT', 'MRI'."""
    words = [w for w in re.split(r"[_\s]+", str(key).strip()) if w]
    out = []
    for i, w in enumerate(words):
        keep = (w.isupper() and len(w) > 1) or any(c.isdigit() for c in w) or "-" in w and w.upper() == w
        out.append(w if keep or i == 0 else w.lower())
    text = " ".join(out)
    return text[:1].upper() + text[1:]


# Abbreviations whose full stop does not end a sentence.
_ABBREV = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|St|vs|approx|e\.g|i\.e|etc|No)\.$", re.IGNORECASE)


def sentences(text: str) -> list[str]:
    """Split prose into sentences; keeps decimals ('37.5') and abbreviations together."""
    text = " ".join(str(text).split())
    if not text:
        return []
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])", text)
    merged: list[str] = []
    for part in parts:
        if merged and _ABBREV.search(merged[-1]):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return [p.strip() for p in merged if p.strip()]


def lower_first(text: str) -> str:
    """Lower-case the first letter unless the first word is an acronym ('HIV')."""
    first = text.split(" ", 1)[0]
    if len(first) > 1 and (first.isupper() or any(c.isdigit() for c in first)):
        return text
    return text[:1].lower() + text[1:]


def upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def ensure_period(text: str) -> str:
    text = text.strip()
    return text if not text or text[-1] in ".!?" else text + "."


_NO_CONTENT = re.compile(
    r"^(?:information |data |details? )?(?:not (?:provided|available|given|specified|applicable|documented|reported)"
    r"|none (?:provided|given|reported)|unknown|n/?a|no additional (?:symptoms|information)(?: provided)?"
    r"|no (?:information|data|details) (?:provided|available))\.?$",
    re.IGNORECASE,
)


def is_empty_value(value: object) -> bool:
    """True for None, '' and placeholders like 'Information not provided.'."""
    if value is None:
        return True
    if isinstance(value, (list, dict)):
        return not value
    text = str(value).strip()
    return not text or bool(_NO_CONTENT.match(text))


_NORMAL = re.compile(
    r"\b(?:normal|unremarkable|within normal limits|wnl|no (?:abnormalit|acute|significant|evidence|signs?)|"
    r"negative|non-?tender|clear|intact|regular|symmetric|absent|none|not (?:detected|present|palpable|enlarged))\b",
    re.IGNORECASE,
)
_ABNORMAL = re.compile(
    r"\b(?:abnormal|elevated|increased|decreased|reduced|low|high|positive|present|enlarged|tender(?!ness absent)|"
    r"swollen|swelling|lesions?|mass|murmur|rales|crackles|wheez\w*|distension|distended|rash|ulcer\w*|"
    r"erythema\w*|edema|oedema|atrophy|weakness|deficit|ptosis|ataxi\w*|jaundice|pallor|cyanosis|"
    r"tachy\w*|brady\w*|hypo\w+|hyper\w+|consistent with|suggestive of|indicative of|significant|"
    r"diminished|impaired|irregular|bulging|plaques?|papules?|vesicles?|nodules?|effusion|opacit\w*|"
    r"infiltrat\w*|fracture|inflammation|[0-4]/5)\b",
    re.IGNORECASE,
)


def looks_abnormal(text: str) -> bool:
    """Heuristic abnormal flag for a finding or result.

    Datasets do not flag abnormal findings, so we look for words that name a
    deviation. Text that only uses 'normal' vocabulary is treated as normal;
    when both appear ('normal tone, diminished strength') the finding is
    abnormal, because hiding a real sign is worse than flagging a normal one.
    """
    if _ABNORMAL.search(text):
        # 'No murmurs, rubs or gallops' names signs only to deny them.
        stripped = re.sub(r"\bno\s+[\w\s,/-]+?(?:[.;]|$)", "", text, flags=re.IGNORECASE)
        return bool(_ABNORMAL.search(stripped)) or not _NORMAL.search(text)
    return False


def flatten_text(value: object, sep: str = "; ") -> str:
    """Dataset values can be strings, lists or small dicts; render them as one string."""
    if value is None:
        return ""
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, (int, float, bool)):
        return str(value)
    if isinstance(value, list):
        return sep.join(t for t in (flatten_text(v, ", ") for v in value) if t)
    if isinstance(value, dict):
        return sep.join(f"{humanize_key(k)}: {flatten_text(v, ', ')}" for k, v in value.items() if not is_empty_value(v))
    return str(value)
