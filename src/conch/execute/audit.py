"""The audit log: one line for every checked command that ran, in the format of seed 004.

``2025-01-15T10:30:45Z | /home/user/project | ls -la | exit:0 | 0.023s``: the UTC time the
command ended, the directory it ran in, the command as it ran (newlines written as ``\\n``),
its exit code (128+N for signal N, 130 for Ctrl+C) and how long it took. The command may
itself contain `` | ``: read the time and directory from the left, exit code and duration from
the right. The file is ``audit.log`` in the state directory, private to the user.
"""

from __future__ import annotations

import contextlib
import os
from datetime import UTC, datetime
from pathlib import Path

AUDIT_LOG = "audit.log"


def audit_line(
    command: str, cwd: Path, exit_code: int, duration_s: float, *, when: datetime | None = None
) -> str:
    """One audit-log line (``cwd`` made absolute). ``when`` defaults to now (a naive value is
    taken as UTC)."""
    stamp = datetime.now(UTC) if when is None else when
    stamp = stamp.replace(tzinfo=UTC) if stamp.tzinfo is None else stamp.astimezone(UTC)
    flat = command.replace("\r", "\\r").replace("\n", "\\n")
    return (
        f"{stamp.strftime('%Y-%m-%dT%H:%M:%SZ')} | {cwd.absolute()} | {flat} | "
        f"exit:{exit_code} | {duration_s:.3f}s"
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
