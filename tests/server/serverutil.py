"""Helpers the server tests share."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
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
SERVE_REPLY = "Hello from conch serve."
START_SECONDS = 30.0

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


@dataclass
class Served:
    """A ``conch serve`` process: its base URL, the URL it printed, and its stderr so far."""

    base: str
    printed: str
    lines: list[str]


@contextmanager
def serve_process(tmp_path: Path, *flags: str) -> Iterator[Served]:
    """``conch serve FLAGS`` as a user starts it, on the scripted provider (which answers
    ``SERVE_REPLY``), until its ``open URL`` line; stopped by Ctrl+C at the end, which must
    exit 0."""
    config = tmp_path / "config.yaml"
    config.write_text(f"ai:\n  provider: scripted\n  script: [{SERVE_REPLY!r}]\n", encoding="utf-8")
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "CONCH_SERVER_API_KEY"}
    env["CONCH_CONFIG"] = str(config)
    argv = ["serve", "--port", str(port), "--sandbox", str(tmp_path), *flags]
    process = subprocess.Popen(
        [sys.executable, "-m", "conch", *argv],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    lines: list[str] = []
    too_slow = threading.Timer(START_SECONDS, process.kill)  # no URL in time: stop waiting
    too_slow.start()
    try:
        while not lines or "conch serve: open " not in lines[-1]:
            line = process.stderr.readline()
            assert line, "".join(lines) or "it ended before printing its URL"
            lines.append(line)
        too_slow.cancel()
        printed = lines[-1].split("conch serve: open ", 1)[1].split()[0]
        base = f"http://127.0.0.1:{port}"
        assert printed.startswith(base + "/"), printed
        yield Served(base, printed, lines)
    finally:
        too_slow.cancel()
        process.send_signal(signal.SIGINT)  # Ctrl+C
        _, err = process.communicate(timeout=20)
        assert process.returncode == 0, "".join(lines) + err
