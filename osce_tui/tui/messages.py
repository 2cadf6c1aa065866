"""Engine events as Textual messages.

The engine knows nothing about Textual: it calls an observer with plain
dataclasses (``osce_tui.engine.events``). ``to_message`` wraps each event in
the matching message class so screens can handle them with ordinary
``on_engine_*`` handlers, in order, on the UI's own message queue.
"""

from __future__ import annotations

from textual.message import Message

from ..engine import events as ev


class EngineMessage(Message):
    """Base of every engine-event message; ``event`` is the engine dataclass."""

    def __init__(self, event: object) -> None:
        super().__init__()
        self.event = event


class EngineTurnStarted(EngineMessage):
    event: ev.TurnStarted


class EngineTextDelta(EngineMessage):
    event: ev.TextDelta


class EngineTextBatch(Message):
    """Deltas of one turn waiting in the bridge; the handler takes them all at once.

    One message is posted when a turn's buffer goes from empty to non-empty.
    While the UI is busy, later deltas join the same buffer, so a fast
    stream costs one message per repaint rather than one per token.
    """

    def __init__(self, key: tuple[str, int], role: str) -> None:
        super().__init__()
        self.key = key  # (turn id, attempt number): a restarted turn gets a new buffer
        self.role = role

    @property
    def turn_id(self) -> str:
        return self.key[0]


class EngineTurnFinished(EngineMessage):
    event: ev.TurnFinished


class EnginePhaseChanged(EngineMessage):
    event: ev.PhaseChanged


class EngineExamResult(EngineMessage):
    event: ev.ExamResult


class EngineScoresUpdated(EngineMessage):
    """Live scores. A burst of these collapses to the newest one.

    Scoring runs after every turn, and a fast model (or a replay) can produce
    several sets before the panels repaint. Only the newest set matters, so a
    queued ScoresUpdated is replaced by the next one instead of each being
    rendered in turn (Textual merges consecutive replaceable messages).
    """

    event: ev.ScoresUpdated

    def can_replace(self, message: Message) -> bool:
        # A final set must never be dropped in favour of a later live one.
        return isinstance(message, EngineScoresUpdated) and not message.event.final


class EngineRoleChanged(EngineMessage):
    event: ev.RoleChanged


class EngineAwaitingHuman(EngineMessage):
    event: ev.AwaitingHuman


class EngineError(EngineMessage):
    event: ev.ErrorOccurred


class EngineSessionSaved(EngineMessage):
    event: ev.SessionSaved


class EngineEncounterEnded(EngineMessage):
    event: ev.EncounterEnded


_BY_EVENT: dict[type, type[EngineMessage]] = {
    ev.TurnStarted: EngineTurnStarted,
    ev.TextDelta: EngineTextDelta,
    ev.TurnFinished: EngineTurnFinished,
    ev.PhaseChanged: EnginePhaseChanged,
    ev.ExamResult: EngineExamResult,
    ev.ScoresUpdated: EngineScoresUpdated,
    ev.RoleChanged: EngineRoleChanged,
    ev.AwaitingHuman: EngineAwaitingHuman,
    ev.ErrorOccurred: EngineError,
    ev.SessionSaved: EngineSessionSaved,
    ev.EncounterEnded: EngineEncounterEnded,
}


def to_message(event: object) -> EngineMessage:
    """The message class for one engine event; unknown events are a programming error."""
    try:
        cls = _BY_EVENT[type(event)]
    except KeyError:
        raise TypeError(f"not an engine event: {type(event).__name__}") from None
    return cls(event)
