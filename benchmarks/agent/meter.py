"""A counting proxy between an agent and the model server.

Each run gets its own proxy on a free 127.0.0.1 port; the agent is given the proxy's URL as its
OpenAI base URL. Requests and replies pass through unchanged (streamed replies chunk by chunk);
for every request the proxy records the path, status, seconds, and the token counts the
server reported (``usage`` of the reply, or of the last streamed chunk that has one; failing
that, llama.cpp's ``timings``). So model calls and tokens are counted the same way for every
agent, whatever the agent itself reports.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
import time
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

UPSTREAM_TIMEOUT = 900.0
KEPT_REPLY = 8 * 1024 * 1024  # bytes of a reply kept for reading its usage
_HOP_HEADERS = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "host",
    "accept-encoding",
    "proxy-connection",
    "upgrade",
}


@dataclass(slots=True)
class Call:
    """One request through the proxy."""

    path: str
    status: int
    seconds: float
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    stream: bool = False
    temperature: float | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def usage_of(body: bytes, stream: bool) -> tuple[int | None, int | None]:
    """(prompt tokens, completion tokens) from a reply body, plain JSON or server-sent events."""
    payloads: list[Any] = []
    if stream:
        for line in body.splitlines():
            if line.startswith(b"data:"):
                chunk = line[5:].strip()
                if chunk and chunk != b"[DONE]":
                    try:
                        payloads.append(json.loads(chunk))
                    except ValueError:
                        continue
    else:
        try:
            payloads.append(json.loads(body))
        except ValueError:
            return None, None
    for payload in reversed(payloads):
        if not isinstance(payload, dict):
            continue
        usage = payload.get("usage")
        if isinstance(usage, dict) and usage.get("prompt_tokens") is not None:
            return int(usage["prompt_tokens"]), int(usage.get("completion_tokens") or 0)
    for payload in reversed(payloads):
        timings = payload.get("timings") if isinstance(payload, dict) else None
        if isinstance(timings, dict) and "prompt_n" in timings:
            prompt = int(timings.get("prompt_n", 0)) + int(timings.get("cache_n", 0))
            return prompt, int(timings.get("predicted_n", 0))
    return None, None


class Meter:
    """The proxy for one run; ``calls`` lists every request made through it."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {upstream}")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.base_path = parts.path
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL to give the agent (the upstream's path on the proxy's port)."""
        if self._server is None:
            raise RuntimeError("the meter is not running")
        return f"http://127.0.0.1:{self._server.server_address[1]}{self.base_path}"

    def __enter__(self) -> Meter:
        meter = self

        class Handler(_Forwarder):
            owner = meter

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)

    def connection(self) -> http.client.HTTPConnection:
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=UPSTREAM_TIMEOUT)
        return http.client.HTTPConnection(self.host, self.port, timeout=UPSTREAM_TIMEOUT)

    def totals(self) -> dict[str, Any]:
        """Model calls (chat or completion requests), tokens, and failed requests."""
        with self._lock:
            calls = [c for c in self.calls if c.path.rstrip("/").endswith("completions")]
            known = [c for c in calls if c.prompt_tokens is not None]
            return {
                "model_calls": len(calls),
                "prompt_tokens": sum(c.prompt_tokens or 0 for c in known) if known else None,
                "completion_tokens": (
                    sum(c.completion_tokens or 0 for c in known) if known else None
                ),
                "calls_without_usage": len(calls) - len(known),
                "server_errors": sum(1 for c in self.calls if c.status >= 500),
                "temperatures": sorted({str(c.temperature) for c in calls}),
            }


class _Forwarder(BaseHTTPRequestHandler):
    owner: Meter
    protocol_version = "HTTP/1.0"  # the reply ends when the connection closes

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._forward()

    def do_POST(self) -> None:
        self._forward()

    def _forward(self) -> None:
        started = time.monotonic()
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        stream, temperature = False, None
        try:
            request = json.loads(body) if body else {}
            if isinstance(request, dict):
                stream = bool(request.get("stream"))
                if isinstance(request.get("temperature"), int | float):
                    temperature = float(request["temperature"])
        except ValueError:
            pass
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
        headers["Accept-Encoding"] = "identity"
        call = Call(self.path, 0, 0.0, stream=stream, temperature=temperature)
        upstream = self.owner.connection()
        try:
            upstream.request(self.command, self.path, body=body or None, headers=headers)
            reply = upstream.getresponse()
            call.status = reply.status
            self.send_response(reply.status)
            for key, value in reply.getheaders():
                if key.lower() not in _HOP_HEADERS:
                    self.send_header(key, value)
            self.send_header("Connection", "close")
            self.end_headers()
            kept = bytearray()
            client_gone = False
            while True:
                chunk = reply.read1(65536)
                if not chunk:
                    break
                if not client_gone:
                    try:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                    except OSError:  # the agent stopped listening (or was stopped)
                        client_gone = True
                        call.error = "the agent closed the connection"
                if len(kept) < KEPT_REPLY:
                    kept += chunk
            is_sse = "event-stream" in (reply.getheader("Content-Type") or "")
            call.prompt_tokens, call.completion_tokens = usage_of(bytes(kept), is_sse)
        except (OSError, http.client.HTTPException) as exc:
            call.error = f"{type(exc).__name__}: {exc}"
            if not call.status:
                call.status = 502  # the server could not be reached
                with contextlib.suppress(OSError):
                    self.send_error(502, "upstream unreachable")
        finally:
            upstream.close()
            call.seconds = round(time.monotonic() - started, 3)
            self.owner.record(call)
