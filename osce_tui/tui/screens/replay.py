"""Replay a saved session turn by turn, watching the live panels evolve.

At step k the transcript shows the first k turns and the panels show
``score_live`` run on the session cut at turn k: what the examiner would
have shown at that moment of the encounter.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Static

from ...domain.case import Case
from ...domain.rubric import Rubric
from ...domain.scores import ScoreSet
from ...domain.session import Session
from ..common import freeze_cursors
from ..widgets.dialogue import DialogueLog
from ..widgets.score_panel import ScorePanel


def truncate_session(session: Session, k: int) -> Session:
    """The session as it stood after its first ``k`` turns."""
    turns = session.turns[:k]
    ids = {t.id for t in turns}
    note_given = any(t.kind == "note" for t in turns)
    phase = turns[-1].phase if turns else "doorway"
    return session.model_copy(
        update={
            "turns": list(turns),
            "exams": [e for e in session.exams if e.request_turn in ids and (e.result_turn is None or e.result_turn in ids)],
            "note": session.note if note_given else None,
            "final_diagnosis": session.final_diagnosis if any(t.kind == "diagnosis" for t in turns) else None,
            "scores": [],
            "phase": phase,
            "status": "in_progress" if k < len(session.turns) else session.status,
        }
    )


class ReplayScreen(Screen):
    BINDINGS = [
        # priority: the transcript would otherwise take these keys for scrolling.
        Binding("right,l", "step(1)", "Next turn", priority=True),
        Binding("left,h", "step(-1)", "Prev turn", priority=True),
        Binding("end", "jump('end')", "End", priority=True),
        Binding("home", "jump('start')", "Start", priority=True),
        Binding("space", "toggle_play", "Play/pause"),
        Binding("escape", "back", "Back"),
    ]
    DEFAULT_CSS = """
    ReplayScreen #replay-title { height: 1; background: $panel; padding: 0 1; }
    ReplayScreen #replay-body { height: 1fr; }
    ReplayScreen ScorePanel { width: 40%; min-width: 28; max-width: 60; }
    """

    def __init__(self, case: Case | None, rubric: Rubric | None, session: Session, *, start: int = 0, play_interval: float = 0.8) -> None:
        super().__init__()
        self.case = case
        self.rubric = rubric
        self.session = session
        self.position = max(0, min(start, len(session.turns)))
        self.play_interval = play_interval
        self.playing = False
        self._timer = None
        self.live_ok = case is not None and rubric is not None
        self.history: list[ScoreSet | None] = []  # scores shown at each step, for tests

    def compose(self) -> ComposeResult:
        yield Static("", id="replay-title")
        with Horizontal(id="replay-body"):
            yield DialogueLog(id="replay-log")
            yield ScorePanel(id="replay-scores")
        yield Footer()

    async def on_mount(self) -> None:
        freeze_cursors(self)
        if not self.live_ok:
            self.app.notify(
                f"Case {self.session.case_id!r} or rubric {self.session.rubric_id!r} not found: "
                "showing the transcript and saved scores only.",
                severity="warning",
                timeout=8,
            )
        await self.show(self.position)

    def title_text(self) -> Text:
        n = len(self.session.turns)
        text = Text(f"Replay {self.session.case_id}", style="bold")
        text.append(f"  session {self.session.id}", style="dim")
        text.append(f"   turn {self.position}/{n}", style="bold cyan")
        if self.position:
            t = self.session.turns[self.position - 1]
            text.append(f"  {t.phase}", style="dim")
        if self.playing:
            text.append("  ▶ playing", style="green")
        return text

    def scores_at(self, k: int) -> ScoreSet | None:
        if not self.live_ok:
            return self.session.latest_scores() if k >= len(self.session.turns) else None
        from ...judges.runner import score_live

        assert self.case is not None and self.rubric is not None
        return score_live(self.case, truncate_session(self.session, k), self.rubric)

    async def show(self, k: int) -> None:
        """Render the state after ``k`` turns (append or rebuild as needed)."""
        k = max(0, min(k, len(self.session.turns)))
        log = self.query_one(DialogueLog)
        shown = len(log.views)
        if k < shown:
            await log.clear_turns()
            shown = 0
        for turn in self.session.turns[shown:k]:
            await log.finish_turn(turn)
        self.position = k
        try:
            scores = self.scores_at(k)
        except Exception as exc:  # a judge bug must not break the replay
            self.app.notify(f"Live scoring failed at turn {k}: {exc}", severity="error")
            scores = None
        self.history.append(scores)
        panel = self.query_one(ScorePanel)
        if scores is None:
            panel.clear()
        else:
            panel.update_scores(scores)
        self.query_one("#replay-title", Static).update(self.title_text())

    async def action_step(self, delta: int) -> None:
        await self.show(self.position + delta)

    async def action_jump(self, where: str) -> None:
        await self.show(0 if where == "start" else len(self.session.turns))

    def action_toggle_play(self) -> None:
        self.playing = not self.playing
        if self.playing:
            self._timer = self.set_interval(self.play_interval, self._tick)
        elif self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.query_one("#replay-title", Static).update(self.title_text())

    @work(exclusive=True, group="replay-tick")
    async def _tick(self) -> None:
        if self.position >= len(self.session.turns):
            self.action_toggle_play()
            return
        await self.show(self.position + 1)

    def action_back(self) -> None:
        self.app.pop_screen()
