"""Parse free-text vital signs ('36.6°C (97.9°F)', '125/80 mmHg', '72 bpm').

A case needs numeric heart rate, respiratory rate and temperature. When the
source gives only words ('Within normal limits', 'Elevated') or nothing, we
use an age-typical placeholder, keep the source wording in ``vitals.other``
and return a note for the import report, so nobody mistakes a placeholder for
a measurement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_NUMBER = re.compile(r"(\d+(?:\.\d+)?)")
_TEMP = re.compile(r"(\d+(?:\.\d+)?)\s*°?\s*([CF])\b", re.IGNORECASE)
_BP = re.compile(r"(\d{2,3})\s*/\s*(\d{2,3})")
_PERCENT = re.compile(r"(\d{2,3})\s*%")
_KG = re.compile(r"(\d+(?:\.\d+)?)\s*kg\b", re.IGNORECASE)
_LB = re.compile(r"(\d+(?:\.\d+)?)\s*(?:lb|lbs|pounds)\b", re.IGNORECASE)
_CM = re.compile(r"(\d+(?:\.\d+)?)\s*cm\b", re.IGNORECASE)
_UNITS_ONLY = re.compile(r"\b(?:bpm|beats?|breaths?|per|minute|min|/min|mmhg|mm hg)\b|/", re.IGNORECASE)
_HIGH = re.compile(r"\b(?:elevated|high|increased|tachy\w*|febrile|fever|raised)\b", re.IGNORECASE)
_LOW = re.compile(r"\b(?:low|decreased|reduced|brady\w*|hypotherm\w*|hypotens\w*)\b", re.IGNORECASE)

# Keys (lower-case, underscores as spaces) per vital sign.
_KEYS = {
    "temperature": ("temperature", "temp", "t"),
    "blood_pressure": ("blood pressure", "bp"),
    "heart_rate": ("heart rate", "pulse", "hr", "pulse rate"),
    "respiratory_rate": ("respiratory rate", "respirations", "rr", "respiration rate", "respiratory"),
    "spo2": ("oxygen saturation", "so2", "spo2", "o2 saturation", "oxygen sat", "pulse oximetry", "o2 sat", "sao2"),
    "weight": ("weight",),
    "height": ("height",),
}


def _age_band(age: int, unit: str) -> str:
    days = {"days": 1, "weeks": 7, "months": 30, "years": 365}[unit] * age
    if days < 30:
        return "newborn"
    if days < 365:
        return "infant"
    if age < 6 or unit != "years":
        return "child"
    if age < 13:
        return "school"
    if age < 18:
        return "adolescent"
    return "adult"


# Age-typical mid-range values used only as marked placeholders.
_TYPICAL = {
    "newborn": {"heart_rate": 140, "respiratory_rate": 45},
    "infant": {"heart_rate": 130, "respiratory_rate": 35},
    "child": {"heart_rate": 110, "respiratory_rate": 26},
    "school": {"heart_rate": 90, "respiratory_rate": 20},
    "adolescent": {"heart_rate": 80, "respiratory_rate": 16},
    "adult": {"heart_rate": 76, "respiratory_rate": 14},
}


@dataclass
class ParsedVitals:
    values: dict = field(default_factory=dict)  # ready for the Vitals model
    notes: list[str] = field(default_factory=list)  # placeholders used, for the report
    used_keys: set[str] = field(default_factory=set)


def _norm(key: str) -> str:
    return re.sub(r"[_\s]+", " ", key).strip().lower()


def parse_vitals(raw: dict[str, object] | None, age: int, age_unit: str) -> ParsedVitals:
    """Map a dict of vital-sign strings onto the Vitals model's fields."""
    raw = raw or {}
    band = _age_band(age, age_unit)
    out = ParsedVitals()
    other: dict[str, str] = {}
    found: dict[str, str] = {}
    for key, value in raw.items():
        k = _norm(key)
        target = next((name for name, keys in _KEYS.items() if k in keys), None)
        if target and target not in found:
            found[target] = str(value)
            out.used_keys.add(key)
        else:
            other[_norm(key).replace(" ", "_")] = str(value)
            out.used_keys.add(key)

    out.values["temperature_c"] = _temperature(found.get("temperature"), out, other)
    out.values["blood_pressure"] = _blood_pressure(found.get("blood_pressure"), out, other)
    for name in ("heart_rate", "respiratory_rate"):
        out.values[name] = _rate(name, found.get(name), band, out, other)
    if (spo2 := found.get("spo2")) is not None:
        m = _PERCENT.search(spo2) or _NUMBER.search(spo2)
        if m and 50 <= int(float(m.group(1))) <= 100:
            out.values["spo2"] = int(float(m.group(1)))
            if spo2.strip() != m.group(0):
                other["spo2_source"] = spo2
        else:
            other["spo2"] = spo2
    for name, pattern in (("weight", _KG), ("height", _CM)):
        text = found.get(name)
        if text is None:
            continue
        m = pattern.search(text)
        if name == "weight" and not m and (lb := _LB.search(text)):
            out.values["weight_kg"] = round(float(lb.group(1)) * 0.4536, 1)
        elif m:
            out.values["weight_kg" if name == "weight" else "height_cm"] = float(m.group(1))
        else:
            other[name] = text
    if other:
        out.values["other"] = other
    return out


def _temperature(text: str | None, out: ParsedVitals, other: dict[str, str]) -> float:
    if text:
        celsius = [float(v) for v, unit in _TEMP.findall(text) if unit.upper() == "C"]
        fahrenheit = [float(v) for v, unit in _TEMP.findall(text) if unit.upper() == "F"]
        if celsius and 30 <= celsius[0] <= 45:
            return round(celsius[0], 1)
        if fahrenheit:
            return round((fahrenheit[0] - 32) * 5 / 9, 1)
        if (m := _NUMBER.search(text)) and not _HIGH.search(text):
            value = float(m.group(1))
            # A bare number above 45 can only be Fahrenheit.
            return round((value - 32) * 5 / 9, 1) if value > 45 else round(value, 1)
    value = 38.5 if text and _HIGH.search(text) else 37.0
    _placeholder(out, other, "temperature_c", text, value)
    return value


def _blood_pressure(text: str | None, out: ParsedVitals, other: dict[str, str]) -> str:
    if text and (m := _BP.search(text)):
        extra = text.replace(m.group(0), "").replace("mmHg", "").replace("mm Hg", "").strip(" ,;()")
        if extra:
            other["blood_pressure_note"] = extra
        return f"{m.group(1)}/{m.group(2)}"
    # Blood pressure is free text in the case schema, so the source wording is kept instead of a made-up number.
    wording = text.strip() if text and text.strip() else "not recorded in source"
    out.notes.append(f"doorway.vitals.blood_pressure: no numeric value in source ({text!r}); kept the wording")
    return wording


def _rate(name: str, text: str | None, band: str, out: ParsedVitals, other: dict[str, str]) -> int:
    if text and (m := _NUMBER.search(text)) and not re.search(r"percentile", text, re.IGNORECASE):
        value = int(round(float(m.group(1))))
        if _UNITS_ONLY.sub("", text.replace(m.group(0), "", 1)).strip(" ,;()."):
            other[f"{name}_note"] = text  # keep qualifiers like "(elevated for age)"
        return value
    typical = _TYPICAL[band][name]
    if text and _HIGH.search(text):
        value = int(typical * 1.4)
    elif text and _LOW.search(text):
        value = int(typical * 0.7)
    else:
        value = typical
    _placeholder(out, other, name, text, value)
    return value


def _placeholder(out: ParsedVitals, other: dict[str, str], name: str, text: str | None, value: float) -> None:
    other[f"{name}_source"] = f"{text or 'not given'} (importer placeholder {value})"
    out.notes.append(f"doorway.vitals.{name}: source says {text or 'nothing'!r}; age-typical placeholder {value} used")
