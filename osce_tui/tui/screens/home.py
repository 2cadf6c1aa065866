"""Home: pick a case (search, specialty, difficulty) or open a recent session."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Input, Label, Select, Static

from ...domain.case import Case
from ...store import SessionFileError, SessionSummary, list_sessions, load_session
from ..common import freeze_cursors

ALL = "__all__"


def case_matches(case: Case, needle: str, specialty: str, difficulty: str) -> bool:
    """Search over id, title, complaint, specialty and tags; filters are exact."""
    if specialty != ALL and case.specialty.lower() != specialty:
        return False
    if difficulty != ALL and (case.difficulty or "unrated") != difficulty:
        return False
    if not needle:
        return True
    hay = " ".join([case.id, case.title, case.specialty, case.doorway.chief_complaint, *case.tags]).lower()
    return all(word in hay for word in needle.lower().split())


class HomeScreen(Screen):
    BINDINGS = [
        Binding("/", "focus_search", "Search"),
        Binding("ctrl+r", "refresh_sessions", "Refresh"),
        # p/c act on the highlighted row of the sessions table from anywhere but
        # a text field (which takes the letters), so they are never dead keys.
        Binding("p", "replay_session", "Replay"),
        Binding("c", "continue_session", "Continue"),
    ]
    DEFAULT_CSS = """
    HomeScreen #home-title { height: 1; background: $panel; padding: 0 1; text-style: bold; }
    HomeScreen #filters { height: 3; }
    HomeScreen #search { width: 1fr; }
    HomeScreen #specialty { width: 24; }
    HomeScreen #difficulty { width: 20; }
    HomeScreen #cases { height: 1fr; }
    HomeScreen #sessions { height: 8; }
    HomeScreen .section { color: $text-muted; height: 1; padding: 0 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.summaries: list[SessionSummary] = []
        self.shown_cases: list[str] = []
        self.sessions_loaded = False

    @property
    def library(self):
        return self.app.library

    def compose(self) -> ComposeResult:
        cases = self.library.cases()
        specialties = sorted({c.specialty.lower() for c in cases.values()})
        difficulties = sorted({c.difficulty or "unrated" for c in cases.values()})
        yield Static("osce-tui — pick a case, then who plays what", id="home-title")
        with Horizontal(id="filters"):
            yield Input(placeholder="search cases (/ to focus)", id="search")
            yield Select([(s, s) for s in specialties], prompt="specialty", id="specialty", allow_blank=True)
            yield Select([(d, d) for d in difficulties], prompt="difficulty", id="difficulty", allow_blank=True)
        yield Label("Cases — Enter to set up an encounter", classes="section")
        yield DataTable(id="cases", cursor_type="row", zebra_stripes=True)
        yield Label("Recent sessions — Enter results, p replay, c continue", classes="section", id="sessions-label")
        yield DataTable(id="sessions", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        freeze_cursors(self)
        table = self.query_one("#cases", DataTable)
        table.add_columns("case", "title", "specialty", "level")
        sessions = self.query_one("#sessions", DataTable)
        sessions.add_columns("updated", "case", "status", "doctor", "patient", "total")
        self.fill_cases()
        self.action_refresh_sessions()
        issues = self.library.case_issues()
        if issues:
            self.app.notify(f"{len(issues)} case file problem(s); `osce-tui cases validate` shows them.", severity="warning")
        table.focus()

    def _filter_value(self, wid: str) -> str:
        value = self.query_one(f"#{wid}", Select).value
        return ALL if value is Select.NULL or value is None else str(value)

    def fill_cases(self) -> None:
        table = self.query_one("#cases", DataTable)
        table.clear()
        needle = self.query_one("#search", Input).value.strip()
        spec, diff = self._filter_value("specialty"), self._filter_value("difficulty")
        self.shown_cases = []
        for case in sorted(self.library.cases().values(), key=lambda c: c.id):
            if case_matches(case, needle, spec, diff):
                table.add_row(case.id, case.title, case.specialty, case.difficulty or "–", key=case.id)
                self.shown_cases.append(case.id)

    @on(Input.Changed, "#search")
    def _search(self) -> None:
        self.fill_cases()

    @on(Input.Submitted, "#search")
    def _search_done(self) -> None:
        self.query_one("#cases", DataTable).focus()

    @on(Select.Changed)
    def _filter(self) -> None:
        self.fill_cases()

    def action_focus_search(self) -> None:
        self.query_one("#search", Input).focus()

    def action_refresh_sessions(self) -> None:
        self.scan_sessions(Path(self.app.config.sessions_dir))

    @work(thread=True, exclusive=True, group="scan-sessions", exit_on_error=False)
    def scan_sessions(self, folder: Path) -> None:
        # A batch output folder can hold thousands of sessions: read them off the UI thread.
        summaries, errors = list_sessions(folder)
        self.app.call_from_thread(self.show_sessions, folder, summaries, errors)

    def show_sessions(self, folder: Path, summaries: list[SessionSummary], errors: list[str]) -> None:
        if not self.is_mounted:
            return
        self.summaries = summaries
        self.sessions_loaded = True
        table = self.query_one("#sessions", DataTable)
        table.clear()
        for s in self.summaries[:50]:
            total = "–" if s.total is None else f"{s.total:.1f}"
            table.add_row(
                s.updated_at.strftime("%Y-%m-%d %H:%M"), s.case_id, s.status, s.doctor, s.patient, total, key=str(s.path)
            )
        label = f"Sessions in {folder} — Enter results · p replay · c continue"
        if errors:
            label += f" ({len(errors)} unreadable)"
        if not self.summaries:
            label = f"No saved sessions in {folder} yet"
        self.query_one("#sessions-label", Label).update(Text(label))

    @on(DataTable.RowSelected, "#cases")
    def _case_chosen(self, event: DataTable.RowSelected) -> None:
        from .setup import SetupScreen

        case_id = str(event.row_key.value)
        self.app.push_screen(SetupScreen(self.library.case(case_id)))

    def _selected_session(self):
        table = self.query_one("#sessions", DataTable)
        if not self.summaries or table.cursor_row is None or table.cursor_row >= table.row_count:
            self.app.notify("No saved session to open yet: finish or start an encounter first.", timeout=4)
            return None
        path = Path(table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value)
        try:
            return path, load_session(path)
        except SessionFileError as exc:
            self.app.notify(str(exc), severity="error")
            return None

    def action_continue_session(self) -> None:
        picked = self._selected_session()
        if not picked:
            return
        path, session = picked
        if session.status == "finished":
            self.app.notify("That session is finished: Enter shows its results.")
            return
        self.app.resume_encounter(path, session)

    @on(DataTable.RowSelected, "#sessions")
    def _session_chosen(self, event: DataTable.RowSelected) -> None:
        picked = self._selected_session()
        if picked:
            self.app.open_results(*picked)

    def action_replay_session(self) -> None:
        picked = self._selected_session()
        if picked:
            self.app.open_replay(picked[1])

    def on_screen_resume(self) -> None:
        # Back from an encounter: its session is new.
        if self.is_mounted:
            self.action_refresh_sessions()
