"""The phase bar: where the encounter is, how long it has run, turns left.

Time comes from an injectable clock so snapshots and tests are stable.
"""

from __future__ import annotations

import time
from typing import Callable

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from ...config import EncounterSettings
from ...domain.session import PHASE_ORDER

SHOWN_PHASES = [p for p in PHASE_ORDER if p != "doorway"]
PHASE_TITLE = {"doorway": "Doorway", "history": "History", "exam": "Exam", "closure": "Closure", "note": "Note", "scored": "Scored"}


def budget_for(settings: EncounterSettings, phase: str) -> tuple[int | None, float | None]:
    """(max turns, minutes) for a phase, None where the phase has no limit."""
    if phase in ("history", "exam", "closure"):
        b = getattr(settings, phase)
        return b.max_turns, b.minutes
    if phase == "note":
        return None, settings.note_minutes
    return None, None


def mmss(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


class PhaseBar(Static):
    """One line: phases (current highlighted) · timer · turns/budget · state."""

    DEFAULT_CSS = """
    PhaseBar { height: 1; background: $panel; padding: 0 1; }
    """

    phase: reactive[str] = reactive("doorway")
    turns: reactive[int] = reactive(0)
    state: reactive[str] = reactive("")

    def __init__(
        self,
        settings: EncounterSettings | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.settings = settings or EncounterSettings()
        self.clock = clock
        self.phase_started = clock()
        self.paused_at: float | None = None
        self.paused_total = 0.0

    def on_mount(self) -> None:
        self.set_interval(1.0, self.refresh)

    # -- state changes -------------------------------------------------------

    def enter_phase(self, phase: str) -> None:
        self.phase = phase
        self.turns = 0
        self.phase_started = self.clock()
        self.paused_total = 0.0
        if self.paused_at is not None:
            self.paused_at = self.phase_started

    def count_turn(self) -> None:
        self.turns += 1

    def set_paused(self, paused: bool) -> None:
        now = self.clock()
        if paused and self.paused_at is None:
            self.paused_at = now
        elif not paused and self.paused_at is not None:
            self.paused_total += now - self.paused_at
            self.paused_at = None
        self.state = "paused" if paused else ""
        self.refresh()

    def elapsed(self) -> float:
        end = self.paused_at if self.paused_at is not None else self.clock()
        return end - self.phase_started - self.paused_total

    # -- rendering -----------------------------------------------------------

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        for i, phase in enumerate(SHOWN_PHASES):
            if i:
                text.append("›", style="dim")
            if phase == self.phase:
                text.append(f" {PHASE_TITLE[phase]} ", style="bold reverse")
            elif PHASE_ORDER.index(phase) < PHASE_ORDER.index(self.phase):
                text.append(f" {PHASE_TITLE[phase]} ", style="dim strike")
            else:
                text.append(f" {PHASE_TITLE[phase]} ", style="dim")
        max_turns, minutes = budget_for(self.settings, self.phase)
        if self.phase not in ("doorway", "scored"):
            text.append("  ⏱ ", style="dim")
            elapsed = self.elapsed()
            over = minutes is not None and elapsed > minutes * 60
            text.append(mmss(elapsed), style="bold red" if over else "bold")
            if minutes is not None:
                text.append(f"/{mmss(minutes * 60)}", style="dim")
                if not self.settings.timers:
                    text.append("*", style="dim")  # shown, not enforced
            if max_turns is not None:
                left = max_turns - self.turns
                text.append(f"  turns {self.turns}/{max_turns}", style="bold red" if left <= 0 else "")
        if self.state:
            text.append(f"  {self.state.upper()}", style="bold yellow reverse")
        return text
