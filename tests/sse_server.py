"""Test helpers: a tiny OpenAI-compatible chat server and SSE body builders.

``ChatServer(reply)`` serves ``POST /v1/chat/completions`` on 127.0.0.1 at a
random free port from a background thread; ``reply(body) -> str`` decides the
assistant text from the request JSON. Streaming requests get Server-Sent
Events chunk by chunk (with a final usage chunk when asked), others a plain
JSON completion. Use it as a context manager; it stops and joins on exit.

The ``openai_sse`` / ``anthropic_sse`` builders make the same wire format for
``httpx2.MockTransport`` handlers.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Reply = Callable[[dict[str, Any]], str]


def _words(text: str) -> list[str]:
    return re.findall(r"\s*\S+\s*|\s+", text) or [""]


def openai_chunks(text: str, *, model: str = "test-model", prompt_tokens: int = 7, usage: bool = True) -> list[dict]:
    base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": model}
    chunks = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    for piece in _words(text):
        chunks.append(dict(base, choices=[{"index": 0, "delta": {"content": piece}, "finish_reason": None}]))
    chunks.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    if usage:
        n = len(text.split())
        chunks.append(dict(base, choices=[], usage={"prompt_tokens": prompt_tokens, "completion_tokens": n, "total_tokens": prompt_tokens + n}))
    return chunks


def openai_sse(text: str, **kw: Any) -> bytes:
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in openai_chunks(text, **kw)) + "data: [DONE]\n\n"
    return body.encode()


def openai_completion(text: str, *, model: str = "test-model", prompt_tokens: int = 7) -> dict:
    n = len(text.split())
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": n, "total_tokens": prompt_tokens + n},
    }


def anthropic_sse(text: str, *, input_tokens: int = 11, output_tokens: int | None = None) -> bytes:
    msg = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    events: list[dict] = [
        {"type": "message_start", "message": msg},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    for piece in _words(text):
        events.append({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}})
    events += [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": output_tokens if output_tokens is not None else len(text.split())},
        },
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def anthropic_message(content: list[dict], *, input_tokens: int = 20, output_tokens: int = 9) -> dict:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


class ChatServer:
    """OpenAI-compatible /v1/chat/completions on 127.0.0.1:<free port>."""

    def __init__(self, reply: Reply):
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.auth_headers: list[str | None] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._send(404, b'{"error": {"message": "not found"}}', "application/json")
                    return
                server.requests.append(body)
                server.auth_headers.append(self.headers.get("authorization"))
                try:
                    text = server.reply(body)
                except Exception as exc:  # a test's reply function failed: answer 500 with why
                    self._send(500, json.dumps({"error": {"message": repr(exc)}}).encode(), "application/json")
                    return
                if body.get("stream"):
                    usage = bool((body.get("stream_options") or {}).get("include_usage"))
                    self._send(200, openai_sse(text, model=body.get("model", "m"), usage=usage), "text/event-stream")
                else:
                    payload = json.dumps(openai_completion(text, model=body.get("model", "m"))).encode()
                    self._send(200, payload, "application/json")

            def _send(self, status: int, payload: bytes, ctype: str) -> None:
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="chat-server", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> "ChatServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
