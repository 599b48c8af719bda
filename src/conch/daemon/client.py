"""The client side of the model service: find it, start it on demand, and stream from it.

``DaemonProvider`` is what ``ai.provider: local`` becomes while ``daemon.enabled`` is on. Each
request opens a connection, checks the service's hello (conch version, model file and engine
settings) and, when the service is missing, stale or different, starts a fresh one under a
file lock so that two clients starting at once spawn one service between them.

Failures never hang and never lose a request silently:

* the service cannot start at all (no runtime directory, socket path too long, it exits at
  start or does not come up in ``daemon.start_timeout_s``): the request runs in this process
  instead, with a note saying so;
* the service dies before it sent any of the answer: the request is retried once on a freshly
  started service;
* it dies in the middle of the answer: ProviderError, one line;
* it sends nothing for ``ai.timeout`` seconds (it sends keepalives while it works): ProviderError;
* it accepts connections but does not answer a hello (stopped, wedged): it is ended by the pid
  in its pid file and replaced.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from filelock import FileLock, Timeout

import conch
from conch.config.paths import Paths
from conch.daemon import protocol
from conch.daemon.location import (
    Location,
    ServiceUnavailable,
    check_socket_path,
    ensure_private_dir,
    listening,
    peer_allowed,
)
from conch.daemon.protocol import Channel, ConnectionLost, ProtocolError
from conch.errors import ConchError, ProviderError
from conch.messages import Chunk, GenerationOptions, Message
from conch.providers.base import likelihood
from conch.providers.local.model_files import Progress, model_path_for

if TYPE_CHECKING:
    from conch.config.settings import AISettings, DaemonSettings, LocalSettings
    from conch.providers.base import Provider

# The backend new services run. Tests point it at a fake model; nothing else changes it.
DEFAULT_BACKEND = protocol.LOCAL_BACKEND

# Connecting to a local socket is instant unless the service is wedged.
CONNECT_TIMEOUT = 2.0
# The service answers a hello from a fresh thread at once, even while a request runs.
HELLO_TIMEOUT = 10.0
# How long a service asked to stop gets before it is sent SIGTERM, then SIGKILL.
RETIRE_SECONDS = 5.0
# Log kept beside the history; restarted (one backup) past this size.
LOG_MAX_BYTES = 1_000_000

_POLL_SECONDS = 0.05

# Services this process started, polled now and then so none lingers as a zombie.
_SPAWNED: list[subprocess.Popen[bytes]] = []


class ServiceNotAnswering(ServiceUnavailable):
    """Something accepts connections on the socket but does not answer (stopped, wedged)."""


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

    @classmethod
    def build(
        cls,
        ai: AISettings,
        daemon: DaemonSettings,
        paths: Paths,
        location: Location | None = None,
        backend: str | None = None,
        progress: Progress | None = None,
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
        )

    def hello(self) -> dict[str, Any]:
        """The fields this client adds to its hello."""
        return {"model": self.identity, "idle_timeout_s": self.idle_timeout_s}

    def mismatch(self, hello: dict[str, Any]) -> str | None:
        """Why the service that said ``hello`` cannot serve this spec, or None when it can."""
        if hello.get("protocol") != protocol.PROTOCOL or hello.get("version") != conch.__version__:
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
                "version": conch.__version__,
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
    _reap()
    with contextlib.suppress(ServiceNotAnswering):  # replaced below, under the lock
        current = connect(spec.location, spec.hello())
        if current is not None:
            if spec.mismatch(current.hello) is None:
                return current
            current.close()
    ensure_private_dir(spec.location.directory)
    check_socket_path(spec.location.socket)
    lock = FileLock(str(spec.location.lock_file))
    try:
        lock.acquire(timeout=spec.start_timeout_s + 2 * RETIRE_SECONDS)
    except Timeout:
        raise ServiceUnavailable(
            f"another conch has been starting the model service for too long ({lock.lock_file})"
        ) from None
    try:
        # Someone may have started (or replaced) it while this client waited for the lock.
        try:
            current = connect(spec.location, spec.hello())
        except ServiceNotAnswering:
            if progress is not None:
                progress("replacing a model service that does not answer", None)
            end_by_pid(spec.location)
            current = None
        if current is not None:
            reason = spec.mismatch(current.hello)
            if reason is None:
                return current
            if progress is not None:
                progress(f"replacing the model service ({reason})", None)
            retire(current, spec.location)
        remove_stale(spec.location)
        if progress is not None:
            progress("starting the model service and loading the model", None)
        process = spawn(spec)
        return wait_until_ready(spec, process)
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
    argv = service_argv(spec)
    log_file = spec.location.log_file
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        _rotate(log_file)
        with log_file.open("ab") as log:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd="/",
                start_new_session=True,
                close_fds=True,
            )
    except OSError as exc:
        raise ServiceUnavailable(f"cannot start the model service: {exc.strerror or exc}") from None
    _SPAWNED.append(process)
    return process


def wait_until_ready(spec: ServiceSpec, process: subprocess.Popen[bytes]) -> Connection:
    """The new service's first connection, once it listens; ServiceUnavailable if it never does."""
    deadline = time.monotonic() + spec.start_timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServiceUnavailable(
                f"the model service exited at start ({_last_log_line(spec.location.log_file)}); "
                f"see {spec.location.log_file}"
            )
        connection = connect(spec.location, spec.hello())
        if connection is not None:
            reason = spec.mismatch(connection.hello)
            if reason is None:
                return connection
            retire(connection, spec.location)
            raise ServiceUnavailable(
                f"the model service started with {sys.executable} does not match: {reason}"
            )
        time.sleep(_POLL_SECONDS)
    with contextlib.suppress(OSError):
        process.kill()
    raise ServiceUnavailable(
        f"the model service did not start within {spec.start_timeout_s:g} s "
        f"(daemon.start_timeout_s); see {spec.location.log_file}"
    )


def retire(connection: Connection, location: Location) -> None:
    """Make a running service exit: ask it to stop, then SIGTERM, then SIGKILL its pid."""
    pid = connection.pid or read_pid(location)
    try:
        connection.call({"type": "stop"}, RETIRE_SECONDS)
    except (ConnectionLost, ProtocolError, TimeoutError, OSError):
        pass
    finally:
        connection.close()
    if pid is not None:
        for signum in (None, signal.SIGTERM, signal.SIGKILL):
            if signum is not None and _is_service(pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signum)
            if _wait_for_exit(pid, RETIRE_SECONDS):
                break
    remove_stale(location)


def end_by_pid(location: Location) -> int | None:
    """End a service that does not answer, by the pid in its pid file: SIGTERM, then SIGKILL.

    Returns the pid, or None when the pid file names no live process.
    """
    pid = read_pid(location)
    if pid is None or not pid_alive(pid):
        remove_stale(location)
        return None
    for signum in (signal.SIGTERM, signal.SIGKILL):
        if _is_service(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signum)
        if _wait_for_exit(pid, RETIRE_SECONDS):
            break
    remove_stale(location)
    return pid


def remove_stale(location: Location) -> None:
    """Remove a socket nobody listens on and a pid file whose process is gone."""
    if os.path.lexists(location.socket) and not listening(location.socket, CONNECT_TIMEOUT):
        with contextlib.suppress(FileNotFoundError):
            location.socket.unlink()
    pid = read_pid(location)
    if location.pid_file.exists() and (pid is None or not pid_alive(pid)):
        with contextlib.suppress(FileNotFoundError):
            location.pid_file.unlink()


def read_pid(location: Location) -> int | None:
    """The pid the service wrote next to its socket, if any."""
    try:
        pid = int(location.pid_file.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None
    return pid if pid > 0 else None


def pid_alive(pid: int) -> bool:
    """True while process ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True
    return state.rpartition(")")[2].split()[:1] != ["Z"]


def _is_service(pid: int) -> bool:
    """True unless ``pid`` is known to be some other program (a recycled pid)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return pid_alive(pid)
    return b"conch.daemon" in command


def _wait_for_exit(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        _reap()
        if not pid_alive(pid):
            return True
        time.sleep(_POLL_SECONDS)
    return not pid_alive(pid)


def _reap() -> None:
    for process in list(_SPAWNED):
        if process.poll() is not None:
            _SPAWNED.remove(process)


def _rotate(log_file: Path) -> None:
    with contextlib.suppress(OSError):
        if log_file.stat().st_size > LOG_MAX_BYTES:
            os.replace(log_file, log_file.with_name(log_file.name + ".1"))


def _last_log_line(log_file: Path) -> str:
    try:
        with log_file.open("rb") as log:
            log.seek(max(log_file.stat().st_size - 4096, 0))
            lines = [line.strip() for line in log.read().decode(errors="replace").splitlines()]
    except OSError:
        return "no log"
    last = next((line for line in reversed(lines) if line), "no output")
    return last if len(last) <= 200 else last[:197] + "..."


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
        return end_by_pid(location)
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
        for reply in connection.replies({"type": "load"}, max(HELLO_TIMEOUT, spec.start_timeout_s)):
            if reply["type"] == "progress" and progress is not None:
                progress(str(reply.get("stage") or "waiting"), None)
            elif reply["type"] == "error":
                failure = protocol.error_from_wire(reply)
        if failure is None:
            status = connection.call({"type": "status"}, HELLO_TIMEOUT)
        else:
            retire(connection, spec.location)
    except (ConnectionLost, ProtocolError) as exc:
        raise ProviderError(f"the model service stopped while loading the model: {exc}") from None
    except TimeoutError:
        raise ProviderError("the model service stopped answering while loading the model") from None
    finally:
        connection.close()
    if failure is not None:
        raise failure
    return {k: v for k, v in status.items() if k != "type"}


# -- the provider ---------------------------------------------------------------------------


class DaemonProvider:
    """The ``local`` provider, answered by the warm model service instead of this process."""

    name = "local"

    def __init__(
        self,
        ai: AISettings,
        daemon: DaemonSettings,
        paths: Paths,
        location: Location | None = None,
        backend: str | None = None,
    ) -> None:
        self.ai = ai
        self.daemon = daemon
        self.paths = paths
        self.location = location
        self.backend = backend
        self.on_progress: Progress | None = None
        # Called with one line when something worth telling the user happens (a fallback).
        self.on_note: Callable[[str], None] | None = None
        self.last_timings: dict[str, Any] | None = None
        self.service_pid: int | None = None
        self._spec: ServiceSpec | None = None
        self._fallback: Provider | None = None

    @classmethod
    def from_settings(cls, ai: AISettings, daemon: DaemonSettings) -> DaemonProvider:
        """A provider for ``ai.local`` through the service; connects on the first request."""
        return cls(ai, daemon, Paths.default())

    @property
    def in_process(self) -> bool:
        """True once requests run in this process because the service could not start."""
        return self._fallback is not None

    def stream(
        self,
        messages: Sequence[Message],
        options: GenerationOptions,
        tools: Sequence[dict[str, Any]] | None = None,
    ) -> Generator[Chunk, None, None]:
        """Stream the answer from the service (see the module docstring for failures)."""
        if self._fallback is None:
            request = {
                "type": "complete",
                "messages": protocol.messages_to_wire(messages),
                "options": protocol.options_to_wire(options),
                "tools": list(tools) if tools else None,
            }
            for reply in self._served(request):
                if reply["type"] == "chunk":
                    yield protocol.chunk_from_wire(reply)
                else:  # done
                    timings = reply.get("timings")
                    self.last_timings = dict(timings) if isinstance(timings, dict) else None
            if self._fallback is None:
                return
        yield from self._fallback.stream(messages, options, tools)

    def likelihood(self, messages: Sequence[Message], reply: str) -> float | None:
        """How likely the model finds ``reply`` after ``messages``, asked of the service."""
        if self._fallback is None:
            request = {
                "type": "likelihood",
                "messages": protocol.messages_to_wire(messages),
                "reply": reply,
            }
            value = None
            for answer in self._served(request):
                value = answer.get("logprob")
            if self._fallback is None:
                return float(value) if isinstance(value, int | float) else None
        return likelihood(self._fallback, messages, reply)

    def _served(self, request: dict[str, Any]) -> Iterator[dict[str, Any]]:
        """The service's ``chunk`` and ``done`` replies to ``request``. A service that stops
        before its first chunk is replaced and asked once more; one that cannot start makes
        this provider fall back to the model in this process (nothing is yielded then)."""
        for attempt in (1, 2):
            try:
                connection = self._connect()
            except ServiceUnavailable as exc:
                self._fall_back(str(exc))
                return
            delivered = False
            try:
                for reply in self._exchange(connection, request):
                    delivered = delivered or reply["type"] == "chunk"
                    yield reply
                return
            except ConnectionLost:
                if delivered or attempt == 2:
                    raise ProviderError(_lost(connection.pid, delivered)) from None
                self._note(
                    f"the model service (pid {connection.pid}) stopped before answering; "
                    "retrying on a new one"
                )
            finally:
                connection.close()

    def _connect(self) -> Connection:
        if self._spec is None:
            self._spec = ServiceSpec.build(
                self.ai, self.daemon, self.paths, self.location, self.backend, self.on_progress
            )
        connection = ensure_service(self._spec, self.on_progress)
        self.service_pid = connection.pid
        return connection

    def _exchange(
        self, connection: Connection, request: dict[str, Any]
    ) -> Iterator[dict[str, Any]]:
        """The service's ``chunk`` and ``done`` replies to ``request``; progress is reported,
        an ``error`` reply raised."""
        timeout = self.ai.timeout
        told: str | None = None
        try:
            for reply in connection.replies(request, timeout):
                kind = reply["type"]
                if kind in ("chunk", "done"):
                    yield reply
                elif kind == "progress":
                    stage = str(reply.get("stage") or "")
                    if stage and stage != told and self.on_progress is not None:
                        self.on_progress(stage, None)
                    told = stage
                elif kind == "error":
                    raise protocol.error_from_wire(reply)
        except TimeoutError:
            raise ProviderError(
                f"the model service (pid {connection.pid}) sent nothing for {timeout:g} s "
                "(ai.timeout); `conch daemon status` shows what it is doing"
            ) from None
        except ProtocolError as exc:
            raise ProviderError(f"the model service sent a malformed reply ({exc})") from None

    def _fall_back(self, reason: str) -> None:
        from conch.providers.local.provider import LocalProvider

        self._note(f"{reason.rstrip('.')}; running the model in this process instead")
        fallback = LocalProvider(self.ai.local, self.paths.cache_dir)
        fallback.on_progress = self.on_progress
        self._fallback = fallback

    def _note(self, text: str) -> None:
        if self.on_note is not None:
            self.on_note(text)

    def close(self) -> None:
        """Free the in-process fallback, if one was needed; the service stays warm."""
        if self._fallback is not None:
            self._fallback.close()


def _lost(pid: int | None, delivered: bool) -> str:
    who = f"the model service (pid {pid})" if pid else "the model service"
    when = "in the middle of its answer" if delivered else "before answering, twice"
    return f"{who} stopped {when}; run the request again (its log: `conch help daemon`)"
