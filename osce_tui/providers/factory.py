"""Build a ChatProvider from a model spec and the config.

Where each provider finds its key and server:

=====================  ==============================  ==========================
spec                   key                             base URL
=====================  ==============================  ==========================
openai/<m>             OPENAI_API_KEY (required)       config.provider.openai_base_url,
                                                       else OPENAI_BASE_URL, else OpenAI
anthropic/<m>          ANTHROPIC_API_KEY (required)    config.provider.anthropic_base_url,
                                                       else ANTHROPIC_BASE_URL, else Anthropic
ollama/<m>             none                            config.provider.ollama_base_url
vllm/<m>               VLLM_API_KEY (optional)         VLLM_BASE_URL (required)
openai-api/<n>/<m>     <N>_API_KEY (optional)          <N>_BASE_URL (required)
scripted/<name>        none                            a script registered with
                                                       ScriptedProvider.register
=====================  ==============================  ==========================
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ..config import Config
from .base import ChatProvider, ModelSpec, SpecError, env_name, getenv_key, parse_spec
from .errors import CallContext, MissingBaseUrlError

__all__ = ["make_provider", "MissingBaseUrlError"]

# OpenAI-compatible servers that need no key still need a non-empty string
# for the SDK; this placeholder is sent instead and is not a secret.
_NO_KEY = "not-needed"


def _env(var: str) -> str | None:
    value = os.environ.get(var, "").strip()
    return value or None


def _require_base_url(var: str, spec: str, what: str) -> str:
    url = _env(var)
    if not url:
        raise MissingBaseUrlError(
            f"no server address: set {var} to the base URL of {what} (e.g. http://127.0.0.1:8000/v1)",
            spec=spec,
        )
    return _checked_url(url, var, spec)


def _checked_url(url: str | None, source: str, spec: str) -> str | None:
    """A base URL must name its scheme; said now, not as a connection error per encounter."""
    if url is not None and not url.lower().startswith(("http://", "https://")):
        raise MissingBaseUrlError(
            f"{source}={url!r} is not a URL: it must start with http:// or https:// (e.g. http://{url})",
            spec=spec,
        )
    return url


def make_provider(
    spec: str | ModelSpec,
    config: Config,
    *,
    http_client: Any = None,
    limiter: asyncio.Semaphore | None = None,
) -> ChatProvider:
    """The provider for ``spec``; raises MissingKeyError/MissingBaseUrlError/SpecError clearly."""
    ms = parse_spec(spec) if isinstance(spec, str) else spec
    label = str(ms)
    timeout, retries = config.provider.timeout, config.provider.max_retries

    if ms.provider in ("human", "offline"):
        raise SpecError(f"{label!r} is not a model: it needs no provider")

    if ms.provider == "scripted":
        from .scripted import ScriptedProvider

        script = ScriptedProvider.registry.get(ms.model or "")
        if script is None:
            raise SpecError(
                f"no script named {ms.model!r} for {label!r}: register one with ScriptedProvider.register()"
            )
        return ScriptedProvider(script, spec=ms, config=config, limiter=limiter)

    if ms.provider == "anthropic":
        from .anthropic_provider import AnthropicProvider

        key = getenv_key("ANTHROPIC_API_KEY", "Anthropic models", label)
        base = _checked_url(
            config.provider.anthropic_base_url or _env("ANTHROPIC_BASE_URL"),
            "provider.anthropic_base_url" if config.provider.anthropic_base_url else "ANTHROPIC_BASE_URL",
            label,
        )
        ctx = CallContext(label, "Anthropic", "ANTHROPIC_API_KEY", base, timeout, retries, key)
        return AnthropicProvider(ms, api_key=key, base_url=base, config=config, ctx=ctx, http_client=http_client, limiter=limiter)

    from .openai_provider import OpenAIProvider

    if ms.provider == "openai":
        key_env = "OPENAI_API_KEY"
        key = getenv_key(key_env, "OpenAI models", label)
        base = _checked_url(
            config.provider.openai_base_url or _env("OPENAI_BASE_URL"),
            "provider.openai_base_url" if config.provider.openai_base_url else "OPENAI_BASE_URL",
            label,
        )
        who = "OpenAI"
    elif ms.provider == "ollama":
        key_env, key = None, _NO_KEY
        base = _checked_url(config.provider.ollama_base_url, "provider.ollama_base_url", label)
        who = "Ollama"
    elif ms.provider == "vllm":
        key_env = "VLLM_API_KEY"
        base = _require_base_url("VLLM_BASE_URL", label, "your vLLM server")
        key = _env(key_env) or _NO_KEY
        who = "the vLLM server"
    elif ms.provider == "openai-api":
        prefix = env_name(ms.name or "")
        key_env = f"{prefix}_API_KEY"
        base = _require_base_url(f"{prefix}_BASE_URL", label, f"the OpenAI-compatible server {ms.name!r}")
        key = _env(key_env) or _NO_KEY
        who = f"the OpenAI-compatible server {ms.name!r}"
    else:  # pragma: no cover - parse_spec admits nothing else
        raise SpecError(f"no provider for {label!r}")
    secret = key if key != _NO_KEY else None
    ctx = CallContext(label, who, key_env, base, timeout, retries, secret)
    return OpenAIProvider(ms, api_key=key, base_url=base, config=config, ctx=ctx, http_client=http_client, limiter=limiter)
