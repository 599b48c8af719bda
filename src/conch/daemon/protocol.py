"""The service's wire format: newline-delimited JSON objects over a Unix stream socket.

Every connection opens with a ``hello`` each way. The client's carries its conch version and
the model it wants; the service's carries its own, so a client can tell a service left over
from another conch version, or holding another model, and replace it. Then the client sends
requests, one at a time, each a JSON object with a ``type``:

``complete``  messages, options and tools. The service answers with ``progress`` lines while
              the request waits for its turn or for the model to load, ``keepalive`` lines
              during long silences, ``chunk`` lines as the model streams, then ``done`` (with
              the engine's timings) or ``error`` (one line of text and the error's kind).
``likelihood`` messages and a reply: how likely the model finds that reply after them.
              ``progress`` and ``keepalive`` lines as for ``complete``, then ``done`` with
              ``logprob`` (a number, or null where the engine cannot say) or ``error``.
``tokenize``  a text: one ``done`` reply with ``tokens``, how many tokens the loaded model's
              tokenizer makes of it (null while no model is loaded: counting never loads one).
``load``      load the model now: ``progress`` lines, then ``done`` or ``error``.
``status``    one ``status`` reply: pid, version, model, uptime, requests, idle time, memory.
``stop``      one ``stopping`` reply; the service then exits.

Messages and options travel as ``dataclasses.asdict`` of ``conch.messages`` types.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from conch import errors
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    ProviderEvent,
    Role,
    Stage,
    TextDelta,
    ToolCall,
    Usage,
)

if TYPE_CHECKING:
    from conch.config.settings import LocalSettings

# Raised whenever a message changes shape, so a service of the old shape is replaced rather
# than sent what it cannot read (2: generation options carry ``end_bias``; 3: ``likelihood``;
# 4: ``tokenize``; 5: generation options carry ``logprobs``, the end of a reply its sum).
PROTOCOL = 5

# One line may carry a whole prompt (peeked files, help text): generous, but bounded.
MAX_LINE = 16 * 2**20

# The backend every real service runs: conch's own local provider.
LOCAL_BACKEND = "local"

_ROLES = frozenset(get_args(Role))


class ProtocolError(Exception):
    """A line that is not a well-formed message (a bug or a foreign peer, never user input)."""


class ConnectionLost(Exception):
    """The other end closed the connection or vanished (a killed process, a reset)."""


class Channel:
    """One connection: whole messages in, whole messages out, sends safe across threads."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.last_sent = time.monotonic()
        self._reader = sock.makefile("rb")
        self._send_lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        """Send one message; ConnectionLost when the peer is gone, TimeoutError when stuck."""
        data = encode(message)
        with self._send_lock:
            try:
                self.sock.sendall(data)
            except TimeoutError:
                raise
            except OSError as exc:
                raise ConnectionLost(exc.strerror or str(exc)) from None
            self.last_sent = time.monotonic()

    def receive(self, timeout: float | None) -> dict[str, Any] | None:
        """The next message, or None at a clean end of the stream.

        TimeoutError after ``timeout`` seconds without a whole line; ConnectionLost on a reset
        or a line cut off by the peer's death; ProtocolError on a malformed line.
        """
        self.sock.settimeout(timeout)
        try:
            line = self._reader.readline(MAX_LINE + 1)
        except TimeoutError:
            raise
        except OSError as exc:
            raise ConnectionLost(exc.strerror or str(exc)) from None
        if not line:
            return None
        if not line.endswith(b"\n"):
            if len(line) > MAX_LINE:
                raise ProtocolError("message too long")
            raise ConnectionLost("the connection closed in the middle of a message")
        return decode(line)

    def close(self) -> None:
        """Close the connection (both directions); safe to call twice."""
        try:
            self._reader.close()
        finally:
            self.sock.close()


def encode(message: dict[str, Any]) -> bytes:
    """One message as one line of UTF-8 JSON."""
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def decode(line: bytes) -> dict[str, Any]:
    """The message on ``line``; ProtocolError unless it is a JSON object with a ``type``."""
    try:
        message = json.loads(line)
    except ValueError:
        raise ProtocolError("not JSON") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError("not a message object")
    return message


def messages_to_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Chat messages as plain data."""
    return [asdict(m) for m in messages]


def messages_from_wire(data: Any) -> list[Message]:
    """Chat messages back from plain data; ProtocolError on any malformed field."""
    if not isinstance(data, list):
        raise ProtocolError("messages must be a list")
    try:
        out = []
        for item in data:
            if item["role"] not in _ROLES or not isinstance(item["content"], str):
                raise ProtocolError("bad message role or content")
            calls = tuple(ToolCall(**call) for call in item.get("tool_calls") or ())
            out.append(
                Message(
                    role=item["role"],
                    content=item["content"],
                    tool_calls=calls,
                    tool_call_id=item.get("tool_call_id"),
                    name=item.get("name"),
                )
            )
        return out
    except (KeyError, TypeError, AttributeError):
        raise ProtocolError("malformed message") from None


def options_to_wire(options: GenerationOptions) -> dict[str, Any]:
    """Generation options as plain data."""
    return asdict(options)


def options_from_wire(data: Any) -> GenerationOptions:
    """Generation options back from plain data; ProtocolError on unknown or bad fields."""
    if not isinstance(data, dict):
        raise ProtocolError("options must be an object")
    try:
        fields = dict(data)
        fields["stop"] = tuple(fields.get("stop") or ())
        return GenerationOptions(**fields)
    except TypeError:
        raise ProtocolError("malformed options") from None


def event_to_wire(event: ProviderEvent) -> dict[str, Any] | None:
    """A provider's event as the message the service sends for it: a ``chunk`` carrying only
    the fields that are set (text, a whole tool call, or the usage and finish reason at the
    end; the engine's timings travel in ``done``), or a ``progress`` line for a stage (its
    label; the fraction is not sent). Notes are the client's own and never sent (None)."""
    if isinstance(event, TextDelta):
        return {"type": "chunk", "text": event.text} if event.text else None
    if isinstance(event, ToolCall):
        return {"type": "chunk", "tool_call": asdict(event)}
    if isinstance(event, Finished):
        message: dict[str, Any] = {"type": "chunk", "usage": asdict(event.usage)}
        if event.finish_reason is not None:
            message["finish_reason"] = event.finish_reason
        if event.logprob is not None:
            message["logprob"] = event.logprob
        return message
    if isinstance(event, Stage):
        return {"type": "progress", "stage": event.label}
    return None


def events_from_wire(message: dict[str, Any]) -> list[TextDelta | ToolCall | Finished]:
    """A ``chunk`` message back as events, in the order a provider streams them."""
    try:
        events: list[TextDelta | ToolCall | Finished] = []
        if message.get("text"):
            events.append(TextDelta(str(message["text"])))
        call = message.get("tool_call")
        if call is not None:
            events.append(ToolCall(**call))
        usage = message.get("usage")
        finish = message.get("finish_reason")
        logprob = message.get("logprob")
        if usage is not None or finish is not None:
            events.append(
                Finished(
                    Usage(**usage) if usage is not None else Usage(),
                    str(finish) if finish is not None else None,
                    logprob=float(logprob) if isinstance(logprob, (int, float)) else None,
                )
            )
        return events
    except TypeError:
        raise ProtocolError("malformed chunk") from None


def error_to_wire(exc: BaseException) -> dict[str, Any]:
    """An ``error`` message: one line of text, and the conch error class to raise it as."""
    kind = type(exc).__name__ if isinstance(exc, errors.ConchError) else "ProviderError"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return {"type": "error", "kind": kind, "message": text}


def error_from_wire(message: dict[str, Any]) -> errors.ConchError:
    """The conch error an ``error`` message describes (ProviderError when the kind is unknown)."""
    kind = getattr(errors, str(message.get("kind")), None)
    if not (isinstance(kind, type) and issubclass(kind, errors.ConchError)):
        kind = errors.ProviderError
    text = " ".join(str(message.get("message") or "").split())
    return kind(text or "the model service failed without saying why")


def model_identity(path: Path, settings: LocalSettings, backend: str) -> dict[str, Any]:
    """What makes two loaded models the same: the file (path, size, mtime) and how it is run.

    A service holding anything else (another file, the same file changed on disk, another
    engine or context size) is not reused.
    """
    resolved = path.expanduser().resolve()
    stat = resolved.stat()
    return {
        "path": str(resolved),
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "engine": settings.engine,
        "n_ctx": settings.n_ctx,
        "n_threads": settings.n_threads,
        "backend": backend,
    }


@contextlib.contextmanager
def keepalive(channel: Channel, seconds: float) -> Iterator[None]:
    """Send a ``keepalive`` whenever ``channel`` has been silent for ``seconds``."""
    done = threading.Event()

    def beat() -> None:
        while not done.wait(seconds / 4):
            if time.monotonic() - channel.last_sent >= seconds:
                try:
                    channel.send({"type": "keepalive"})
                except (ConnectionLost, OSError):
                    return

    thread = threading.Thread(target=beat, name="conch-daemon-beat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
