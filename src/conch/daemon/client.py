"""The client side of the model service: find it, check it, start it on demand, stop it.

Each request opens a connection and checks the service's hello (conch version, model file and
engine settings); when the service is missing, stale or different, a fresh one is started under
a file lock, so that two clients starting at once spawn one service between them. A service
that accepts connections but does not answer a hello (stopped, wedged) is ended by the pid in
its pid file and replaced. ``conch.daemon.provider.DaemonProvider`` streams requests over the
connections made here.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

from conch import version
from conch.config.paths import Paths
from conch.daemon import process, protocol
from conch.daemon.location import (
    Location,
    ServiceUnavailable,
    check_socket_path,
    ensure_private_dir,
    peer_allowed,
)
from conch.daemon.process import end_by_pid, last_log_line, read_pid, remove_stale
from conch.daemon.protocol import Channel, ConnectionLost, ProtocolError
from conch.errors import ConchError, ProviderError
from conch.providers.local.model_files import Progress, model_path_for

if TYPE_CHECKING:
    from conch.config.settings import AISettings, DaemonSettings, LocalSettings

# The backend new services run (``module:function`` names a stand-in model).
DEFAULT_BACKEND = protocol.LOCAL_BACKEND

# Connecting to a local socket is instant unless the service is wedged.
CONNECT_TIMEOUT = process.CONNECT_TIMEOUT
# The service answers a hello from a fresh thread at once, even while a request runs.
HELLO_TIMEOUT = 10.0
# How long a service asked to stop gets before it is sent SIGTERM, then SIGKILL.
RETIRE_SECONDS = process.RETIRE_SECONDS

POLL_SECONDS = 0.05


class ServiceNotAnswering(ServiceUnavailable):
    """Something accepts connections on the socket but does not answer (stopped, wedged)."""


@dataclass(frozen=True, slots=True)
class Timeouts:
    """How long a client waits on a service's hello (``hello_s``) and gives a service it
    asked to stop before SIGTERM, then SIGKILL (``retire_s``)."""

    hello_s: float = HELLO_TIMEOUT
    retire_s: float = RETIRE_SECONDS


@dataclass(frozen=True, slots=True)
class ServiceSpec:
    """Everything a client needs to find, check and start the service for one model."""

    location: Location
    local: LocalSettings
    cache_dir: Path
    identity: dict[str, Any]
    idle_timeout_s: float
    start_timeout_s: float
    backend: str = protocol.LOCAL_BACKEND
    timeouts: Timeouts = field(default_factory=Timeouts)

    @classmethod
    def build(
        cls,
        ai: AISettings,
        daemon: DaemonSettings,
        paths: Paths,
        location: Location | None = None,
        backend: str | None = None,
        progress: Progress | None = None,
        timeouts: Timeouts | None = None,
    ) -> ServiceSpec:
        """The spec for ``ai.local``; resolves (and on first use assembles) the model file."""
        path = model_path_for(ai.local, paths.cache_dir, progress).expanduser().resolve()
        local = ai.local.model_copy(update={"model_path": str(path)})
        chosen = backend or DEFAULT_BACKEND
        return cls(
            location=location or Location.default(paths),
            local=local,
            cache_dir=paths.cache_dir,
            identity=protocol.model_identity(path, local, chosen),
            idle_timeout_s=daemon.idle_timeout_s,
            start_timeout_s=daemon.start_timeout_s,
            backend=chosen,
            timeouts=timeouts or Timeouts(),
        )

    def hello(self) -> dict[str, Any]:
        """The fields this client adds to its hello."""
        return {"model": self.identity, "idle_timeout_s": self.idle_timeout_s}

    def mismatch(self, hello: dict[str, Any]) -> str | None:
        """Why the service that said ``hello`` cannot serve this spec, or None when it can."""
        if (
            hello.get("protocol") != protocol.PROTOCOL
            or hello.get("version") != version.__version__
        ):
            return f"it runs conch {hello.get('version') or 'of an unknown version'}"
        if hello.get("model") != self.identity:
            return "it holds another model or other engine settings"
        return None


class Connection:
    """An open connection to a live service, past the handshake."""

    def __init__(self, channel: Channel, hello: dict[str, Any]) -> None:
        self.channel = channel
        self.hello = hello

    @property
    def pid(self) -> int | None:
        """The service's process id, as its hello gave it."""
        pid = self.hello.get("pid")
        return pid if isinstance(pid, int) and pid > 0 else None

    def replies(self, message: dict[str, Any], timeout: float) -> Iterator[dict[str, Any]]:
        """Send ``message``; yield every reply up to and including ``done`` or ``error``.

        TimeoutError when the service is silent for ``timeout`` seconds, ConnectionLost when it
        goes away, ProtocolError on a malformed line.
        """
        self.channel.send(message)
        while True:
            reply = self.channel.receive(timeout)
            if reply is None:
                raise ConnectionLost("the model service closed the connection")
            yield reply
            if reply["type"] in ("done", "error", "status", "stopping"):
                return

    def call(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send ``message`` and return its final reply (progress and keepalives skipped)."""
        final: dict[str, Any] = {}
        for reply in self.replies(message, timeout):
            final = reply
        return final

    def close(self) -> None:
        """Hang up."""
        self.channel.close()


def connect(
    location: Location, hello: dict[str, Any] | None = None, timeout: float | None = None
) -> Connection | None:
    """A connection past the handshake, or None when no service is there (or it just left).

    ServiceUnavailable when something is there but unusable: another user's socket, or
    (ServiceNotAnswering) a service that accepts the connection and then does not answer
    within ``timeout`` seconds (default ``HELLO_TIMEOUT``).
    """
    timeout = HELLO_TIMEOUT if timeout is None else timeout
    path = location.socket
    if not os.path.lexists(path):
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(str(path))
    except (FileNotFoundError, ConnectionRefusedError):
        sock.close()
        return None
    except OSError as exc:
        sock.close()
        raise ServiceUnavailable(
            f"cannot connect to the model service at {path}: {exc.strerror or exc}"
        ) from None
    if not peer_allowed(sock):
        sock.close()
        raise ServiceUnavailable(f"{path} belongs to another user's process; not using it")
    channel = Channel(sock)
    try:
        channel.send(
            {
                "type": "hello",
                "protocol": protocol.PROTOCOL,
                "version": version.__version__,
                **(hello or {}),
            }
        )
        reply = channel.receive(timeout)
    except TimeoutError:
        channel.close()
        pid = read_pid(location)
        raise ServiceNotAnswering(
            f"the model service at {path}{f' (pid {pid})' if pid else ''} does not answer; "
            "`conch daemon stop` ends it"
        ) from None
    except (ConnectionLost, ProtocolError):
        channel.close()
        return None
    if reply is None:
        channel.close()
        return None
    return Connection(channel, reply if reply["type"] == "hello" else {})


def ensure_service(spec: ServiceSpec, progress: Progress | None = None) -> Connection:
    """A connection to a service that matches ``spec``, starting or replacing one as needed."""
    process.reap()
    patience = spec.timeouts
    with contextlib.suppress(ServiceNotAnswering):  # replaced below, under the lock
        current = connect(spec.location, spec.hello(), patience.hello_s)
        if current is not None:
            if spec.mismatch(current.hello) is None:
                return current
            current.close()
    ensure_private_dir(spec.location.directory)
    check_socket_path(spec.location.socket)
    lock = FileLock(str(spec.location.lock_file))
    try:
        lock.acquire(timeout=spec.start_timeout_s + 2 * patience.retire_s)
    except Timeout:
        raise ServiceUnavailable(
            f"another conch has been starting the model service for too long ({lock.lock_file})"
        ) from None
    try:
        # Someone may have started (or replaced) it while this client waited for the lock.
        try:
            current = connect(spec.location, spec.hello(), patience.hello_s)
        except ServiceNotAnswering:
            if progress is not None:
                progress("replacing a model service that does not answer", None)
            end_by_pid(spec.location, patience.retire_s)
            current = None
        if current is not None:
            reason = spec.mismatch(current.hello)
            if reason is None:
                return current
            if progress is not None:
                progress(f"replacing the model service ({reason})", None)
            retire(current, spec.location, patience.retire_s)
        remove_stale(spec.location)
        if progress is not None:
            progress("starting the model service and loading the model", None)
        return wait_until_ready(spec, spawn(spec))
    finally:
        lock.release()


def service_argv(spec: ServiceSpec) -> list[str]:
    """The command line of the service for ``spec``: this interpreter, this conch."""
    if not sys.executable:
        raise ServiceUnavailable("no Python interpreter is known to start the model service with")
    local = spec.local
    argv = [
        sys.executable,
        "-P",
        "-m",
        "conch.daemon",
        "serve",
        "--socket",
        str(spec.location.socket),
        "--pid-file",
        str(spec.location.pid_file),
        "--model-path",
        str(local.model_path),
        "--engine",
        local.engine,
        "--n-ctx",
        str(local.n_ctx),
        "--cache-dir",
        str(spec.cache_dir),
        "--idle-timeout",
        repr(spec.idle_timeout_s),
        "--backend",
        spec.backend,
    ]
    if local.n_threads is not None:
        argv += ["--n-threads", str(local.n_threads)]
    return argv


def spawn(spec: ServiceSpec) -> subprocess.Popen[bytes]:
    """Start ``python -m conch.daemon serve`` detached: own session, output to the log file."""
    return process.spawn(service_argv(spec), spec.location.log_file)


def wait_until_ready(spec: ServiceSpec, service: subprocess.Popen[bytes]) -> Connection:
    """The new service's first connection, once it listens; ServiceUnavailable if it never does."""
    deadline = time.monotonic() + spec.start_timeout_s
    while time.monotonic() < deadline:
        if service.poll() is not None:
            raise ServiceUnavailable(
                f"the model service exited at start ({last_log_line(spec.location.log_file)}); "
                f"see {spec.location.log_file}"
            )
        connection = connect(spec.location, spec.hello(), spec.timeouts.hello_s)
        if connection is not None:
            reason = spec.mismatch(connection.hello)
            if reason is None:
                return connection
            retire(connection, spec.location, spec.timeouts.retire_s)
            raise ServiceUnavailable(
                f"the model service started with {sys.executable} does not match: {reason}"
            )
        time.sleep(POLL_SECONDS)
    with contextlib.suppress(OSError):
        service.kill()
    raise ServiceUnavailable(
        f"the model service did not start within {spec.start_timeout_s:g} s "
        f"(daemon.start_timeout_s); see {spec.location.log_file}"
    )


def retire(connection: Connection, location: Location, seconds: float = RETIRE_SECONDS) -> None:
    """Make a running service exit: ask it to stop, then SIGTERM, then SIGKILL its pid, each
    given ``seconds``."""
    pid = connection.pid or read_pid(location)
    try:
        connection.call({"type": "stop"}, seconds)
    except (ConnectionLost, ProtocolError, TimeoutError, OSError):
        pass
    finally:
        connection.close()
    if pid is not None:
        process.terminate(pid, seconds, asked=True)
    remove_stale(location)


# -- what `conch daemon` uses -----------------------------------------------------------------


def service_status(location: Location, timeout: float | None = None) -> dict[str, Any] | None:
    """The running service's status, or None when there is none."""
    timeout = HELLO_TIMEOUT if timeout is None else timeout
    connection = connect(location, timeout=timeout)
    if connection is None:
        return None
    try:
        reply = connection.call({"type": "status"}, timeout)
    except (ConnectionLost, ProtocolError):
        return None
    except TimeoutError:
        raise ServiceUnavailable(
            f"the model service (pid {connection.pid}) does not answer; `conch daemon stop` ends it"
        ) from None
    finally:
        connection.close()
    if reply.get("type") != "status":
        raise ProviderError(f"the model service at {location.socket} answered an unknown status")
    return {k: v for k, v in reply.items() if k != "type"}


def stop_service(location: Location) -> int | None:
    """Stop the running service; its pid, or None when none was running."""
    try:
        connection = connect(location, timeout=RETIRE_SECONDS)
    except ServiceNotAnswering:
        return end_by_pid(location, RETIRE_SECONDS)
    if connection is None:
        remove_stale(location)
        return None
    pid = connection.pid
    retire(connection, location)
    return pid


def start_service(spec: ServiceSpec, progress: Progress | None = None) -> dict[str, Any]:
    """Start the service (or reuse a matching one), load the model, and return its status.

    A service that cannot load the model is stopped again, and the reason raised.
    """
    connection = ensure_service(spec, progress)
    failure: ConchError | None = None
    status: dict[str, Any] = {}
    try:
        for reply in connection.replies(
            {"type": "load"}, max(spec.timeouts.hello_s, spec.start_timeout_s)
        ):
            if reply["type"] == "progress" and progress is not None:
                progress(str(reply.get("stage") or "waiting"), None)
            elif reply["type"] == "error":
                failure = protocol.error_from_wire(reply)
        if failure is None:
            status = connection.call({"type": "status"}, spec.timeouts.hello_s)
        else:
            retire(connection, spec.location, spec.timeouts.retire_s)
    except (ConnectionLost, ProtocolError) as exc:
        raise ProviderError(f"the model service stopped while loading the model: {exc}") from None
    except TimeoutError:
        raise ProviderError("the model service stopped answering while loading the model") from None
    finally:
        connection.close()
    if failure is not None:
        raise failure
    return {k: v for k, v in status.items() if k != "type"}
