"""Small pieces several screens share: spec prompt, cursor freezing, spec checks."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static, TextArea

from ..providers.base import SpecError, parse_spec

SPEC_HINT = "human, offline, openai/<model>, anthropic/<model>, ollama/<model>, vllm/<model>, openai-api/<name>/<model>"


def check_spec(spec: str, *, allow_human: bool = True) -> str:
    """Normalised spec string, or ValueError with a message for the user."""
    try:
        parsed = parse_spec(spec)
    except SpecError as exc:
        raise ValueError(str(exc)) from None
    if parsed.provider == "human" and not allow_human:
        raise ValueError("a human cannot play this role here")
    return str(parsed) if parsed.provider != "scripted" else spec.strip()


def freeze_cursors(node: DOMNode) -> None:
    """Stop cursor blinking under ``node`` when the app runs frozen (snapshots)."""
    if not getattr(node.app, "frozen", False):
        return
    for widget in node.query(Input):
        widget.cursor_blink = False
    for widget in node.query(TextArea):
        widget.cursor_blink = False


class SpecPrompt(ModalScreen[str | None]):
    """Ask for a model spec (takeover target, re-score judge)."""

    DEFAULT_CSS = """
    SpecPrompt { align: center middle; }
    SpecPrompt > Vertical { width: 70; max-width: 100%; height: auto; border: round $accent;
        background: $surface; padding: 0 1; }
    SpecPrompt #spec-error { color: $error; height: auto; }
    SpecPrompt .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str = "", *, allow_human: bool = True, config=None) -> None:
        super().__init__()
        self.title_text = title
        self.value = value
        self.allow_human = allow_human
        # With a config, a spec whose key is missing is refused here, where it can be retyped.
        self.config = config

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield Input(value=self.value, placeholder="model spec", id="spec-input")
            yield Static(SPEC_HINT, classes="hint")
            yield Static("", id="spec-error")

    def on_mount(self) -> None:
        freeze_cursors(self)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            spec = check_spec(event.value, allow_human=self.allow_human)
        except ValueError as exc:
            self.query_one("#spec-error", Static).update(str(exc))
            return
        if self.config is not None:
            from .spec_check import provider_problem

            problem = provider_problem(spec, self.config)
            if problem:
                self.query_one("#spec-error", Static).update(problem)
                return
        self.dismiss(spec)

    def action_cancel(self) -> None:
        self.dismiss(None)
