"""Running a checked command: live on the user's terminal, or captured with size caps.

Safe mode spawns the program directly from an argv (``expand_words`` does the globbing a shell
would have done); unsafe mode hands the text to the user's shell with ``-c``. Neither raises for
a command that cannot start: the result carries exit code 127/126 and an ``error`` line.
"""

from __future__ import annotations

import contextlib
import glob
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

from conch.messages import Word

_KILL_GRACE_S = 2.0
# After the command exits, a background job it left may still hold the pipes open; read what
# is already buffered, then stop rather than wait for the job to finish.
_DRAIN_GRACE_S = 0.5
_POLL_S = 0.05
_READ_SIZE = 65536


@dataclass(frozen=True, slots=True)
class ExecResult:
    """How a command ended. ``exit_code`` follows the shell: 127 not found, 128+N signal N."""

    exit_code: int
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timed_out: bool = False
    duration_s: float = 0.0
    error: str | None = None


def expand_words(words: Sequence[Word], cwd: Path) -> list[str]:
    """The argv a shell would build from ``words``: tilde, then glob expansion.

    The policy parser strips quotes, so a Word cannot say whether its ``~`` was quoted. We
    expand ``~`` and ``~/...`` always (quoting a leading tilde is rare, and a literal ``~``
    directory is almost never meant), and ``~user`` only in a Word with ``glob=True`` (known
    unquoted). Glob patterns match relative to ``cwd``, sorted; ``*`` skips dot files unless the
    pattern component starts with ``.``; no match keeps the pattern literally, as bash does.
    """
    argv: list[str] = []
    for word in words:
        text = word.text
        if text == "~" or text.startswith("~/") or (word.glob and text.startswith("~")):
            text = os.path.expanduser(text)
        if not word.glob:
            argv.append(text)
            continue
        matches = sorted(glob.glob(text, root_dir=cwd))
        argv.extend(matches or [text])
    return argv


def run_interactive(
    argv: list[str] | None = None,
    *,
    shell_command: str | None = None,
    shell: str = "/bin/sh",
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> ExecResult:
    """Run a command on the user's terminal: stdin, stdout and stderr inherited.

    The child stays in conch's process group, so the terminal delivers Ctrl+C to it like to
    any foreground job; conch ignores Ctrl+C while it waits and reports what the child did
    (130 if it died of SIGINT). On timeout the child gets SIGTERM, then SIGKILL after a grace
    period. Processes the child started are not signalled: they share conch's own group.
    """
    cmd = _command(argv, shell_command, shell)
    start = time.monotonic()
    with _ignoring_terminal_signals():
        try:
            proc = subprocess.Popen(cmd, cwd=cwd, env=_env(env))
        except OSError as exc:
            return _spawn_failure(exc, cmd, cwd, start)
        with proc:
            timed_out = False
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                proc.terminate()
                try:
                    proc.wait(_KILL_GRACE_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    return ExecResult(
        exit_code=_exit_code(proc.returncode),
        timed_out=timed_out,
        duration_s=time.monotonic() - start,
        error=_timeout_error(timeout) if timed_out else None,
    )


def run_captured(
    argv: list[str] | None = None,
    *,
    shell_command: str | None = None,
    shell: str = "/bin/sh",
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    max_stdout: int = 10 * 1024 * 1024,
    max_stderr: int = 1024 * 1024,
) -> ExecResult:
    """Run a command with stdin from /dev/null and its output captured, up to the caps.

    Output beyond a cap is read and thrown away (so the command is not stopped by a full pipe)
    and the text ends with a truncation note. The command runs in its own session, so a
    timeout kills it together with everything it started.
    """
    cmd = _command(argv, shell_command, shell)
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=_env(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return _spawn_failure(exc, cmd, cwd, start)
    with proc:
        assert proc.stdout is not None and proc.stderr is not None
        out, err = _Sink(max_stdout), _Sink(max_stderr)
        sinks = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
        timed_out = _pump(proc, sinks, deadline)
        if not timed_out and proc.poll() is None:
            # The command closed its output but is still running.
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                proc.wait(remaining)
            except subprocess.TimeoutExpired:
                timed_out = True
        if timed_out:
            _stop_group(proc)
            _pump(proc, sinks, time.monotonic() + _DRAIN_GRACE_S)
    return ExecResult(
        exit_code=_exit_code(proc.returncode),
        stdout=out.text(),
        stderr=err.text(),
        stdout_truncated=out.truncated,
        stderr_truncated=err.truncated,
        timed_out=timed_out,
        duration_s=time.monotonic() - start,
        error=_timeout_error(timeout) if timed_out else None,
    )


def audit_line(command: str, cwd: Path, result: ExecResult, *, when: datetime | None = None) -> str:
    """One audit-log line: ``2025-01-15T10:30:45Z | /dir | cmd | exit:0 | 0.023s``.

    ``when`` defaults to now (a naive value is taken as UTC). Newlines in the command are
    written as ``\\n`` so that one run stays one line.
    """
    stamp = datetime.now(UTC) if when is None else when
    stamp = stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    flat = command.replace("\r", "\\r").replace("\n", "\\n")
    return (
        f"{stamp.strftime('%Y-%m-%dT%H:%M:%SZ')} | {cwd} | {flat} | "
        f"exit:{result.exit_code} | {result.duration_s:.3f}s"
    )


class _Sink:
    """Collects one output stream up to ``cap`` bytes and drops the rest."""

    def __init__(self, cap: int) -> None:
        self.cap = max(0, cap)
        self.data = bytearray()
        self.truncated = False

    def feed(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if len(chunk) > room:
            self.truncated = True
        if room > 0:
            self.data += chunk[:room]

    def text(self) -> str:
        text = self.data.decode("utf-8", "replace")
        if self.truncated:
            sep = "" if not text or text.endswith("\n") else "\n"
            text += f"{sep}(output truncated after {self.cap} bytes)"
        return text


def _pump(proc: subprocess.Popen[bytes], sinks: dict[int, _Sink], deadline: float | None) -> bool:
    """Read both pipes until they close; True if ``deadline`` came first.

    One selector loop reads whichever pipe has data, so a child filling stderr while we wait
    on stdout cannot deadlock. It also stops shortly after the child exits, in case a
    background job keeps the pipes open.
    """
    exited_at: float | None = None
    with selectors.DefaultSelector() as selector:
        for fd in sinks:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                return True
            if exited_at is None and proc.poll() is not None:
                exited_at = now
            if exited_at is not None and now >= exited_at + _DRAIN_GRACE_S:
                return False
            wait = _POLL_S if deadline is None else min(_POLL_S, deadline - now)
            for key, _ in selector.select(wait):
                fd = int(key.fd)
                try:
                    chunk = os.read(fd, _READ_SIZE)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if chunk:
                    sinks[fd].feed(chunk)
                else:
                    selector.unregister(fd)
    return False


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the command's process group, then SIGKILL whatever is left after the grace."""
    pgid = proc.pid  # start_new_session made the child its group's leader
    _signal_group(pgid, signal.SIGTERM)
    end = time.monotonic() + _KILL_GRACE_S
    while time.monotonic() < end:
        # Reap the leader first: as a zombie it would still count as a member of the group.
        proc.poll()
        if proc.returncode is not None and not _group_alive(pgid):
            break
        time.sleep(_POLL_S)
    _signal_group(pgid, signal.SIGKILL)
    proc.wait()


def _group_alive(pgid: int) -> bool:
    """Whether the group has a member that is not a zombie.

    Where PID 1 does not reap orphans (containers without an init), killed grandchildren stay
    zombies and ``killpg(pgid, 0)`` keeps succeeding; /proc tells them apart on Linux.
    """
    try:
        entries = os.listdir("/proc")
    except OSError:
        return _signal_group(pgid, 0)
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue  # exited while we looked
        # Fields after the parenthesised command name: state, ppid, pgrp, ...
        fields = stat.rpartition(")")[2].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def _signal_group(pgid: int, signum: int) -> bool:
    """Signal a process group; False if it no longer has members."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def _ignoring_terminal_signals() -> Iterator[None]:
    """Let the foreground child alone decide what Ctrl+C and Ctrl+\\ mean while conch waits.

    A no-op Python handler, not SIG_IGN: exec resets caught signals to their default in the
    child, whereas an ignored signal would stay ignored there. A signal that was already
    ignored (conch started in the background) is left alone, so the child inherits that too.
    Signal handlers can only be set from the main thread; elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # None means a handler set outside Python, which could not be restored afterwards.
    saved = [
        (signum, previous)
        for signum in (signal.SIGINT, signal.SIGQUIT)
        if (previous := signal.getsignal(signum)) is not None and previous != signal.SIG_IGN
    ]
    for signum, _ in saved:
        signal.signal(signum, _swallow)
    try:
        yield
    finally:
        for signum, previous in saved:
            signal.signal(signum, previous)


def _swallow(signum: int, frame: FrameType | None) -> None:
    """Receive a terminal signal meant for the foreground child and do nothing."""


def _command(argv: list[str] | None, shell_command: str | None, shell: str) -> list[str]:
    if (argv is None) == (shell_command is None):
        raise ValueError("give exactly one of argv and shell_command")
    if argv is not None:
        if not argv:
            raise ValueError("argv is empty")
        return list(argv)
    assert shell_command is not None
    return [shell, "-c", shell_command]


def _env(env: Mapping[str, str] | None) -> dict[str, str] | None:
    return None if env is None else dict(env)


def _spawn_failure(exc: OSError, cmd: list[str], cwd: Path, start: float) -> ExecResult:
    duration = time.monotonic() - start
    reason = exc.strerror or str(exc)
    if exc.filename is not None and os.fspath(exc.filename) == os.fspath(cwd):
        code, error = 1, f"cannot change to directory {cwd}: {reason}"
    elif isinstance(exc, FileNotFoundError):
        code, error = 127, f"command not found: {cmd[0]}"
    elif isinstance(exc, PermissionError):
        code, error = 126, f"permission denied: {cmd[0]}"
    else:
        code, error = 126, f"cannot run {cmd[0]}: {reason}"
    return ExecResult(exit_code=code, duration_s=duration, error=error)


def _exit_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _timeout_error(timeout: float | None) -> str:
    return f"timed out after {timeout:g}s"
