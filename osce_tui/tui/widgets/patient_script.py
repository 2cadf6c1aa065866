"""The standardized patient's script, for a human playing the patient.

Without it a person taking the patient role has only the doorway and must
invent every answer. The script lists who to be, what to say first, the
answers the case gives, the question to ask in the closure and what to say
to anything else. Only offered when the patient is human or nobody is (a
student playing the doctor must not read it: it is the answer key).
"""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, Static

from ...domain.case import Case


def script_renderable(case: Case) -> Group:
    p = case.persona
    parts: list = []
    who = p.speaker if p.speaker == "patient" else f"{p.speaker} ({p.speaker_name or 'unnamed'})"
    head = Table.grid(padding=(0, 1))
    head.add_column(style="bold", no_wrap=True)
    head.add_column(ratio=1)
    head.add_row("You are", f"{who} — {case.doorway.patient_name}, {case.doorway.age} {case.doorway.age_unit}")
    head.add_row("Manner", p.affect)
    head.add_row("Open with", p.opening_statement)
    if p.notes:
        head.add_row("Notes", p.notes)
    if p.lay_vocabulary:
        head.add_row("Your words", ", ".join(p.lay_vocabulary))
    head.add_row("Otherwise", p.default_answer)
    parts.append(head)

    facts = Table(box=None, show_header=True, header_style="bold", padding=(0, 1), expand=True)
    facts.add_column("If asked", ratio=2)
    facts.add_column("Answer", ratio=3)
    for fact in case.history:
        ask = Text(fact.question)
        if fact.volunteer:
            ask.append("  (may volunteer)", style="dim italic")
        facts.add_row(ask, fact.answer)
    parts += [Text(""), facts]

    if case.challenging_questions:
        parts.append(Text("\nIn the closure, ask:", style="bold"))
        for q in case.challenging_questions:
            parts.append(Text(f"• {q.question}"))
    return Group(*parts)


class PatientScript(ModalScreen[None]):
    """Read-only script; Esc or F1 closes it and the typed answer is untouched."""

    DEFAULT_CSS = """
    PatientScript { align: center middle; }
    PatientScript > Vertical { width: 100; max-width: 100%; height: 90%; border: round $accent;
        background: $surface; padding: 0 1; }
    PatientScript Label { color: $text-muted; }
    PatientScript VerticalScroll { height: 1fr; }
    """
    BINDINGS = [Binding("escape,f1", "close", "Close")]

    def __init__(self, case: Case) -> None:
        super().__init__()
        self.case = case

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label("Your script as the patient — ↑↓ scroll, Esc closes")
            with VerticalScroll(id="script-scroll"):
                yield Static(script_renderable(self.case), id="script-body")

    def on_mount(self) -> None:
        self.query_one("#script-scroll").focus()

    def action_close(self) -> None:
        self.dismiss(None)
