#!/usr/bin/env python3
"""A small OpenAI-compatible chat server for trying osce-tui's model path locally.

No model runs here: replies are scripted, echoed, or made up per role so that a
whole encounter (model doctor, model patient, model judge) can run against a
real HTTP server with real SDK clients. Only the standard library is used, so
it runs with any Python 3.10+.

    python scripts/fake_openai_server.py --port 8765 &
    LOCAL_BASE_URL=http://127.0.0.1:8765/v1 osce-tui chat chest-pain-46m \
        --doctor openai-api/local/m --patient openai-api/local/m --judge openai-api/local/m

Serves ``POST /v1/chat/completions`` (streaming SSE and plain JSON, including
``response_format: json_schema``) and ``GET /v1/models``. Replies (``--reply``):

- ``auto`` (default): plays whichever role the system prompt describes — a
  doctor using the control-line protocol, a patient, a note writer, a judge
  (one judgement per item it is asked about) — and fills any other JSON schema
  with a minimal valid instance;
- ``echo``: repeats the last user message;
- ``script:FILE``: a JSON list of reply strings used in order (the last one
  repeats); structured requests still get ``auto`` JSON.

Failure injection (``--fail KIND[:N]``, repeatable; N = how many requests get
it, default every request; failures are used up in the order given), or at run
time with ``POST /_fail {"kind": "429", "count": 2}`` (``{"kind": "none"}``
clears them):

    ok                        answer normally (``--fail ok:5 --fail drop``: 5 good replies, then drops)
    401 403 404 429 500 503   that HTTP status with an OpenAI-style error body (429 says retry after 50 ms)
    malformed                 structured requests get truncated JSON (chat is normal)
    badschema                 structured requests get valid JSON of the wrong shape
    slow                      wait --slow-seconds before answering (trip the client timeout)
    drop                      close the connection mid-reply (mid-stream when streaming)

``--latency S`` waits S seconds before each streamed chunk. ``GET /_stats``
returns request counts. The server only listens on a loopback address.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import sys
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

FAIL_KINDS = ("ok", "401", "403", "404", "429", "500", "503", "malformed", "badschema", "slow", "drop")
_ITEM_LINE = re.compile(r'^\s*\d+\.\s+criterion_id=("(?:[^"\\]|\\.)*")\s+item_id=(null|"(?:[^"\\]|\\.)*")\s+max_points=([0-9.]+)', re.M)
_TURN_ID = re.compile(r"^\[(t\d+)\]", re.M)


# -- replies ------------------------------------------------------------------------


def _text(msg: dict[str, Any]) -> str:
    content = msg.get("content")
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _system(body: dict[str, Any]) -> str:
    return "\n".join(_text(m) for m in body.get("messages", []) if m.get("role") == "system")


def _last_user(body: dict[str, Any]) -> str:
    users = [_text(m) for m in body.get("messages", []) if m.get("role") == "user"]
    return users[-1] if users else ""


def _assistant_count(body: dict[str, Any]) -> int:
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


# The model doctor's encounter, one message per assistant turn so far. The
# transcript the doctor sees grows by one assistant message per doctor turn.
DOCTOR_SCRIPT = [
    "Hello, I'm the doctor on duty today. What brings you in?",
    "When did this start, and how has it changed since?",
    "Can you describe what it feels like, and does it spread anywhere?",
    "Does anything make it better or worse?",
    "Have you had any other symptoms with it, such as fever, nausea or shortness of breath?",
    "Do you have any medical conditions, take any medicines, or have any allergies?",
    "Does anyone in your family have heart disease, and do you smoke or drink?",
    "Thank you. I'd now like to examine you.\nPHASE: exam\nEXAM: heart auscultation, lung auscultation",
    "ORDER: ECG, troponin",
    "Thank you for your patience. Let me explain what I think is going on and what happens next.\nPHASE: closure",
    "From what you told me and the examination, I'm concerned about your heart and want some more tests today. "
    "We'll keep you comfortable while we wait for the results. Is there anything you'd like to ask?",
    "That is a good question. We will know more once the tests are back, and I'll come and explain them to you.\nPHASE: note",
]


def doctor_reply(body: dict[str, Any]) -> str:
    system = _system(body)
    n = _assistant_count(body)
    if "Give your final diagnosis now" in _last_user(body) or ("chat" in system and n >= 3):
        return "Thank you for answering my questions.\nDIAGNOSIS: acute coronary syndrome"
    if "answer options" in system:  # EPAG pre-consultation: one question with options
        return "How long have you had this problem? Options: (a) hours (b) days (c) weeks"
    return DOCTOR_SCRIPT[min(n, len(DOCTOR_SCRIPT) - 1)]


def patient_reply(body: dict[str, Any]) -> str:
    question = _last_user(body).strip()
    if "challenging" in question.lower() or question.startswith("["):
        return "Doctor, is this something serious? Am I going to be alright?"
    if not question:
        return "Hello doctor."
    return "Well, I'm not really sure how to put it. It has been bothering me a lot, and that's why I came in today."


def role_of(body: dict[str, Any]) -> str:
    system = _system(body)
    if "HOW TO REPORT YOUR JUDGEMENTS" in system or "ITEMS TO JUDGE" in _last_user(body):
        return "judge"
    if "Write the patient note" in system:
        return "note"
    if "standardized patient in a clinical skills examination" in system:
        return "patient"
    if "You are a physician" in system:
        return "doctor"
    return "other"


def judge_json(body: dict[str, Any]) -> dict[str, Any]:
    """One judgement per listed item: half marks, citing the first turn of the transcript."""
    user = _last_user(body)
    for m in reversed(body.get("messages", [])):  # after a correction the items are in the first user message
        if m.get("role") == "user" and "ITEMS TO JUDGE" in _text(m):
            user = _text(m)
            break
    turns = _TURN_ID.findall(user)
    judgements = []
    for crit, item, pts in _ITEM_LINE.findall(user):
        judgements.append(
            {
                "criterion_id": json.loads(crit),
                "item_id": None if item == "null" else json.loads(item),
                "points": round(float(pts) / 2, 3),
                "explanation": "Fake judge: half marks so that totals are visibly neither zero nor full.",
                "evidence": turns[:1],
            }
        )
    return {"judgements": judgements}


NOTE_JSON = {
    "hpi": "Patient reports the presenting complaint as described in the encounter.",
    "pe": "Heart and lungs examined; findings as reported by the examiner.",
    "diagnoses": [
        {"name": "Acute coronary syndrome", "history_findings": ["chest pain"], "exam_findings": []},
        {"name": "Pericarditis", "history_findings": ["chest pain"], "exam_findings": []},
    ],
    "workup": ["ECG", "Troponin"],
}

# Instances for judge-chain schemas whose content is checked beyond the schema.
NAMED_JSON: dict[str, Any] = {
    "CraftExtraction": {"diagnoses": ["acute coronary syndrome"], "kind": "single", "correct": False, "explanation": "Fake extraction."},
    "RankedDiagnoses": {"diagnoses": ["acute coronary syndrome", "pericarditis"]},
    "RankMatch": {"rank": 1, "explanation": "Fake match."},
    "OrganizedFacts": {"facts": [{"fact": "The patient has the presenting complaint.", "turns": []}]},
    "PatientNote": NOTE_JSON,
}


def instance_of(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """A minimal JSON value valid for a (pydantic-made) JSON schema."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return instance_of(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [o for o in schema[key] if o.get("type") != "null"] or schema[key]
            return instance_of(options[0], defs)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {name: instance_of(sub, defs) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [instance_of(schema.get("items", {}), defs) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind == "integer":
        return int(schema.get("minimum", 1))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return False
    return None


def structured_reply(body: dict[str, Any]) -> str:
    fmt = (body.get("response_format") or {}).get("json_schema") or {}
    name = fmt.get("name", "")
    if role_of(body) == "judge" or name == "JudgeReply":
        return json.dumps(judge_json(body))
    if name in NAMED_JSON:
        return json.dumps(NAMED_JSON[name])
    if role_of(body) == "note":
        return json.dumps(NOTE_JSON)
    return json.dumps(instance_of(fmt.get("schema") or {}))


def is_structured(body: dict[str, Any]) -> bool:
    """A request for JSON: native response_format, or the schema-in-prompt fallback clients use."""
    return bool(body.get("response_format")) or role_of(body) in ("judge", "note") or "JSON Schema" in _system(body)


def auto_reply(body: dict[str, Any]) -> str:
    if is_structured(body):
        return structured_reply(body)
    role = role_of(body)
    if role == "doctor":
        return doctor_reply(body)
    if role == "patient":
        return patient_reply(body)
    return "OK."


def echo_reply(body: dict[str, Any]) -> str:
    if is_structured(body):
        return structured_reply(body)
    return _last_user(body) or "(nothing to echo)"


def script_reply(path: str) -> Callable[[dict[str, Any]], str]:
    try:
        with open(path, encoding="utf-8") as fh:
            replies = json.load(fh)
    except (OSError, json.JSONDecodeError) as exc:
        raise SystemExit(f"--reply script:{path}: {exc}") from None
    if not isinstance(replies, list) or not replies or not all(isinstance(r, str) for r in replies):
        raise SystemExit(f"{path}: expected a non-empty JSON list of strings")
    queue = deque(replies)
    lock = threading.Lock()

    def reply(body: dict[str, Any]) -> str:
        if is_structured(body):
            return structured_reply(body)
        with lock:
            return queue.popleft() if len(queue) > 1 else queue[0]

    return reply


# -- wire format ---------------------------------------------------------------------


def _pieces(text: str) -> list[str]:
    return re.findall(r"\s*\S+\s*|\s+", text) or [""]


def _usage(body: dict[str, Any], text: str) -> dict[str, int]:
    prompt = sum(len(_text(m).split()) for m in body.get("messages", []))
    completion = len(text.split())
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def completion_json(body: dict[str, Any], text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": _usage(body, text),
    }


def sse_events(body: dict[str, Any], text: str) -> list[bytes]:
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()), "model": body.get("model", "fake")}
    chunks = [dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    chunks += [dict(base, choices=[{"index": 0, "delta": {"content": p}, "finish_reason": None}]) for p in _pieces(text)]
    chunks.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append(dict(base, choices=[], usage=_usage(body, text)))
    return [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]


def error_body(status: int) -> dict[str, Any]:
    messages = {
        401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
        403: ("You are not allowed to use this model.", "permission_error", None),
        404: ("The model does not exist.", "invalid_request_error", "model_not_found"),
        429: ("Rate limit reached, please retry shortly.", "rate_limit_error", "rate_limit_exceeded"),
        500: ("The server had an error while processing your request.", "server_error", None),
        503: ("The server is overloaded.", "server_error", None),
    }
    message, kind, code = messages.get(status, ("error", "server_error", None))
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


# -- the server ----------------------------------------------------------------------


class FakeOpenAI:
    """The server object; usable in-process (tests) or from the command line."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        reply: Callable[[dict[str, Any]], str] = auto_reply,
        latency: float = 0.0,
        slow_seconds: float = 30.0,
        quiet: bool = True,
    ):
        if not host.startswith("127.") and host not in ("localhost", "::1"):
            raise ValueError("the fake server only listens on a loopback address")
        self.reply = reply
        self.latency = latency
        self.slow_seconds = slow_seconds
        self.quiet = quiet
        self.failures: deque[list[Any]] = deque()  # [kind, remaining or None for forever]
        self.requests: list[dict[str, Any]] = []
        self.failed: dict[str, int] = {}
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer((host, port), self._handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- failure schedule -----------------------------------------------------------

    def fail(self, kind: str, count: int | None = None) -> None:
        """Queue a failure for the next ``count`` chat requests (None: every request)."""
        if kind not in FAIL_KINDS:
            raise ValueError(f"unknown failure {kind!r}: use one of {', '.join(FAIL_KINDS)}")
        with self._lock:
            self.failures.append([kind, count])

    def clear_failures(self) -> None:
        with self._lock:
            self.failures.clear()

    def _next_failure(self, structured: bool) -> str | None:
        with self._lock:
            while self.failures:
                kind, left = self.failures[0]
                if kind in ("malformed", "badschema") and not structured:
                    return None  # only structured calls can be malformed; chat stays normal (and uses none up)
                if left is not None:
                    if left <= 0:
                        self.failures.popleft()
                        continue
                    self.failures[0][1] = left - 1
                self.failed[kind] = self.failed.get(kind, 0) + 1
                return kind
            return None

    # -- lifecycle ------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> "FakeOpenAI":
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread:
            self._thread.join(timeout=5)

    def __enter__(self) -> "FakeOpenAI":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    # -- HTTP -------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt: str, *args: Any) -> None:
                if not server.quiet:
                    sys.stderr.write("fake-openai: " + fmt % args + "\n")

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if self.path.rstrip("/") == "/v1/models":
                    self._json(200, {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "fake"}]})
                elif self.path.startswith("/_stats"):
                    self._json(200, {"requests": len(server.requests), "failed": server.failed})
                else:
                    self._json(404, {"error": {"message": f"no route {self.path}"}})

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._json(400, {"error": {"message": "request body is not JSON"}})
                    return
                if self.path.startswith("/_fail"):
                    self._control(body)
                    return
                if self.path.rstrip("/") != "/v1/chat/completions":  # as strict as vLLM: a base URL without /v1 is an error
                    self._json(404, {"error": {"message": f"no route {self.path}"}})
                    return
                server.requests.append(body)
                structured = is_structured(body)
                kind = server._next_failure(structured)
                if kind == "ok":
                    kind = None
                if kind and kind.isdigit():
                    self._json(int(kind), error_body(int(kind)), retry_after_ms="50" if kind == "429" else None)
                    return
                if kind == "slow":
                    time.sleep(server.slow_seconds)
                try:
                    text = server.reply(body)
                except Exception as exc:  # a reply script failed: say why, as a server would
                    self._json(500, {"error": {"message": f"fake server reply failed: {exc!r}"}})
                    return
                if kind == "malformed":
                    text = text[: max(1, len(text) // 2)]  # JSON cut off mid-way, as when max_tokens hits
                elif kind == "badschema":
                    text = json.dumps({"result": "this object has none of the requested fields"})
                if body.get("stream"):
                    self._stream(body, text, drop=kind == "drop")
                elif kind == "drop":
                    self._drop_plain(completion_json(body, text))
                else:
                    self._json(200, completion_json(body, text))

            def _control(self, body: dict[str, Any]) -> None:
                kind = str(body.get("kind", ""))
                if kind == "none":
                    server.clear_failures()
                    self._json(200, {"ok": True, "failures": []})
                    return
                try:
                    server.fail(kind, body.get("count"))
                except ValueError as exc:
                    self._json(400, {"error": {"message": str(exc)}})
                    return
                self._json(200, {"ok": True, "failures": [list(f) for f in server.failures]})

            def _json(self, status: int, payload: dict[str, Any], retry_after_ms: str | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                if retry_after_ms is not None:  # OpenAI's header; the SDKs honour it when retrying
                    self.send_header("retry-after-ms", retry_after_ms)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict[str, Any], text: str, *, drop: bool) -> None:
                # Chunked encoding: a connection closed before the last chunk is a
                # broken stream to the client, not a short but complete one.
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                events = sse_events(body, text)
                if drop:
                    events = events[: max(2, len(events) // 2)]
                for event in events:
                    if server.latency:
                        time.sleep(server.latency)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                    self.wfile.flush()
                if drop:
                    self._hang_up()
                    return
                self.wfile.write(b"0\r\n\r\n")

            def _drop_plain(self, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self._hang_up()

            def _hang_up(self) -> None:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        return Handler


def _parse_fail(text: str) -> tuple[str, int | None]:
    kind, _, count = text.partition(":")
    if kind not in FAIL_KINDS:
        raise argparse.ArgumentTypeError(f"unknown failure {kind!r}: use one of {', '.join(FAIL_KINDS)}")
    if count and not count.isdigit():
        raise argparse.ArgumentTypeError(f"--fail {text}: the count after ':' must be a whole number")
    return kind, int(count) if count else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default="127.0.0.1", help="loopback address to listen on (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    ap.add_argument("--reply", default="auto", metavar="auto|echo|script:FILE", help="how replies are made (default auto)")
    ap.add_argument("--fail", type=_parse_fail, action="append", default=[], metavar="KIND[:N]", help=f"inject a failure: {', '.join(FAIL_KINDS)}")
    ap.add_argument("--latency", type=float, default=0.0, metavar="S", help="seconds before each streamed chunk")
    ap.add_argument("--slow-seconds", type=float, default=30.0, metavar="S", help="delay for --fail slow (default 30)")
    ap.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = ap.parse_args(argv)
    if args.reply == "auto":
        reply = auto_reply
    elif args.reply == "echo":
        reply = echo_reply
    elif args.reply.startswith("script:"):
        reply = script_reply(args.reply.removeprefix("script:"))
    else:
        ap.error(f"--reply {args.reply!r}: use auto, echo or script:FILE")
    try:
        server = FakeOpenAI(host=args.host, port=args.port, reply=reply, latency=args.latency,
                            slow_seconds=args.slow_seconds, quiet=not args.verbose)
    except (ValueError, OSError) as exc:
        ap.error(str(exc))
    for kind, count in args.fail:
        server.fail(kind, count)
    print(f"fake OpenAI-compatible server on {server.base_url}  (LOCAL_BASE_URL={server.base_url})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
