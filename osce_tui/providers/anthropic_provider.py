"""Anthropic's Messages API through the official SDK (AsyncAnthropic).

Chat streams with ``messages.stream``; the system prompt goes in ``system``,
and usage comes from the final message. This SDK version has no temperature or
top_p parameters, so only ``max_tokens`` is taken from GenerationSettings.
Structured output uses forced tool use: one tool whose input schema is the
pydantic model's JSON schema, ``tool_choice`` forcing it; the tool input is
validated and a failed validation goes back once as an error tool result.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, TypeVar

from pydantic import BaseModel

from ..domain.session import GenerationSettings, Usage
from .base import ChatMessage, Done, ModelSpec, StreamEvent, StructuredOutputError, TextDelta
from .errors import map_sdk_error
from .structured import InvalidReply, json_schema_of, parse_reply
from .sdk import SdkProvider
from .usage import priced

T = TypeVar("T", bound=BaseModel)

DEFAULT_MAX_TOKENS = 1024
STRUCTURED_MAX_TOKENS = 4096


def split_system(messages: list[ChatMessage]) -> tuple[str | None, list[dict[str, Any]]]:
    """System text apart; the rest merged so roles alternate starting with the user.

    The Messages API rejects two consecutive turns of one role and a first turn
    from the assistant, which our transcripts can produce (e.g. an exam result
    following a doctor line).
    """
    system = "\n\n".join(m.content for m in messages if m.role == "system") or None
    turns: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        if turns and turns[-1]["role"] == m.role:
            turns[-1]["content"] += "\n\n" + m.content
        else:
            turns.append({"role": m.role, "content": m.content})
    if not turns or turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": "(The conversation begins.)"})
    return system, turns


class AnthropicProvider(SdkProvider):
    def __init__(self, spec: ModelSpec, **kwargs: Any):
        import anthropic  # lazy: offline runs never import the SDK

        super().__init__(spec, anthropic.AsyncAnthropic, **kwargs)

    def _params(self, messages: list[ChatMessage], settings: GenerationSettings, default_max: int) -> dict[str, Any]:
        system, turns = split_system(messages)
        params: dict[str, Any] = {
            "model": self.spec.model,
            "max_tokens": settings.max_tokens or default_max,
            "messages": turns,
        }
        if system:
            params["system"] = system
        return params

    def _usage(self, raw: Any) -> Usage:
        if raw is None:
            return priced(self.spec, 0, 0, self._config)
        return priced(self.spec, raw.input_tokens, raw.output_tokens, self._config)

    async def stream_chat(self, messages: list[ChatMessage], settings: GenerationSettings) -> AsyncIterator[StreamEvent]:
        parts: list[str] = []
        async with self._slot():
            try:
                async with self._client.messages.stream(**self._params(messages, settings, DEFAULT_MAX_TOKENS)) as stream:
                    async for text in stream.text_stream:
                        if text:
                            parts.append(text)
                            yield TextDelta(text)
                    final = await stream.get_final_message()
            except Exception as exc:  # noqa: BLE001 - every SDK failure becomes a typed error
                raise map_sdk_error(exc, self._ctx) from exc
        yield Done("".join(parts), self._usage(final.usage))

    async def _create(self, params: dict[str, Any]) -> Any:
        async with self._slot():
            try:
                return await self._client.messages.create(**params)
            except Exception as exc:  # noqa: BLE001
                raise map_sdk_error(exc, self._ctx) from exc

    async def structured(
        self, messages: list[ChatMessage], schema: type[T], settings: GenerationSettings
    ) -> tuple[T, Usage]:
        tool_name = "record_" + "".join(ch if ch.isalnum() else "_" for ch in schema.__name__.lower())[:50]
        params = self._params(messages, settings, STRUCTURED_MAX_TOKENS)
        params["tools"] = [
            {
                "name": tool_name,
                "description": f"Record the answer as a {schema.__name__} object.",
                "input_schema": json_schema_of(schema),
            }
        ]
        params["tool_choice"] = {"type": "tool", "name": tool_name}
        usage = Usage()
        reason = ""
        for attempt in range(2):
            resp = await self._create(params)
            usage = usage + self._usage(resp.usage)
            block = next((b for b in resp.content if getattr(b, "type", None) == "tool_use"), None)
            if block is None:
                reason = "the reply did not call the tool"
                text = "".join(getattr(b, "text", "") for b in resp.content)
                try:  # some gateways answer in text; accept valid JSON there too
                    return parse_reply(text, schema), usage
                except InvalidReply:
                    pass
                if attempt == 0:
                    params["messages"] = params["messages"] + [
                        {"role": "assistant", "content": text or "(no answer)"},
                        {"role": "user", "content": f"Call the {tool_name} tool with the answer."},
                    ]
                continue
            try:
                return parse_reply(block.input, schema), usage
            except InvalidReply as exc:
                reason = str(exc)
                # Feed the validation error back as the tool's result, the way
                # the API expects a failed tool call to be reported.
                params["messages"] = params["messages"] + [
                    {"role": "assistant", "content": [block.model_dump(exclude_none=True)]},
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": block.id,
                                "is_error": True,
                                "content": f"Invalid input: {reason}. Call {tool_name} again with corrected input.",
                            }
                        ],
                    },
                ]
        raise StructuredOutputError(f"no valid {schema.__name__} after a corrective retry: {reason}", spec=str(self.spec))

