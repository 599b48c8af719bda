"""Helpers for tests that start processes: waiting, without sleeping, for one to exit."""

from __future__ import annotations

import os
import select
import time
from pathlib import Path


def gone_within(pid: int, seconds: float) -> bool:
    """True once ``pid`` has exited (a zombie waiting for its new parent counts as exited).

    Waits on a pidfd, which becomes readable when the process exits; where there is none,
    reads /proc until the deadline.
    """
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    except (AttributeError, OSError):
        return _gone_by_proc(pid, seconds)
    try:
        readable, _, _ = select.select([fd], [], [], seconds)
    finally:
        os.close(fd)
    return bool(readable)


def _gone_by_proc(pid: int, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
        except OSError:
            return True
        if stat.rpartition(")")[2].split()[0] == "Z":
            return True
        select.select([], [], [], 0.05)  # nothing to wait on: look again shortly
    return False
