"""The audit log: one line for every checked command that ran or was refused, in the format
of seed 004.

``2025-01-15T10:30:45Z | /home/user/project | ls -la | exit:0 | 0.023s``: the UTC time the
command ended, the directory it ran in, the command as it ran (newlines written as ``\\n``),
its exit code (128+N for signal N, 130 for Ctrl+C) and how long it took. A command that was
refused never ran: its status is ``refused:policy`` (the safety policy rejected it),
``refused:declined`` (the user said no) or ``refused:unasked`` (it needed a yes and no one
could be asked) in place of ``exit:N``, and its duration is ``0.000s``. The command may itself
contain `` | ``: read the time and directory from the left, the status and duration from the
right. The file is ``audit.log`` in the state directory, private to the user.
"""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

AUDIT_LOG = "audit.log"

# Why a command did not run: the safety policy refused it, the user said no, or it needed a
# yes and there was no one to ask.
Refusal = Literal["policy", "declined", "unasked"]


def audit_line(
    command: str, cwd: Path, exit_code: int, duration_s: float, *, when: datetime | None = None
) -> str:
    """One audit-log line (``cwd`` made absolute). ``when`` defaults to now (a naive value is
    taken as UTC)."""
    return _line(command, cwd, f"exit:{exit_code}", duration_s, when)


def refusal_line(command: str, cwd: Path, why: Refusal, *, when: datetime | None = None) -> str:
    """The audit-log line of a command that was refused, so never ran: ``refused:WHY`` in
    place of the exit code, and no duration (``0.000s``)."""
    return _line(command, cwd, f"refused:{why}", 0.0, when)


def audit_refusal(state_dir: Path | None, command: str, cwd: Path, why: Refusal) -> bool:
    """Append the refusal line of ``command`` to ``state_dir/audit.log`` (nothing when
    ``state_dir`` is None); False when it was not written."""
    if state_dir is None:
        return False
    return append_audit(state_dir, refusal_line(command, cwd, why))


def _line(command: str, cwd: Path, status: str, duration_s: float, when: datetime | None) -> str:
    stamp = datetime.now(UTC) if when is None else when
    stamp = stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    flat = command.replace("\r", "\\r").replace("\n", "\\n")
    return (
        f"{stamp.strftime('%Y-%m-%dT%H:%M:%SZ')} | {cwd.absolute()} | {flat} | "
        f"{status} | {duration_s:.3f}s"
    )


def append_audit(state_dir: Path, line: str) -> bool:
    """Append ``line`` to ``state_dir/audit.log`` (created with mode 0600); False when it
    cannot be written, which must not keep a command's result from the user.

    The line goes out in one ``write`` to a file opened with ``O_APPEND``, so lines from
    several conch processes never interleave or overwrite each other.
    """
    data = (line.rstrip("\n") + "\n").encode("utf-8", "surrogateescape")
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(state_dir / AUDIT_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:
        return False
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    return True
