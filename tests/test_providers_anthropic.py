"""Anthropic provider against httpx2.MockTransport (no network)."""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from pydantic import BaseModel

from osce_tui.config import Config
from osce_tui.domain.session import GenerationSettings
from osce_tui.providers.anthropic_provider import AnthropicProvider, split_system
from osce_tui.providers.base import (
    AuthenticationError,
    ChatMessage,
    Done,
    MissingKeyError,
    ProviderTimeoutError,
    RateLimitError,
    StructuredOutputError,
    TextDelta,
)
from osce_tui.providers.factory import make_provider

from .mock_transport import Recorder
from .sse_server import anthropic_message, anthropic_sse

SECRET = "sk-ant-secret-abcdef123456"
MSGS = [
    ChatMessage(role="system", content="You are terse."),
    ChatMessage(role="user", content="hi"),
]


class Verdict(BaseModel):
    answer: str
    score: int


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", SECRET)


def provider_for(handler, *, retries=2, timeout=5.0, limiter=None) -> AnthropicProvider:
    cfg = Config(provider={"max_retries": retries, "timeout": timeout}, prices={"anthropic/claude-test": {"input": 3, "output": 15}})
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    p = make_provider("anthropic/claude-test", cfg, http_client=client, limiter=limiter)
    assert isinstance(p, AnthropicProvider)
    return p


def sse(text: str) -> httpx2.Response:
    return httpx2.Response(200, content=anthropic_sse(text, input_tokens=11), headers={"content-type": "text/event-stream"})


async def collect(provider, settings=GenerationSettings()):
    return [e async for e in provider.stream_chat(MSGS, settings)]


async def test_streams_with_separate_system_prompt_and_final_usage():
    rec = Recorder(sse("It hurts in my chest."))
    events = await collect(provider_for(rec), GenerationSettings(temperature=0.7, top_p=0.5, seed=3, max_tokens=77))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    done = events[-1]
    assert "".join(deltas) == "It hurts in my chest." and len(deltas) >= 4
    assert isinstance(done, Done) and done.text == "It hurts in my chest."
    assert (done.usage.input_tokens, done.usage.output_tokens) == (11, 5)
    assert done.usage.cost_usd == pytest.approx((11 * 3 + 5 * 15) / 1e6)
    body = rec.bodies[0]
    assert body["system"] == "You are terse." and body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["max_tokens"] == 77 and body["stream"] is True
    # this SDK has no temperature/top_p; nothing of the kind may be sent
    assert not {"temperature", "top_p", "top_k", "seed"} & body.keys()


async def test_429_retried_then_succeeds():
    limited = httpx2.Response(429, json={"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}, headers={"retry-after-ms": "5"})
    rec = Recorder(limited, sse("fine"))
    events = await collect(provider_for(rec))
    assert events[-1].text == "fine" and len(rec.requests) == 2


async def test_429_exhausted_is_rate_limit_error():
    limited = lambda _r: httpx2.Response(429, json={"type": "error", "error": {"type": "rate_limit_error", "message": "slow"}}, headers={"retry-after-ms": "5"})  # noqa: E731
    with pytest.raises(RateLimitError):
        await collect(provider_for(Recorder(limited, limited), retries=1))


async def test_401_clear_message_without_the_key():
    rejected = httpx2.Response(401, json={"type": "error", "error": {"type": "authentication_error", "message": f"invalid x-api-key {SECRET}"}})
    with pytest.raises(AuthenticationError) as info:
        await collect(provider_for(Recorder(rejected)))
    msg = str(info.value)
    assert "Anthropic at " in msg and "rejected the API key (401)" in msg and "check ANTHROPIC_API_KEY" in msg
    assert SECRET not in msg


async def test_timeout():
    with pytest.raises(ProviderTimeoutError, match=r"Anthropic at https://api.anthropic.com did not answer within 2s"):
        await collect(provider_for(Recorder(httpx2.ReadTimeout("slow")), retries=0, timeout=2))


def test_missing_key(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(MissingKeyError, match="ANTHROPIC_API_KEY"):
        make_provider("anthropic/claude-test", Config())


def test_base_url_from_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://gateway.local")
    p = make_provider("anthropic/claude-test", Config())
    assert str(p._client.base_url).startswith("http://gateway.local")


def test_split_system_merges_roles_and_starts_with_user():
    system, turns = split_system(
        [
            ChatMessage(role="system", content="S"),
            ChatMessage(role="assistant", content="Hello, I'm Dr A."),
            ChatMessage(role="user", content="a"),
            ChatMessage(role="user", content="b"),
        ]
    )
    assert system == "S"
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert turns[2]["content"] == "a\n\nb"


# -- structured output via forced tool use -------------------------------------------


def tool_reply(payload: dict, tool_id="toolu_1") -> httpx2.Response:
    block = {"type": "tool_use", "id": tool_id, "name": "record_verdict", "input": payload}
    return httpx2.Response(200, json=anthropic_message([block]))


async def test_structured_forced_tool_use():
    rec = Recorder(tool_reply({"answer": "angina", "score": 4}))
    sem = asyncio.Semaphore(1)
    verdict, usage = await provider_for(rec, limiter=sem).structured(MSGS, Verdict, GenerationSettings(temperature=0))
    assert verdict == Verdict(answer="angina", score=4) and usage.calls == 1 and usage.input_tokens == 20
    body = rec.bodies[0]
    assert body["tool_choice"] == {"type": "tool", "name": "record_verdict"}
    assert body["tools"][0]["input_schema"]["required"] == ["answer", "score"]
    assert "temperature" not in body and "stream" not in body


async def test_structured_corrective_retry_reports_error_as_tool_result():
    rec = Recorder(tool_reply({"answer": "angina", "score": "lots"}), tool_reply({"answer": "angina", "score": 2}, "toolu_2"))
    verdict, usage = await provider_for(rec).structured(MSGS, Verdict, GenerationSettings())
    assert verdict.score == 2 and usage.calls == 2
    last = rec.bodies[1]["messages"][-1]["content"][0]
    assert last["type"] == "tool_result" and last["tool_use_id"] == "toolu_1" and last["is_error"] is True
    assert "score" in last["content"]


async def test_structured_gives_up_after_one_correction():
    rec = Recorder(tool_reply({"answer": 1}), tool_reply({"answer": 2}, "toolu_2"))
    with pytest.raises(StructuredOutputError, match="Verdict"):
        await provider_for(rec).structured(MSGS, Verdict, GenerationSettings())
    assert len(rec.requests) == 2
