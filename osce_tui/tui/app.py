"""The osce-tui Textual app: home, setup, encounter, note, results, replay.

The app holds the config and case library, starts screens and adds the
current screen's controls to the command palette. Everything an encounter
shows comes from engine events (see ``screens.encounter``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from ..config import Config
from ..domain.case import Case
from ..domain.session import Session
from ..library import FileLoadError, Library, NotFoundError
from .screens.home import HomeScreen

if TYPE_CHECKING:  # the engine loads when an encounter starts, not for the home screen
    from ..engine import EncounterSetup
    from .screens.encounter import EncounterFactory, EncounterScreen


@dataclass
class RunRequest:
    """`osce-tui run CASE ...`: go straight into an encounter."""

    case: Case
    doctor: str
    patient: str
    judge: str
    rubric: str
    timers: bool = False


@dataclass
class ReplayRequest:
    """`osce-tui sessions replay FILE`."""

    session: Session
    path: Path


class OsceApp(App):
    TITLE = "osce-tui"
    # Absolute, so subclasses defined elsewhere (tests, benchmarks) find it too.
    CSS_PATH = Path(__file__).with_name("app.tcss")
    BINDINGS = [
        Binding("f10", "toggle_theme", "Light/dark", show=False),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        config: Config | None = None,
        library: Library | None = None,
        *,
        start: RunRequest | ReplayRequest | None = None,
        clock: Callable[[], float] = time.monotonic,
        frozen: bool = False,
        encounter_factory: "EncounterFactory | None" = None,
        setup_overrides: dict | None = None,
        watch_pace: float = 0.0,
    ) -> None:
        super().__init__()
        # Seconds to hold after each turn when two agents play (0: full speed).
        self.watch_pace = watch_pace
        self.config = config or Config()
        self.library = library or Library(user_case_dirs=self.config.cases_dirs, user_rubric_dirs=self.config.rubrics_dirs)
        self.start = start
        self.clock = clock
        # frozen: no blinking cursors (deterministic snapshots and captures).
        self.frozen = frozen
        self.encounter_factory = encounter_factory
        # Extra EncounterSetup fields (tests: http_client, seed).
        self.setup_overrides = dict(setup_overrides or {})
        if self.config.theme in self.available_themes:
            self.theme = self.config.theme

    def on_mount(self) -> None:
        self.push_screen(HomeScreen())
        if isinstance(self.start, RunRequest):
            s = self.start
            self.start_encounter(s.case, doctor=s.doctor, patient=s.patient, judge=s.judge, rubric=s.rubric, timers=s.timers)
        elif isinstance(self.start, ReplayRequest):
            self.open_replay(self.start.session)

    # -- navigation --------------------------------------------------------------

    def make_setup(self, case: Case, *, doctor: str, patient: str, judge: str, rubric: str, timers: bool) -> "EncounterSetup":
        from ..engine import EncounterSetup

        config = self.config
        if timers != config.encounter.timers:
            config = config.model_copy(update={"encounter": config.encounter.model_copy(update={"timers": timers})})
        return EncounterSetup(
            case=case,
            rubric=self.library.rubric(rubric),
            doctor=doctor,
            patient=patient,
            judge=judge,
            config=config,
            sessions_dir=Path(config.sessions_dir),
            **self.setup_overrides,
        )

    def start_encounter(self, case: Case, *, doctor: str, patient: str, judge: str, rubric: str, timers: bool = False, replace: bool = False) -> "EncounterScreen | None":
        from .screens.encounter import EncounterScreen, default_factory

        try:
            setup = self.make_setup(case, doctor=doctor, patient=patient, judge=judge, rubric=rubric, timers=timers)
        except (NotFoundError, FileLoadError) as exc:
            self.notify(str(exc), severity="error", timeout=10)
            return None
        screen = EncounterScreen(setup, factory=self.encounter_factory or default_factory)
        if replace:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)
        return screen

    def resume_encounter(self, path: Path, session: Session) -> "EncounterScreen | None":
        """Continue an unfinished session with the roles it was saved with."""
        from ..engine import Encounter
        from .screens.encounter import EncounterScreen

        case, rubric = self._case_and_rubric(session)
        if case is None or rubric is None:
            self.notify(f"Cannot resume: case {session.case_id!r} or rubric {session.rubric_id!r} is not in the library.", severity="error")
            return None
        roles = {r: (session.roles[r].spec if r in session.roles else d) for r, d in (("doctor", "human"), ("patient", "offline"), ("judge", "offline"))}
        setup = self.make_setup(case, rubric=rubric.id, timers=self.config.encounter.timers, **roles)

        def factory(setup: "EncounterSetup", bridge) -> Encounter:
            return Encounter.resume(path, setup, observer=bridge)

        screen = EncounterScreen(setup, factory=factory)
        self.push_screen(screen)
        return screen

    def _case_and_rubric(self, session: Session):
        case = rubric = None
        try:
            case = self.library.case(session.case_id)
        except (NotFoundError, FileLoadError):
            pass
        try:
            rubric = self.library.rubric(session.rubric_id)
        except (NotFoundError, FileLoadError):
            pass
        return case, rubric

    def open_results(self, path: Path, session: Session) -> None:
        from .screens.results import ResultsScreen

        case, rubric = self._case_and_rubric(session)
        self.push_screen(ResultsScreen(case, rubric, session, path, self.config))

    def open_replay(self, session: Session) -> None:
        from .screens.replay import ReplayScreen

        case, rubric = self._case_and_rubric(session)
        self.push_screen(ReplayScreen(case, rubric, session))

    # -- commands ------------------------------------------------------------------

    def action_toggle_theme(self) -> None:
        self.theme = "textual-light" if self.current_theme.dark else "textual-dark"

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Toggle light/dark theme", "Switch between textual-light and textual-dark", self.action_toggle_theme)
        commands = getattr(screen, "palette_commands", None)
        if commands is not None:
            for title, help_text, callback in commands():
                yield SystemCommand(title, help_text, callback)
