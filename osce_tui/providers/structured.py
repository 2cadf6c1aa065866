"""Structured output shared by all providers: schema text, parsing, correction.

Providers prefer their API's native structured mode (OpenAI ``json_schema``
response format, Anthropic forced tool use). When a server lacks it, or the
reply does not validate, these helpers carry the fallback: the JSON schema goes
into the prompt, the reply is parsed as JSON (tolerating a code fence or prose
around it), validated with pydantic, and one corrective turn quotes the
validation error back to the model before giving up with StructuredOutputError.
"""

from __future__ import annotations

import json
import re
from typing import Awaitable, Callable, TypeVar

from pydantic import BaseModel, ValidationError

from ..domain.session import Usage
from .base import ChatMessage, StructuredOutputError

T = TypeVar("T", bound=BaseModel)

__all__ = [
    "InvalidReply",
    "attempted_json",
    "correction_message",
    "extract_json",
    "json_schema_of",
    "parse_reply",
    "schema_instruction",
    "structured_via_text",
]

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


class InvalidReply(ValueError):
    """A reply that is not valid JSON for the schema; ``str()`` is fed back to the model."""

    def __init__(self, reason: str, *, not_json: bool = False):
        super().__init__(reason)
        self.not_json = not_json


def json_schema_of(schema: type[BaseModel]) -> dict:
    return schema.model_json_schema()


def extract_json(text: str) -> object:
    """The JSON value in a reply: the whole text, a fenced block, or the outermost {...}."""
    candidates = [text.strip()]
    candidates += [m.strip() for m in _FENCE.findall(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    first_error: json.JSONDecodeError | None = None
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return json.loads(candidate)
        except json.JSONDecodeError as exc:
            first_error = first_error or exc
    if not text.strip():
        raise InvalidReply("the reply was empty", not_json=True)
    if attempted_json(text) and first_error is not None:
        # Name the parse error: "cut off" vs "stray comma" tells the user what went wrong.
        raise InvalidReply(
            f"the reply was not valid JSON ({first_error.msg} char {first_error.pos} of {len(text.strip())})",
            not_json=True,
        )
    raise InvalidReply("the reply was not a JSON object", not_json=True)


def attempted_json(text: str) -> bool:
    """Whether a reply that failed to parse was still meant as JSON (starts like an object or fence)."""
    head = text.lstrip()
    return head.startswith(("{", "[", "```"))


def _validation_summary(exc: ValidationError, limit: int = 8) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:limit]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{loc}: {err['msg']}")
    more = len(exc.errors()) - limit
    if more > 0:
        parts.append(f"... and {more} more")
    return "; ".join(parts)


def parse_reply(text: str | object, schema: type[T]) -> T:
    """Validate a reply (text or already-decoded JSON) against ``schema``."""
    data = extract_json(text) if isinstance(text, str) else text
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise InvalidReply(f"the JSON did not match the schema: {_validation_summary(exc)}") from exc


def schema_instruction(schema: type[BaseModel]) -> str:
    """Text appended to the prompt when the server has no native structured mode."""
    return (
        "Answer with one JSON object only, no prose and no code fence. "
        "It must validate against this JSON Schema:\n"
        + json.dumps(json_schema_of(schema), ensure_ascii=False)
    )


def correction_message(reason: str) -> ChatMessage:
    return ChatMessage(
        role="user",
        content=(
            f"Your previous answer could not be used: {reason}. "
            "Reply again with only the corrected JSON object."
        ),
    )


def with_instruction(messages: list[ChatMessage], instruction: str) -> list[ChatMessage]:
    """Append an instruction to the system message (or add one)."""
    out = list(messages)
    if out and out[0].role == "system":
        out[0] = ChatMessage(role="system", content=out[0].content + "\n\n" + instruction)
    else:
        out.insert(0, ChatMessage(role="system", content=instruction))
    return out


async def structured_via_text(
    complete: Callable[[list[ChatMessage]], Awaitable[tuple[str, Usage]]],
    messages: list[ChatMessage],
    schema: type[T],
    *,
    spec: str,
    attempts: int = 2,
) -> tuple[T, Usage]:
    """JSON-in-text: schema in the prompt, parse + validate, corrective retries."""
    convo = with_instruction(messages, schema_instruction(schema))
    usage = Usage()
    reason = "no attempt made"
    for _ in range(attempts):
        text, used = await complete(convo)
        usage = usage + used
        try:
            return parse_reply(text, schema), usage
        except InvalidReply as exc:
            reason = str(exc)
            convo = convo + [ChatMessage(role="assistant", content=text or "(empty)"), correction_message(reason)]
    raise StructuredOutputError(f"no valid {schema.__name__} after {attempts} attempts: {reason}", spec=spec)
