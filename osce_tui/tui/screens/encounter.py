"""The encounter screen: doorway, streaming dialogue, phase bar, live scores.

All state shown here comes from engine events (via ``EngineBridge``): the
screen never calls a provider or a judge. User actions go the other way as
engine controls: ``submit``, ``submit_note``, ``takeover``, ``pause``,
``resume_running``, ``request_phase``, ``end``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Callable

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from ...agents.commands import CommandError, parse_doctor_input
from ...domain.session import PHASE_ORDER, PatientNote
from ...engine import Encounter, EncounterSetup
from ...engine.encounter import EncounterFailed
from ..bridge import EngineBridge
from ..common import SpecPrompt, freeze_cursors
from ..messages import (
    EngineAwaitingHuman,
    EngineEncounterEnded,
    EngineError,
    EngineExamResult,
    EnginePhaseChanged,
    EngineRoleChanged,
    EngineScoresUpdated,
    EngineSessionSaved,
    EngineTextBatch,
    EngineTurnFinished,
    EngineTurnStarted,
)
from ..widgets.dialogue import DialogueLog
from ..widgets.doorway import DoorwayPanel
from ..widgets.exam_picker import ExamPicker
from ..widgets.phase_bar import PhaseBar
from ..widgets.score_panel import ScorePanel
from .note_editor import NoteEditor, NoteFields

# The engine announces final scoring with a TurnStarted that never finishes.
SCORING_TURN = "scores"
# Below this height the doorway folds away once the dialogue starts.
SMALL_TERMINAL_ROWS = 40
# Seconds between live score repaints (see on_engine_scores_updated).
SCORE_REFRESH = 0.1
# Phases a user can jump to (forward only: the engine ignores backwards moves).
JUMPABLE = ("history", "exam", "closure", "note")

EncounterFactory = Callable[[EncounterSetup, EngineBridge], Encounter]
COMMAND_NAMES = "/exam, /order, /phase, /note, /dx, /end"


def command_problem(text: str) -> str | None:
    """Why a doctor line would be rejected by the engine, in one short line; None if fine."""
    try:
        parse_doctor_input(text)
    except CommandError as exc:
        first = str(exc).split(". Commands:")[0]
        if first.startswith("unknown command"):
            return f"{first} — use {COMMAND_NAMES}"
        return first
    return None


def default_factory(setup: EncounterSetup, bridge: EngineBridge) -> Encounter:
    return Encounter(setup, observer=bridge)


class EncounterScreen(Screen):
    """Runs one Encounter in an async worker and renders its events."""

    BINDINGS = [
        # Short labels: all seven must fit the footer of an 80-column terminal
        # (the palette, Ctrl+P, lists each with a longer description).
        Binding("f2", "toggle_pause", "Pause"),
        Binding("f3", "toggle_role('doctor')", "Dr⇄", tooltip="Take over the doctor / hand it back"),
        Binding("f4", "toggle_role('patient')", "Pt⇄", tooltip="Take over the patient / hand it back"),
        Binding("f5", "next_phase", "Phase→", tooltip="Go to the next phase"),
        Binding("f6", "picker", "Exam", tooltip="Exam / order picker"),
        Binding("f7", "note", "Note"),
        Binding("f8", "end", "End"),
        Binding("f9", "toggle_reveal", "Checklist", show=False),
        Binding("f1", "patient_script", "Script", show=False),
        Binding("escape", "leave", "Leave", show=False),
        Binding("ctrl+o", "toggle_doorway", "Doorway", show=False),
        Binding("ctrl+s", "focus_scores", "Scores", show=False),
        Binding("ctrl+l", "focus_input", "Input", show=False),
    ]

    def __init__(self, setup: EncounterSetup, *, factory: EncounterFactory = default_factory) -> None:
        super().__init__()
        # The TUI reports provider errors and waits for the user instead of failing.
        setup.on_error = "pause"
        self.setup = setup
        self.factory = factory
        self.bridge = EngineBridge(self, on_turn_finished=self._pace_turn)
        self.enc: Encounter | None = None
        self.awaiting: EngineAwaitingHuman | None = None
        # What to hand a role back to after a human took it over.
        self.agent_specs = {
            "doctor": setup.doctor if setup.doctor != "human" else "offline",
            "patient": setup.patient if setup.patient != "human" else "offline",
        }
        self.ended: str | None = None
        self.note_open = False
        self._doorway_auto = True
        self.note_draft: NoteFields | None = None
        self._pending_scores = None
        self._score_timer = None
        self.batches = 0  # text batches rendered (benchmark, tests)
        self._pace_timer = None  # set while a watch-mode breather holds the engine
        self.user_paused = False
        self.input_error: str | None = None  # last rejected line's problem, shown on the status line
        self.failure: str | None = None  # why the encounter could not start or stopped

    # -- layout ----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        app = self.app
        yield PhaseBar(self.setup.config.encounter, clock=getattr(app, "clock", None) or time.monotonic, id="phase-bar")
        with Horizontal(id="enc-body"):
            with Vertical(id="enc-main"):
                yield DoorwayPanel(self.setup.case.doorway, collapsed=False, id="doorway")
                yield DialogueLog(id="dialogue")
                yield Static("", id="enc-status")
                yield Input(placeholder="", id="say")
            # A student playing the doctor should not see the answer key.
            yield ScorePanel(id="scores", reveal=self.setup.doctor != "human")
        yield Footer()

    @property
    def dialogue(self) -> DialogueLog:
        return self.query_one(DialogueLog)

    @property
    def phase_bar(self) -> PhaseBar:
        return self.query_one(PhaseBar)

    @property
    def score_panel(self) -> ScorePanel:
        return self.query_one(ScorePanel)

    def on_mount(self) -> None:
        freeze_cursors(self)
        try:
            self.enc = self.factory(self.setup, self.bridge)
        except Exception as exc:  # bad spec, missing key: say so, keep the app alive
            self.app.notify(f"Cannot start the encounter: {exc}", severity="error", timeout=10)
            self.ended = "failed"
            self._update_status()
            # The toast fades; the reason stays in the dialogue until the user leaves.
            self.call_after_refresh(self.show_failure, f"Cannot start the encounter: {exc}\n\nEsc goes back.")
            return
        self.phase_bar.enter_phase(self.enc.session.phase)
        self._update_status()
        self.query_one("#say", Input).focus()
        # Paint the doorway first; agent set-up and the first scoring come after.
        self.call_after_refresh(self.start_engine)

    @work(exclusive=True, group="start", exit_on_error=False)
    async def start_engine(self) -> None:
        """Show what a resumed session already holds, then let the engine run."""
        assert self.enc is not None
        session = self.enc.session
        for turn in session.turns:
            await self.dialogue.finish_turn(turn)
        self.phase_bar.turns = sum(1 for t in session.turns if t.role == "doctor" and t.phase == session.phase and t.kind != "phase")
        live = session.latest_scores(final_only=False)
        if live is not None:
            self.score_panel.update_scores(live)
        self.run_engine()

    def on_unmount(self) -> None:
        self.bridge.close()

    # -- watch pacing ----------------------------------------------------------------

    @property
    def watch_pace(self) -> float:
        return float(getattr(self.app, "watch_pace", 0.0) or 0.0)

    def _pace_turn(self, event) -> None:
        """Two agents run faster than anyone can read: hold a moment after each turn.

        Only while nobody here is human (a human's own typing paces the
        encounter) and the user has not paused; F2 during the hold pauses.
        """
        enc = self.enc
        if self.watch_pace <= 0 or enc is None or self.ended or self.user_paused or enc.paused:
            return
        if getattr(event, "turn", None) is not None and event.turn.kind == "phase":
            return
        if any(enc.session.roles[r].spec == "human" for r in ("doctor", "patient")):
            return
        enc.pause()
        self._pace_timer = self.set_timer(self.watch_pace, self._pace_release)

    def _pace_release(self) -> None:
        self._pace_timer = None
        if self.enc is not None and not self.user_paused:
            self.enc.resume_running()

    def _stop_pacing(self) -> None:
        if self._pace_timer is not None:
            self._pace_timer.stop()
            self._pace_timer = None

    async def show_failure(self, message: str) -> None:
        """Keep a failure's reason readable in the dialogue (toasts time out)."""
        self.failure = message
        self.query_one(DoorwayPanel).collapsed = True
        await self.dialogue.add_note("failure", "system", message, kind="system")

    @on(Input.Changed, "#say")
    def _clear_input_error(self) -> None:
        if self.input_error:
            self.input_error = None
            self._update_status()

    @work(exclusive=True, group="engine", exit_on_error=False)
    async def run_engine(self) -> None:
        assert self.enc is not None
        try:
            await self.enc.run()
        except EncounterFailed as exc:
            self.app.notify(f"Encounter failed: {exc}. The session is saved.", severity="error", timeout=10)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # an engine bug must not take the app down with the session
            self.app.notify(f"Encounter stopped: {exc!r}. Saved at {self.enc.session_path}", severity="error", timeout=10)
            self.ended = "failed"
            self._update_status()
            await self.show_failure(f"Encounter stopped: {exc!r}\n\nSaved at {self.enc.session_path}. Esc goes back.")

    # -- status line -----------------------------------------------------------

    def human_role(self) -> str | None:
        """The role the input box speaks for: the awaited one, else any human role."""
        if self.awaiting is not None and self.awaiting.event.what == "utterance":
            return self.awaiting.event.role
        if self.enc is None:
            return None
        for role in ("doctor", "patient"):
            if self.enc.session.roles[role].spec == "human":
                return role
        return None

    def _update_status(self) -> None:
        # State first: on an 80-column terminal the roles may be cut off, never the prompt.
        text = Text(no_wrap=True, overflow="ellipsis")
        if self.input_error and not self.ended:
            # A rejected line: say why instead of the roles (which the user
            # knows), wrapped so the list of commands is readable at 80 columns.
            status = self.query_one("#enc-status", Static)
            status.add_class("-error")
            status.update(Text(f"✗ {self.input_error}", style="bold red"))
            return
        self.query_one("#enc-status", Static).remove_class("-error")
        if self.ended:
            text.append(f"■ encounter {self.ended}  ", style="bold")
        elif self.enc is not None and self.enc.paused and self._pace_timer is None:
            text.append("■ paused (F2 resumes)  ", style="bold yellow")
        elif self.awaiting is not None:
            who = self.awaiting.event.role
            what = "patient note" if self.awaiting.event.what == "note" else who
            text.append(f"▶ your turn: {what}  ", style="bold green")
        if self.enc is not None:
            roles = self.enc.session.roles
            for i, (role, short) in enumerate((("doctor", "Dr"), ("patient", "Pt"), ("judge", "Judge"))):
                if i:
                    text.append(" · ", style="dim")
                text.append(f"{short} ", style="dim")
                spec = roles[role].spec if role in roles else "?"
                text.append(spec, style="bold" if spec == "human" else "")
        self.query_one("#enc-status", Static).update(text)
        inp = self.query_one("#say", Input)
        role = self.human_role()
        if self.ended:
            inp.placeholder = "Encounter over — Esc goes back"
        elif role == "doctor" and self.in_note_phase():
            inp.placeholder = "Note phase: F7 opens the note editor · /end finishes"
        elif role == "doctor":
            inp.placeholder = "Ask the patient… or /exam, /order, /phase, /note, /dx, /end"
        elif role == "patient":
            inp.placeholder = "Answer as the patient… (F1 shows your script)"
        else:
            inp.placeholder = "Watching: F3 takes over the doctor, F4 the patient"

    # -- engine events -----------------------------------------------------------

    async def on_engine_turn_started(self, message: EngineTurnStarted) -> None:
        e = message.event
        if e.turn_id == SCORING_TURN:
            self.query_one("#enc-status", Static).update(Text(f"Scoring with {e.spec}…", style="bold"))
            return
        if self.awaiting is not None and self.awaiting.event.role == e.role:
            self.awaiting = None
            self._update_status()
        await self.dialogue.start_turn(e.role, e.turn_id, e.spec)

    async def on_engine_text_batch(self, message: EngineTextBatch) -> None:
        text = self.bridge.take(message.key)
        if text:
            self.batches += 1
            await self.dialogue.append(message.turn_id, text, message.role)

    async def on_engine_turn_finished(self, message: EngineTurnFinished) -> None:
        turn = message.event.turn
        if self._doorway_auto and turn.kind == "utterance":
            # The doorway is read before the first question; on a small
            # terminal it then folds to its one-line summary (Ctrl+O reopens).
            self._doorway_auto = False
            if self.app.size.height < SMALL_TERMINAL_ROWS:
                self.query_one(DoorwayPanel).collapsed = True
        await self.dialogue.finish_turn(turn)
        if self.awaiting is not None and self.awaiting.event.role == turn.role:
            self.awaiting = None
            self._update_status()
        if turn.role == "doctor" and turn.kind != "phase":
            self.phase_bar.count_turn()

    async def on_engine_exam_result(self, message: EngineExamResult) -> None:
        # The result is also a session turn; this makes sure it is shown even if
        # the turn event was missed, and carries where the finding came from.
        e = message.event
        view = await self.dialogue.add_note(e.turn_id, "examiner", e.text, kind="exam_result" if e.kind == "exam" else "test_result", spec="oracle")
        if e.source == "normal":
            view.add_class("-normal")

    def on_engine_phase_changed(self, message: EnginePhaseChanged) -> None:
        self.phase_bar.enter_phase(message.event.new)
        self._update_status()  # the input's prompt depends on the phase

    def on_engine_scores_updated(self, message: EngineScoresUpdated) -> None:
        # Repaint the panels at most every SCORE_REFRESH seconds: a fast model
        # can finish several turns in that time and only the newest set matters.
        # Final scores show at once.
        self._pending_scores = message.event.scores
        if message.event.final:
            self._apply_scores()
        elif self._score_timer is None:
            self._score_timer = self.set_timer(SCORE_REFRESH, self._apply_scores)

    def _apply_scores(self) -> None:
        self._score_timer = None
        if self._pending_scores is not None:
            scores, self._pending_scores = self._pending_scores, None
            self.score_panel.update_scores(scores)

    def on_engine_role_changed(self, message: EngineRoleChanged) -> None:
        e = message.event
        if e.new_spec != "human":
            self.agent_specs[e.role] = e.new_spec
        if self.awaiting is not None and self.awaiting.event.role == e.role:
            self.awaiting = None
        self.app.notify(f"{e.role.title()}: {e.old_spec} → {e.new_spec}", timeout=3)
        self._update_status()

    def on_engine_awaiting_human(self, message: EngineAwaitingHuman) -> None:
        self.awaiting = message
        self._update_status()
        if message.event.what == "note":
            self.open_note_editor()
        else:
            self.query_one("#say", Input).focus()

    def on_engine_error(self, message: EngineError) -> None:
        e = message.event
        who = f"{e.role}: " if e.role else ""
        hint = ""
        if self.enc is not None and self.enc.paused:
            hint = " — paused: F2 retries, F3/F4 hands the role to someone else, F8 ends."
            self.phase_bar.set_paused(True)
        self.app.notify(f"{who}{e.message}{hint}", severity="error" if not e.recoverable else "warning", timeout=8)
        self._update_status()

    def on_engine_session_saved(self, message: EngineSessionSaved) -> None:
        self.saved_path = message.event.path

    async def on_engine_encounter_ended(self, message: EngineEncounterEnded) -> None:
        e = message.event
        self.ended = e.status
        self.awaiting = None
        # A note editor or picker left open has nothing to send any more.
        while self.app.screen is not self and self in self.app.screen_stack:
            self.app.pop_screen()
        await self.dialogue.stop_all()
        self.phase_bar.enter_phase("scored")
        self._update_status()
        if e.status == "finished" and self.enc is not None:
            from .results import ResultsScreen

            self.app.push_screen(
                ResultsScreen(self.setup.case, self.setup.rubric, self.enc.session, self.enc.session_path, self.setup.config)
            )
        elif e.status != "finished":
            self.app.notify(f"Encounter {e.status}{': ' + e.reason if e.reason else ''}", severity="warning")

    # -- user input --------------------------------------------------------------

    @on(Input.Submitted, "#say")
    def submit_line(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text or self.enc is None:
            return
        if self.ended:
            self.app.notify("The encounter is over.", severity="warning")
            return
        role = self.human_role()
        if role is None:
            self.app.notify("Nobody here is played by you: F3 takes over the doctor, F4 the patient.", severity="warning")
            return
        if role == "patient" and text.startswith("/"):
            self.app.notify("Slash commands are for the doctor.", severity="warning")
            return
        if role == "doctor" and self.in_note_phase() and not text.startswith("/"):
            # Nobody is listening in the note phase: the line is kept and the
            # editor (where it belongs) opens instead of the engine rejecting it.
            self.show_input_error("Note phase: the note goes in the editor (F7); /end finishes")
            self.open_note_editor()
            return
        if role == "doctor":
            problem = command_problem(text)
            if problem:
                # Keep the line so a typo is one keystroke to fix, and say what
                # went wrong where the user is looking (a toast would cover the input).
                self.show_input_error(problem)
                return
        event.input.value = ""
        self.input_error = None
        self.enc.submit(role, text)

    def in_note_phase(self) -> bool:
        return self.enc is not None and self.enc.session.phase == "note"

    def show_input_error(self, problem: str) -> None:
        self.input_error = problem
        self._update_status()

    def submit_command(self, command: str | None) -> None:
        if command and self.enc is not None:
            if self.enc.session.roles["doctor"].spec != "human":
                self.app.notify("Take over the doctor first (F3).", severity="warning")
                return
            self.enc.submit("doctor", command)

    # -- actions -------------------------------------------------------------------

    def action_toggle_pause(self) -> None:
        if self.enc is None or self.ended:
            return
        if self._pace_timer is not None:  # held between turns: make the hold a real pause
            self._stop_pacing()
            self.user_paused = True
            self.phase_bar.set_paused(True)
        elif self.enc.paused:  # paused by the user or by a provider error: go on (retry)
            self.user_paused = False
            self.enc.resume_running()
            self.phase_bar.set_paused(False)
        else:
            self.user_paused = True
            self.enc.pause()
            self.phase_bar.set_paused(True)
        self._update_status()

    def action_toggle_role(self, role: str) -> None:
        """Human takes the role, or hands it back to the agent that had it."""
        if self.enc is None or self.ended:
            return
        current = self.enc.session.roles[role].spec
        self.hand_role(role, self.agent_specs[role] if current == "human" else "human")

    def hand_role(self, role: str, spec: str) -> None:
        if self.enc is None or self.ended:
            return
        try:
            self.enc.takeover(role, spec)  # type: ignore[arg-type]
        except Exception as exc:  # bad spec or missing key: nothing changed
            self.app.notify(f"Cannot hand the {role} to {spec}: {exc}", severity="error", timeout=8)
            return
        self._stop_pacing()
        if self.enc.paused:  # taking over after an error or a pause continues the encounter
            self.user_paused = False
            self.enc.resume_running()
            self.phase_bar.set_paused(False)
        self._update_status()

    def ask_spec_for(self, role: str) -> None:
        def done(spec: str | None) -> None:
            if spec:
                self.hand_role(role, spec)

        self.app.push_screen(SpecPrompt(f"Hand the {role} to (model spec):", self.agent_specs[role], config=self.setup.config), done)

    def action_next_phase(self) -> None:
        if self.enc is None or self.ended:
            return
        phase = self.enc.session.phase
        later = [p for p in JUMPABLE if PHASE_ORDER.index(p) > PHASE_ORDER.index(phase)]
        if not later:
            self.app.notify("Last phase: F8 ends and scores the encounter.")
            return
        self.go_to_phase(later[0])

    def go_to_phase(self, phase: str) -> None:
        if self.enc is not None and not self.ended:
            self.enc.request_phase(phase)  # type: ignore[arg-type]

    def action_picker(self) -> None:
        if self.enc is None or self.ended:
            return
        self.app.push_screen(ExamPicker(), self.submit_command)

    def action_note(self) -> None:
        if self.enc is None or self.ended:
            return
        if self.enc.session.roles["doctor"].spec != "human":
            self.app.notify("The note is written by whoever plays the doctor; F3 takes over.", severity="warning")
            return
        if self.enc.session.phase != "note":
            self.go_to_phase("note")  # the engine then asks for the note
        else:
            self.open_note_editor()

    def open_note_editor(self) -> None:
        if self.note_open or self.enc is None:
            return
        self.note_open = True

        def done(note: PatientNote | None) -> None:
            self.note_open = False
            if note is not None and self.enc is not None:
                self.enc.submit_note(note)

        def keep_draft(fields: NoteFields) -> None:
            self.note_draft = fields

        self.app.push_screen(NoteEditor(self.note_draft, on_draft=keep_draft), done)

    def action_end(self) -> None:
        if self.enc is None or self.ended:
            return
        self.enc.end()

    def abandon(self) -> None:
        """Stop without scoring: the engine saves the session as aborted."""
        self.workers.cancel_group(self, "engine")

    def action_leave(self) -> None:
        if self.ended or self.enc is None:
            self.app.pop_screen()
        else:
            self.app.notify("The encounter is running: F8 ends and scores it; the palette (Ctrl+P) can abandon it.")

    def action_toggle_reveal(self) -> None:
        panel = self.score_panel
        panel.set_reveal(not panel.reveal)
        self.app.notify("Showing the whole checklist" if panel.reveal else "Practice mode: unearned items hidden")

    def action_patient_script(self) -> None:
        """What a human standardized patient needs to answer; never for a human doctor."""
        if self.enc is not None and self.enc.session.roles["doctor"].spec == "human":
            self.app.notify("The patient's script is the answer key: it is shown only to whoever plays the patient.", severity="warning")
            return
        from ..widgets.patient_script import PatientScript

        self.app.push_screen(PatientScript(self.setup.case))

    def action_toggle_doorway(self) -> None:
        self._doorway_auto = False
        panel = self.query_one(DoorwayPanel)
        panel.collapsed = not panel.collapsed

    def action_focus_scores(self) -> None:
        self.score_panel.tree.focus()

    def action_focus_input(self) -> None:
        self.query_one("#say", Input).focus()

    # -- command palette -----------------------------------------------------------

    def palette_commands(self):
        """(title, help, callback) triples the app adds to the command palette."""
        yield ("Pause / resume encounter", "Stop after the current turn, or go on", self.action_toggle_pause)
        for role in ("doctor", "patient"):
            yield (f"Take over the {role}", f"Play the {role} yourself from the next turn", lambda r=role: self.hand_role(r, "human"))
            yield (f"Hand the {role} to the offline engine", "The embedded engine plays it", lambda r=role: self.hand_role(r, "offline"))
            yield (f"Hand the {role} to a model…", "Type a model spec", lambda r=role: self.ask_spec_for(r))
        for phase in JUMPABLE:
            yield (f"Go to phase: {phase}", "Move the encounter forward", lambda p=phase: self.go_to_phase(p))
        yield ("Exam / order picker", "Common exams and tests", self.action_picker)
        yield ("Write the patient note", "Open the note editor", self.action_note)
        yield ("End encounter and score", "Skip to scoring", self.action_end)
        yield ("Abandon encounter (no scoring)", "Stop now; the session is saved as aborted", self.abandon)
        yield ("Toggle doorway panel", "Show or hide the doorway details", self.action_toggle_doorway)
        yield ("Patient script (F1)", "What to say when you play the patient", self.action_patient_script)
        yield ("Show / hide the whole checklist", "Practice mode hides unearned answer-key items (F9)", self.action_toggle_reveal)
