"""The patient note editor: HPI, PE, up to 3 diagnoses with findings, workup.

The fields are validated into a ``PatientNote`` before the screen returns it,
so the engine only ever receives a note the judges can read. Findings and
workup are one per line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ValidationError
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Label, Static, TextArea

from ...domain.session import PatientNote
from ..common import freeze_cursors

MAX_DX = 3
MAX_FINDINGS = 3
MAX_WORKUP = 8


@dataclass
class NoteFields:
    """Raw text of every field, as typed."""

    hpi: str = ""
    pe: str = ""
    diagnoses: list[tuple[str, str, str]] = field(default_factory=list)  # name, history lines, exam lines
    workup: str = ""


class NoteInvalid(ValueError):
    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("; ".join(problems))


def lines(text: str) -> list[str]:
    return [ln.strip(" -•\t") for ln in text.splitlines() if ln.strip(" -•\t")]


def build_note(fields: NoteFields) -> PatientNote:
    """Validate the typed fields into a PatientNote or raise NoteInvalid listing every problem."""
    problems: list[str] = []
    if not fields.hpi.strip():
        problems.append("HPI is empty")
    if not fields.pe.strip():
        problems.append("Physical exam summary is empty")
    diagnoses: list[dict] = []
    for i, (name, hx, pe) in enumerate(fields.diagnoses[:MAX_DX], 1):
        hx_items, pe_items = lines(hx), lines(pe)
        if not name.strip():
            if hx_items or pe_items:
                problems.append(f"Diagnosis {i} has findings but no name")
            continue
        if len(hx_items) > MAX_FINDINGS:
            problems.append(f"Diagnosis {i}: {len(hx_items)} history findings (at most {MAX_FINDINGS})")
        if len(pe_items) > MAX_FINDINGS:
            problems.append(f"Diagnosis {i}: {len(pe_items)} exam findings (at most {MAX_FINDINGS})")
        diagnoses.append({"name": name.strip(), "history_findings": hx_items, "exam_findings": pe_items})
    if not diagnoses:
        problems.append("Give at least one diagnosis")
    workup = lines(fields.workup)
    if len(workup) > MAX_WORKUP:
        problems.append(f"{len(workup)} workup items (at most {MAX_WORKUP})")
    if problems:
        raise NoteInvalid(problems)
    try:
        return PatientNote.model_validate(
            {
                "hpi": fields.hpi.strip(),
                "pe": fields.pe.strip(),
                "diagnoses": diagnoses,
                "workup": workup,
            }
        )
    except ValidationError as exc:  # the model's own limits, should the two ever disagree
        raise NoteInvalid([f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)]) from exc


def first_problem_field(problems: list[str]) -> str | None:
    """The id of the field the first problem is about, to put the cursor there."""
    for problem in problems:
        if problem.startswith("HPI"):
            return "hpi"
        if problem.startswith("Physical exam"):
            return "pe"
        if problem.startswith("Give at least one diagnosis"):
            return "dx1-name"
        if problem.startswith("Diagnosis "):
            n = problem.split()[1].rstrip(":")
            if n.isdigit():
                return f"dx{n}-name" if "no name" in problem else f"dx{n}-hx" if "history" in problem else f"dx{n}-pe"
        if "workup" in problem:
            return "workup"
    return None


class NoteEditor(Screen[PatientNote | None]):
    """Returns the validated note, or None if the user backs out."""

    BINDINGS = [
        Binding("ctrl+s", "submit", "Submit note", priority=True),
        Binding("escape", "cancel", "Back"),
    ]
    DEFAULT_CSS = """
    NoteEditor VerticalScroll { padding: 0 1; }
    NoteEditor Label { margin-top: 1; text-style: bold; }
    NoteEditor Label.sub { margin-top: 0; text-style: none; color: $text-muted; }
    NoteEditor TextArea { height: 4; }
    NoteEditor TextArea.short { height: 3; }
    NoteEditor #note-errors { color: $error; height: auto; max-height: 6; padding: 0 1; display: none; }
    NoteEditor #note-errors.-shown { display: block; border-top: hkey $error; }
    NoteEditor #note-buttons { height: 3; margin-top: 1; }
    NoteEditor #note-title { background: $panel; padding: 0 1; height: 1; text-style: bold; }
    """

    def __init__(self, draft: NoteFields | None = None, on_draft=None) -> None:
        super().__init__()
        self.initial = draft or NoteFields()
        # Called with the typed fields when the user backs out, so reopening
        # the editor shows them again.
        self.on_draft = on_draft

    def compose(self) -> ComposeResult:
        n = self.initial
        yield Static("Patient note — Ctrl+S submits, Esc goes back (nothing is lost)", id="note-title")
        with VerticalScroll(id="note-form"):
            yield Label("History of present illness")
            yield TextArea(n.hpi, id="hpi", soft_wrap=True)
            yield Label("Physical examination")
            yield TextArea(n.pe, id="pe", soft_wrap=True)
            for i in range(1, MAX_DX + 1):
                name, hx, pe = n.diagnoses[i - 1] if i <= len(n.diagnoses) else ("", "", "")
                yield Label(f"Diagnosis #{i}" + (" (most likely)" if i == 1 else ""))
                yield Input(name, placeholder="diagnosis", id=f"dx{i}-name")
                yield Label("history findings, one per line (≤3)", classes="sub")
                yield TextArea(hx, id=f"dx{i}-hx", classes="short")
                yield Label("exam findings, one per line (≤3)", classes="sub")
                yield TextArea(pe, id=f"dx{i}-pe", classes="short")
            yield Label("Diagnostic workup, one per line (≤8)")
            yield TextArea(n.workup, id="workup", soft_wrap=True)
            with Horizontal(id="note-buttons"):
                yield Button("Submit note", variant="primary", id="note-submit")
                yield Button("Back", id="note-cancel")
        # Outside the scrolling form, above the footer: the problems stay in
        # view whichever field the user scrolls to while fixing them.
        yield Static("", id="note-errors")
        yield Footer()

    def on_mount(self) -> None:
        freeze_cursors(self)
        self.query_one("#hpi", TextArea).focus()

    def fields(self) -> NoteFields:
        def ta(wid: str) -> str:
            return self.query_one(f"#{wid}", TextArea).text

        return NoteFields(
            hpi=ta("hpi"),
            pe=ta("pe"),
            diagnoses=[
                (self.query_one(f"#dx{i}-name", Input).value, ta(f"dx{i}-hx"), ta(f"dx{i}-pe"))
                for i in range(1, MAX_DX + 1)
            ],
            workup=ta("workup"),
        )

    def action_submit(self) -> None:
        try:
            note = build_note(self.fields())
        except NoteInvalid as exc:
            errors = self.query_one("#note-errors", Static)
            errors.update("Cannot submit yet: " + " · ".join(exc.problems))
            errors.add_class("-shown")
            first = first_problem_field(exc.problems)
            if first:
                self.query_one(f"#{first}").focus()
            return
        self.query_one("#note-errors", Static).remove_class("-shown")
        self.dismiss(note)

    def action_cancel(self) -> None:
        if self.on_draft is not None:
            self.on_draft(self.fields())
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "note-submit":
            self.action_submit()
        else:
            self.action_cancel()
