"""Turn SDK exceptions into our typed, user-readable provider errors.

Both official SDKs (openai, anthropic) raise the same family of exceptions:
status errors carrying ``status_code``, ``APITimeoutError`` and
``APIConnectionError``. They have already retried by the time we see them, so
this module only translates; it never retries. Messages name the env var to
fix and the base URL that failed, and never contain an API key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .base import (
    AuthenticationError,
    BadResponseError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
)

__all__ = ["CallContext", "MissingBaseUrlError", "map_sdk_error", "scrub"]

# Shapes of common API keys; scrubbed from any text we show even when the
# exact key is unknown (e.g. a server echoing back a key it rejected).
_KEY_SHAPES = re.compile(r"\b(sk-[A-Za-z0-9_\-]{6,}|sk-ant-[A-Za-z0-9_\-]{6,}|Bearer\s+\S+)")


class MissingBaseUrlError(ProviderError):
    """A provider that needs a server address was given none."""


@dataclass(frozen=True)
class CallContext:
    """What a readable error message needs to know about the call that failed."""

    spec: str
    label: str  # "OpenAI", "Anthropic", "the OpenAI-compatible server 'local'"
    key_env: str | None  # env var holding the key, None when the provider needs none
    base_url: str | None
    timeout: float
    max_retries: int
    secret: str | None = None  # the key actually used; scrubbed from messages


def scrub(text: str, secret: str | None = None) -> str:
    """Remove API keys from text that may be shown to the user or saved."""
    if secret:
        text = text.replace(secret, "***")
    return _KEY_SHAPES.sub("***", text)


def _server_message(exc: Exception) -> str:
    """The server's own error message, if the body has one, else the SDK's."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
        if isinstance(err, str):
            return err
    return str(getattr(exc, "message", "") or exc)


def _status_classes(exc: BaseException) -> list[tuple[type, type, type]]:
    """The (status, timeout, connection) exception classes of the SDK that raised ``exc``.

    Only the raising SDK is imported: importing the other one would cost
    seconds on an error path that should be instant.
    """
    sdk = type(exc).__module__.split(".")[0]
    if sdk == "openai":
        import openai

        return [(openai.APIStatusError, openai.APITimeoutError, openai.APIConnectionError)]
    if sdk == "anthropic":
        import anthropic

        return [(anthropic.APIStatusError, anthropic.APITimeoutError, anthropic.APIConnectionError)]
    return []


def map_sdk_error(exc: BaseException, ctx: CallContext) -> ProviderError:
    """Translate one SDK exception into the matching ProviderError subclass."""
    if isinstance(exc, ProviderError):
        return exc
    where = ctx.base_url or "the default endpoint"
    for status_cls, timeout_cls, conn_cls in _status_classes(exc):
        if isinstance(exc, timeout_cls):
            return ProviderTimeoutError(
                f"{ctx.label} did not answer within {ctx.timeout:g}s ({where}); "
                "raise provider.timeout or try again",
                spec=ctx.spec,
            )
        if isinstance(exc, conn_cls):
            cause = exc.__cause__ or exc.__context__
            reason = scrub(str(cause or exc), ctx.secret)
            return ProviderConnectionError(
                f"cannot connect to {ctx.label} at {where}: {reason}",
                spec=ctx.spec,
            )
        if isinstance(exc, status_cls):
            status = getattr(exc, "status_code", 0)
            detail = scrub(_server_message(exc), ctx.secret)[:300]
            if status in (401, 403):
                hint = f"check {ctx.key_env}" if ctx.key_env else "this server needs an API key"
                return AuthenticationError(
                    f"{ctx.label} rejected the API key ({status}): key rejected, {hint}",
                    spec=ctx.spec,
                )
            if status == 429:
                return RateLimitError(
                    f"{ctx.label} is rate limiting (429) after {ctx.max_retries} retries: {detail}. "
                    "Lower --max-connections or wait and try again",
                    spec=ctx.spec,
                )
            if status == 404:
                return BadResponseError(
                    f"{ctx.label} at {where} answered 404 (unknown model or wrong base URL): {detail}",
                    spec=ctx.spec,
                )
            return BadResponseError(f"{ctx.label} at {where} answered {status}: {detail}", spec=ctx.spec)
    return BadResponseError(
        f"unexpected failure talking to {ctx.label}: {scrub(f'{type(exc).__name__}: {exc}', ctx.secret)}",
        spec=ctx.spec,
    )
