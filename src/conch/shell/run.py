"""The user's shell lines in ``conch shell``, run live on the terminal through a pseudo-terminal.

``run_in_pty`` starts ``$SHELL -c LINE`` on a new pseudo-terminal, in the state's directory and
environment. Output is copied to the user's terminal as it comes and the user's keys go to the
child, so vim, less, htop and ssh work. Meanwhile the user's terminal (when stdin is one) is in
raw mode and its window size follows along; it is restored however the run ends.

Ctrl+C is a key like any other: the child's terminal turns it into SIGINT for the child. A
program that ignores it is killed (SIGKILL to its process group) by a second Ctrl+C within
``FORCE_KILL_WINDOW_S``, unless the program has turned signal keys off (vim, an editor reading
raw keys), where Ctrl+C is the program's own business.

A run ends as a ``conch.execute.run.Ran`` (the one every runner returns): its ``output``
keeps the end of what the run printed (``CAPTURE_BYTES`` at most, behind ``CUT_MARKER``
when its start was lost) for the model, which is shown its tail
(``conch.shell.context.output_tail``); ``result.interrupted`` says Ctrl+C ended it. A typed
line has no verdict: it runs as the user typed it. ``run_line`` is a typed line's whole
path: alias expansion, ``ShellState``'s in-process builtins, else the pseudo-terminal.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
import tty
from pathlib import Path
from types import FrameType
from typing import BinaryIO

from filelock import FileLock

from conch.execute.run import ExecResult, Ran
from conch.host.process import exit_code, signal_group
from conch.shell.state import ShellState
from conch.storage.files import append_line

__all__ = [
    "CAPTURE_BYTES",
    "CUT_MARKER",
    "FORCE_KILL_WINDOW_S",
    "append_history",
    "history_file",
    "run_in_pty",
    "run_line",
]

#: How much of a run's output ``Ran.output`` keeps (the raw bytes, escape sequences and all).
CAPTURE_BYTES = 64 * 1024
#: The first line of ``Ran.output`` when the output's start was lost.
CUT_MARKER = "[... earlier output cut]"
#: A second Ctrl+C this soon after the first kills a program that ignored the first.
FORCE_KILL_WINDOW_S = 1.0
#: How long to wait for the history file's lock before giving up on one line.
HISTORY_LOCK_TIMEOUT_S = 2.0

_POLL_S = 0.05
_DRAIN_S = 0.5  # output still buffered when the shell exits
_READ_SIZE = 65536
_WRITE_SIZE = 4096
_INTERRUPT = b"\x03"
_DEFAULT_SIZE = struct.pack("HHHH", 24, 80, 0, 0)


def run_line(
    line: str,
    state: ShellState,
    *,
    stdin_fd: int | None = None,
    out: BinaryIO | None = None,
    keys: bytes = b"",
) -> Ran:
    """Run one typed shell line: expand an alias in its first word, run it in-process when it
    is a stateful builtin (``ShellState.builtin``), otherwise ``run_in_pty``."""
    command = state.expand_alias(line)
    outcome = state.builtin(command)
    if outcome is None:
        return run_in_pty(command, state, stdin_fd=stdin_fd, out=out, keys=keys)
    writer = out if out is not None else sys.stdout.buffer
    writer.write((outcome.output + outcome.error).encode("utf-8", "replace"))
    writer.flush()
    return Ran(command, ExecResult(outcome.exit_code, outcome.output, outcome.error))


def run_in_pty(
    line: str,
    state: ShellState,
    *,
    stdin_fd: int | None = None,
    out: BinaryIO | None = None,
    keys: bytes = b"",
) -> Ran:
    """Run ``line`` with ``state.shell -c`` in a pseudo-terminal and wait for it.

    ``stdin_fd`` is where the user's keys come from; by default stdin, and only when stdin is a
    terminal. The terminal is put in raw mode only when ``stdin_fd`` is a terminal. ``keys``
    are typed into the child's terminal at the start. ``out`` receives the child's output live
    (default ``sys.stdout.buffer``).
    """
    writer = out if out is not None else sys.stdout.buffer
    keyboard = stdin_fd if stdin_fd is not None else _terminal_stdin()
    is_tty = keyboard is not None and os.isatty(keyboard)
    start = time.monotonic()
    saved = termios.tcgetattr(keyboard) if is_tty and keyboard is not None else None
    master, slave = pty.openpty()
    try:
        if saved is not None:
            termios.tcsetattr(slave, termios.TCSANOW, saved)  # the user's own settings
        fcntl.ioctl(master, termios.TIOCSWINSZ, _window_size(keyboard, writer))
        proc = subprocess.Popen(
            [state.shell, "-c", line],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=state.cwd,
            env={**state.env, "PWD": state.cwd},
            start_new_session=True,
            preexec_fn=_take_terminal,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        os.close(master)
        error = f"cannot run {state.shell} in {state.cwd}: {exc}"
        writer.write(f"conch: {error}\n".encode("utf-8", "replace"))
        writer.flush()
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        seconds = time.monotonic() - start
        failed = ExecResult(code, f"conch: {error}", duration_s=seconds, error=error)
        return Ran(line, failed)
    except BaseException:
        os.close(master)
        raise
    finally:
        os.close(slave)
    pump = _Pump(master, proc, writer, keyboard, keys)
    previous = signal.getsignal(signal.SIGWINCH)
    watch_size = is_tty and threading.current_thread() is threading.main_thread()
    try:
        if watch_size:
            signal.signal(signal.SIGWINCH, pump.resize)
        if saved is not None and keyboard is not None:
            tty.setraw(keyboard, termios.TCSANOW)  # TCSANOW keeps keys typed ahead
        pump.run()
    finally:
        if saved is not None and keyboard is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(keyboard, termios.TCSADRAIN, saved)
        if watch_size:
            signal.signal(signal.SIGWINCH, signal.SIG_DFL if previous is None else previous)
        if proc.poll() is None:
            signal_group(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(master)
    code = exit_code(proc.returncode)
    ctrl_c = code == 128 + signal.SIGINT and (proc.returncode < 0 or pump.interrupts > 0)
    interrupted = pump.killed or ctrl_c
    output = bytes(pump.capture).decode("utf-8", "replace")
    if pump.trimmed:
        output = f"{CUT_MARKER}\n{output}"
    result = ExecResult(
        code,
        output,
        stdout_truncated=pump.trimmed,
        duration_s=time.monotonic() - start,
        interrupted=interrupted,
    )
    return Ran(line, result)


def history_file(state: ShellState) -> Path | None:
    """The user's shell history file: ``$HISTFILE``, else ``~/.bash_history`` for bash and
    ``~/.zsh_history`` for zsh; None for other shells."""
    home = state.home() or os.path.expanduser("~")
    histfile = state.env.get("HISTFILE")
    if histfile:
        if histfile == "~" or histfile.startswith("~/"):
            histfile = home + histfile[1:]
        return Path(histfile) if os.path.isabs(histfile) else Path(home, histfile)
    name = {"bash": ".bash_history", "zsh": ".zsh_history"}.get(os.path.basename(state.shell))
    return Path(home, name) if name else None


def append_history(line: str, path: Path, lock_dir: Path | None = None) -> None:
    """Append ``line`` to the history file ``path`` as one plain line.

    One write to a file opened for appending, under a lock (``<path name>.lock`` in
    ``lock_dir``, default the history file's directory) that keeps concurrent ``conch shell``
    sessions from interleaving. Blank lines are not recorded.
    """
    text = line.strip("\r\n")
    if not text.strip():
        return
    lock = FileLock(str((lock_dir or path.parent) / f"{path.name}.lock"))
    with lock.acquire(timeout=HISTORY_LOCK_TIMEOUT_S):
        append_line(path, (text + "\n").encode("utf-8"))


class _Pump:
    """Moves bytes between the user's terminal and the child's until the child exits."""

    def __init__(
        self,
        master: int,
        proc: subprocess.Popen[bytes],
        writer: BinaryIO,
        keyboard: int | None,
        keys: bytes,
    ) -> None:
        self.master, self.proc, self.writer, self.keyboard = master, proc, writer, keyboard
        self.pending, self.capture = bytearray(keys), bytearray()
        self.master_open = True
        self.trimmed = self.killed = False  # output lost its start; Ctrl+C escalated to SIGKILL
        self.interrupts = 0
        self.last_interrupt = -FORCE_KILL_WINDOW_S * 2

    def run(self) -> None:
        while True:
            try:
                if self.proc.poll() is not None:
                    break
                self._step()
            except KeyboardInterrupt:
                # SIGINT reached conch itself (stdin is not a raw terminal): pass it on.
                self._interrupt(by_signal=True)
        self._drain()

    def resize(self, signum: int, frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            size = _window_size(self.keyboard, self.writer)
            fcntl.ioctl(self.master, termios.TIOCSWINSZ, size)

    def _step(self) -> None:
        readable = [self.master] if self.master_open else []
        if self.keyboard is not None:
            readable.append(self.keyboard)
        writable = [self.master] if self.pending and self.master_open else []
        if not readable and not writable:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(_POLL_S)
            return
        ready, can_write, _ = select.select(readable, writable, [], _POLL_S)
        if self.master in ready:
            self._read_child()
        if self.keyboard is not None and self.keyboard in ready:
            self._read_keys(self.keyboard)
        if can_write and self.pending:
            try:
                written = os.write(self.master, self.pending[:_WRITE_SIZE])
            except OSError:
                written = len(self.pending)  # the child's terminal is gone
            del self.pending[:written]

    def _read_child(self) -> bool:
        try:
            data = os.read(self.master, _READ_SIZE)
        except OSError:  # EIO: every holder of the child's terminal closed it
            data = b""
        if not data:
            self.master_open = False
            return False
        self.writer.write(data)
        self.writer.flush()
        self.capture += data
        if len(self.capture) > CAPTURE_BYTES:
            del self.capture[:-CAPTURE_BYTES]
            self.trimmed = True
        return True

    def _read_keys(self, keyboard: int) -> None:
        data = os.read(keyboard, 1024)
        if not data:
            self.keyboard = None  # end of input: nothing more to forward
            return
        for _ in range(data.count(_INTERRUPT)):
            self._interrupt(by_signal=False)
        self.pending += data

    def _interrupt(self, *, by_signal: bool) -> None:
        now = time.monotonic()
        again = now - self.last_interrupt <= FORCE_KILL_WINDOW_S
        self.interrupts += 1
        self.last_interrupt = now
        if again and (by_signal or self._signal_keys_on()):
            self._kill()
        elif by_signal:
            signal_group(self._foreground(), signal.SIGINT)

    def _signal_keys_on(self) -> bool:
        try:
            return bool(termios.tcgetattr(self.master)[3] & termios.ISIG)
        except termios.error:
            return True

    def _foreground(self) -> int:
        try:
            return os.tcgetpgrp(self.master)
        except OSError:
            return self.proc.pid

    def _kill(self) -> None:
        self.killed = True
        for group in {self._foreground(), self.proc.pid}:
            signal_group(group, signal.SIGKILL)

    def _drain(self) -> None:
        # What the shell wrote just before exiting; a background program gets _DRAIN_S at most.
        deadline = time.monotonic() + _DRAIN_S
        while self.master_open and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], _POLL_S)
            if not ready or not self._read_child():
                return


def _terminal_stdin() -> int | None:
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        return None
    return fd if os.isatty(fd) else None


def _take_terminal() -> None:
    # In the child, after setsid: the pseudo-terminal becomes its controlling terminal.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _window_size(keyboard: int | None, writer: BinaryIO) -> bytes:
    fds = [keyboard] if keyboard is not None else []
    with contextlib.suppress(AttributeError, ValueError, OSError):
        fds.append(writer.fileno())
    for fd in fds:
        try:
            size = fcntl.ioctl(fd, termios.TIOCGWINSZ, _DEFAULT_SIZE)
        except OSError:
            continue
        rows, cols = struct.unpack("HHHH", size)[:2]
        if rows and cols:
            return size
    return _DEFAULT_SIZE
