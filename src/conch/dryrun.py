"""Dry runs: a candidate command run where it cannot change anything, before the user sees it.

A dry run executes the command under bubblewrap with the whole filesystem bound read-only, a
fresh ``/dev`` and ``/proc``, every namespace unshared (no network, no other processes), a
cleared environment, stdin from ``/dev/null``, a short timeout and capped output. What it
tells conch: whether the command even works here (a syntax error, an option this platform's
program does not accept, a missing file), and what it prints, so several candidates can be
compared by what they do rather than how they look. A command that tries to write fails with
"Read-only file system"; that outcome is marked ``wrote`` and says nothing about correctness.

Nothing a dry run prints leaves the machine: conch compares outputs locally and sends the
model only the first lines of an error message when it asks for a repair.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT_TIMEOUT_S = 2.0
OUTPUT_CAP = 64 * 1024
_READ_SIZE = 65536
_KEPT_ENV = ("HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TERM", "SHELL")
_READ_ONLY = ("read-only file system", "read only file system")


@dataclass(frozen=True, slots=True)
class DryRun:
    """What a command did in the read-only sandbox (output capped at ``OUTPUT_CAP``)."""

    command: str
    exit_code: int
    stdout: bytes
    stderr: str
    timed_out: bool = False
    seconds: float = 0.0

    @property
    def wrote(self) -> bool:
        """The command tried to change files, so the dry run cannot judge it."""
        return any(marker in self.stderr.lower() for marker in _READ_ONLY)

    @property
    def failed(self) -> bool:
        """It timed out, or exited non-zero with an error message (not a write attempt).

        A non-zero exit with nothing on stderr is how grep, diff and test say "no"; it is not
        a failure of the command.
        """
        if self.timed_out:
            return True
        return self.exit_code != 0 and bool(self.stderr.strip()) and not self.wrote

    @property
    def warned(self) -> bool:
        """It succeeded but complained on stderr."""
        return not self.failed and not self.wrote and bool(self.stderr.strip())

    def error_excerpt(self, lines: int = 6, width: int = 200) -> str:
        """The first lines of stderr (or the timeout), short enough to show the model."""
        if self.timed_out and not self.stderr.strip():
            return "the command did not finish within the time limit"
        kept = [line[:width] for line in self.stderr.strip().splitlines()[:lines]]
        return "\n".join(kept)


DryRunner = Callable[[str], "DryRun | None"]


def bwrap_available() -> str | None:
    """The bubblewrap executable, if it is installed and can create a sandbox here."""
    found = shutil.which("bwrap")
    if found is None:
        return None
    return found if _probe(found) else None


_PROBED: dict[str, bool] = {}


def _probe(bwrap: str) -> bool:
    """Whether bubblewrap works on this machine (user namespaces may be disabled)."""
    if bwrap not in _PROBED:
        try:
            done = subprocess.run(
                [bwrap, "--ro-bind", "/", "/", "--unshare-all", "--", "/bin/true"],
                capture_output=True,
                timeout=5,
                check=False,
            )
            _PROBED[bwrap] = done.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _PROBED[bwrap] = False
    return _PROBED[bwrap]


def sandbox_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment a dry run sees: PATH and a few locale/identity variables, no secrets."""
    kept = {name: env[name] for name in _KEPT_ENV if name in env}
    kept["PATH"] = env.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    return kept


def bwrap_argv(bwrap: str, command: str, shell: str, cwd: Path) -> list[str]:
    """The bubblewrap command line that runs ``command`` read-only in ``cwd``."""
    return [
        bwrap,
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--chdir", str(cwd),
        "--",
        shell, "-c", command,
    ]  # fmt: skip


class SandboxDryRunner:
    """Dry runs on this machine: the real filesystem, read-only, in the user's directory."""

    def __init__(
        self,
        cwd: Path,
        shell: str = "/bin/sh",
        env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT_S,
        bwrap: str | None = None,
    ) -> None:
        self.cwd = cwd
        self.shell = shell
        self.env = sandbox_env(os.environ if env is None else env)
        self.timeout = timeout
        self.bwrap = bwrap if bwrap is not None else bwrap_available()

    @property
    def available(self) -> bool:
        return self.bwrap is not None

    def __call__(self, command: str) -> DryRun | None:
        if self.bwrap is None:
            return None
        argv = bwrap_argv(self.bwrap, command, self.shell, self.cwd)
        return run_capped(argv, command, self.env, self.timeout)


def run_capped(
    argv: list[str], command: str, env: Mapping[str, str], timeout: float
) -> DryRun | None:
    """Run ``argv`` with stdin from /dev/null, reading at most ``OUTPUT_CAP`` of each stream.

    The process group is killed at the timeout or once both streams are past the cap (so
    ``yes`` cannot fill memory). None when the program cannot be started at all.
    """
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            start_new_session=True,
        )
    except OSError:
        return None
    assert process.stdout is not None and process.stderr is not None
    out_fd, err_fd = process.stdout.fileno(), process.stderr.fileno()
    buffers = {out_fd: bytearray(), err_fd: bytearray()}
    timed_out = False
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        selector.register(process.stderr, selectors.EVENT_READ)
        while selector.get_map():
            left = timeout - (time.monotonic() - started)
            if left <= 0:
                timed_out = True
                break
            for key, _ in selector.select(min(left, 0.1)):
                data = os.read(key.fd, _READ_SIZE)
                if not data:
                    selector.unregister(key.fileobj)
                    continue
                buffer = buffers[key.fd]
                buffer.extend(data[: max(0, OUTPUT_CAP - len(buffer))])
            if any(len(b) >= OUTPUT_CAP for b in buffers.values()):
                break
    _kill_group(process)
    exit_code = process.wait()
    process.stdout.close()
    process.stderr.close()
    return DryRun(
        command,
        exit_code,
        bytes(buffers[out_fd]),
        bytes(buffers[err_fd]).decode("utf-8", errors="replace"),
        timed_out,
        time.monotonic() - started,
    )


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
