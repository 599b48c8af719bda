"""The service as a process: starting it detached, ending it by its pid, and the files
(socket, pid file, log) a dead one leaves behind."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from conch.daemon.location import Location, ServiceUnavailable, listening

# How long a service asked to stop gets before it is sent SIGTERM, then SIGKILL.
RETIRE_SECONDS = 5.0
# Connecting to a local socket is instant unless the service is wedged.
CONNECT_TIMEOUT = 2.0
# Log kept beside the history; restarted (one backup) past this size.
LOG_MAX_BYTES = 1_000_000

POLL_SECONDS = 0.05

# Services this process started, polled now and then so none lingers as a zombie.
_SPAWNED: list[subprocess.Popen[bytes]] = []


def spawn(argv: Sequence[str], log_file: Path) -> subprocess.Popen[bytes]:
    """Start ``argv`` detached: its own session, its output appended to ``log_file``."""
    try:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        _rotate(log_file)
        with log_file.open("ab") as log:
            process = subprocess.Popen(
                list(argv),
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


def terminate(pid: int, seconds: float = RETIRE_SECONDS, asked: bool = False) -> None:
    """Make process ``pid`` (a service) exit: SIGTERM, then SIGKILL, each given ``seconds``;
    when it was already ``asked`` to stop, it first gets ``seconds`` to do so."""
    signals: list[signal.Signals | None] = [None] if asked else []
    for signum in [*signals, signal.SIGTERM, signal.SIGKILL]:
        if signum is not None and _is_service(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signum)
        if _wait_for_exit(pid, seconds):
            return


def end_by_pid(location: Location, seconds: float = RETIRE_SECONDS) -> int | None:
    """End a service that does not answer, by the pid in its pid file: SIGTERM, then SIGKILL.

    Returns the pid, or None when the pid file names no live process.
    """
    pid = read_pid(location)
    if pid is None or not pid_alive(pid):
        remove_stale(location)
        return None
    terminate(pid, seconds)
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


def reap() -> None:
    """Collect the exit status of services this process started that have ended."""
    for process in list(_SPAWNED):
        if process.poll() is not None:
            _SPAWNED.remove(process)


def last_log_line(log_file: Path) -> str:
    """The last line the service logged, shortened to fit an error message."""
    try:
        with log_file.open("rb") as log:
            log.seek(max(log_file.stat().st_size - 4096, 0))
            lines = [line.strip() for line in log.read().decode(errors="replace").splitlines()]
    except OSError:
        return "no log"
    last = next((line for line in reversed(lines) if line), "no output")
    return last if len(last) <= 200 else last[:197] + "..."


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
        reap()
        if not pid_alive(pid):
            return True
        time.sleep(POLL_SECONDS)
    return not pid_alive(pid)


def _rotate(log_file: Path) -> None:
    with contextlib.suppress(OSError):
        if log_file.stat().st_size > LOG_MAX_BYTES:
            os.replace(log_file, log_file.with_name(log_file.name + ".1"))


def spawned() -> list[subprocess.Popen[bytes]]:
    """The services this process started that have not been reaped yet."""
    reap()
    return list(_SPAWNED)


def rss_bytes() -> int | None:
    """This process's resident memory, from /proc/self/status (None where there is none)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
