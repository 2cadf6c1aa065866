"""OpenAI and OpenAI-compatible servers (Ollama, vLLM, any ``openai-api/...``).

Uses the official SDK's AsyncOpenAI. The SDK retries 429/5xx/connection
errors and enforces the timeout itself (``max_retries``/``timeout`` from
config); we only translate its exceptions. Sampling parameters are sent only
when set, because several compatible servers reject unknown or null fields.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, TypeVar

from pydantic import BaseModel

from ..domain.session import GenerationSettings, Usage
from .base import BadResponseError, ChatMessage, Done, ModelSpec, StreamEvent, StructuredOutputError, TextDelta
from .errors import map_sdk_error
from .structured import InvalidReply, attempted_json, correction_message, json_schema_of, parse_reply, structured_via_text
from .sdk import SdkProvider
from .usage import priced

T = TypeVar("T", bound=BaseModel)


class OpenAIProvider(SdkProvider):
    def __init__(self, spec: ModelSpec, **kwargs: Any):
        import openai  # lazy: offline runs never import the SDK

        super().__init__(spec, openai.AsyncOpenAI, **kwargs)
        # OpenAI proper wants max_completion_tokens; compatible servers know max_tokens.
        self._max_tokens_field = "max_completion_tokens" if spec.provider == "openai" else "max_tokens"
        # None = not tried yet; False once a server showed it cannot do json_schema.
        self.json_schema_supported: bool | None = None

    # -- helpers -------------------------------------------------------------

    def _params(self, messages: list[ChatMessage], settings: GenerationSettings) -> dict[str, Any]:
        # The messages travel in ``extra_body`` (the SDK's documented way to send
        # JSON fields as they are) rather than ``messages=``: the SDK otherwise
        # walks every message against a union of TypedDicts on each call, which
        # profiling showed to be ~5 ms of CPU per request — about half of a
        # batch's client time. Our messages are plain role/content strings that
        # need no transformation, so the JSON sent is byte-for-byte the same.
        params: dict[str, Any] = {
            "model": self.spec.model,
            "messages": [],
            "extra_body": {"messages": [{"role": m.role, "content": m.content} for m in messages]},
        }
        if settings.temperature is not None:
            params["temperature"] = settings.temperature
        if settings.top_p is not None:
            params["top_p"] = settings.top_p
        if settings.max_tokens is not None:
            params[self._max_tokens_field] = settings.max_tokens
        if settings.seed is not None:
            params["seed"] = settings.seed
        return params

    def _usage(self, raw: Any) -> Usage:
        if raw is None:
            return priced(self.spec, 0, 0, self._config)
        return priced(self.spec, raw.prompt_tokens, raw.completion_tokens, self._config)

    # -- chat ----------------------------------------------------------------

    async def stream_chat(self, messages: list[ChatMessage], settings: GenerationSettings) -> AsyncIterator[StreamEvent]:
        parts: list[str] = []
        raw_usage = None
        chunks = 0
        async with self._slot():
            try:
                stream = await self._client.chat.completions.create(
                    **self._params(messages, settings), stream=True, stream_options={"include_usage": True}
                )
                async for chunk in stream:
                    chunks += 1
                    if chunk.usage is not None:
                        raw_usage = chunk.usage
                    for choice in chunk.choices or ():
                        text = choice.delta.content if choice.delta else None
                        if text:
                            parts.append(text)
                            yield TextDelta(text)
            except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a typed error
                raise map_sdk_error(exc, self._ctx) from exc
        if chunks == 0:
            # A 200 with no SSE events at all (an HTML page, a proxy's banner) is not an
            # empty reply from the model: passing it on as "" would hide a wrong base URL.
            raise BadResponseError(self._not_chat("the stream carried no chat completion chunks"), spec=str(self.spec))
        yield Done("".join(parts), self._usage(raw_usage))

    def _not_chat(self, what: str) -> str:
        return f"{self._ctx.label} at {self._ctx.base_url} answered 200 but {what}; is the base URL right (usually ending in /v1)?"

    async def _complete_once(
        self, messages: list[ChatMessage], settings: GenerationSettings, **extra: Any
    ) -> tuple[str, Usage]:
        async with self._slot():
            try:
                resp = await self._client.chat.completions.create(**self._params(messages, settings), **extra)
            except Exception as exc:  # noqa: BLE001
                raise map_sdk_error(exc, self._ctx) from exc
        if not hasattr(resp, "choices"):
            # The SDK hands back the raw body when it is not JSON (e.g. text/html).
            snippet = " ".join(str(resp).split())[:120]
            raise BadResponseError(self._not_chat(f"not with a chat completion: {snippet!r}"), spec=str(self.spec))
        text = resp.choices[0].message.content if resp.choices else None
        return text or "", self._usage(getattr(resp, "usage", None))

    # -- structured ----------------------------------------------------------

    def _response_format(self, schema: type[BaseModel]) -> dict[str, Any]:
        # strict=False: pydantic schemas have optional fields and defaults that
        # OpenAI's strict mode rejects; we validate with pydantic ourselves.
        return {
            "type": "json_schema",
            "json_schema": {"name": schema.__name__[:64], "schema": json_schema_of(schema), "strict": False},
        }

    async def structured(
        self, messages: list[ChatMessage], schema: type[T], settings: GenerationSettings
    ) -> tuple[T, Usage]:
        usage = Usage()
        if self.json_schema_supported is not False:
            outcome = await self._structured_native(messages, schema, settings)
            usage = usage + outcome[1]
            if outcome[0] is not None:
                return outcome[0], usage
        # The server cannot do json_schema (or ignored it): schema goes into the prompt.
        result, more = await structured_via_text(
            lambda convo: self._complete_once(convo, settings), messages, schema, spec=str(self.spec)
        )
        return result, usage + more

    async def _structured_native(
        self, messages: list[ChatMessage], schema: type[T], settings: GenerationSettings
    ) -> tuple[T | None, Usage]:
        """Try the json_schema response format; (None, usage) means 'use the text fallback'."""
        import openai

        fmt = self._response_format(schema)
        try:
            text, usage = await self._complete_once(messages, settings, response_format=fmt)
        except StructuredOutputError:
            raise
        except Exception as exc:
            cause = exc.__cause__
            if isinstance(cause, (openai.BadRequestError, openai.UnprocessableEntityError)):
                self.json_schema_supported = False
                return None, Usage()
            raise
        try:
            result = parse_reply(text, schema)
        except InvalidReply as exc:
            if exc.not_json and not attempted_json(text):
                # Prose instead of JSON: the server ignored response_format.
                # (Broken JSON, e.g. cut off at max_tokens, is not that: the
                # server did honour the format, so it gets the corrective turn.)
                self.json_schema_supported = False
                return None, usage
            convo = messages + [ChatMessage(role="assistant", content=text), correction_message(str(exc))]
            text2, usage2 = await self._complete_once(convo, settings, response_format=fmt)
            usage = usage + usage2
            try:
                result = parse_reply(text2, schema)
            except InvalidReply as exc2:
                raise StructuredOutputError(
                    f"no valid {schema.__name__} after a corrective retry: {exc2}", spec=str(self.spec)
                ) from exc2
        self.json_schema_supported = True
        return result, usage

