"""A MockTransport handler shared by the SDK provider tests."""

from __future__ import annotations

import json

import httpx2


class Recorder:
    """MockTransport handler that replays scripted responses and keeps requests."""

    def __init__(self, *responses):
        self.responses = list(responses)
        self.requests: list[httpx2.Request] = []
        self.bodies: list[dict] = []

    def __call__(self, request: httpx2.Request):
        self.requests.append(request)
        self.bodies.append(json.loads(request.content))
        item = self.responses.pop(0)
        if isinstance(item, Exception):
            raise item
        return item(request) if callable(item) else item
