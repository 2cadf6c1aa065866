"""The engine observer that feeds a Textual screen.

The encounter runs as an async worker on the app's own event loop, so the
observer is called on the UI thread and can post straight to the target's
queue (``post_message`` is thread-safe too, so an engine run in a thread
would work unchanged).

Text deltas are batched: they collect in a per-turn buffer and only the
first delta of a batch posts a message (``EngineTextBatch``); the handler
takes everything buffered by the time it runs. Order is kept because a turn's
deltas all arrive before its TurnFinished, which is posted after the batch
message. Every other event becomes one message.
"""

from __future__ import annotations

from textual.message_pump import MessagePump

from ..engine import events as ev
from .messages import EngineTextBatch, to_message


class EngineBridge:
    """Callable observer: engine events become messages on ``target``.

    ``closed`` drops events after the screen is gone (e.g. the user left the
    encounter while a model reply was still streaming) instead of raising.
    """

    def __init__(self, target: MessagePump, *, on_turn_finished=None) -> None:
        self.target = target
        # Called on the engine's side as each turn ends, before the engine
        # starts the next one: a pause requested here takes effect at once
        # (a message would arrive only after fast agents ran on).
        self.on_turn_finished = on_turn_finished
        self.closed = False
        self.posted = 0
        self.deltas = 0
        self._attempt: dict[str, int] = {}
        self._buffers: dict[tuple[str, int], list[str]] = {}

    def __call__(self, event: object) -> None:
        if self.closed:
            return
        if isinstance(event, ev.TextDelta):
            self._buffer(event)
            return
        if isinstance(event, ev.TurnStarted):
            # A second start for the same id is a retry: its text gets a fresh buffer.
            self._attempt[event.turn_id] = self._attempt.get(event.turn_id, -1) + 1
        self.posted += 1
        self.target.post_message(to_message(event))
        if self.on_turn_finished is not None and isinstance(event, ev.TurnFinished):
            self.on_turn_finished(event)

    def _buffer(self, event: ev.TextDelta) -> None:
        self.deltas += 1
        key = (event.turn_id, self._attempt.get(event.turn_id, 0))
        buf = self._buffers.get(key)
        if buf:
            buf.append(event.text)
            return
        self._buffers[key] = [event.text]
        self.posted += 1
        self.target.post_message(EngineTextBatch(key, event.role))

    def take(self, key: tuple[str, int]) -> str:
        """All text buffered for ``key`` (empties the buffer)."""
        return "".join(self._buffers.pop(key, ()))

    def close(self) -> None:
        self.closed = True
        self._buffers.clear()
