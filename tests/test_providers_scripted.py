"""ScriptedProvider, cost helper, structured parsing helpers and the prompt loader."""

from __future__ import annotations

import asyncio
import hashlib

import pytest
from pydantic import BaseModel

from osce_tui.config import Config
from osce_tui.domain.session import GenerationSettings, Usage
from osce_tui.prompts import PromptError, combined_hash, load_prompt, prompt_hashes, prompt_names, render
from osce_tui.providers.base import BadResponseError, ChatMessage, Done, StructuredOutputError, TextDelta
from osce_tui.providers.errors import scrub
from osce_tui.providers.factory import make_provider
from osce_tui.providers.scripted import ScriptedProvider
from osce_tui.providers.structured import InvalidReply, extract_json, parse_reply
from osce_tui.providers.usage import cost_of

MSGS = [ChatMessage(role="user", content="how are you")]
S = GenerationSettings()


class Point(BaseModel):
    x: int
    y: int


async def test_streams_word_by_word_in_order():
    p = ScriptedProvider(["Fine, thanks.", "Second reply"])
    events = [e async for e in p.stream_chat(MSGS, S)]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Fine, ", "thanks."]
    assert isinstance(events[-1], Done) and events[-1].text == "Fine, thanks."
    assert events[-1].usage == Usage(input_tokens=3, output_tokens=2, calls=1)
    assert (await p.complete(MSGS, S)).text == "Second reply"
    with pytest.raises(BadResponseError, match="ran out of replies"):
        await p.complete(MSGS, S)
    assert len(p.calls) == 3


async def test_callable_script_sees_messages():
    p = ScriptedProvider(lambda msgs: f"you said: {msgs[-1].content}")
    assert (await p.complete(MSGS, S)).text == "you said: how are you"


async def test_structured_parses_and_retries_once():
    p = ScriptedProvider(['{"x": 1}', 'Here: {"x": 1, "y": 2}'])
    point, usage = await p.structured(MSGS, Point, S)
    assert point == Point(x=1, y=2) and usage.calls == 2
    assert "y: Field required" in p.calls[1][-1].content
    with pytest.raises(StructuredOutputError):
        await ScriptedProvider(["nope", "still nope"]).structured(MSGS, Point, S)


async def test_limiter_serialises_calls():
    sem = asyncio.Semaphore(1)
    streaming = 0
    overlaps = []

    async def one():
        nonlocal streaming
        async for event in p.stream_chat(MSGS, S):
            if isinstance(event, TextDelta) and event.text.startswith("one"):
                streaming += 1
                overlaps.append(streaming)
            if isinstance(event, Done):
                streaming -= 1

    p = ScriptedProvider(lambda _m: "one two three", limiter=sem, delay=0.001)
    await asyncio.gather(*(one() for _ in range(4)))
    # with one slot, a second stream never starts while another is running
    assert overlaps == [1, 1, 1, 1] and not sem.locked() and len(p.calls) == 4


def test_registered_script_through_factory():
    ScriptedProvider.register("greeter", ["hello"])
    p = make_provider("scripted/greeter", Config())
    assert isinstance(p, ScriptedProvider) and str(p.spec) == "scripted/greeter"


def test_cost_of_uses_price_per_million():
    cfg = Config(prices={"openai/gpt-x": {"input": 2.5, "output": 10}})
    u = Usage(input_tokens=1000, output_tokens=500, calls=1)
    assert cost_of("openai/gpt-x", u, cfg) == pytest.approx(0.0025 + 0.005)
    assert cost_of("openai/other", u, cfg) is None
    assert cost_of("openai/gpt-x", u, None) is None


def test_extract_json_tolerates_fences_and_prose():
    assert extract_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert extract_json('Result: {"a": {"b": 2}} done') == {"a": {"b": 2}}
    with pytest.raises(InvalidReply) as info:
        extract_json("no json here")
    assert info.value.not_json
    with pytest.raises(InvalidReply, match="x: Input should be a valid integer"):
        parse_reply('{"x": "one", "y": 2}', Point)


def test_scrub_removes_keys():
    assert "sk-abc" not in scrub("bad key sk-abcdef1234567 given")
    assert scrub("token my-own-secret here", "my-own-secret") == "token *** here"
    assert "Bearer" not in scrub("Authorization: Bearer abc.def")


# -- prompts --------------------------------------------------------------------------


def test_prompts_load_with_sha256_and_render():
    names = prompt_names()
    for required in ("patient", "doctor_encounter", "doctor_craftmd", "doctor_epag", "doctor_note", "judge_history", "judge_common"):
        assert required in names
    p = load_prompt("patient")
    assert p.sha256 == hashlib.sha256(p.text.encode()).hexdigest()
    hashes = prompt_hashes(["patient", "judge_history"])
    assert hashes == {"patient": p.sha256[:12], "judge_history": load_prompt("judge_history").sha256[:12]}
    assert combined_hash(["patient"]) != combined_hash(["patient", "judge_history"])
    text = render("patient_challenge", question="Is it my heart?")
    assert "Is it my heart?" in text and "$" not in text


def test_render_refuses_missing_values_and_unknown_prompts():
    with pytest.raises(PromptError, match=r"\$question"):
        render("patient_challenge")
    with pytest.raises(PromptError, match="no prompt named"):
        load_prompt("nope")


def test_doctor_prompt_documents_the_marker_protocol():
    text = load_prompt("doctor_encounter").text
    for marker in ("EXAM:", "ORDER:", "PHASE:", "DIAGNOSIS:", "END:"):
        assert marker in text
    assert "DIAGNOSIS:" in load_prompt("doctor_craftmd").text
