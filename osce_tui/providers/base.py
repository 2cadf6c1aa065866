"""The one interface every model provider implements, plus model specs and errors.

A provider streams a chat reply as text deltas followed by one ``Done`` with
the full text and usage, and produces structured results validated by a
pydantic model. Failures surface as ``ProviderError`` subclasses whose message
a user can read ("OpenAI at https://api.openai.com/v1 rejected the API key (401):
check OPENAI_API_KEY").
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import AsyncIterator, Literal, TypeVar

from pydantic import BaseModel

from ..domain.session import GenerationSettings, Usage

T = TypeVar("T", bound=BaseModel)

ProviderName = Literal["human", "offline", "scripted", "openai", "anthropic", "ollama", "vllm", "openai-api"]
_KNOWN: tuple[str, ...] = ("human", "offline", "scripted", "openai", "anthropic", "ollama", "vllm", "openai-api")


class SpecError(ValueError):
    """A model spec string that cannot be understood."""


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec, e.g. ``openai/gpt-4o`` or ``openai-api/together/llama-3``."""

    provider: str
    model: str | None = None
    name: str | None = None  # for openai-api/<name>/<model>: the env-var prefix

    @property
    def is_agent_free(self) -> bool:
        """human and offline need no provider."""
        return self.provider in ("human", "offline")

    def __str__(self) -> str:
        if self.provider in ("human", "offline"):
            return self.provider
        if self.provider == "openai-api":
            return f"openai-api/{self.name}/{self.model}"
        return f"{self.provider}/{self.model}"


def parse_spec(spec: str) -> ModelSpec:
    """Parse a model spec string; the only place specs are parsed."""
    raw = (spec or "").strip()
    if raw in ("human", "offline"):
        return ModelSpec(raw)
    provider, sep, rest = raw.partition("/")
    if provider == "scripted":
        return ModelSpec("scripted", rest or "default")
    if provider not in _KNOWN or not sep or not rest:
        hint = (
            "expected human, offline, openai/<model>, anthropic/<model>, ollama/<model>, "
            "vllm/<model> or openai-api/<name>/<model>"
        )
        if provider and provider not in _KNOWN:
            raise SpecError(f"unknown model provider {provider!r} in {raw!r}: {hint}")
        raise SpecError(f"malformed model spec {raw!r}: {hint}")
    if provider == "openai-api":
        name, sep2, model = rest.partition("/")
        if not sep2 or not name or not model:
            raise SpecError(f"malformed model spec {raw!r}: expected openai-api/<name>/<model>")
        return ModelSpec("openai-api", model, name)
    return ModelSpec(provider, rest)


def env_name(name: str) -> str:
    """openai-api/<name>/...: the env-var prefix for the server, e.g. my-server -> MY_SERVER."""
    return "".join(ch if ch.isalnum() else "_" for ch in name).upper()


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class Done:
    text: str
    usage: Usage


StreamEvent = TextDelta | Done


class ProviderError(Exception):
    """Base of every provider failure. ``str(err)`` is meant for the user."""

    retryable: bool = False

    def __init__(self, message: str, *, spec: str | None = None):
        self.spec = spec
        super().__init__(f"{spec}: {message}" if spec else message)


class MissingKeyError(ProviderError):
    """No API key in the environment for a provider that needs one."""


class AuthenticationError(ProviderError):
    """401/403: the key was rejected."""


class RateLimitError(ProviderError):
    """429 after the SDK's own retries."""

    retryable = True


class ProviderTimeoutError(ProviderError):
    retryable = True


class ProviderConnectionError(ProviderError):
    """Refused connection, DNS failure, server gone."""

    retryable = True


class BadResponseError(ProviderError):
    """The provider answered, but not with something usable (4xx/5xx, garbage)."""


class StructuredOutputError(BadResponseError):
    """The model's structured output did not validate, even after a corrective retry."""


class ChatProvider(ABC):
    """A chat model. Implementations: openai, anthropic, openai-compatible, scripted."""

    spec: ModelSpec

    @abstractmethod
    def stream_chat(self, messages: list[ChatMessage], settings: GenerationSettings) -> AsyncIterator[StreamEvent]:
        """Yield TextDelta events, then exactly one Done."""

    async def complete(self, messages: list[ChatMessage], settings: GenerationSettings) -> Done:
        """The whole reply at once (consumes the stream)."""
        done: Done | None = None
        async for event in self.stream_chat(messages, settings):
            if isinstance(event, Done):
                done = event
        if done is None:
            raise BadResponseError("stream ended without a final message", spec=str(self.spec))
        return done

    @abstractmethod
    async def structured(
        self, messages: list[ChatMessage], schema: type[T], settings: GenerationSettings
    ) -> tuple[T, Usage]:
        """A reply parsed and validated as ``schema``; raises StructuredOutputError."""

    async def aclose(self) -> None:  # pragma: no cover - default no-op
        return None


def getenv_key(var: str, provider_label: str, spec: str) -> str:
    """Read an API key from the environment or raise a readable MissingKeyError."""
    value = os.environ.get(var, "").strip()
    if not value:
        raise MissingKeyError(
            f"no API key: set {var} to use {provider_label} (or pick 'offline' for the built-in engine)",
            spec=spec,
        )
    return value
