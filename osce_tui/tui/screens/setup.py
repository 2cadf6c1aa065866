"""Setup: who plays the doctor, the patient and the judge; rubric; timers."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Label, Select, Static, Switch

from ...domain.case import Case
from ..common import SPEC_HINT, check_spec, freeze_cursors
from ..spec_check import provider_problem
from ..widgets.doorway import DoorwayPanel


class SetupScreen(Screen):
    BINDINGS = [
        Binding("ctrl+s", "start", "Start", priority=True),
        Binding("escape", "back", "Back"),
    ]
    DEFAULT_CSS = """
    SetupScreen VerticalScroll { padding: 0 1; }
    SetupScreen .row { height: 3; }
    SetupScreen .row > Label { width: 12; padding: 1 1 0 0; text-style: bold; }
    SetupScreen .row > Input { width: 1fr; }
    SetupScreen .row > Select { width: 1fr; }
    /* A long rubric title must not wrap out of its 3-row field over the next row. */
    SetupScreen .row > Select SelectCurrent Static#label { text-wrap: nowrap; text-overflow: ellipsis; }
    SetupScreen .row > Switch { width: auto; }
    SetupScreen .row > .hint { width: 1fr; padding-left: 1; padding-top: 1; }
    SetupScreen .hint { color: $text-muted; padding-left: 12; }
    SetupScreen #setup-error { color: $error; height: auto; }
    SetupScreen #setup-buttons { height: 3; }
    """

    def __init__(self, case: Case) -> None:
        super().__init__()
        self.case = case

    def compose(self) -> ComposeResult:
        config = self.app.config
        rubrics = self.app.library.rubrics()
        # Id first: on a narrow field the title is what gets cut, not the id.
        options = [(f"{rid} — {r.title}", rid) for rid, r in sorted(rubrics.items())]
        default_rubric = config.rubric if config.rubric in rubrics else (options[0][1] if options else Select.NULL)
        with VerticalScroll():
            yield DoorwayPanel(self.case.doorway, collapsed=False, id="setup-doorway")
            with Horizontal(classes="row"):
                yield Label("Doctor")
                yield Input(config.roles.doctor, id="doctor", placeholder="human")
            with Horizontal(classes="row"):
                yield Label("Patient")
                yield Input(config.roles.patient, id="patient", placeholder="offline")
            with Horizontal(classes="row"):
                yield Label("Judge")
                yield Input(config.roles.judge, id="judge", placeholder="offline")
            yield Static(SPEC_HINT, classes="hint")
            with Horizontal(classes="row"):
                yield Label("Rubric")
                yield Select(options, value=default_rubric, id="rubric", allow_blank=False) if options else Static(
                    "no rubrics found", id="rubric-missing"
                )
            with Horizontal(classes="row"):
                yield Label("Timers")
                yield Switch(value=config.encounter.timers, id="timers")
                yield Static(" enforce phase timers (otherwise shown only)", classes="hint")
            yield Static("", id="setup-error")
            with Horizontal(id="setup-buttons"):
                yield Button("Start encounter", variant="primary", id="start")
                yield Button("Back", id="back")
        yield Footer()

    def on_mount(self) -> None:
        freeze_cursors(self)
        self.query_one("#doctor", Input).focus()

    def values(self) -> dict:
        """The chosen roles, rubric and timers; ValueError names the bad field."""
        out: dict = {}
        for role in ("doctor", "patient", "judge"):
            raw = self.query_one(f"#{role}", Input).value.strip() or {"doctor": "human", "patient": "offline", "judge": "offline"}[role]
            try:
                out[role] = check_spec(raw, allow_human=role != "judge")
            except ValueError as exc:
                raise ValueError(f"{role}: {exc}") from None
            problem = provider_problem(out[role], self.app.config)
            if problem:  # e.g. no API key: say so here, where the spec can be changed
                raise ValueError(f"{role}: {problem}")
        selects = self.query("#rubric").results(Select)
        select = next(iter(selects), None)
        if select is None or select.value is Select.NULL:
            raise ValueError("no rubric available: add one to rubrics/ or the config's rubrics_dirs")
        out["rubric"] = str(select.value)
        out["timers"] = self.query_one("#timers", Switch).value
        return out

    def action_start(self) -> None:
        try:
            values = self.values()
        except ValueError as exc:
            error = self.query_one("#setup-error", Static)
            error.update(str(exc))
            # The message sits below the fields; on a short terminal bring it into view.
            self.call_after_refresh(error.scroll_visible, animate=False)
            return
        self.app.start_encounter(self.case, **values, replace=True)

    def action_back(self) -> None:
        self.app.pop_screen()

    @on(Input.Submitted)
    def _next_field(self, event: Input.Submitted) -> None:
        if event.input.id == "judge":
            self.action_start()
        else:
            self.focus_next()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "start":
            self.action_start()
        else:
            self.action_back()
