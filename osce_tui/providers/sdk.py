"""What the SDK-backed providers share: the client, the limiter slot, closing.

OpenAI and Anthropic differ in request and response shapes, not in how a
client is built from config, how a batch's semaphore is held, or which http
client may be closed; that part lives here once.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from typing import Any, Callable

from ..config import Config
from .base import ChatProvider, ModelSpec
from .errors import CallContext


class SdkProvider(ChatProvider):
    def __init__(
        self,
        spec: ModelSpec,
        client_factory: Callable[..., Any],
        *,
        api_key: str,
        base_url: str | None,
        config: Config,
        ctx: CallContext,
        http_client: Any = None,
        limiter: asyncio.Semaphore | None = None,
    ):
        self.spec = spec
        self._config = config
        self._limiter = limiter
        # A caller-supplied http client may be shared by many providers in a
        # batch: closing this provider must not close it.
        self._owns_http_client = http_client is None
        self._client = client_factory(
            api_key=api_key,
            base_url=base_url,
            max_retries=config.provider.max_retries,
            timeout=config.provider.timeout,
            http_client=http_client,
        )
        # Name the SDK's default endpoint in error messages, not "the default".
        if ctx.base_url is None:
            ctx = dataclasses.replace(ctx, base_url=str(self._client.base_url).rstrip("/"))
        self._ctx = ctx

    def _slot(self):
        """Hold the batch-wide semaphore (if any) for the duration of one call."""
        return self._limiter if self._limiter is not None else contextlib.nullcontext()

    async def aclose(self) -> None:
        if self._owns_http_client:
            await self._client.close()
