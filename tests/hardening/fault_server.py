"""A fake OpenAI-compatible server on 127.0.0.1 that can be told to misbehave.

``FaultServer`` answers ``POST /v1/chat/completions`` with the faults queued on it, one per
request (the last one repeats), and ``GET /v1/models`` with one model. It speaks HTTP/1.0 with
close-delimited bodies, so it can end a stream at any byte the way a dying server does.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# How long a stalled reply waits before the server gives up on it (the client times out first).
STALL_SECONDS = 30.0

PROSE = (
    "I am sorry, but I cannot tell which files you mean. Could you describe them in more "
    "detail, for example by their names or where they are?"
)
HUGE = "echo " + "a" * 100_000  # a reply of 100 KB


def chunk(content: str | None = None, finish: str | None = None, **delta: Any) -> bytes:
    """One ``chat.completion.chunk`` as an SSE ``data`` line."""
    if content is not None:
        delta["content"] = content
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def reply_chunks(text: str) -> list[bytes]:
    """A whole, well-formed streamed reply of ``text``."""
    pieces = [text[i : i + 4096] for i in range(0, len(text), 4096)] or [""]
    return [
        chunk(role="assistant"),
        *(chunk(piece) for piece in pieces),
        chunk(finish="stop"),
        b"data: [DONE]\n\n",
    ]


class FaultServer:
    """The server, its queue of faults and what it was asked.

    A fault is a name: ``ok`` (a normal reply of ``reply``), ``refused`` (nothing listens:
    the server is closed), ``401``, ``429`` (with ``Retry-After``), ``500``, ``slow_headers``
    (nothing until the client gives up), ``stall`` (headers and part of a reply, then
    nothing), ``truncated`` (part of a reply, then the connection closes), ``malformed``
    (a line of broken JSON), ``empty`` (a reply with no content), ``prose`` (a reply in prose,
    no command), ``huge`` (a reply of 100 KB) and ``bad_tool_args`` (a native tool call whose
    arguments are not JSON).
    """

    def __init__(self, reply: str = "ls -la") -> None:
        self.reply = reply
        self.faults: deque[str] = deque(["ok"])
        self.requests: list[dict[str, Any]] = []
        self.release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self.port = self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def queue(self, *faults: str) -> None:
        """Answer the next requests with ``faults``, in order; the last one repeats."""
        self.faults = deque(faults)

    def next_fault(self) -> str:
        return self.faults.popleft() if len(self.faults) > 1 else self.faults[0]

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(10)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": "m", "object": "model"}]})
                else:
                    self._json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if not self.path.endswith("/chat/completions"):
                    self._json(404, {"error": {"message": "not found"}})
                    return
                server.requests.append(json.loads(raw or b"{}"))
                fault = server.next_fault()
                if fault in ("401", "429", "500"):
                    status = int(fault)
                    message = {
                        401: "Incorrect API key provided: sk-fake",
                        429: "Rate limit reached for requests",
                        500: "The server had an error while processing your request",
                    }[status]
                    extra = {"Retry-After": "1"} if status == 429 else {}
                    self._json(status, {"error": {"message": message}}, extra)
                    return
                if fault == "slow_headers":
                    server.release.wait(STALL_SECONDS)
                    return
                if fault == "stall":
                    self._stream([chunk(role="assistant"), chunk("ls ")], then_wait=True)
                    return
                if fault == "truncated":
                    self._stream([chunk(role="assistant"), chunk("rm -rf ./bu")])
                    return
                if fault == "malformed":
                    self._stream([chunk(role="assistant"), b'data: {"choices": [{"delta": \n\n'])
                    return
                if fault == "empty":
                    self._stream(
                        [chunk(role="assistant"), chunk(finish="stop"), b"data: [DONE]\n\n"]
                    )
                    return
                if fault == "bad_tool_args":
                    call = {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "fs_read", "arguments": '{"path": "READ'},
                    }
                    self._stream(
                        [
                            chunk(role="assistant", tool_calls=[call]),
                            chunk(finish="tool_calls"),
                            b"data: [DONE]\n\n",
                        ]
                    )
                    return
                text = {"prose": PROSE, "huge": HUGE}.get(fault, server.reply)
                if fault.startswith("say:"):
                    text = fault.removeprefix("say:")
                self._stream(reply_chunks(text))

            def _json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, parts: list[bytes], then_wait: bool = False) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for part in parts:
                    self.wfile.write(part)
                    self.wfile.flush()
                if then_wait:
                    server.release.wait(STALL_SECONDS)
                self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:
                return

        return Handler


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (just bound and released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@contextmanager
def fault_server(reply: str = "ls -la") -> Iterator[FaultServer]:
    server = FaultServer(reply)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def wait_for(predicate: Any, timeout: float = 5.0) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` passes."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return bool(predicate())
