"""Helpers the server tests share."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.testclient import TestClient

from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    ProviderEvent,
    TextDelta,
    ToolSpec,
    Usage,
)

TOKEN = "test-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def user(text: str) -> dict[str, Any]:
    """A request body holding one user message."""
    return {"messages": [{"role": "user", "content": text}]}


def chunks_of(client: TestClient, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON chunks of a streamed request, checking it ends with ``[DONE]``."""
    with client.stream("POST", "/v1/chat/completions", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        data = [line[5:].strip() for line in response.iter_lines() if line.startswith("data:")]
    assert data[-1] == "[DONE]"
    return [json.loads(d) for d in data[:-1]]


@dataclass
class SlowProvider:
    """A model that writes ``words`` one at a time, waiting ``pause`` seconds between them;
    it records how many streams run at once and whether a stream was closed early."""

    words: int = 200
    pause: float = 0.02
    serial: bool | None = None
    name: str = "slow"
    started: threading.Event = field(default_factory=threading.Event)
    closed: threading.Event = field(default_factory=threading.Event)
    running: int = 0
    most: int = 0
    sent: list[Sequence[Message]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[ToolSpec] | None = None,
    ) -> Iterator[ProviderEvent]:
        self.sent.append(messages)
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        finished = False
        try:
            self.started.set()
            for n in range(self.words):
                yield TextDelta(f"w{n} ")
                time.sleep(self.pause)
            finished = True
            yield Finished(Usage(10, self.words), "stop")
        finally:
            with self._lock:
                self.running -= 1
            if not finished:
                self.closed.set()

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        return None

    def close(self) -> None:
        return None
