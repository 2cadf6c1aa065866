"""A deterministic provider for tests and demos: replies come from a script.

``ScriptedProvider(["first reply", "second reply"])`` answers each call with the
next string; ``ScriptedProvider(lambda messages: ...)`` computes the reply from
the conversation. Replies stream word by word so streaming code paths are
exercised; ``structured()`` parses the scripted text as JSON into the schema,
with the same one corrective retry real providers do (the retry consumes the
next scripted reply). Every call's messages are kept in ``calls``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from typing import AsyncIterator, Callable, ClassVar, Sequence, TypeVar

from pydantic import BaseModel

from ..config import Config
from ..domain.session import GenerationSettings, Usage
from .base import BadResponseError, ChatMessage, ChatProvider, Done, ModelSpec, StreamEvent, TextDelta, parse_spec
from .structured import InvalidReply, correction_message, parse_reply
from .usage import priced

T = TypeVar("T", bound=BaseModel)

Script = Sequence[str] | Callable[[list[ChatMessage]], str]

_WORDS = re.compile(r"\s*\S+\s*|\s+")


def _count_tokens(text: str) -> int:
    """Rough token count (words) so usage numbers are plausible and deterministic."""
    return len(text.split())


class ScriptedProvider(ChatProvider):
    # Named scripts for ``scripted/<name>`` specs built through make_provider.
    registry: ClassVar[dict[str, Script]] = {}

    def __init__(
        self,
        replies: Script,
        *,
        spec: str | ModelSpec = "scripted/default",
        config: Config | None = None,
        limiter: asyncio.Semaphore | None = None,
        delay: float = 0.0,
    ):
        self.spec = parse_spec(spec) if isinstance(spec, str) else spec
        self._script = replies if callable(replies) else list(replies)
        self._index = 0
        self._config = config
        self._limiter = limiter
        self._delay = delay
        self.calls: list[list[ChatMessage]] = []
        self.settings_seen: list[GenerationSettings] = []

    @classmethod
    def register(cls, name: str, replies: Script) -> None:
        """Make ``scripted/<name>`` resolvable by make_provider (tests, demos)."""
        cls.registry[name] = replies

    @property
    def remaining(self) -> int | None:
        return None if callable(self._script) else len(self._script) - self._index

    def _next_reply(self, messages: list[ChatMessage]) -> str:
        self.calls.append(list(messages))
        if callable(self._script):
            return self._script(list(messages))
        if self._index >= len(self._script):
            raise BadResponseError(
                f"scripted provider ran out of replies after {len(self._script)} calls", spec=str(self.spec)
            )
        reply = self._script[self._index]
        self._index += 1
        return reply

    def _usage(self, messages: list[ChatMessage], reply: str) -> Usage:
        return priced(self.spec, sum(_count_tokens(m.content) for m in messages), _count_tokens(reply), self._config)

    def _slot(self):
        return self._limiter if self._limiter is not None else contextlib.nullcontext()

    async def stream_chat(self, messages: list[ChatMessage], settings: GenerationSettings) -> AsyncIterator[StreamEvent]:
        async with self._slot():
            self.settings_seen.append(settings)
            reply = self._next_reply(messages)
            for piece in _WORDS.findall(reply):
                if self._delay:
                    await asyncio.sleep(self._delay)
                yield TextDelta(piece)
            yield Done(reply, self._usage(messages, reply))

    async def structured(
        self, messages: list[ChatMessage], schema: type[T], settings: GenerationSettings
    ) -> tuple[T, Usage]:
        from .base import StructuredOutputError

        usage = Usage()
        convo = list(messages)
        reason = ""
        for _ in range(2):
            async with self._slot():
                self.settings_seen.append(settings)
                reply = self._next_reply(convo)
            usage = usage + self._usage(convo, reply)
            try:
                return parse_reply(reply, schema), usage
            except InvalidReply as exc:
                reason = str(exc)
                convo = convo + [ChatMessage(role="assistant", content=reply), correction_message(reason)]
        raise StructuredOutputError(f"no valid {schema.__name__} after 2 attempts: {reason}", spec=str(self.spec))
