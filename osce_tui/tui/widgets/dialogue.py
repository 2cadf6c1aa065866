"""The dialogue log: one block per turn, model text streamed token by token.

Each turn is a small header (speaker, spec, turn id) above a ``Markdown``
widget. While a turn streams, its text goes through a ``MarkdownStream``,
which batches fragments when they arrive faster than the widget can render,
so a fast model never makes the log fall behind. The log is anchored to the
bottom: new text stays in view unless the user scrolls up to read, and
scrolling back to the end re-anchors it (Textual's anchor behaviour).
"""

from __future__ import annotations

import asyncio

from rich.text import Text
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from ...domain.session import Turn

SPEAKER = {"doctor": "Doctor", "patient": "Patient", "examiner": "Examiner", "system": "System"}
KIND_TITLE = {
    "exam_request": "Exam request",
    "exam_result": "Exam finding",
    "test_order": "Test order",
    "test_result": "Test result",
    "phase": "Phase",
    "note": "Patient note",
    "diagnosis": "Final diagnosis",
}


def header_text(role: str, spec: str | None, turn_id: str, kind: str = "utterance") -> Text:
    title = SPEAKER.get(role, role.title())
    if kind in KIND_TITLE:
        title = f"{title} · {KIND_TITLE[kind]}"
    text = Text(title, style="bold")
    if spec:
        text.append(f"  {spec}", style="dim")
    text.append(f"  {turn_id}", style="dim italic")
    return text


async def close_stream(stream: MarkdownStream) -> None:
    """Stop a MarkdownStream, tolerating one whose task never got to start.

    Cancelling a task before its first step makes awaiting it raise
    CancelledError; that is not our cancellation, so it is swallowed unless
    the current task itself is being cancelled.
    """
    try:
        await stream.stop()
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise


class TurnView(Vertical):
    """One turn of the encounter."""

    DEFAULT_CSS = """
    TurnView { height: auto; margin: 0 0 1 0; padding: 0 1; border-left: thick $primary; }
    TurnView.role-doctor { border-left: thick $primary; }
    TurnView.role-patient { border-left: thick $success; }
    TurnView.role-examiner { border-left: thick $warning; background: $warning 8%; }
    TurnView.role-system { border-left: thick $secondary; color: $text-muted; }
    TurnView.-highlight { background: $accent 25%; }
    TurnView > .turn-header { height: 1; }
    TurnView > Markdown { margin: 0; padding: 0; }
    TurnView > Markdown > MarkdownParagraph { margin: 0; }
    """

    def __init__(self, role: str, turn_id: str, spec: str | None = None, text: str = "", kind: str = "utterance") -> None:
        super().__init__(id=f"turn-{turn_id}", classes=f"role-{role} kind-{kind}")
        self.role = role
        self.turn_id = turn_id
        self.spec = spec
        self.kind = kind
        self._initial = text
        self.header = Static(header_text(role, spec, turn_id, kind), classes="turn-header")
        self.body = Markdown(text)
        self.stream: MarkdownStream | None = None
        self.streamed = ""

    def compose(self):
        yield self.header
        yield self.body

    def set_kind(self, role: str, spec: str | None, kind: str) -> None:
        self.remove_class(f"role-{self.role}", f"kind-{self.kind}")
        self.role, self.spec, self.kind = role, spec, kind
        self.add_class(f"role-{role}", f"kind-{kind}")
        self.header.update(header_text(role, spec, self.turn_id, kind))


class DialogueLog(VerticalScroll):
    """Scrolling log of TurnViews keyed by turn id."""

    DEFAULT_CSS = """
    DialogueLog { height: 1fr; padding: 0 1 0 0; }
    DialogueLog > .empty { color: $text-muted; padding: 1 2; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.views: dict[str, TurnView] = {}

    def on_mount(self) -> None:
        self.anchor()

    def view(self, turn_id: str) -> TurnView | None:
        return self.views.get(turn_id)

    async def start_turn(self, role: str, turn_id: str, spec: str | None = None) -> TurnView:
        """A turn begins: mount its block and open a stream for its text."""
        view = self.views.get(turn_id)
        if view is None:
            view = TurnView(role, turn_id, spec)
            self.views[turn_id] = view
            await self.mount(view)
        elif view.stream is not None:
            # Same id again: the earlier attempt was interrupted (takeover, error)
            # before it became a turn. Start over instead of appending to it.
            await close_stream(view.stream)
            view.stream = None
            view.streamed = ""
            await view.body.update("")
        if view.stream is None:
            view.stream = Markdown.get_stream(view.body)
        return view

    async def append(self, turn_id: str, text: str, role: str = "system") -> None:
        """Add streamed text to a turn (starting it if the start event was missed)."""
        view = self.views.get(turn_id) or await self.start_turn(role, turn_id)
        if view.stream is None:  # text after the turn finished: start a new stream
            view.stream = Markdown.get_stream(view.body)
        view.streamed += text
        await view.stream.write(text)

    async def finish_turn(self, turn: Turn) -> TurnView:
        """A turn is final: close its stream and show the recorded text."""
        view = self.views.get(turn.id)
        if view is None:
            view = TurnView(turn.role, turn.id, turn.spec, turn.text, turn.kind)
            self.views[turn.id] = view
            await self.mount(view)
            return view
        if view.stream is not None:
            await close_stream(view.stream)
            view.stream = None
        if (view.role, view.spec, view.kind) != (turn.role, turn.spec, turn.kind):
            view.set_kind(turn.role, turn.spec, turn.kind)
        # The recorded text is the truth (an agent may strip markers it streamed).
        if view.streamed != turn.text or view.body.source != turn.text:
            view.streamed = turn.text
            await view.body.update(turn.text)
        return view

    async def add_note(self, turn_id: str, role: str, text: str, kind: str = "system", spec: str | None = None) -> TurnView:
        """A finished block that is not (yet) a session turn, e.g. an exam result event."""
        view = self.views.get(turn_id)
        if view is not None:
            return view
        view = TurnView(role, turn_id, spec, text, kind)
        self.views[turn_id] = view
        await self.mount(view)
        return view

    async def stop_all(self) -> None:
        """Close every open stream (encounter ended or screen leaving)."""
        for view in self.views.values():
            if view.stream is not None:
                await close_stream(view.stream)
                view.stream = None

    async def on_unmount(self) -> None:
        # Leaving mid-stream (app quit, screen closed): end the stream tasks
        # here so their last append fails where we can see it, not in a
        # detached task.
        for view in self.views.values():
            if view.stream is not None:
                stream, view.stream = view.stream, None
                try:
                    await close_stream(stream)
                except Exception:  # the widget is already gone; nothing to show
                    pass

    async def clear_turns(self) -> None:
        await self.stop_all()
        self.views.clear()
        await self.remove_children()

    def jump_to(self, turn_id: str) -> bool:
        """Scroll a turn into view and highlight it (results evidence links)."""
        view = self.views.get(turn_id)
        if view is None:
            return False
        for other in self.query(TurnView).filter(".-highlight"):
            other.remove_class("-highlight")
        view.add_class("-highlight")
        self.release_anchor()
        self.scroll_to_widget(view, animate=False, top=True)
        return True
