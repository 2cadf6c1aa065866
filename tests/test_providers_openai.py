"""OpenAI / OpenAI-compatible provider against httpx2.MockTransport (no network)."""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from pydantic import BaseModel

from osce_tui.config import Config
from osce_tui.domain.session import GenerationSettings
from osce_tui.providers.base import (
    AuthenticationError,
    BadResponseError,
    ChatMessage,
    Done,
    MissingKeyError,
    ProviderConnectionError,
    ProviderTimeoutError,
    RateLimitError,
    SpecError,
    StructuredOutputError,
    TextDelta,
)
from osce_tui.providers.factory import MissingBaseUrlError, make_provider
from osce_tui.providers.openai_provider import OpenAIProvider

from .mock_transport import Recorder
from .sse_server import openai_completion, openai_sse

SECRET = "sk-test-secret-1234567890"
MSGS = [ChatMessage(role="system", content="be brief"), ChatMessage(role="user", content="hello")]


class Verdict(BaseModel):
    answer: str
    score: int


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "VLLM_BASE_URL", "VLLM_API_KEY", "LOCAL_BASE_URL", "LOCAL_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def config(**provider) -> Config:
    provider.setdefault("max_retries", 2)
    provider.setdefault("timeout", 5)
    return Config(provider=provider, prices={"openai/gpt-test": {"input": 2.0, "output": 8.0}})


def provider_for(handler, spec="openai/gpt-test", cfg=None, limiter=None):
    client = httpx2.AsyncClient(transport=httpx2.MockTransport(handler))
    return make_provider(spec, cfg or config(), http_client=client, limiter=limiter)


def sse(text: str) -> httpx2.Response:
    return httpx2.Response(200, content=openai_sse(text, prompt_tokens=12), headers={"content-type": "text/event-stream"})


async def collect(provider, settings=GenerationSettings()):
    return [event async for event in provider.stream_chat(MSGS, settings)]


async def test_streams_deltas_then_done_with_usage_and_cost():
    rec = Recorder(sse("Hello there, patient."))
    events = await collect(provider_for(rec))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    done = events[-1]
    assert len(deltas) >= 3 and "".join(deltas) == "Hello there, patient."
    assert isinstance(done, Done) and done.text == "Hello there, patient."
    assert (done.usage.input_tokens, done.usage.output_tokens, done.usage.calls) == (12, 3, 1)
    assert done.usage.cost_usd == pytest.approx((12 * 2.0 + 3 * 8.0) / 1e6)
    body = rec.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"][0] == {"role": "system", "content": "be brief"}
    # unset sampling settings are not sent at all
    assert not {"temperature", "top_p", "seed", "max_tokens", "max_completion_tokens"} & body.keys()
    assert rec.requests[0].headers["authorization"] == f"Bearer {SECRET}"


async def test_sampling_settings_sent_only_when_set():
    rec = Recorder(sse("ok"), sse("ok"))
    await collect(provider_for(rec), GenerationSettings(temperature=0.2, seed=7, max_tokens=50))
    assert rec.bodies[0]["temperature"] == 0.2 and rec.bodies[0]["seed"] == 7
    assert rec.bodies[0]["max_completion_tokens"] == 50 and "top_p" not in rec.bodies[0]
    # OpenAI-compatible servers get the older max_tokens field
    p = provider_for(rec, "ollama/llama3")
    await collect(p, GenerationSettings(top_p=0.9, max_tokens=30))
    assert rec.bodies[1]["max_tokens"] == 30 and rec.bodies[1]["top_p"] == 0.9
    assert "temperature" not in rec.bodies[1]


async def test_429_is_retried_by_the_sdk_then_succeeds():
    limited = httpx2.Response(429, json={"error": {"message": "slow down"}}, headers={"retry-after-ms": "5"})
    rec = Recorder(limited, sse("recovered"))
    events = await collect(provider_for(rec))
    assert events[-1].text == "recovered"
    assert len(rec.requests) == 2


async def test_429_after_retries_is_rate_limit_error():
    limited = lambda _r: httpx2.Response(429, json={"error": {"message": "slow down"}}, headers={"retry-after-ms": "5"})  # noqa: E731
    rec = Recorder(limited, limited, limited)
    with pytest.raises(RateLimitError) as info:
        await collect(provider_for(rec))
    assert len(rec.requests) == 3 and "429" in str(info.value) and "2 retries" in str(info.value)


async def test_401_names_the_env_var_and_never_the_key():
    rejected = httpx2.Response(401, json={"error": {"message": f"Incorrect API key provided: {SECRET}"}})
    with pytest.raises(AuthenticationError) as info:
        await collect(provider_for(Recorder(rejected)))
    message = str(info.value)
    assert "rejected the API key (401)" in message and "check OPENAI_API_KEY" in message
    assert SECRET not in message and "sk-test" not in message


async def test_timeout_becomes_provider_timeout_error():
    rec = Recorder(httpx2.ReadTimeout("too slow"))
    with pytest.raises(ProviderTimeoutError) as info:
        await collect(provider_for(rec, cfg=config(max_retries=0, timeout=3)))
    assert "3s" in str(info.value)


async def test_connection_refused_names_the_base_url(monkeypatch):
    monkeypatch.setenv("LOCAL_BASE_URL", "http://127.0.0.1:9/v1")
    rec = Recorder(httpx2.ConnectError("connection refused"))
    with pytest.raises(ProviderConnectionError) as info:
        await collect(provider_for(rec, "openai-api/local/m", cfg=config(max_retries=0)))
    assert "http://127.0.0.1:9/v1" in str(info.value) and "refused" in str(info.value)


async def test_server_error_is_bad_response():
    rec = Recorder(httpx2.Response(400, json={"error": {"message": "model not loaded"}}))
    with pytest.raises(BadResponseError) as info:
        await collect(provider_for(rec))
    assert "400" in str(info.value) and "model not loaded" in str(info.value)


async def test_limiter_is_held_during_the_call():
    sem = asyncio.Semaphore(1)
    seen = []

    def streamed(_request):
        seen.append(sem.locked())
        return sse("ok")

    def structured(_request):
        seen.append(sem.locked())
        return completion('{"answer": "x", "score": 1}')

    provider = provider_for(Recorder(streamed, structured), limiter=sem)
    await collect(provider)
    await provider.structured(MSGS, Verdict, GenerationSettings())
    assert seen == [True, True] and not sem.locked()


# -- structured output -----------------------------------------------------------


def completion(text: str) -> httpx2.Response:
    return httpx2.Response(200, json=openai_completion(text, prompt_tokens=30))


async def test_structured_uses_json_schema_response_format():
    rec = Recorder(completion('{"answer": "angina", "score": 3}'))
    provider = provider_for(rec)
    verdict, usage = await provider.structured(MSGS, Verdict, GenerationSettings(temperature=0))
    assert verdict == Verdict(answer="angina", score=3) and usage.calls == 1 and usage.input_tokens == 30
    fmt = rec.bodies[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"]["required"] == ["answer", "score"]
    assert provider.json_schema_supported is True


async def test_structured_falls_back_to_json_in_text_with_one_correction():
    unsupported = httpx2.Response(400, json={"error": {"message": "response_format json_schema is not supported"}})
    rec = Recorder(unsupported, completion("Sure! The answer is angina."), completion('```json\n{"answer": "angina", "score": 2}\n```'))
    provider = provider_for(rec, "ollama/tiny")
    verdict, usage = await provider.structured(MSGS, Verdict, GenerationSettings())
    assert verdict.score == 2 and usage.calls == 2
    assert provider.json_schema_supported is False
    fallback = rec.bodies[1]
    assert "response_format" not in fallback and "JSON Schema" in fallback["messages"][0]["content"]
    correction = rec.bodies[2]["messages"][-1]["content"]
    assert "could not be used" in correction and "not a JSON object" in correction


async def test_structured_prose_reply_switches_to_fallback():
    rec = Recorder(completion("I think angina."), completion('{"answer": "angina", "score": 1}'))
    verdict, _ = await provider_for(rec, "ollama/tiny").structured(MSGS, Verdict, GenerationSettings())
    assert verdict.score == 1 and "response_format" not in rec.bodies[1]


async def test_structured_invalid_twice_raises_structured_output_error():
    bad = completion('{"answer": "angina", "score": "high"}')
    rec = Recorder(bad, completion('{"answer": "angina", "score": "very high"}'))
    with pytest.raises(StructuredOutputError) as info:
        await provider_for(rec).structured(MSGS, Verdict, GenerationSettings())
    assert "score" in str(info.value)
    # the corrective retry quoted the validation error back to the model
    assert "score" in rec.bodies[1]["messages"][-1]["content"]


# -- factory ------------------------------------------------------------------------


def test_factory_reads_keys_and_base_urls(monkeypatch):
    p = make_provider("openai/gpt-test", config())
    assert isinstance(p, OpenAIProvider) and p._client.base_url.host == "api.openai.com"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://proxy.local/v1")
    assert str(make_provider("openai/gpt-test", config())._client.base_url).startswith("http://proxy.local/v1")
    # the config setting wins over the environment
    p = make_provider("openai/gpt-test", config(openai_base_url="http://cfg.local/v1"))
    assert str(p._client.base_url).startswith("http://cfg.local/v1")
    p = make_provider("ollama/llama3", config())
    assert str(p._client.base_url).startswith("http://127.0.0.1:11434/v1")
    monkeypatch.setenv("LOCAL_BASE_URL", "http://10.0.0.1:8000/v1")
    monkeypatch.setenv("LOCAL_API_KEY", "local-key")
    p = make_provider("openai-api/local/qwen", config())
    assert p._client.api_key == "local-key" and p.spec.model == "qwen"


def test_factory_errors_name_the_env_var(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(MissingKeyError, match="OPENAI_API_KEY"):
        make_provider("openai/gpt-test", config())
    with pytest.raises(MissingBaseUrlError, match="VLLM_BASE_URL"):
        make_provider("vllm/m", config())
    with pytest.raises(MissingBaseUrlError, match="MY_SERVER_BASE_URL"):
        make_provider("openai-api/my-server/m", config())
    with pytest.raises(SpecError):
        make_provider("offline", config())
    with pytest.raises(SpecError, match="unknown model provider"):
        make_provider("gemini/x", config())


async def test_real_refused_connection_on_loopback_names_the_server():
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    provider = make_provider("ollama/tiny", config(ollama_base_url=url, max_retries=0))
    with pytest.raises(ProviderConnectionError) as info:
        await provider.complete(MSGS, GenerationSettings())
    assert f"cannot connect to Ollama at {url}" in str(info.value)
    await provider.aclose()


# -- replies that are not what an OpenAI-compatible server sends ------------------------------


async def test_html_page_instead_of_a_completion_points_at_the_base_url():
    page = httpx2.Response(200, content=b"<html><body>Welcome</body></html>", headers={"content-type": "text/html"})
    provider = provider_for(Recorder(page, page), cfg=config(max_retries=0))
    with pytest.raises(BadResponseError) as info:
        await provider.structured(MSGS, Verdict, GenerationSettings())
    message = str(info.value)
    assert "https://api.openai.com/v1 answered 200 but not with a chat completion" in message
    assert "base URL" in message and "Welcome" in message
    with pytest.raises(BadResponseError, match="the stream carried no chat completion chunks"):
        await collect(provider)  # streamed: no silent empty reply either


async def test_error_page_without_json_body_shows_its_text():
    bad_gateway = httpx2.Response(502, content=b"<html><h1>502 Bad Gateway</h1></html>", headers={"content-type": "text/html"})
    with pytest.raises(BadResponseError) as info:
        await collect(provider_for(Recorder(bad_gateway), cfg=config(max_retries=0)))
    assert str(info.value).endswith("answered 502: 502 Bad Gateway")


async def test_garbled_sse_line_is_a_bad_response_not_a_crash():
    garbled = httpx2.Response(200, content=b"data: {not json\n\n", headers={"content-type": "text/event-stream"})
    with pytest.raises(BadResponseError, match="sent a reply that could not be read"):
        await collect(provider_for(Recorder(garbled), cfg=config(max_retries=0)))


async def test_401_when_no_key_was_set_says_to_set_it(monkeypatch):
    monkeypatch.setenv("LOCAL_BASE_URL", "http://127.0.0.1:9/v1")
    rejected = httpx2.Response(401, json={"error": {"message": "missing key"}})
    with pytest.raises(AuthenticationError) as info:
        await collect(provider_for(Recorder(rejected), spec="openai-api/local/m"))
    assert "at http://127.0.0.1:9/v1 answered 401: it wants an API key, set LOCAL_API_KEY" in str(info.value)


async def test_truncated_json_gets_a_corrective_turn_with_json_schema_kept():
    cut = httpx2.Response(200, json=openai_completion('{"answer": "ye'))
    fixed = httpx2.Response(200, json=openai_completion('{"answer": "yes", "score": 3}'))
    rec = Recorder(cut, fixed)
    provider = provider_for(rec)
    result, _ = await provider.structured(MSGS, Verdict, GenerationSettings())
    assert result == Verdict(answer="yes", score=3)
    assert all("response_format" in b for b in rec.bodies) and provider.json_schema_supported is True
    assert "not valid JSON (Unterminated string" in rec.bodies[1]["messages"][-1]["content"]


@pytest.mark.parametrize("var", ["LOCAL_BASE_URL", "OPENAI_BASE_URL"])
def test_base_url_without_scheme_is_refused_up_front(monkeypatch, var):
    monkeypatch.setenv(var, "127.0.0.1:8000/v1")
    spec = "openai-api/local/m" if var == "LOCAL_BASE_URL" else "openai/gpt-test"
    with pytest.raises(MissingBaseUrlError, match=f"{var}='127.0.0.1:8000/v1' is not a URL: it must start with http://"):
        make_provider(spec, config())
