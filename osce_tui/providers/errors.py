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
    message = str(getattr(exc, "message", "") or exc)
    if message.startswith("Error code:"):
        # No JSON error body (a proxy's HTML page, plain text): show its start instead.
        text = _response_text(exc)
        if text:
            return text
    return message


def _response_text(exc: Exception) -> str:
    """The first words of an error response body, tags and whitespace squeezed out."""
    response = getattr(exc, "response", None)
    try:
        text = response.text if response is not None else ""
    except Exception:  # noqa: BLE001 - a streamed body may be unreadable here; the status still speaks
        return ""
    return " ".join(re.sub(r"<[^>]*>", " ", text).split())[:200]


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


# Transport errors (httpx2 class names) raised after the server had answered:
# the link broke mid-reply, which is not the same fix as "server not reachable".
_MIDWAY = ("RemoteProtocolError", "ReadError")


def _lost_midway(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(5):  # walk a short cause chain; SDKs wrap the transport error once or twice
        if seen is None:
            return False
        if type(seen).__name__ in _MIDWAY:
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _auth_message(ctx: CallContext, status: int, where: str, detail: str) -> str:
    """401/403 in words that say which variable to fix; the key itself is never shown."""
    said = f" (server said: {detail})" if detail else ""
    if ctx.secret is None and ctx.key_env:
        # We sent no key (the variable is unset): the fix is to set it, not to "check" it.
        return f"{ctx.label} at {where} answered {status}: it wants an API key, set {ctx.key_env}{said}"
    if ctx.key_env is None:
        return f"{ctx.label} at {where} refused the request ({status}); this provider sends no API key{said}"
    if status == 403:
        return f"{ctx.label} at {where} refused access (403): the key in {ctx.key_env} may not be allowed to use this model{said}"
    return f"{ctx.label} at {where} rejected the API key ({status}): check {ctx.key_env}{said}"


def map_sdk_error(exc: BaseException, ctx: CallContext) -> ProviderError:
    """Translate one SDK exception into the matching ProviderError subclass."""
    if isinstance(exc, ProviderError):
        return exc
    where = ctx.base_url or "the default endpoint"
    for status_cls, timeout_cls, conn_cls in _status_classes(exc):
        if isinstance(exc, timeout_cls):
            tries = f" (tried {ctx.max_retries + 1} times)" if ctx.max_retries else ""
            return ProviderTimeoutError(
                f"{ctx.label} at {where} did not answer within {ctx.timeout:g}s{tries}; "
                "raise provider.timeout (OSCE_TUI_PROVIDER__TIMEOUT) or try again",
                spec=ctx.spec,
            )
        if isinstance(exc, conn_cls):
            cause = exc.__cause__ or exc.__context__
            reason = scrub(str(cause or exc), ctx.secret)
            if _lost_midway(exc):
                what = f"lost the connection to {ctx.label} at {where} mid-reply"
            else:
                what = f"cannot connect to {ctx.label} at {where}"
            return ProviderConnectionError(f"{what}: {reason}", spec=ctx.spec)
        if isinstance(exc, status_cls):
            status = getattr(exc, "status_code", 0)
            detail = scrub(_server_message(exc), ctx.secret)[:300]
            if status in (401, 403):
                return AuthenticationError(_auth_message(ctx, status, where, detail), spec=ctx.spec)
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
    # Anything else was raised while reading what the server sent (bad JSON in an
    # SSE line, a stream the SDK could not decode): the server is the one to check.
    return BadResponseError(
        f"{ctx.label} at {where} sent a reply that could not be read "
        f"({scrub(f'{type(exc).__name__}: {exc}', ctx.secret)[:300]}); is the base URL right?",
        spec=ctx.spec,
    )
