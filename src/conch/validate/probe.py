"""Running a documentation probe (``ls --help``, ``man ls``) safely: bounded in time and size.

Every probe gets stdin from /dev/null (so nothing waits for input), the C locale (so the text
is English and parseable), its own process group (so a timeout kills whatever it spawned) and
a byte cap (so a program that prints forever cannot fill memory).
"""

from __future__ import annotations

import contextlib
import os
import re
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass

PROBE_TIMEOUT_S = 2.0

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
_OVERSTRIKE = re.compile(r".\x08")


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """What a probe printed, and whether it had to be stopped."""

    text: str
    returncode: int | None
    timed_out: bool = False
    capped: bool = False


def probe_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment probes run with: the user's, in the C locale, with pagers disabled."""
    env = dict(os.environ if base is None else base)
    env.update(
        {
            "LC_ALL": "C",
            "LANG": "C",
            "MANWIDTH": "100",
            "MANPAGER": "cat",
            "PAGER": "cat",
            "GIT_PAGER": "cat",
            "NO_COLOR": "1",
            "TERM": "dumb",
        }
    )
    return env


def run_probe(
    argv: list[str],
    env: Mapping[str, str],
    timeout: float = PROBE_TIMEOUT_S,
    cap: int = 65536,
    merge_stderr: bool = True,
) -> ProbeResult:
    """Run ``argv`` and return at most ``cap`` bytes of its output, killing it on timeout."""
    if timeout <= 0:
        return ProbeResult("", None, timed_out=True)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            # BSD tools print their usage to stderr (and exit 1): that text is wanted too.
            stderr=subprocess.STDOUT if merge_stderr else subprocess.DEVNULL,
            env=dict(env),
            start_new_session=True,
            close_fds=True,
        )
    except (OSError, ValueError, subprocess.SubprocessError):
        return ProbeResult("", None)
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    buf = bytearray()
    timed_out = False
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while len(buf) < cap:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            if not selector.select(remaining):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
    capped = len(buf) >= cap
    returncode = _finish(proc, deadline, force=timed_out or capped)
    proc.stdout.close()
    return ProbeResult(clean_text(bytes(buf[:cap])), returncode, timed_out, capped)


def _finish(proc: subprocess.Popen[bytes], deadline: float, force: bool) -> int | None:
    """Reap ``proc``; kill its whole group if it is stopped early or outlives the deadline."""
    if not force:
        with contextlib.suppress(subprocess.TimeoutExpired):
            return proc.wait(timeout=max(0.05, deadline - time.monotonic()))
    # The group id is the leader's pid; it stays reserved until the leader is reaped below.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=1.0)
    return None


def clean_text(raw: bytes) -> str:
    """Decoded text without terminal escapes, overstrike bold, or trailing blanks."""
    text = raw.decode("utf-8", "replace")
    text = _ANSI.sub("", text)
    while "\x08" in text:
        stripped = _OVERSTRIKE.sub("", text)
        if stripped == text:
            text = text.replace("\x08", "")
            break
        text = stripped
    text = text.replace("\r\n", "\n").replace("\t", "    ")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")
