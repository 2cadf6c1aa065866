"""The results screen: scores per section and criterion, with their evidence.

Left: the score tree (sections → items). Right: the explanation of the
selected item and the transcript; Enter on an item jumps to its evidence
turn (again cycles through the evidence). Re-scoring with another judge runs
in a worker and adds a new score set beside the old ones.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Static, Tree

from ...config import Config
from ...domain.case import Case
from ...domain.rubric import Rubric
from ...domain.scores import ItemScore, ScoreSet, SectionScore
from ...domain.session import Session
from ...store import save_session
from ..common import SpecPrompt, freeze_cursors
from ..export import export_session
from ..widgets.dialogue import DialogueLog
from ..widgets.score_panel import ScoreTree, explanation_line, total_text


def results_title(session: Session, scores: ScoreSet | None) -> Text:
    text = Text(f"{session.case_id}", style="bold")
    text.append(f"  session {session.id}", style="dim")
    text.append("   ")
    text.append_text(total_text(scores))
    if scores is not None:
        text.append(f"   judge {scores.judge} · rubric {scores.rubric_id}", style="dim")
    return text


def score_sets(session: Session) -> list[ScoreSet]:
    """Final sets first (newest first), then the newest live set if there is no final one."""
    finals = [s for s in reversed(session.scores) if s.final]
    if finals:
        return finals
    live = [s for s in reversed(session.scores) if not s.final]
    return live[:1]


class ResultsScreen(Screen):
    BINDINGS = [
        # Short labels so Esc (Back) still fits an 80-column footer.
        Binding("r", "rescore", "Re-score"),
        Binding("s", "next_set", "Judge⇄", tooltip="Show another judge's score set"),
        Binding("j", "export('json')", "JSON", tooltip="Export the scores as JSON"),
        Binding("m", "export('md')", "MD", tooltip="Export a Markdown report"),
        Binding("p", "replay", "Replay"),
        Binding("escape", "back", "Back"),
    ]
    DEFAULT_CSS = """
    ResultsScreen #results-title { height: 1; background: $panel; padding: 0 1; }
    ResultsScreen #results-body { height: 1fr; }
    ResultsScreen #results-left { width: 45%; min-width: 30; }
    ResultsScreen #results-right { width: 1fr; border-left: vkey $primary 50%; }
    ResultsScreen #results-why { height: auto; max-height: 6; padding: 0 1; background: $boost; }
    """

    def __init__(
        self,
        case: Case | None,
        rubric: Rubric | None,
        session: Session,
        session_path: Path | None,
        config: Config | None = None,
    ) -> None:
        super().__init__()
        self.case = case
        self.rubric = rubric
        self.session = session
        self.session_path = session_path
        self.config = config or Config()
        self.sets = score_sets(session)
        self.set_index = 0
        self._evidence_pos: dict[int, int] = {}
        self.rescoring = False

    @property
    def scores(self) -> ScoreSet | None:
        return self.sets[self.set_index] if self.sets else None

    def compose(self) -> ComposeResult:
        yield Static(results_title(self.session, self.scores), id="results-title")
        with Horizontal(id="results-body"):
            with Vertical(id="results-left"):
                yield ScoreTree(id="results-tree")
            with Vertical(id="results-right"):
                yield Static("Select an item to see why; Enter jumps to its evidence.", id="results-why")
                yield DialogueLog(id="results-transcript")
        yield Footer()

    async def on_mount(self) -> None:
        freeze_cursors(self)
        log = self.query_one(DialogueLog)
        log.anchor(False)
        for turn in self.session.turns:
            await log.finish_turn(turn)
        log.scroll_home(animate=False)
        self.show_set()
        self.query_one(ScoreTree).focus()
        if self.scores is None:
            self.app.notify("This session has no scores yet: r scores it.", severity="warning")

    def show_set(self) -> None:
        tree = self.query_one(ScoreTree)
        tree.clear()
        tree.section_nodes.clear()
        tree.item_nodes.clear()
        if self.scores is not None:
            tree.show_scores(self.scores)
            tree.cursor_line = 0  # on the first section: Down reaches its first item
        self.query_one("#results-title", Static).update(results_title(self.session, self.scores))

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        data = event.node.data
        why = self.query_one("#results-why", Static)
        if isinstance(data, ItemScore):
            head = Text(data.label, style="bold")
            head.append(f"  {data.points:g}/{data.max_points:g}  [{data.status}]", style="dim")
            head.append("\n" + explanation_line(data, None))
            why.update(head)
        elif isinstance(data, SectionScore):
            pct = "–" if data.score_100 is None else f"{data.score_100:.1f}"
            why.update(Text(f"{data.title}: {data.points:g}/{data.max_points:g} ({pct}) — judge {data.judge}"))

    def on_tree_node_selected(self, event: Tree.NodeSelected) -> None:
        data = event.node.data
        if isinstance(data, ItemScore):
            self.jump_to_evidence(data, id(event.node))

    def jump_to_evidence(self, item: ItemScore, key: int | None = None) -> str | None:
        """Scroll the transcript to the item's next evidence turn; returns its id."""
        if not item.evidence:
            self.app.notify("No evidence turn recorded for this item.", timeout=3)
            return None
        key = key if key is not None else id(item)
        pos = self._evidence_pos.get(key, 0) % len(item.evidence)
        self._evidence_pos[key] = pos + 1
        turn_id = item.evidence[pos]
        if not self.query_one(DialogueLog).jump_to(turn_id):
            self.app.notify(f"Turn {turn_id} is not in this session.", severity="warning")
            return None
        return turn_id

    # -- actions ---------------------------------------------------------------

    def action_next_set(self) -> None:
        if len(self.sets) < 2:
            self.app.notify("Only one score set: r re-scores with another judge.", timeout=3)
            return
        self.set_index = (self.set_index + 1) % len(self.sets)
        self.show_set()

    def action_rescore(self) -> None:
        if self.case is None or self.rubric is None:
            self.app.notify("The case or rubric of this session is not in the library.", severity="error")
            return
        if self.rescoring:
            return
        current = self.scores.judge if self.scores else "offline"

        def done(spec: str | None) -> None:
            if spec:
                self.rescore(spec)

        self.app.push_screen(SpecPrompt("Re-score with judge (model spec):", current, allow_human=False, config=self.config), done)

    @work(exclusive=True, group="rescore", exit_on_error=False)
    async def rescore(self, judge: str) -> None:
        from ...judges.runner import score_session

        assert self.case is not None and self.rubric is not None
        self.rescoring = True
        self.app.notify(f"Scoring with {judge}…", timeout=3)
        try:
            scores = await score_session(self.case, self.session, self.rubric, judge, config=self.config)
        except Exception as exc:  # missing key, provider down, judge bug: keep what we have
            self.app.notify(f"Re-scoring with {judge} failed: {exc}", severity="error", timeout=10)
            return
        finally:
            self.rescoring = False
        self.session.put_scores(scores)
        if self.session_path is not None:
            try:
                save_session(self.session, self.session_path)
            except OSError as exc:
                self.app.notify(f"Scores not saved: {exc}", severity="error")
        self.sets = score_sets(self.session)
        self.set_index = 0
        self.show_set()
        self.app.notify(f"Scored by {judge}: total {scores.total if scores.total is not None else '–'}")

    def action_export(self, fmt: str) -> None:
        if self.session_path is None:
            self.app.notify("Unsaved session: nothing to name the export after.", severity="error")
            return
        out_dir = Path(self.config.sessions_dir).parent / "exports"
        try:
            path = export_session(self.session, self.scores, self.session_path, fmt, out_dir)
        except (ValueError, OSError) as exc:
            self.app.notify(f"Export failed: {exc}", severity="error")
            return
        self.last_export = path
        self.app.notify(f"Exported {path}", timeout=5)

    def action_replay(self) -> None:
        from .replay import ReplayScreen

        self.app.push_screen(ReplayScreen(self.case, self.rubric, self.session))

    def action_back(self) -> None:
        self.app.pop_screen()
