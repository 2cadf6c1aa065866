"""Parse what a human doctor types into doctor actions.

Plain text is spoken to the patient; slash commands drive the encounter.
Pure functions: the TUI, line mode and tests share them.
"""

from __future__ import annotations

import re

from .base import ChangePhase, End, Examine, FinalDiagnosis, Order, Say

PHASE_ALIASES = {
    "history": "history",
    "hx": "history",
    "exam": "exam",
    "pe": "exam",
    "physical": "exam",
    "examination": "exam",
    "closure": "closure",
    "close": "closure",
    "note": "note",
    "patient-note": "note",
}

COMMAND_HELP = {
    "/exam WHAT": "examine, e.g. /exam heart, lungs",
    "/order TEST": "order investigations, e.g. /order ECG, troponin",
    "/phase NAME": "move on: history, exam, closure or note",
    "/note": "write the patient note",
    "/dx DIAGNOSIS": "commit to a final diagnosis",
    "/end": "finish the encounter and score it",
}


class CommandError(ValueError):
    """Unknown or malformed slash command; the message says what is accepted."""


def _items(arg: str) -> list[str]:
    return [part.strip() for part in re.split(r"[,;]| and ", arg) if part.strip()]


def help_text() -> str:
    return "Commands: " + "; ".join(f"{k} — {v}" for k, v in COMMAND_HELP.items())


def parse_doctor_input(text: str):
    """Turn one line of human doctor input into a doctor action."""
    line = text.strip()
    if not line:
        raise CommandError("say something, or type a command (/exam, /order, /phase, /note, /dx, /end)")
    if not line.startswith("/"):
        return Say(text=line)
    name, _, arg = line[1:].partition(" ")
    name, arg = name.lower(), arg.strip()
    if name in ("exam", "examine", "pe"):
        if not arg:
            raise CommandError("what should be examined? e.g. /exam heart, lungs")
        return Examine(requests=_items(arg))
    if name in ("order", "test", "tests"):
        if not arg:
            raise CommandError("which test? e.g. /order ECG, troponin")
        return Order(tests=_items(arg))
    if name == "phase":
        phase = PHASE_ALIASES.get(arg.lower())
        if not phase:
            raise CommandError(f"unknown phase {arg!r}: use history, exam, closure or note")
        return ChangePhase(phase=phase)
    if name == "note":
        return ChangePhase(phase="note")
    if name in ("dx", "diagnosis"):
        if not arg:
            raise CommandError("which diagnosis? e.g. /dx acute coronary syndrome")
        return FinalDiagnosis(text=arg)
    if name in ("end", "quit", "done"):
        return End()
    raise CommandError(f"unknown command /{name}. {help_text()}")
