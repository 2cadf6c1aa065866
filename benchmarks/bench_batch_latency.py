"""Batch throughput against a model server with fixed latency.

A loopback OpenAI-compatible server (127.0.0.1, in a separate process, as a
real model server would be) answers every chat completion after a fixed delay
(200 ms), streaming the reply as SSE chunks with a final usage chunk. Doctor
and patient are both served by it (``openai-api/fake/...``); the judge is
offline. Each encounter asks a few questions and ends, so its calls are
strictly sequential; concurrency comes only from running encounters side by
side under ``--max-connections``.

For each connection limit the script prints encounters per minute and the
efficiency against the ideal wall time, calls × latency / connections, and
the client's CPU time per model call: at 200 ms latency the single
event-loop thread, not the connection limit, is what caps throughput once
CPU per call × calls in flight nears the latency. (An earlier version ran the
server in a thread of this process; its CPU and GIL time then counted against
the client and efficiency at 16 connections read 67% instead of the real figure.)

Run: /tmp/venv/bin/python benchmarks/bench_batch_latency.py [--latency 0.2] [--questions 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from osce_tui.batch.results import read_results
from osce_tui.batch.runner import run_batch
from osce_tui.batch.selection import BatchPlan
from osce_tui.config import Config
from osce_tui.library import Library

PATIENT_MARK = "You are playing a standardized patient"  # first words of prompts/patient.md


class FakeServer:
    """Just enough of POST /v1/chat/completions (streaming, keep-alive) for the SDK."""

    def __init__(self, latency: float, questions: int):
        self.latency = latency
        self.questions = questions
        ctx = multiprocessing.get_context("fork")
        self._ctx = ctx
        # Shared with the server process: it counts, the benchmark reads.
        self._calls = ctx.Value("i", 0)
        self._peak = ctx.Value("i", 0)
        self._port = ctx.Value("i", 0)
        self.in_flight = 0  # only touched inside the server process
        self._ready = ctx.Event()
        self._process = None

    @property
    def calls(self) -> int:
        return self._calls.value

    @property
    def peak_in_flight(self) -> int:
        return self._peak.value

    @peak_in_flight.setter
    def peak_in_flight(self, value: int) -> None:
        self._peak.value = value

    @property
    def port(self) -> int:
        return self._port.value

    # -- replies ---------------------------------------------------------------
    def reply(self, body: dict) -> str:
        messages = body.get("messages", [])
        system = messages[0].get("content", "") if messages else ""
        if PATIENT_MARK in system:
            return "It started two days ago and it has been getting worse, doctor."
        asked = sum(1 for m in messages if m.get("role") == "assistant")
        if asked < self.questions:
            return ["What brings you in today?", "When did it start?", "Does anything make it better or worse?",
                    "Any other symptoms?", "Any medical problems?"][asked % 5]
        return "Thank you, that is all I need.\nEND:"

    # -- HTTP ------------------------------------------------------------------
    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
                body = json.loads(await reader.readexactly(int(headers.get("content-length", "0"))) or b"{}")
                await self.respond(body, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def respond(self, body: dict, writer: asyncio.StreamWriter) -> None:
        self._calls.value += 1
        self.in_flight += 1
        self._peak.value = max(self._peak.value, self.in_flight)
        try:
            await asyncio.sleep(self.latency)
            text = self.reply(body)
        finally:
            self.in_flight -= 1
        if not body.get("stream"):
            await self.respond_json(body, text, writer)
            return
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
            b"connection: keep-alive\r\n\r\n"
        )
        base = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 0, "model": body.get("model", "m")}
        words = text.split(" ")
        events = []
        for i, w in enumerate(words):
            piece = w if i == 0 else " " + w
            events.append({**base, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
        events.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        events.append({**base, "choices": [], "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": len(words),
                                                         "total_tokens": prompt_tokens + len(words)}})
        for e in events:
            data = f"data: {json.dumps(e)}\n\n".encode()
            writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        done = b"data: [DONE]\n\n"
        writer.write(f"{len(done):x}\r\n".encode() + done + b"\r\n0\r\n\r\n")
        await writer.drain()

    async def respond_json(self, body: dict, text: str, writer: asyncio.StreamWriter) -> None:
        """Non-streaming calls are structured output (the patient note): answer with a valid one."""
        if body.get("response_format"):
            text = json.dumps({"hpi": "Two days of symptoms, worsening.", "pe": "Not examined.",
                               "diagnoses": [{"name": "Viral illness", "history_findings": ["two days"], "exam_findings": []}],
                               "workup": ["Basic blood tests"]})
        payload = json.dumps({
            "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": len(text.split()), "total_tokens": 10 + len(text.split())},
        }).encode()
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: keep-alive\r\n"
                     + f"content-length: {len(payload)}\r\n\r\n".encode() + payload)
        await writer.drain()

    def start(self) -> None:
        """Serve from a child process (the other core), like a real model server."""

        def run() -> None:
            loop = asyncio.new_event_loop()
            server = loop.run_until_complete(asyncio.start_server(self.handle, "127.0.0.1", 0, backlog=1024))
            self._port.value = server.sockets[0].getsockname()[1]
            self._ready.set()
            loop.run_forever()

        self._process = self._ctx.Process(target=run, daemon=True)
        self._process.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake server did not start")

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.join(5)


def measure(server: FakeServer, library: Library, connections: int, encounters: int) -> dict:
    cases = list(library.cases().values())
    trials = -(-encounters // len(cases))
    plan = BatchPlan(
        cases=cases, rubric=library.rubric("osce-practice"), doctors=["openai-api/fake/doctor"],
        patient="openai-api/fake/patient", judge="offline", trials=trials,
    )
    config = Config()
    config.provider.max_retries = 0
    out = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    server.peak_in_flight = 0
    calls_before = server.calls
    t0, cpu0 = time.perf_counter(), time.process_time()
    outcome = asyncio.run(run_batch(plan, out, config, max_connections=connections))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    calls = server.calls - calls_before
    records = read_results(out).records
    shutil.rmtree(out, ignore_errors=True)
    ideal = calls * server.latency / connections
    return {
        "connections": connections,
        "encounters": len(records),
        "failed": outcome.failed,
        "calls": calls,
        "wall_s": wall,
        "per_min": len(records) / wall * 60,
        "ideal_s": ideal,
        "efficiency": ideal / wall,
        "peak_in_flight": server.peak_in_flight,
        "cpu_ms_per_call": cpu / max(calls, 1) * 1000,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--questions", type=int, default=3, help="doctor questions per encounter")
    ap.add_argument("--connections", default="1,4,16,64")
    ap.add_argument("--waves", type=int, default=6, help="encounters per connection (at least 4 total)")
    args = ap.parse_args()
    server = FakeServer(args.latency, args.questions)
    server.start()
    os.environ["FAKE_BASE_URL"] = f"http://127.0.0.1:{server.port}/v1"
    os.environ["FAKE_API_KEY"] = "bench"
    library = Library()
    print(f"fake server 127.0.0.1:{server.port}, latency {args.latency * 1000:.0f} ms, "
          f"{args.questions} doctor questions per encounter ({2 * (args.questions + 1)} calls), python {sys.version.split()[0]}")
    print(f"{'conn':>5} {'enc':>5} {'calls':>6} {'wall s':>8} {'enc/min':>8} {'ideal s':>8} {'effic.':>7} {'peak':>5} {'failed':>6} {'cpu ms/call':>11}")
    try:
        for c in (int(x) for x in args.connections.split(",")):
            r = measure(server, library, c, max(4, args.waves * c))
            print(f"{r['connections']:>5} {r['encounters']:>5} {r['calls']:>6} {r['wall_s']:>8.2f} {r['per_min']:>8.1f} "
                  f"{r['ideal_s']:>8.2f} {r['efficiency']:>7.1%} {r['peak_in_flight']:>5} {r['failed']:>6} {r['cpu_ms_per_call']:>11.1f}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
