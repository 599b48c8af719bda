"""Running a documentation probe (``ls --help``, ``man ls``) safely: bounded in time and size.

Every probe gets stdin from /dev/null (so nothing waits for input), the C locale (so the text
is English and parseable), its own process group (so a timeout kills whatever it spawned) and
a byte cap (so a program that prints forever cannot fill memory).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from conch.host.process import run_process

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
    """Run ``argv`` and return at most ``cap`` bytes of its output, killing it on timeout.

    ``merge_stderr``: stderr is part of the text (BSD tools print their usage there, and exit
    1); otherwise it is dropped. ``returncode`` is None when the probe could not start or was
    stopped (timeout, or output past ``cap``).
    """
    if timeout <= 0:
        return ProbeResult("", None, timed_out=True)
    try:
        done = run_process(
            argv,
            env=env,
            timeout=timeout,
            max_stdout=cap,
            stderr="stdout" if merge_stderr else "discard",
            stop_at_cap=True,
            kill_grace=0.0,
        )
    except (OSError, ValueError):
        return ProbeResult("", None)
    stopped = done.timed_out or done.stopped_at_cap
    returncode = None if stopped else done.exit_code
    return ProbeResult(clean_text(done.stdout), returncode, done.timed_out, done.stopped_at_cap)


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
