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
from collections.abc import Callable
from pathlib import Path
from typing import Any

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
from conch.daemon.protocol import Channel, ConnectionLost, ProtocolError
from conch.daemon.runner import ModelRunner
from conch.errors import ProviderError

# The service logs as conch.daemon (its log file); requests are run by conch.daemon.runner.
log = logging.getLogger("conch.daemon")

# How often the accept loop wakes to check for idleness and a stop request.
POLL_SECONDS = 0.25
# A client that connects and then says nothing for this long is dropped.
QUIET_CLIENT_SECONDS = 60.0
# How long a stopping service lets in-flight requests wind down before it exits anyway.
STOP_GRACE_SECONDS = 5.0


class Service:
    """Accepts connections and answers hellos and status at once; its ``model`` (a
    ``ModelRunner``) runs the requests in turn."""

    def __init__(
        self,
        config: ServiceConfig,
        provider: ServedModel | None = None,
        peer_check: Callable[[socket.socket], bool] = peer_allowed,
    ) -> None:
        """``provider`` is the model it serves (default: the one ``config.backend`` names);
        ``peer_check`` says whether a connection may be served (default: only this user's
        processes)."""
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
        self._stop = threading.Event()
        served = provider or load_backend(config.backend)(config.local, config.cache_dir)
        self.model = ModelRunner(served, self._stop)
        self.peer_check = peer_check
        self.idle_timeout_s = config.idle_timeout_s
        self.started = time.monotonic()
        self.connections = 0
        self._state_lock = threading.Lock()
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
        self.model.touch()  # the idle clock starts once the service can be used

    def serve_forever(self) -> str:
        """Serve until stopped, idle for too long or unreachable (its socket deleted or taken
        over); returns why it ended ("stopped", "idle", "its socket is gone")."""
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
            if self._orphaned():
                reason = "its socket is gone"
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
            self.model.provider.close()

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
            connected = self.connections > 0
        if connected or self.model.busy():
            return False
        return self.model.idle_seconds() >= self.idle_timeout_s

    def _orphaned(self) -> bool:
        """Whether no client can reach this service any more (its socket file was deleted, or
        is another service's now) and nothing is running: it would hold the model until idle."""
        try:
            ours = os.stat(self.config.socket_path).st_ino == self._socket_inode
        except FileNotFoundError:
            ours = False
        except OSError:
            return False
        if ours:
            return False
        with self._state_lock:
            connected = self.connections > 0
        return not connected and not self.model.busy()

    def load_model(self) -> None:
        """Load the model before listening, failures included (requests then report them).

        The engine holds the interpreter lock while it loads, so a service that listened
        during the load could not even answer a hello; clients wait for the socket instead.
        """
        self.model.load_model()

    # -- connections ----------------------------------------------------------------------

    def _accept(self, listener: socket.socket) -> None:
        try:
            sock, _ = listener.accept()
        except OSError:
            return
        if not self.peer_check(sock):
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
                self.model.complete(channel, message)
            elif kind == "likelihood":
                self.model.likelihood(channel, message)
            elif kind == "tokenize":
                channel.send(self.model.tokenize(message))
            elif kind == "load":
                self.model.load(channel)
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
        return {
            "type": "status",
            "pid": os.getpid(),
            "version": version.__version__,
            "protocol": protocol.PROTOCOL,
            "socket": str(self.config.socket_path),
            "model": self.identity,
            **self.model.status(),
            "uptime_s": round(time.monotonic() - self.started, 3),
            "idle_timeout_s": self.idle_timeout_s,
            "rss_bytes": process.rss_bytes(),
        }


def _error(text: str) -> dict[str, Any]:
    return protocol.error_to_wire(ProviderError(text))


def _write_private(path: Path, text: str) -> None:
    from conch.storage.files import atomic_write_text

    atomic_write_text(path, text, mode=0o600)
