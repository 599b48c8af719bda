"""The two ways a checked command runs: live on the user's terminal, or captured with caps.

``conch.execute.checked.run_checked`` picks one; surfaces call that, not these. Safe mode
spawns the program directly from an argv (``conch.execute.stages.expand_words`` does the
globbing a shell would have done); a command that needs a shell, and every command in unsafe
mode, goes to a shell as text with ``-c``. A captured run goes
through ``conch.host.process.run_process`` (its own process group, caps, group kill). Neither
raises for a command that cannot start: the result carries exit code 127/126 and an
``error`` line.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from conch.execute.stages import not_found, run_plan
from conch.host.process import KILL_GRACE_S, command_line, exit_code, run_process
from conch.messages import Plan

if TYPE_CHECKING:
    from conch.execute.contain import Shape
    from conch.policy import Verdict

# The caps of seed 004: what a captured run keeps of each stream.
MAX_STDOUT = 10 * 1024 * 1024
MAX_STDERR = 1024 * 1024


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
    # Ctrl+C ended it (a live run on the user's terminal; a captured run raises instead).
    interrupted: bool = False


@dataclass(frozen=True, slots=True)
class Ran:
    """A command that ran: the text that ran (after any edit) and how it ended.

    For a command ``conch.execute.checked.run_checked`` ran, also its ``verdict``, whether
    the user was ``asked``, whether its audit line was written (``audited``), the sandbox
    it ran in (``contained``; None: a person said yes, so it ran as they asked) and one line
    when the sandbox stopped it (``note``, ``conch.execute.contain.explain_failure``). A
    line typed into ``conch shell`` runs as typed (``conch.shell.run``): it has no verdict.
    """

    command: str
    result: ExecResult
    verdict: Verdict | None = None
    asked: bool = False
    audited: bool = False
    contained: Shape | None = None
    note: str | None = None

    @property
    def exit_code(self) -> int:
        """The command's exit code, as the shell gives it."""
        return self.result.exit_code

    @property
    def output(self) -> str:
        """What it printed and conch kept (stdout, then stderr; the user's terminal has the
        output of a live run, the pseudo-terminal's runner keeps a copy of its end)."""
        return self.result.stdout + self.result.stderr


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
    cmd = command_line(argv, shell_command, shell)
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
                    proc.wait(KILL_GRACE_S)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    interrupted = proc.returncode == -signal.SIGINT
    return _ended(exit_code(proc.returncode), timed_out, start, timeout, interrupted)


def run_captured(
    argv: list[str] | None = None,
    *,
    shell_command: str | None = None,
    shell: str = "/bin/sh",
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    max_stdout: int = MAX_STDOUT,
    max_stderr: int = MAX_STDERR,
) -> ExecResult:
    """Run a command with stdin from /dev/null and its output captured, up to the caps.

    Output beyond a cap is read and thrown away (so the command is not stopped by a full pipe)
    and the text ends with a truncation note. The command runs in its own session, so a
    timeout (or Ctrl+C, which is re-raised) kills it together with everything it started.
    """
    cmd = command_line(argv, shell_command, shell)
    start = time.monotonic()
    try:
        done = run_process(
            cmd,
            cwd=cwd,
            env=env,
            timeout=timeout,
            max_stdout=max_stdout,
            max_stderr=max_stderr,
            kill_grace=KILL_GRACE_S,
        )
    except OSError as exc:
        return _spawn_failure(exc, cmd, cwd, start)
    return ExecResult(
        exit_code=done.exit_code,
        stdout=_text(done.stdout, done.stdout_truncated, max_stdout),
        stderr=_text(done.stderr, done.stderr_truncated, max_stderr),
        stdout_truncated=done.stdout_truncated,
        stderr_truncated=done.stderr_truncated,
        timed_out=done.timed_out,
        duration_s=done.duration,
        error=_timeout_error(timeout) if done.timed_out else None,
    )


def run_plan_interactive(
    plan: Plan,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> ExecResult:
    """Run a plan (pipes, lists, redirections; no shell) on the user's terminal: its programs
    in conch's process group, so Ctrl+C reaches them as it reaches any foreground job."""
    start = time.monotonic()
    with _ignoring_terminal_signals():
        code, timed_out = run_plan(plan, cwd, env=env, timeout=timeout)
    return _ended(code, timed_out, start, timeout, code == 128 + signal.SIGINT)


def run_plan_captured(
    plan: Plan,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    max_stdout: int = MAX_STDOUT,
    max_stderr: int = MAX_STDERR,
) -> ExecResult:
    """Run a plan with stdin from /dev/null and its output captured, as ``run_captured``
    runs one program: conch's plan runner (``python -m conch.execute``) starts the programs
    in one process group of their own, which a timeout or Ctrl+C kills whole."""
    argv = plan_runner_argv(plan, cwd)
    return run_captured(
        argv, cwd=cwd, env=env, timeout=timeout, max_stdout=max_stdout, max_stderr=max_stderr
    )


def plan_runner_argv(plan: Plan, cwd: Path) -> list[str]:
    """The command line of conch's plan runner carrying out ``plan`` in ``cwd``. Isolated
    (``-I``): neither the working directory nor ``PYTHON*`` variables decide which code
    runs, so a ``conch/`` directory among the user's files cannot stand in for conch's."""
    return [sys.executable, "-I", "-m", "conch.execute", json.dumps(plan.to_json()), str(cwd)]


def _ended(
    code: int, timed_out: bool, start: float, timeout: float | None, interrupted: bool
) -> ExecResult:
    """How a live run ended (its output went to the terminal, not to conch)."""
    return ExecResult(
        exit_code=code,
        timed_out=timed_out,
        duration_s=time.monotonic() - start,
        error=_timeout_error(timeout) if timed_out else None,
        interrupted=interrupted and not timed_out,
    )


def _text(data: bytes, truncated: bool, cap: int) -> str:
    """Decoded output, with a note where the cap cut it."""
    text = data.decode("utf-8", "replace")
    if truncated:
        sep = "" if not text or text.endswith("\n") else "\n"
        text += f"{sep}(output truncated after {cap} bytes)"
    return text


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


def _env(env: Mapping[str, str] | None) -> dict[str, str] | None:
    return None if env is None else dict(env)


def _spawn_failure(exc: OSError, cmd: list[str], cwd: Path, start: float) -> ExecResult:
    duration = time.monotonic() - start
    reason = exc.strerror or str(exc)
    if exc.filename is not None and os.fspath(exc.filename) == os.fspath(cwd):
        code, error = 1, f"cannot change to directory {cwd}: {reason}"
    elif isinstance(exc, FileNotFoundError):
        code, error = 127, not_found(cmd[0])
    elif isinstance(exc, PermissionError):
        code, error = 126, f"permission denied: {cmd[0]}"
    else:
        code, error = 126, f"cannot run {cmd[0]}: {reason}"
    return ExecResult(exit_code=code, duration_s=duration, error=error)


def _timeout_error(timeout: float | None) -> str:
    return f"timed out after {timeout:g}s"
