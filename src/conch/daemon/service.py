"""The service process: one loaded model, served over a private Unix socket.

One engine stays alive for the life of the process, so the model is loaded once and the
engine's prompt cache survives between requests: consecutive requests that open with the same
system prompt skip re-evaluating it (llama.cpp reuses the longest common prefix of its cache).
Requests take turns on the model, one at a time; a request that waits is told so, and every
connection gets a keepalive during long silences so a client can tell a slow model from a hung
service. After ``idle_timeout_s`` seconds without requests the service exits by itself.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import socket
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from conch import version
from conch.daemon import process, protocol
from conch.daemon.backend import ServedModel, ServiceConfig, load_backend
from conch.daemon.location import (
    ServiceUnavailable,
    check_socket_path,
    ensure_private_dir,
    listening,
    peer_allowed,
)
from conch.daemon.protocol import Channel, ConnectionLost, ProtocolError, keepalive
from conch.errors import ConchError, ProviderError
from conch.messages import Finished, GenerationOptions, Message, ToolSpec

log = logging.getLogger("conch.daemon")
# What a request parses into before its work runs (``Service._request``).
_Request = TypeVar("_Request")

# How often the accept loop wakes to check for idleness and a stop request.
POLL_SECONDS = 0.25
# A connection hears something at least this often while its request is in progress.
KEEPALIVE_SECONDS = 1.0
# A client that connects and then says nothing for this long is dropped.
QUIET_CLIENT_SECONDS = 60.0
# How long a stopping service lets in-flight requests wind down before it exits anyway.
STOP_GRACE_SECONDS = 5.0


class _Stopping(Exception):
    """The service is shutting down while a request waits or runs."""


class Service:
    """Accepts connections, answers hellos and status at once, and runs requests in turn."""

    def __init__(self, config: ServiceConfig, provider: ServedModel | None = None) -> None:
        if not config.local.model_path:
            raise ServiceUnavailable("the model service needs a model path")
        self.config = config
        try:
            self.identity = protocol.model_identity(
                Path(config.local.model_path), config.local, config.backend
            )
        except OSError as exc:
            raise ServiceUnavailable(
                f"cannot read the model {config.local.model_path}: {exc.strerror or exc}"
            ) from None
        self.provider = provider or load_backend(config.backend)(config.local, config.cache_dir)
        self.idle_timeout_s = config.idle_timeout_s
        self.started = time.monotonic()
        self.last_request = self.started
        self.requests_served = 0
        self.active = 0
        self.waiting = 0
        self.connections = 0
        self.loading = False
        self.load_seconds: float | None = None
        self.load_error: str | None = None
        self._model_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._stop = threading.Event()
        self._listener: socket.socket | None = None
        self._socket_inode: int | None = None
        self._handlers: list[threading.Thread] = []

    # -- life cycle -----------------------------------------------------------------------

    def check_free(self) -> None:
        """ServiceUnavailable unless this service could listen on its socket (checked early,
        so a doomed service does not first spend seconds loading the model)."""
        path = self.config.socket_path
        ensure_private_dir(path.parent)
        check_socket_path(path)
        if os.path.lexists(path) and listening(path):
            raise ServiceUnavailable(f"a model service is already listening on {path}")

    def bind(self) -> None:
        """Listen on the socket (0600, in a 0700 directory) and write the pid file.

        A socket file nobody listens on (a crashed service) is replaced; a live one is not.
        """
        path = self.config.socket_path
        self.check_free()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # The umask makes the socket private from the moment it exists; chmod makes sure.
        previous = os.umask(0o177)
        try:
            listener.bind(str(path))
        except OSError as exc:
            listener.close()
            raise ServiceUnavailable(f"cannot listen on {path}: {exc.strerror or exc}") from None
        finally:
            os.umask(previous)
        os.chmod(path, 0o600)
        listener.listen(16)
        self._listener = listener
        self._socket_inode = os.stat(path).st_ino
        _write_private(self.config.pid_file, f"{os.getpid()}\n")
        with self._state_lock:
            self.last_request = time.monotonic()  # the idle clock starts once it can be used

    def serve_forever(self) -> str:
        """Serve until stopped or idle for too long; returns why it ended ("stopped", "idle")."""
        listener = self._listener
        if listener is None:
            raise RuntimeError("bind() first")
        reason = "stopped"
        while not self._stop.is_set():
            ready, _, _ = select.select([listener], [], [], POLL_SECONDS)
            if ready:
                self._accept(listener)
            if self._idle_expired():
                reason = "idle"
                break
        self.shutdown()
        return reason

    def stop(self) -> None:
        """Ask the accept loop to end; safe from any thread and from a signal handler."""
        self._stop.set()

    def shutdown(self) -> None:
        """Remove the socket and pid file (if still ours), then let requests wind down."""
        self._stop.set()
        self._remove_files()
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for thread in list(self._handlers):
            thread.join(max(deadline - time.monotonic(), 0))
        with contextlib.suppress(Exception):
            self.provider.close()

    def _remove_files(self) -> None:
        # A newer service may already own these paths: remove only what is still ours.
        path = self.config.socket_path
        with contextlib.suppress(OSError):
            if os.stat(path).st_ino == self._socket_inode:
                path.unlink()
        with contextlib.suppress(OSError, ValueError):
            if int(self.config.pid_file.read_text(encoding="utf-8")) == os.getpid():
                self.config.pid_file.unlink()

    def _idle_expired(self) -> bool:
        with self._state_lock:
            busy = self.active or self.waiting or self.connections or self.loading
            idle = time.monotonic() - self.last_request
        return not busy and idle >= self.idle_timeout_s

    def load_model(self) -> None:
        """Load the model before listening, failures included (requests then report them).

        The engine holds the interpreter lock while it loads, so a service that listened
        during the load could not even answer a hello; clients wait for the socket instead.
        """
        with self._model_lock:
            with self._state_lock:
                self.loading = True
            started = time.monotonic()
            try:
                self.provider.load()
            except Exception as exc:
                self.load_error = " ".join(str(exc).split())
                log.warning("loading the model failed: %s", self.load_error)
            else:
                self.load_seconds = time.monotonic() - started
                self.load_error = None
                log.info("model loaded in %.2f s", self.load_seconds)
            finally:
                with self._state_lock:
                    self.loading = False

    # -- connections ----------------------------------------------------------------------

    def _accept(self, listener: socket.socket) -> None:
        try:
            sock, _ = listener.accept()
        except OSError:
            return
        if not peer_allowed(sock):
            log.warning("refused a connection from another user")
            sock.close()
            return
        with self._state_lock:
            self.connections += 1
        thread = threading.Thread(
            target=self._serve_connection, args=(sock,), name="conch-daemon-conn", daemon=True
        )
        self._handlers = [t for t in self._handlers if t.is_alive()]
        self._handlers.append(thread)
        thread.start()

    def _serve_connection(self, sock: socket.socket) -> None:
        channel = Channel(sock)
        try:
            self._conversation(channel)
        except (ConnectionLost, TimeoutError, OSError):
            pass
        except ProtocolError as exc:
            with contextlib.suppress(ConnectionLost, OSError):
                channel.send(_error(f"bad message: {exc}"))
        finally:
            channel.close()
            with self._state_lock:
                self.connections -= 1

    def _conversation(self, channel: Channel) -> None:
        hello = channel.receive(QUIET_CLIENT_SECONDS)
        if hello is None:
            return
        if hello["type"] != "hello":
            channel.send(_error("the first message must be a hello"))
            return
        self._adopt(hello)
        channel.send(self.hello())
        while not self._stop.is_set():
            message = channel.receive(QUIET_CLIENT_SECONDS)
            if message is None:
                return
            kind = message["type"]
            if kind == "complete":
                self._complete(channel, message)
            elif kind == "likelihood":
                self._likelihood(channel, message)
            elif kind == "load":
                self._load(channel)
            elif kind == "status":
                channel.send(self.status())
            elif kind == "stop":
                log.info("stop requested")
                channel.send({"type": "stopping", "pid": os.getpid()})
                self.stop()
                return
            else:
                channel.send(_error(f"unknown request type '{kind}'"))

    def _adopt(self, hello: dict[str, Any]) -> None:
        """Take the client's idle timeout: the user's latest setting wins without a restart."""
        value = hello.get("idle_timeout_s")
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            self.idle_timeout_s = float(value)

    def hello(self) -> dict[str, Any]:
        """The service's side of the handshake."""
        return {
            "type": "hello",
            "protocol": protocol.PROTOCOL,
            "version": version.__version__,
            "pid": os.getpid(),
            "model": self.identity,
        }

    def status(self) -> dict[str, Any]:
        """What ``conch daemon status`` shows."""
        now = time.monotonic()
        with self._state_lock:
            busy = bool(self.active)
            data = {
                "type": "status",
                "pid": os.getpid(),
                "version": version.__version__,
                "protocol": protocol.PROTOCOL,
                "socket": str(self.config.socket_path),
                "model": self.identity,
                "loaded": bool(getattr(self.provider, "loaded", True)),
                "loading": self.loading,
                "load_seconds": self.load_seconds,
                "load_error": self.load_error,
                "uptime_s": round(now - self.started, 3),
                "requests": self.requests_served,
                "active": self.active,
                "waiting": self.waiting,
                "idle_s": 0.0 if busy else round(now - self.last_request, 3),
                "idle_timeout_s": self.idle_timeout_s,
                "rss_bytes": process.rss_bytes(),
            }
        return data

    # -- requests -------------------------------------------------------------------------

    def _complete(self, channel: Channel, message: dict[str, Any]) -> None:
        def parse() -> tuple[list[Message], GenerationOptions, list[ToolSpec] | None]:
            messages = protocol.messages_from_wire(message.get("messages"))
            options = protocol.options_from_wire(message.get("options") or {})
            tools = message.get("tools")
            if tools is not None and not isinstance(tools, list):
                raise ProtocolError("tools must be a list")
            try:
                specs = [ToolSpec.from_openai(tool) for tool in tools] if tools else None
            except ValueError as exc:
                raise ProtocolError(f"tools: {exc}") from None
            return messages, options, specs

        self._request(channel, parse, lambda request: self._generate(channel, *request))

    def _likelihood(self, channel: Channel, message: dict[str, Any]) -> None:
        def parse() -> tuple[list[Message], str]:
            reply = message.get("reply")
            if not isinstance(reply, str):
                raise ProtocolError("reply must be a string")
            return protocol.messages_from_wire(message.get("messages")), reply

        self._request(channel, parse, lambda request: self._score(channel, *request))

    def _request(
        self, channel: Channel, parse: Callable[[], _Request], work: Callable[[_Request], None]
    ) -> None:
        """Parse a request (a bad one is refused), then do its ``work`` in the model's turn."""
        try:
            request = parse()
        except ProtocolError as exc:
            channel.send(_error(f"bad request: {exc}"))
            return
        with keepalive(channel, KEEPALIVE_SECONDS):
            try:
                with self._turn(channel):
                    work(request)
            except _Stopping:
                channel.send(_error("the model service was stopped during the request"))

    def _score(self, channel: Channel, messages: list[Message], reply: str) -> None:
        if not self.provider.loaded:
            channel.send({"type": "progress", "stage": "loading model"})
        try:
            value = self.provider.likelihood(messages, reply)
        except (_Stopping, ConnectionLost, TimeoutError):
            raise  # the client went away: nobody to tell
        except Exception as exc:
            self._report(channel, exc, "scoring")
            return
        finally:
            self._served()
        channel.send({"type": "done", "logprob": value})

    def _served(self) -> None:
        with self._state_lock:
            self.requests_served += 1
            self.last_request = time.monotonic()

    def _report(self, channel: Channel, exc: Exception, what: str) -> None:
        """Tell the client why its request failed, in one line (a bug is logged in full)."""
        if not isinstance(exc, ConchError):
            log.exception("%s failed", what)
            exc = ProviderError(f"the model service failed: {type(exc).__name__}: {exc}")
        channel.send(protocol.error_to_wire(exc))

    def _generate(
        self,
        channel: Channel,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: list[ToolSpec] | None,
    ) -> None:
        started = time.monotonic()
        if not self.provider.loaded:
            channel.send({"type": "progress", "stage": "loading model"})
        stream = self.provider.stream(messages, options, tools)
        timings: dict[str, Any] | None = None
        try:
            for event in stream:
                if self._stop.is_set():
                    raise _Stopping
                if isinstance(event, Finished):
                    timings = event.timings
                wire = protocol.event_to_wire(event)
                if wire is not None:
                    channel.send(wire)
        except (_Stopping, ConnectionLost, TimeoutError):
            raise
        except Exception as exc:
            self._report(channel, exc, "request")
            return
        finally:
            # Stops the engine at its next token when the client went away mid-answer.
            if isinstance(stream, Generator):
                stream.close()
            self._served()
        log.info(
            "request %d served in %.2f s%s",
            self.requests_served,
            time.monotonic() - started,
            _prompt_note(timings),
        )
        channel.send({"type": "done", "timings": timings})

    def _load(self, channel: Channel) -> None:
        with keepalive(channel, KEEPALIVE_SECONDS):
            try:
                with self._turn(channel):
                    if not self.provider.loaded:
                        channel.send({"type": "progress", "stage": "loading model"})
                        started = time.monotonic()
                        self.provider.load()
                        self.load_seconds = time.monotonic() - started
                        self.load_error = None
            except _Stopping:
                channel.send(_error("the model service was stopped while loading"))
                return
            except (ConnectionLost, TimeoutError):
                raise
            except Exception as exc:
                if not isinstance(exc, ConchError):
                    log.exception("loading the model failed")
                    exc = ProviderError(f"loading the model failed: {type(exc).__name__}: {exc}")
                self.load_error = " ".join(str(exc).split())
                channel.send(protocol.error_to_wire(exc))
                return
            finally:
                with self._state_lock:
                    self.last_request = time.monotonic()
        channel.send({"type": "done", "load_seconds": self.load_seconds})

    @contextlib.contextmanager
    def _turn(self, channel: Channel) -> Iterator[None]:
        """Wait for the model (one request at a time), telling the client why it waits."""
        with self._state_lock:
            self.waiting += 1
        try:
            told: str | None = None
            while not self._model_lock.acquire(timeout=POLL_SECONDS):
                if self._stop.is_set():
                    raise _Stopping
                stage = "loading model" if self.loading else "waiting for another request"
                if stage != told:
                    channel.send({"type": "progress", "stage": stage})
                    told = stage
        finally:
            with self._state_lock:
                self.waiting -= 1
        with self._state_lock:
            self.active += 1
        try:
            yield
        finally:
            with self._state_lock:
                self.active -= 1
                self.last_request = time.monotonic()
            self._model_lock.release()


def _prompt_note(timings: Any) -> str:
    """How much of the prompt the engine evaluated and how much it reused from its cache."""
    if not isinstance(timings, dict) or "prompt_n" not in timings:
        return ""
    return (
        f" (prompt: {timings.get('prompt_n')} tokens evaluated, {timings.get('cache_n', 0)} reused)"
    )


def _error(text: str) -> dict[str, Any]:
    return protocol.error_to_wire(ProviderError(text))


def _write_private(path: Path, text: str) -> None:
    from conch.storage.files import atomic_write_text

    atomic_write_text(path, text, mode=0o600)
