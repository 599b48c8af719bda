"""Running a program with its output captured: bounded in time and in memory.

Every captured run in conch goes through ``run_process``: a command run without a terminal,
a dry run in the sandbox, a help probe, a platform probe, the user's aliases, the manual's
index. The few modules that start a process otherwise (the user's terminal, a pseudo-terminal,
the model service) are listed, each with its reason, in tests/architecture/test_processes.py.
The program gets its own session
(so its own process group), stdin from ``/dev/null`` or the bytes given, and at most a cap of
each output stream is kept; the rest is read and dropped, so a chatty program is not stopped
by a full pipe, or, with ``stop_at_cap``, the program is stopped once a stream reaches its
cap. On timeout, on Ctrl+C (``KeyboardInterrupt``) and at the cap with ``stop_at_cap``, the
whole process group is killed: SIGTERM, then SIGKILL after ``kill_grace`` seconds (at once
when the grace is 0).

One thread waits on both pipes and on the process itself (a pidfd where Linux offers one), so
a program filling stderr while conch reads stdout cannot deadlock, and a background job that
keeps the pipes open after the program exits does not keep the caller waiting: what it has
already written is read for ``DRAIN_S`` more seconds, then the capture ends. Nothing sleeps.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

DEFAULT_CAP = 1024 * 1024
KILL_GRACE_S = 2.0
# After the program exits, how long output still buffered (or written by a job it left
# behind) is read before the capture ends.
DRAIN_S = 0.5
_READ_SIZE = 65536
_WRITE_SIZE = 65536
# Without a pidfd (not Linux), how often the loop looks whether the program has exited.
_POLL_S = 0.05
_OUT, _IN, _EXIT = "out", "in", "exit"

# Where a program's stderr goes: captured on its own, into stdout, or to /dev/null.
Stderr = Literal["capture", "stdout", "discard"]
_STDERR = {"capture": subprocess.PIPE, "stdout": subprocess.STDOUT, "discard": subprocess.DEVNULL}


@dataclass(frozen=True, slots=True)
class ProcessResult:
    """How a captured run ended.

    ``exit_code`` follows the shell: 128+N when a signal N ended the program (a timeout
    included). A ``*_truncated`` stream had more output than its cap; only the cap is kept.
    ``stopped_at_cap``: ``stop_at_cap`` stopped the program. ``duration`` is in seconds.
    """

    stdout: bytes
    stderr: bytes
    exit_code: int
    timed_out: bool = False
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    stopped_at_cap: bool = False
    duration: float = 0.0

    @property
    def truncated(self) -> bool:
        """Either stream had more output than its cap."""
        return self.stdout_truncated or self.stderr_truncated


def command_line(
    argv: Sequence[str] | None, shell_command: str | None, shell: str = "/bin/sh"
) -> list[str]:
    """The argv to spawn: ``argv`` itself, or ``shell -c shell_command`` (exactly one given)."""
    if (argv is None) == (shell_command is None):
        raise ValueError("give exactly one of argv and shell_command")
    if argv is not None:
        if not argv:
            raise ValueError("argv is empty")
        return list(argv)
    assert shell_command is not None
    return [shell, "-c", shell_command]


def run_process(
    argv: Sequence[str] | None = None,
    *,
    shell_command: str | None = None,
    shell: str = "/bin/sh",
    cwd: Path | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    max_stdout: int = DEFAULT_CAP,
    max_stderr: int | None = None,
    stdin: bytes | None = None,
    stderr: Stderr = "capture",
    stop_at_cap: bool = False,
    kill_grace: float = KILL_GRACE_S,
) -> ProcessResult:
    """Run ``argv`` (or ``shell -c shell_command``) in ``cwd`` with ``env`` and capture it.

    ``max_stdout`` and ``max_stderr`` (default: ``max_stdout``) cap the bytes kept of each
    stream; ``stderr="stdout"`` sends stderr into stdout, ``"discard"`` to /dev/null.
    ``stdin`` is fed to the program (None: ``/dev/null``). ``env`` None inherits conch's environment. Raises OSError when the
    program cannot be started (not found, not executable, no such ``cwd``) and ValueError
    for an empty or ambiguous command.
    """
    cmd = command_line(argv, shell_command, shell)
    caps = {_OUT: max_stdout, "err": max_stdout if max_stderr is None else max_stderr}
    start = time.monotonic()
    deadline = None if timeout is None else start + max(0.0, timeout)
    with _interrupt_held() as interrupted:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=None if env is None else dict(env),
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=_STDERR[stderr],
            start_new_session=True,
            close_fds=True,
        )
    with proc:
        if interrupted:  # Ctrl+C while it started: it must not outlive the caller
            kill_group(proc, 0.0)
            raise KeyboardInterrupt
        assert proc.stdout is not None
        out = _Stream(caps[_OUT])
        err = _Stream(caps["err"])
        streams = {proc.stdout.fileno(): out}
        if proc.stderr is not None:
            streams[proc.stderr.fileno()] = err
        capture = _Capture(proc, streams, stdin, stop_at_cap)
        try:
            timed_out, stopped = capture.run(deadline)
            if not (timed_out or stopped):
                timed_out = not _wait(proc, deadline)
            if timed_out or stopped:
                kill_group(proc, kill_grace)
                if timed_out:  # what it printed before it was stopped
                    capture.run(time.monotonic() + DRAIN_S)
        except BaseException:
            kill_group(proc, 0.0)  # Ctrl+C: nothing of it may outlive the caller
            raise
        finally:
            capture.close()
    return ProcessResult(
        stdout=bytes(out.data),
        stderr=bytes(err.data),
        exit_code=exit_code(proc.wait()),
        timed_out=timed_out,
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        stopped_at_cap=stopped,
        duration=time.monotonic() - start,
    )


@contextlib.contextmanager
def _interrupt_held() -> Iterator[list[int]]:
    """Hold a Ctrl+C that arrives while a program is being started, so it is raised once the
    caller has the process in hand and can stop it (raised inside ``subprocess.Popen``, it
    would leave the program running with no one to stop it). The list it gives is not empty
    when one came. Only on the main thread, and only where Ctrl+C raises KeyboardInterrupt
    (Python's own handler): elsewhere nothing changes."""
    held: list[int] = []
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield held
        return

    def hold(signum: int, _frame: object) -> None:
        held.append(signum)

    signal.signal(signal.SIGINT, hold)
    try:
        yield held
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def exit_code(returncode: int) -> int:
    """The shell's form of a return code: 128+N for a program killed by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def kill_group(proc: subprocess.Popen[bytes], grace: float = KILL_GRACE_S) -> None:
    """Stop ``proc`` (started with ``start_new_session``) and everything in its group.

    SIGTERM to the group, up to ``grace`` seconds for the program to exit, then SIGKILL to
    whatever is left of the group; the program is reaped.
    """
    if proc.returncode is None and grace > 0:
        signal_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(grace)
    # The group outlives its leader while any member is alive: SIGKILL reaches stragglers.
    signal_group(proc.pid, signal.SIGKILL)
    proc.wait()


def signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to a process group; False when the group has no members left."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait(proc: subprocess.Popen[bytes], deadline: float | None) -> bool:
    """Wait for a program that closed its output; False if ``deadline`` came first."""
    remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
    try:
        proc.wait(remaining)
    except subprocess.TimeoutExpired:
        return False
    return True


class _Stream:
    """One output stream: up to ``cap`` bytes kept, the rest counted as truncation."""

    def __init__(self, cap: int) -> None:
        self.cap = max(0, cap)
        self.data = bytearray()
        self.truncated = False

    @property
    def full(self) -> bool:
        return len(self.data) >= self.cap

    def feed(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if len(chunk) > room:
            self.truncated = True
        if room > 0:
            self.data += chunk[:room]


class _Capture:
    """The read loop of one run: output pipes, the stdin pipe, and the process's exit."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        streams: dict[int, _Stream],
        stdin: bytes | None,
        stop_at_cap: bool,
    ) -> None:
        self.proc = proc
        self.streams = streams
        self.stop_at_cap = stop_at_cap
        self.selector = selectors.DefaultSelector()
        self.exited_at: float | None = None
        self.pending = memoryview(stdin or b"")
        for fd in streams:
            os.set_blocking(fd, False)
            self.selector.register(fd, selectors.EVENT_READ, _OUT)
        if proc.stdin is not None:
            if self.pending:
                os.set_blocking(proc.stdin.fileno(), False)
                self.selector.register(proc.stdin, selectors.EVENT_WRITE, _IN)
            else:
                proc.stdin.close()
        self.pidfd = _pidfd(proc.pid)
        if self.pidfd is not None:
            self.selector.register(self.pidfd, selectors.EVENT_READ, _EXIT)

    def run(self, deadline: float | None) -> tuple[bool, bool]:
        """Read until the pipes close; (timed out, stopped at a cap)."""
        while self._reading():
            now = time.monotonic()
            if self.exited_at is None and self.pidfd is None and self.proc.poll() is not None:
                self.exited_at = now
            drained = None if self.exited_at is None else self.exited_at + DRAIN_S
            if drained is not None and now >= drained:
                return False, False
            if deadline is not None and now >= deadline:
                return self.exited_at is None, False
            ends = [end for end in (deadline, drained) if end is not None]
            wait = min(ends) - now if ends else None
            if self.pidfd is None and self.exited_at is None:
                wait = _POLL_S if wait is None else min(wait, _POLL_S)
            for key, _ in self.selector.select(wait):
                if key.data == _EXIT:
                    self.exited_at = time.monotonic()
                    self.selector.unregister(key.fileobj)
                elif key.data == _IN:
                    self._write()
                elif self._read(int(key.fd)):
                    return False, True
        return False, False

    def close(self) -> None:
        self._close_stdin()
        self.selector.close()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None

    def _reading(self) -> bool:
        return any(key.data == _OUT for key in self.selector.get_map().values())

    def _read(self, fd: int) -> bool:
        """Read what ``fd`` has; True when ``stop_at_cap`` and its stream is full."""
        try:
            chunk = os.read(fd, _READ_SIZE)
        except BlockingIOError:
            return False
        except OSError:
            chunk = b""
        if not chunk:
            self.selector.unregister(fd)
            return False
        stream = self.streams[fd]
        stream.feed(chunk)
        if self.stop_at_cap and stream.full:
            stream.truncated = True  # the rest was never read
            return True
        return False

    def _write(self) -> None:
        assert self.proc.stdin is not None
        try:
            written = os.write(self.proc.stdin.fileno(), self.pending[:_WRITE_SIZE])
        except BlockingIOError:
            return
        except OSError:  # the program closed its stdin: what it did not read is dropped
            written = len(self.pending)
        self.pending = self.pending[written:]
        if not self.pending:
            self._close_stdin()

    def _close_stdin(self) -> None:
        stdin = self.proc.stdin
        if stdin is None or stdin.closed:
            return
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(stdin)
        with contextlib.suppress(OSError):
            stdin.close()


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (Linux 5.3+), or None."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd
